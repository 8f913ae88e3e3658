"""A local Kafka cluster and Kafka Streams demo applications, as real JVM processes (tests, demo, benchmark).

Nothing here is used by `collect` itself: it reads whatever cluster it is pointed at. The broker runs from
Kafka's released jars that `make setup` copies into ``live/target/lib/`` (``live/pom.xml``), in KRaft mode
(each node is broker and controller), on 127.0.0.1 with free ports; the demo applications run
``fleet.live.DemoApp`` from ``live/target/fleet-live.jar``. Every process is started in its own process group
and killed with it; logs go to files under the directory the caller gives.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
LIVE_DIR = REPO_ROOT / "live"
LIVE_JAR = LIVE_DIR / "target" / "fleet-live.jar"
LIVE_LIB = LIVE_DIR / "target" / "lib"
JAVA17_HOME = Path("/usr/lib/jvm/java-17-openjdk-amd64")

BROKER_LOG4J = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = info
logger.state.name = state.change.logger
logger.state.level = warn
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = warn
"""


class LiveUnavailable(RuntimeError):
    """The live jars are not built (`make setup`) or no Java 17 is found."""


def find_java() -> str | None:
    """Java 17 (the project's JDK) if installed, else $JAVA_HOME's, else `java` on PATH, else None."""
    candidates = [JAVA17_HOME / "bin" / "java"]
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("java")


def java_executable() -> str:
    found = find_java()
    if found is None:
        raise LiveUnavailable("no Java runtime found (need Java 17)")
    return found


def check_built() -> None:
    if not LIVE_JAR.is_file() or not LIVE_LIB.is_dir():
        raise LiveUnavailable(
            f"live Kafka jars not built ({LIVE_JAR} missing): "
            "run `make setup` (or `cd live && mvn -q -B package`)"
        )
    check_not_older_than_sources(LIVE_JAR, LIVE_DIR)


def check_not_older_than_sources(jar: Path, module: Path) -> None:
    """A jar built before its module's sources changed (a checkout updated without `make setup`) runs the
    old code: it once ignored an argument the tests passed, and a test failed without saying why."""
    sources = [module / "pom.xml", *(module / "src").rglob("*")]
    built = jar.stat().st_mtime
    newer = sorted(
        str(path.relative_to(module)) for path in sources if path.is_file() and path.stat().st_mtime > built
    )
    if newer:
        raise LiveUnavailable(
            f"{jar} is older than {len(newer)} of its sources ({', '.join(newer[:3])}): run `make setup`"
        )


def lib_classpath() -> str:
    return f"{LIVE_LIB}{os.sep}*"


def app_classpath() -> str:
    return f"{LIVE_JAR}{os.pathsep}{LIVE_LIB}{os.sep}*"


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (all bound at once so they differ)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _kill_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM the process's group, then SIGKILL what is left after the grace period."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


# ------------------------------------------------------------------------------------------------ broker


@dataclass
class KafkaCluster:
    """N KRaft nodes (broker + controller each) on 127.0.0.1; `bootstrap` once started."""

    work_dir: Path
    racks: Sequence[str] = ("rack-a",)
    heap: str = "-Xmx512m"
    extra_config: dict[str, str] = field(default_factory=dict)
    processes: list[subprocess.Popen] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    cluster_uuid: str = ""

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def _node_config(self, index: int, controller_ports: list[int], voters: str) -> str:
        node = index + 1
        data = self.work_dir / f"node-{node}" / "data"
        replication = min(3, len(self.racks))
        config = {
            "process.roles": "broker,controller",
            "node.id": str(node),
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.ports[index]},CONTROLLER://127.0.0.1:{controller_ports[index]}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.ports[index]}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(data),
            "broker.rack": self.racks[index],
            "num.partitions": "1",
            "default.replication.factor": str(replication),
            "offsets.topic.replication.factor": str(replication),
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": str(replication),
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": str(replication),
            "share.coordinator.state.topic.min.isr": "1",
            "auto.create.topics.enable": "false",
            "group.initial.rebalance.delay.ms": "0",
            "group.streams.initial.rebalance.delay.ms": "0",
            "log.segment.bytes": str(16 * 1024 * 1024),
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
        }
        config.update(self.extra_config)
        return "".join(f"{k}={v}\n" for k, v in config.items())

    def start(self, timeout_s: float = 120.0) -> KafkaCluster:
        check_built()
        java = java_executable()
        n = len(self.racks)
        ports = free_ports(2 * n)
        self.ports, controller_ports = ports[:n], ports[n:]
        voters = ",".join(f"{i + 1}@127.0.0.1:{controller_ports[i]}" for i in range(n))
        # Like Kafka's Uuid.randomUuid(): never a leading "-" (the storage tool would read it as an option).
        self.cluster_uuid = "-"
        while self.cluster_uuid.startswith("-"):
            self.cluster_uuid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        for index in range(n):
            node_dir = self.work_dir / f"node-{index + 1}"
            node_dir.mkdir(parents=True, exist_ok=True)
            properties = node_dir / "server.properties"
            properties.write_text(self._node_config(index, controller_ports, voters))
            log4j = node_dir / "log4j2.properties"
            log4j.write_text(BROKER_LOG4J.format(log=node_dir / "server.log"))
            base = [java, self.heap, "-XX:+UseSerialGC", f"-Dlog4j2.configurationFile={log4j}"]
            base += ["-cp", lib_classpath()]
            fmt = subprocess.run(
                [*base, "kafka.tools.StorageTool", "format", "-t", self.cluster_uuid, "-c", str(properties)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if fmt.returncode != 0:
                raise RuntimeError(f"kafka storage format failed: {fmt.stdout}\n{fmt.stderr}")
            out = open(node_dir / "stdout.log", "wb")  # noqa: SIM115 - closed with the process
            self.processes.append(
                subprocess.Popen(
                    [*base, "kafka.Kafka", str(properties)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        self.wait_ready(timeout_s)
        return self

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        logs = [self.work_dir / f"node-{i + 1}" / "server.log" for i in range(len(self.racks))]
        pending = set(range(len(logs)))
        while pending:
            for i in sorted(pending):
                if self.processes[i].poll() is not None:
                    raise RuntimeError(
                        f"broker {i + 1} exited with {self.processes[i].returncode}; see {logs[i]}"
                    )
                if logs[i].is_file() and "Kafka Server started" in logs[i].read_text(errors="replace"):
                    pending.discard(i)
            if pending and time.monotonic() > deadline:
                raise TimeoutError(f"brokers {sorted(pending)} not started within {timeout_s} s; see {logs}")
            time.sleep(0.25)

    def stop(self) -> None:
        for process in self.processes:
            _kill_group(process)
        self.processes.clear()

    def __enter__(self) -> KafkaCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ------------------------------------------------------------------------------------------ demo apps


def _escape(text: str) -> str:
    """A key or value for a Java properties file."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=").replace(":", "\\:")


class DemoApp:
    """One JVM hosting `instances` KafkaStreams instances of one application (fleet.live.DemoApp)."""

    def __init__(
        self,
        app_id: str,
        bootstrap: str,
        work_dir: Path,
        *,
        protocol: str = "classic",
        instances: int = 3,
        racks: Sequence[str] = ("rack-a", "rack-b", "rack-c"),
        standbys: int = 0,
        threads: int = 1,
        partitions: int = 4,
        produce: int = 0,
        rack_aware_tags: str | None = None,
        source_table: bool = False,
        plain_consumers: Sequence[str] = (),
        heap: str = "-Xmx256m",
        streams_configs: dict[str, str] | None = None,
        extra_classpath: Sequence[str] = (),
        jvm_options: Sequence[str] = (),
    ) -> None:
        """`streams_configs` are added to every instance's Streams configs (e.g. `task.assignor.class`);
        `extra_classpath` entries go after the live jars; `jvm_options` before the main class."""
        check_built()
        self.app_id = app_id
        self.work_dir = work_dir
        work_dir.mkdir(parents=True, exist_ok=True)
        args = {
            "app-id": app_id,
            "bootstrap": bootstrap,
            "protocol": protocol,
            "instances": str(instances),
            "racks": ",".join(racks),
            "standbys": str(standbys),
            "threads": str(threads),
            "partitions": str(partitions),
            "produce": str(produce),
            "state-dir": str(work_dir / "state"),
        }
        if rack_aware_tags:
            args["rack-aware-tags"] = rack_aware_tags
        if source_table:
            args["source-table"] = "true"
        if plain_consumers:
            args["plain-consumers"] = ",".join(plain_consumers)
        if streams_configs:
            properties = work_dir / "streams.properties"
            properties.write_text("".join(f"{_escape(k)}={_escape(v)}\n" for k, v in streams_configs.items()))
            args["streams-config"] = str(properties)
        command = [
            java_executable(),
            heap,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            *jvm_options,
            "-cp",
            os.pathsep.join([app_classpath(), *extra_classpath]),
        ]
        command.append("fleet.live.DemoApp")
        for key, value in args.items():
            command += [f"--{key}", value]
        self._stderr = open(work_dir / "stderr.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.states: dict[int, str] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("event") == "state":
                self.states[event["instance"]] = event["state"]
            self.events.put(event)

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def wait_event(self, kind: str, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.app_id}: no {kind!r} event within {timeout_s} s")
            if self.process.poll() is not None and self.events.empty():
                raise RuntimeError(
                    f"{self.app_id}: exited with {self.process.returncode}; see {self.work_dir}"
                )
            try:
                event = self.events.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if event.get("event") == kind:
                return event

    def wait_running(self, instances: Sequence[int], timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while any(self.states.get(i) != "RUNNING" for i in instances):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.app_id}: exited with {self.process.returncode}; see {self.work_dir}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.app_id}: instances not RUNNING within {timeout_s} s: {self.states}"
                )
            time.sleep(0.2)

    def threads(self, timeout_s: float = 30.0) -> list[dict[str, Any] | None]:
        """Each instance's state, rack and per-thread consumer client id and tasks (None once stopped)."""
        self.send("threads")
        return self.wait_event("threads", timeout_s)["instances"]

    def hold(self, timeout_s: float = 30.0) -> None:
        """Block the source table's forwarding (--source-table): its stream threads stop committing."""
        self.send("hold")
        self.wait_event("hold", timeout_s)

    def release(self, timeout_s: float = 30.0) -> None:
        self.send("release")
        self.wait_event("release", timeout_s)

    def stop_instance(self, index: int, timeout_s: float = 60.0) -> None:
        self.send(f"stop {index}")
        while self.wait_event("stopped", timeout_s)["instance"] != index:
            pass

    def start_instance(self, index: int, timeout_s: float = 60.0) -> None:
        """Start instance `index` again after `stop_instance` (same state directory, so the same process id),
        or a new one when `index` is the next unused index."""
        self.send(f"start {index}")
        while self.wait_event("started-instance", timeout_s)["instance"] != index:
            pass

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        _kill_group(self.process)
        self._stderr.close()
