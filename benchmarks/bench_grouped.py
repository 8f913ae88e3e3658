"""The Python cost of one application in the fleet job's grouped map (`make bench`): what each call of the
grouped map does per application (shape the compact input, load, plan, rollout report, rows, the Arrow
table), without Spark's own per-call work.

A synthetic fleet (seed 7) is written to local Delta and shaped by the job's own Spark code
(`prepare_fleet`); its (app_id, compact scenario JSON) pairs are collected and each application is planned
in this process by `jobs.grouped.planned_table`, as a Python worker does, with the worker's GC setting.
CPU time (`time.process_time`, so other load on the machine inflates it little), best of 3 per application
(after one warm pass).
A second measure plans the applications as the job's calls do, ~64 to a call (`APPLICATIONS_PER_CALL`;
here consecutive ones in app_id order), best of 3 per call: the rows of a call are converted to Arrow
once, so the conversion's fixed cost is shared as in the job. Writes benchmarks/results/bench_grouped.json.

    python -m benchmarks.bench_grouped [--applications 1000] [--pairs FILE]  (--pairs: reuse collected pairs)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "bench_grouped.json"
SCRATCH = REPO / "benchmarks" / "results" / "tmp" / "grouped"
NOW_MS = 1_767_225_600_000
REPEAT = 3
IDENTITY = "fleet_assignor.jobs.baseline:IdentityAssignor"


def collect_pairs(applications: int) -> list[tuple[str, str]]:
    """The grouped map's input of a synthetic fleet: (app_id, compact scenario JSON) per application."""
    from fleet_assignor.jobs.config import JobConfig
    from fleet_assignor.jobs.delta_io import read_inputs
    from fleet_assignor.jobs.plan_assignments import INPUT_TABLE_NAMES
    from fleet_assignor.jobs.prepare import prepare_fleet
    from fleet_assignor.jobs.spark import get_or_create_session
    from fleet_assignor.jobs.synthetic import write_synthetic_fleet

    spark = get_or_create_session("fleet-assignor-bench-grouped", master="local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    inputs = SCRATCH / f"in-{applications}"
    shutil.rmtree(inputs, ignore_errors=True)
    write_synthetic_fleet(spark, str(inputs), applications)
    config = JobConfig(input_path=str(inputs), output_path=str(SCRATCH / "unused"))
    snapshot = read_inputs(spark, {name: config.input_location(name) for name in INPUT_TABLE_NAMES}, {})
    pairs = sorted((row[0], row[1]) for row in prepare_fleet(snapshot.frames).apps.collect())
    shutil.rmtree(inputs, ignore_errors=True)
    return pairs


def best_call_ms(calls: list[list[tuple[str, str]]], assignor: str | None) -> list[float]:
    """CPU ms of planned_table on each call, best of REPEAT (after one warm pass over all of them)."""
    from fleet_assignor.jobs.grouped import PlanSettings, planned_table, tune_worker_gc

    tune_worker_gc()
    settings = PlanSettings(now_ms=NOW_MS, assignor=assignor)
    for call in calls:
        planned_table(call, settings)
    best = []
    for call in calls:
        times = []
        for _ in range(REPEAT):
            started = time.process_time()
            planned_table(call, settings)
            times.append(time.process_time() - started)
        best.append(min(times) * 1000.0)
    return best


def time_applications(pairs: list[tuple[str, str]], assignor: str | None) -> list[float]:
    """CPU ms per application, each planned alone (a call of one)."""
    return best_call_ms([[pair] for pair in pairs], assignor)


def time_calls(pairs: list[tuple[str, str]], assignor: str | None) -> dict[str, float]:
    """CPU ms per application when planned APPLICATIONS_PER_CALL to a call: the calls' best times summed
    and divided by the applications."""
    from fleet_assignor.jobs.grouped import APPLICATIONS_PER_CALL

    calls = [pairs[k : k + APPLICATIONS_PER_CALL] for k in range(0, len(pairs), APPLICATIONS_PER_CALL)]
    return {"calls": len(calls), "mean_ms": round(sum(best_call_ms(calls, assignor)) / len(pairs), 3)}


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "mean_ms": round(statistics.mean(ordered), 3),
        "median_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "max_ms": round(ordered[-1], 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--applications", type=int, default=1000)
    parser.add_argument("--pairs", type=Path, help="a JSON list of [app_id, compact JSON] to reuse")
    args = parser.parse_args(argv)
    pairs = [tuple(p) for p in json.loads(args.pairs.read_text())] if args.pairs else None
    if pairs is None:
        pairs = collect_pairs(args.applications)
    rows = []
    from benchmarks.host_probe import host_probe_ms

    probe = host_probe_ms()
    assignors = (("configured (high_availability mostly)", None), ("identity (baseline)", IDENTITY))
    for name, assignor in assignors:
        times = time_applications(pairs, assignor)
        row = {"assignor": name, "applications": len(pairs), **summary(times)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    for name, assignor in assignors:
        row = {"assignor": name, "applications": len(pairs), "per_call": time_calls(pairs, assignor)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    from benchmarks.bench_fleet import write_document

    write_document(
        RESULTS,
        {
            "benchmark": "Python CPU per application in the grouped map (jobs.grouped.planned_table)",
            "method": f"synthetic fleet (seed 7) shaped by prepare_fleet; per application the best of "
            f"{REPEAT} CPU times of planned_table([it]) in one process, after one warm pass; rows with "
            f"per_call: the applications in calls of about 64 (as the job), each call's best of {REPEAT}, "
            "summed and divided by the applications",
            "load_average_1min": round(os.getloadavg()[0], 2),
            "host_probe_ms": probe,  # the host's speed at the time: benchmarks/host_probe.py
            "results": rows,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
