"""Fleet throughput (`make bench`): synthetic fleets of 1,000 / 10,000 / 100,000 applications (median ~20
tasks, a tail up to 2,000) read, planned and written on local Delta, with applyInPandas and applyInArrow,
and the same pipeline with an identity assignor as the I/O baseline.
Writes benchmarks/results/bench_fleet.json.

    python -m benchmarks.bench_fleet [--sizes 1000,10000,100000] [--kinds arrow,pandas]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

from fleet_assignor.jobs.config import JobConfig  # noqa: E402
from fleet_assignor.jobs.grouped import GroupedMapKind  # noqa: E402
from fleet_assignor.jobs.plan_assignments import run_job  # noqa: E402
from fleet_assignor.jobs.spark import get_or_create_session  # noqa: E402
from fleet_assignor.jobs.synthetic import write_synthetic_fleet  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "bench_fleet.json"
SCRATCH = REPO / "benchmarks" / "results" / "tmp" / "fleet"
IDENTITY = "jobs.baseline:IdentityAssignor"
WARM_UP_APPLICATIONS = 200
METHOD = (
    f"one unmeasured {WARM_UP_APPLICATIONS}-application run per grouped-map kind first; then per size and "
    "kind the identity baseline, then the configured assignors, each once; wall clock of run_job "
    "(read, shape, plan, write five tables)"
)


def shuffle_partitions(size: int) -> int:
    """A multiple of the cores (an odd count leaves one core idle in the grouped map's last wave)."""
    cores = os.cpu_count() or 2
    return min(64, 4 * cores * max(1, size // 25_000))


def measure(spark, inputs: Path, size: int, kind: GroupedMapKind, assignor: str | None) -> dict:
    out = SCRATCH / f"out-{size}-{kind.value}-{'identity' if assignor else 'planned'}"
    shutil.rmtree(out, ignore_errors=True)
    config = JobConfig(
        input_path=str(inputs), output_path=str(out), run_id="bench", assignor=assignor,
        planned_at_ms=1_767_225_600_000, grouped_map=kind,
        shuffle_partitions=shuffle_partitions(size),
    )  # fmt: skip
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    summary = run_job(spark, replace(config))
    seconds = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return {
        "applications": size,
        "grouped_map": kind.value,
        "assignor": "identity (baseline)" if assignor else "configured (high_availability mostly)",
        "seconds": round(seconds, 2),
        "applications_per_second": round(size / seconds, 1),
        "tasks": summary.num_tasks,
        "statuses": summary.statuses,
        "shuffle_partitions": config.shuffle_partitions,
        "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        # Sizes and kinds can be measured separately, so each run carries its own date.
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_document(path: Path, document: dict) -> None:
    """``document`` as JSON at ``path``, with when and on what it was measured."""
    stamped = {
        **{k: v for k, v in document.items() if k == "benchmark"},
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        **{k: v for k, v in document.items() if k != "benchmark"},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stamped, indent=2) + "\n")
    print(f"wrote {path}")


def warm_up(spark, kinds: list[GroupedMapKind]) -> None:
    """One small unmeasured run per grouped-map kind: the JVM's JIT, the query planner's caches and the
    Python workers' imports are warm before anything is timed, so baseline and planned runs compare alike."""
    inputs = SCRATCH / "in-warmup"
    shutil.rmtree(inputs, ignore_errors=True)
    write_synthetic_fleet(spark, str(inputs), WARM_UP_APPLICATIONS)
    for kind in kinds:
        measure(spark, inputs, WARM_UP_APPLICATIONS, kind, None)
    shutil.rmtree(inputs, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--kinds", default="arrow,pandas")
    args = parser.parse_args(argv)
    spark = get_or_create_session(
        "fleet-assignor-bench", master="local[2]", extra_conf={"spark.driver.memory": "10g"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    kinds = [GroupedMapKind.parse(k) for k in args.kinds.split(",")]
    warm_up(spark, kinds)
    runs = []
    for size in (int(s) for s in args.sizes.split(",")):
        inputs = SCRATCH / f"in-{size}"
        shutil.rmtree(inputs, ignore_errors=True)
        started = time.perf_counter()
        rows = write_synthetic_fleet(spark, str(inputs), size)
        print(f"{size} applications generated in {time.perf_counter() - started:.1f} s: {rows}", flush=True)
        for kind in kinds:
            for assignor in (IDENTITY, None):
                result = measure(spark, inputs, size, kind, assignor)
                result["input_rows"] = rows
                print(json.dumps(result), flush=True)
                runs.append(result)
        shutil.rmtree(inputs, ignore_errors=True)
    for run in runs:
        if run["assignor"].startswith("configured"):
            base = next(
                b["seconds"] for b in runs
                if b["assignor"].startswith("identity")
                and (b["applications"], b["grouped_map"]) == (run["applications"], run["grouped_map"])
            )  # fmt: skip
            run["ratio_to_identity_baseline"] = round(run["seconds"] / base, 2)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    # Keep earlier measurements of other sizes / kinds (each size can be run on its own).
    earlier = json.loads(RESULTS.read_text()).get("runs", []) if RESULTS.exists() else []
    measured = {(r["applications"], r["grouped_map"], r["assignor"]) for r in runs}
    runs = [r for r in earlier if (r["applications"], r["grouped_map"], r["assignor"]) not in measured] + runs
    runs.sort(key=lambda r: (r["applications"], r["grouped_map"], r["assignor"]))
    write_document(
        RESULTS, {"benchmark": "fleet planning job, local[2] Spark + Delta", "method": METHOD, "runs": runs}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
