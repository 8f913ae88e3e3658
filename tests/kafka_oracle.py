"""Client of the Kafka differential oracle (``oracle/``): Kafka's own assignors run on our scenarios.

One JVM serves a whole pytest session (the session-scoped ``kafka_oracle`` fixture in ``conftest.py``):
scenarios go in as JSON lines (the scenario dict plus ``mode``, optional ``repeat``, ``warmup`` and
``now_ms``) and results come back one line each, in our result shape (scenario.md) plus ``timing`` and
``status``.
The oracle is built by ``make setup`` (``cd oracle && mvn -q -B package``); nothing is downloaded here.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fleet_assignor.jobs.live_cluster import find_java

REPO_ROOT = Path(__file__).resolve().parents[1]
ORACLE_DIR = REPO_ROOT / "oracle"
ORACLE_JAR = ORACLE_DIR / "target" / "kafka-oracle.jar"
ORACLE_LIB = ORACLE_DIR / "target" / "lib"
MAIN_CLASS = "fleet.oracle.KafkaOracle"

MODES = (
    "high_availability",
    "sticky",
    "fallback_prior",
    "optimize_rack_active",
    "optimize_rack_standby",
    "streams_sticky",
)


class OracleUnavailable(RuntimeError):
    """The oracle jar is not built or no Java runtime is found."""


class OracleError(RuntimeError):
    """The oracle JVM died or answered out of protocol."""


def java_executable() -> str:
    found = find_java()
    if found is None:
        raise OracleUnavailable("no Java runtime found (need Java 17)")
    return found


def classpath() -> str:
    if not ORACLE_JAR.is_file() or not ORACLE_LIB.is_dir():
        raise OracleUnavailable(
            f"Kafka oracle not built ({ORACLE_JAR} missing): "
            "run `make setup` (or `cd oracle && mvn -q -B package`)"
        )
    return f"{ORACLE_JAR}{os.pathsep}{ORACLE_LIB}{os.sep}*"


def request_line(
    scenario: Mapping[str, Any],
    mode: str,
    *,
    repeat: int = 0,
    now_ms: int | None = None,
    warmup: int = 0,
    warmup_ms: int = 0,
) -> str:
    """One request: the scenario dict with the oracle's own keys added (the scenario is not modified).
    ``warmup``: untimed calls between the first and the ``repeat`` timed ones, stopped once they have taken
    ``warmup_ms`` (0: no limit)."""
    if mode not in MODES:
        raise ValueError(f"unknown oracle mode {mode!r}; one of {', '.join(MODES)}")
    request = dict(scenario)
    request["mode"] = mode
    if repeat:
        request["repeat"] = repeat
    if warmup:
        request["warmup"] = warmup
        request["warmup_ms"] = warmup_ms
    if now_ms is not None:
        request["now_ms"] = now_ms
    return json.dumps(request, separators=(",", ":"))


class KafkaOracle:
    """A running oracle JVM. Use `run` for one mode over many scenarios; `close` when done."""

    def __init__(self, *, jvm_options: Sequence[str] = ("-Xss8m", "-XX:+UseSerialGC")) -> None:
        command = [java_executable(), *jvm_options, "-cp", classpath(), MAIN_CLASS]
        # stderr goes to a file: SLF4J and Kafka warnings must never fill a pipe nobody reads.
        self._stderr = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115 - closed by close()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lock = threading.Lock()

    def run(
        self,
        scenarios: Iterable[Mapping[str, Any]],
        mode: str,
        *,
        repeat: int = 0,
        now_ms: int | None = None,
        warmup: int = 0,
        warmup_ms: int = 0,
    ) -> list[dict[str, Any]]:
        """Kafka's answer for each scenario, in input order (`request_line` for the keywords)."""
        lines = [
            request_line(s, mode, repeat=repeat, now_ms=now_ms, warmup=warmup, warmup_ms=warmup_ms)
            for s in scenarios
        ]
        return self.run_lines(lines)

    def run_lines(self, lines: Sequence[str]) -> list[dict[str, Any]]:
        with self._lock:
            if self._process.poll() is not None:
                raise OracleError(f"oracle JVM exited with {self._process.returncode}: {self.stderr_tail()}")
            # A writer thread feeds stdin while we read stdout, so large batches never deadlock on pipes.
            writer = threading.Thread(target=self._write_all, args=(lines,), daemon=True)
            writer.start()
            results = []
            for _ in lines:
                answer = self._process.stdout.readline()
                if not answer:
                    raise OracleError(f"oracle JVM closed its output: {self.stderr_tail()}")
                results.append(json.loads(answer))
            writer.join()
            return results

    def _write_all(self, lines: Sequence[str]) -> None:
        try:
            for line in lines:
                self._process.stdin.write(line + "\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # the reader reports the dead JVM with its stderr

    def stderr_tail(self, limit: int = 4000) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-limit:]

    def kill(self) -> None:
        """Stop the JVM at once (a call that runs too long); the oracle is unusable afterwards."""
        self._process.kill()
        self._process.wait()
        self._stderr.close()

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._stderr.close()

    def __enter__(self) -> KafkaOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def per_client(result: Mapping[str, Any]) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """process_id -> (active set, standby set incl. warmups): the shape every comparison keys on."""
    return {
        c["process_id"]: (frozenset(c["active"]), frozenset(c.get("standby") or ()))
        for c in result["assignment"]
    }
