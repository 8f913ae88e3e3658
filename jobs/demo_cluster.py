"""`make cluster-demo`: a Spark standalone cluster on this machine (a master and two 1-core workers from
pyspark's jars), a small synthetic fleet planned on it with `spark-submit --master spark://...` and the
package on --py-files; prints the job's summary and stops the master and workers it started.

    python -m fleet_assignor.jobs.demo_cluster [--apps N] [--work-dir DIR]
        (default 50 applications in fleet-output/cluster; the tables and daemon logs stay there)
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from fleet_assignor.jobs.spark import get_or_create_session
from fleet_assignor.jobs.standalone_spark import StandaloneSpark, cluster_env, package_zip, submit_command
from fleet_assignor.jobs.synthetic import write_synthetic_fleet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet_assignor.jobs.demo_cluster")
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--work-dir", default="fleet-output/cluster")
    args = parser.parse_args(argv)
    work = Path(args.work_dir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # The fleet is written by a local session that is stopped before the cluster starts (memory).
    spark = get_or_create_session("fleet-assignor-cluster-demo", master="local[1]")
    spark.sparkContext.setLogLevel("ERROR")
    write_synthetic_fleet(spark, str(work / "inputs"), args.apps, seed=7)
    spark.stop()
    print(f"synthetic fleet: {args.apps} applications in {work / 'inputs'}", flush=True)
    # SIGTERM (e.g. make interrupted) runs the same cleanup as Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    cluster = StandaloneSpark(work / "daemons", workers=2, worker_memory="1g")
    try:
        started = time.monotonic()
        cluster.start()
        print(
            f"master {cluster.url} with {cluster.workers} workers ({time.monotonic() - started:.1f} s)",
            flush=True,
        )
        job = ["plan", "--input-path", str(work / "inputs"), "--output-path", str(work / "outputs")]
        command = submit_command(cluster.url, package_zip(work / "fleet_assignor.zip"), sys.executable, job)
        print("spark-submit --master", cluster.url, "... plan", flush=True)
        done = subprocess.run(command, env=cluster_env(), cwd=work, stdout=subprocess.PIPE, text=True)
        print(done.stdout, end="")
        print(f"outputs: {work / 'outputs'}/<table> (Delta); daemon logs: {work / 'daemons'}")
        return done.returncode
    except KeyboardInterrupt:
        return 130
    finally:
        cluster.stop()
        print("stopped the master and workers", flush=True)


if __name__ == "__main__":
    sys.exit(main())
