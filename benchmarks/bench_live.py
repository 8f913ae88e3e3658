"""Time `collect` on a cluster with many Kafka Streams applications (`make bench-live`).

A local KRaft broker holds BENCH_LIVE_APPS classic groups (default 100) of BENCH_LIVE_MEMBERS members each
(default 10), simulated by `fleet.live.FakeFleet`: plain consumers that speak Streams' subscription and
assignment encodings (Kafka's own classes), so the collector reads them exactly as it reads real Streams
groups. Measured: the reading helper alone (list, describe, decode, topics, end offsets) and the whole
`collect` (plus rows and the six Delta writes). Writes benchmarks/results/bench_live.json.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import tempfile
import time
from pathlib import Path

from fleet_assignor.jobs.collect import collect, read_snapshot
from fleet_assignor.jobs.live_cluster import KafkaCluster, _kill_group, app_classpath, java_executable
from fleet_assignor.jobs.live_snapshot import snapshot_rows

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results" / "bench_live.json"
PREFIX = "bench-"


def wait_all_collectable(bootstrap: str, apps: int, members: int, timeout_s: float) -> float:
    started = time.monotonic()
    while True:
        snapshot = read_snapshot(bootstrap, groups=re.escape(PREFIX) + r"\d+", timeout_ms=30_000)
        rows = snapshot_rows(snapshot)
        clients = len(rows.tables["client_subscriptions"])
        print(f"  {len(rows.collected)}/{apps} groups stable, {clients} members", flush=True)
        if len(rows.collected) == apps and clients == apps * members:
            return time.monotonic() - started
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"not all groups stable within {timeout_s} s: {rows.skipped[:5]}")
        time.sleep(5)


def main() -> int:
    apps = int(os.environ.get("BENCH_LIVE_APPS", "100"))
    members = int(os.environ.get("BENCH_LIVE_MEMBERS", "10"))
    partitions = int(os.environ.get("BENCH_LIVE_PARTITIONS", "10"))
    repeat = int(os.environ.get("BENCH_LIVE_REPEAT", "3"))
    with tempfile.TemporaryDirectory(prefix="bench-live-") as work:
        cluster = KafkaCluster(Path(work) / "kafka", racks=("rack-a",), heap="-Xmx768m")
        fleet = None
        try:
            cluster.start()
            command = [java_executable(), "-Xmx1g", "-Xss512k", "-XX:+UseSerialGC", "-cp", app_classpath()]
            command += ["fleet.live.FakeFleet", "--bootstrap", cluster.bootstrap, "--apps", str(apps)]
            command += ["--members", str(members), "--partitions", str(partitions), "--prefix", PREFIX]
            log = open(Path(work) / "fleet.log", "wb")  # noqa: SIM115 - closed below
            fleet = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            print(f"{apps} apps x {members} members starting on {cluster.bootstrap}", flush=True)
            settle_s = wait_all_collectable(cluster.bootstrap, apps, members, timeout_s=900)
            reads, collects = [], []
            for _ in range(repeat):
                started = time.monotonic()
                read_snapshot(cluster.bootstrap, groups=re.escape(PREFIX) + r"\d+", timeout_ms=30_000)
                reads.append(time.monotonic() - started)
            from fleet_assignor.jobs.spark import get_or_create_session

            spark = get_or_create_session("fleet-assignor-bench-live", master="local[2]")
            groups = re.escape(PREFIX) + r"\d+"
            for _ in range(repeat):
                result = collect(
                    cluster.bootstrap,
                    str(Path(work) / "tables"),
                    groups=groups,
                    timeout_ms=30_000,
                    spark=spark,
                )
                collects.append(result.seconds)
                print(result.text().splitlines()[0], flush=True)
            assert len(result.rows.collected) == apps
            document = {
                "benchmark": "collect on a local broker",
                "apps": apps,
                "members_per_app": members,
                "partitions_per_topic": partitions,
                "groups_collected": len(result.rows.collected),
                "rows": {t: len(v) for t, v in result.rows.tables.items()},
                "settle_seconds": round(settle_s, 1),
                "read_seconds": [round(s, 2) for s in reads],
                "collect_seconds": [round(s, 2) for s in collects],
                "note": "read = the JVM helper alone (incl. JVM start); collect = read + rows + six Delta "
                "writes in a warm local[2] Spark session; one broker and the simulated members share 2 cores",
                "kafka_version": "4.4.0",
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            RESULTS.write_text(json.dumps(document, indent=2) + "\n")
            print(json.dumps(document, indent=2))
        finally:
            if fleet is not None:
                try:
                    fleet.stdin.close()
                    fleet.wait(timeout=60)
                except (OSError, subprocess.TimeoutExpired):
                    pass
                _kill_group(fleet)
            cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
