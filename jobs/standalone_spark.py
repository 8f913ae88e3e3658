"""A Spark standalone cluster on this machine (a master and workers as real JVM processes) and the
`spark-submit` command that runs the fleet job on it, for the cluster test and `make cluster-demo`.

pip's pyspark has no `sbin/` scripts, so the master and workers are started from pyspark's own jars
(``java -cp "<pyspark>/jars/*" org.apache.spark.deploy.master.Master ...``) with SPARK_HOME pointing at the
pyspark package (workers launch executors from its ``jars/``). Everything binds to 127.0.0.1 on free ports,
runs in its own process group with a bounded heap, and is killed with its group by `stop()`; logs go to
files under the directory the caller gives. Nothing here is used by the job itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from fleet_assignor.jobs.live_cluster import JAVA17_HOME, _kill_group, find_java, free_ports
from fleet_assignor.jobs.spark import DELTA_CATALOG, DELTA_EXTENSION, delta_jars

REPO_ROOT = Path(__file__).resolve().parents[1]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
# What --py-files needs: the packages the job imports (plus the root __init__.py and the default conf).
JOB_PACKAGES = ("assignor", "jobs", "schemas")


class ClusterUnavailable(RuntimeError):
    """No Java runtime, or the cluster did not come up in time."""


def java_home() -> str:
    """Java 17 if installed (pyspark 4.0's JDK), else $JAVA_HOME, else the JDK of `java` on PATH."""
    if (JAVA17_HOME / "bin" / "java").is_file():
        return str(JAVA17_HOME)
    java = find_java()
    if java is None:
        raise ClusterUnavailable("no Java runtime found (need Java 17)")
    return str(Path(java).resolve().parents[1])


def cluster_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the daemons and spark-submit: Java 17, pyspark as SPARK_HOME, loopback only."""
    env = dict(os.environ if base is None else base)
    home = java_home()
    env["JAVA_HOME"] = home
    env["PATH"] = f"{home}/bin{os.pathsep}{env.get('PATH', '')}"
    env["SPARK_HOME"] = str(SPARK_HOME)
    # What pyspark's bin/load-spark-env.sh exports: without it a worker's launcher looks for a source build
    # ("Cannot find any build directories") when it builds an executor's command.
    env["SPARK_SCALA_VERSION"] = "2.13"
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return env


def package_zip(target: Path) -> Path:
    """The package as --py-files ships it, laid out as in the wheel: `fleet_assignor/` (the repository
    root's __init__.py), the job's packages and its default conf."""
    with zipfile.ZipFile(target, "w") as archive:
        archive.write(REPO_ROOT / "__init__.py", "fleet_assignor/__init__.py")
        archive.write(REPO_ROOT / "conf" / "defaults.toml", "fleet_assignor/conf/defaults.toml")
        for package in JOB_PACKAGES:
            for path in sorted((REPO_ROOT / package).rglob("*.py")):
                archive.write(path, "fleet_assignor/" + path.relative_to(REPO_ROOT).as_posix())
    return target


@dataclass
class StandaloneSpark:
    """A master and `workers` workers (1 core each) on 127.0.0.1; `url` once started."""

    work_dir: Path
    workers: int = 2
    worker_memory: str = "1g"
    daemon_heap: str = "-Xmx256m"
    processes: list[subprocess.Popen] = field(default_factory=list)
    port: int = 0
    webui_port: int = 0

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, args: Sequence[str]) -> None:
        log = open(self.work_dir / f"{name}.log", "wb")  # noqa: SIM115 - owned by the process
        command = [str(Path(java_home()) / "bin" / "java"), self.daemon_heap, "-XX:+UseSerialGC",
                   "-cp", f"{SPARK_HOME / 'jars'}{os.sep}*", *args]  # fmt: skip
        self.processes.append(
            subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=cluster_env(),
                cwd=self.work_dir,
                start_new_session=True,
            )
        )
        log.close()

    def start(self, timeout_s: float = 120.0) -> StandaloneSpark:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        ports = free_ports(2 + self.workers)
        self.port, self.webui_port = ports[0], ports[1]
        try:
            self._start("master", [
                "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", str(self.port), "--webui-port", str(self.webui_port),
            ])  # fmt: skip
            for index in range(self.workers):
                work = self.work_dir / f"worker-{index}"
                work.mkdir(exist_ok=True)
                self._start(f"worker-{index}", [
                    "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                    "--cores", "1", "--memory", self.worker_memory,
                    "--webui-port", str(ports[2 + index]), "--work-dir", str(work),
                ])  # fmt: skip
            self.wait_workers(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def alive_workers(self) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as response:
            return int(json.load(response).get("aliveworkers", 0))

    def wait_workers(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            dead = [p.args[-1] for p in self.processes if p.poll() is not None]
            if dead:
                raise ClusterUnavailable(f"a Spark daemon exited at start; logs in {self.work_dir}")
            try:
                if self.alive_workers() >= self.workers:
                    return
            except OSError:
                pass  # the master's UI is not up yet
            if time.monotonic() > deadline:
                raise ClusterUnavailable(
                    f"{self.workers} workers not registered in {timeout_s} s: {self.work_dir}"
                )
            time.sleep(0.5)

    def stop(self) -> None:
        """Workers first (they would otherwise keep reconnecting), then the master."""
        for process in reversed(self.processes):
            _kill_group(process)
        self.processes.clear()

    def __enter__(self) -> StandaloneSpark:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def submit_command(
    master: str,
    py_files: Path,
    executor_python: str,
    job_args: Sequence[str],
    executor_memory: str = "512m",
    driver_memory: str = "1g",
) -> list[str]:
    """spark-submit (pyspark's own script, next to this interpreter) running the job on `master`: Delta jars
    from jvm/jars shipped with --jars, our code on --py-files, executors' Python set by spark.pyspark.python,
    Spark's JVM logging at WARN (conf/log4j2.properties)."""
    return [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master", master,
        "--deploy-mode", "client",
        "--driver-memory", driver_memory,
        "--executor-memory", executor_memory,
        "--driver-java-options", f"-Dlog4j2.configurationFile={REPO_ROOT / 'conf' / 'log4j2.properties'}",
        "--jars", ",".join(delta_jars()),
        "--conf", f"spark.sql.extensions={DELTA_EXTENSION}",
        "--conf", f"spark.sql.catalog.spark_catalog={DELTA_CATALOG}",
        "--conf", f"spark.pyspark.python={executor_python}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--py-files", str(py_files),
        str(REPO_ROOT / "jobs" / "spark_submit_main.py"),
        *job_args,
    ]  # fmt: skip
