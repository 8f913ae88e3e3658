"""`make run`: generate a synthetic fleet into local Delta tables, plan it, print the summary and where the
outputs are. Everything local (Spark in this process, Delta on disk); nothing to start."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from fleet_assignor.jobs.config import JobConfig, load_conf_file
from fleet_assignor.jobs.plan_assignments import configure_logging, run_job
from fleet_assignor.jobs.spark import get_or_create_session
from fleet_assignor.jobs.synthetic import write_synthetic_fleet

DEFAULT_APPS = 300  # the `make run` fleet
DEFAULT_SEED = 7


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=DEFAULT_APPS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--dir", default="fleet-output", help="where the inputs and outputs go")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    configure_logging()
    base = Path(args.dir).resolve()
    shutil.rmtree(base, ignore_errors=True)
    spark = get_or_create_session(
        "fleet-assignor-run", master="local[2]", extra_conf={"spark.driver.memory": "4g"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    counts = write_synthetic_fleet(spark, str(base / "inputs"), args.apps, args.seed)
    print(
        f"synthetic fleet: {args.apps} applications, rows " + ", ".join(f"{t}={n}" for t, n in counts.items())
    )
    config: JobConfig = load_conf_file(None)
    config = JobConfig(
        input_path=str(base / "inputs"),
        output_path=str(base / "outputs"),
        grouped_map=config.grouped_map,
        shuffle_partitions=4,
    )
    summary = run_job(spark, config)
    print(summary.text())
    print(f"inputs: {base / 'inputs'}/<table>   outputs: {base / 'outputs'}/<table> (Delta)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
