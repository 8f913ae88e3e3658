"""`make demo-live`: a local KRaft broker and two Kafka Streams applications (one on each rebalance
protocol), collected and planned; prints both summaries and stops everything it started.

    python -m fleet_assignor.jobs.demo_live [--work-dir DIR]
        (default fleet-output/live; the tables stay there)
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import sys
import time
from pathlib import Path

from fleet_assignor.jobs.collect import collect, read_snapshot
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.live_cluster import DemoApp, KafkaCluster
from fleet_assignor.jobs.live_snapshot import snapshot_rows

RACKS = ("rack-a", "rack-b", "rack-c")
APPS = (("demo-classic", "classic", 3), ("demo-streams", "streams", 2))


def wait_collectable(bootstrap: str, app_id: str, members: int, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        rows = snapshot_rows(read_snapshot(bootstrap, groups=re.escape(app_id), timeout_ms=10_000))
        if app_id in rows.collected and len(rows.tables["client_subscriptions"]) == members:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{app_id} not stable within {timeout_s} s: {[str(s) for s in rows.skipped]}")
        time.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet_assignor.jobs.demo_live")
    parser.add_argument("--work-dir", default="fleet-output/live")
    args = parser.parse_args(argv)
    work = Path(args.work_dir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    # SIGTERM (e.g. make interrupted) runs the same cleanup as Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    cluster = KafkaCluster(work / "kafka", racks=("rack-a",))
    apps: list[DemoApp] = []
    try:
        started = time.monotonic()
        cluster.start()
        print(f"broker on {cluster.bootstrap} ({time.monotonic() - started:.1f} s)", flush=True)
        for app_id, protocol, instances in APPS:
            apps.append(
                DemoApp(
                    app_id,
                    cluster.bootstrap,
                    work / app_id,
                    protocol=protocol,
                    instances=instances,
                    standbys=1,
                    produce=2000,
                    racks=RACKS,
                )
            )
        for app, (_, _, instances) in zip(apps, APPS, strict=False):
            app.wait_running(range(instances))
            wait_collectable(cluster.bootstrap, app.app_id, instances)
        print(f"applications running and stable ({time.monotonic() - started:.1f} s)", flush=True)
        result = collect(cluster.bootstrap, str(work / "inputs"))
        print(result.text(), flush=True)
        from fleet_assignor.jobs.plan_assignments import run_job
        from fleet_assignor.jobs.spark import get_or_create_session

        summary = run_job(
            get_or_create_session("fleet-assignor-demo-live"),
            JobConfig(
                input_path=str(work / "inputs"),
                output_path=str(work / "outputs"),
                as_of_versions=dict(result.versions),
            ),
        )
        print(summary.text(), flush=True)
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        for app in apps:
            app.stop()
        cluster.stop()
        print("stopped the broker and the applications", flush=True)


if __name__ == "__main__":
    sys.exit(main())
