"""Fleet throughput (`make bench`): synthetic fleets of 1,000 / 10,000 / 100,000 applications (median ~20
tasks, a tail up to 2,000) read, planned and written on local Delta, with applyInPandas and applyInArrow,
and the same pipeline with an identity assignor as the I/O baseline.
Writes benchmarks/results/bench_fleet.json.

    python -m benchmarks.bench_fleet [--sizes 1000,10000,100000] [--kinds arrow,pandas] [--cold]

With ``--cold``, each size is planned once per kind in a fresh Python process and JVM instead, as one
scheduled spark-submit run is (the `cold_runs` of the JSON; the warm runs are not repeated).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

from benchmarks.host_probe import host_probe_ms  # noqa: E402
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

COLD_METHOD = (
    "--cold: per size and kind one planned run in a fresh Python process and JVM (no warm-up), as one "
    "scheduled spark-submit run; `seconds` is run_job's wall clock, `seconds_with_session_start` adds "
    "starting the session"
)


def shuffle_partitions(size: int) -> int:
    """A multiple of the cores (an odd count leaves one core idle in the grouped map's last wave): one per
    core per 6,250 applications, at least one per core. Fewer partitions mean fewer tasks in each of the
    run's ~80 stages: 10,000 applications on 2 cores took ~1.5 s less with 2 than with 8 (2026-11-27,
    docs/performance.md)."""
    cores = os.cpu_count() or 2
    return min(64, cores * max(1, size // 6_250))


def measure(spark, inputs: Path, size: int, kind: GroupedMapKind, assignor: str | None) -> dict:
    out = SCRATCH / f"out-{size}-{kind.value}-{'identity' if assignor else 'planned'}"
    shutil.rmtree(out, ignore_errors=True)
    config = JobConfig(
        input_path=str(inputs), output_path=str(out), run_id="bench", assignor=assignor,
        planned_at_ms=1_767_225_600_000, grouped_map=kind,
        shuffle_partitions=shuffle_partitions(size),
    )  # fmt: skip
    load_before = os.getloadavg()[0]
    probe = host_probe_ms()
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
        # The host's speed at the time (benchmarks/host_probe.py): runs of different hours compare through it.
        "host_probe_ms": probe,
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


def bench_session():
    spark = get_or_create_session(
        "fleet-assignor-bench", master="local[2]", extra_conf={"spark.driver.memory": "10g"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cold_child(inputs: Path, size: int, kind: GroupedMapKind) -> int:
    """In a fresh process: start the session, plan once, print the measurement as one JSON line."""
    started = time.perf_counter()
    spark = bench_session()
    result = measure(spark, inputs, size, kind, None)
    result["seconds_with_session_start"] = round(time.perf_counter() - started, 2)
    print("COLD " + json.dumps(result), flush=True)
    return 0


def measure_cold(inputs: Path, size: int, kind: GroupedMapKind) -> dict:
    command = [
        sys.executable,
        "-m",
        "benchmarks.bench_fleet",
        "--cold-child",
        str(inputs),
        str(size),
        kind.value,
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("COLD "))
    return json.loads(line[len("COLD ") :])


def run_cold(sizes: list[int], kinds: list[GroupedMapKind]) -> int:
    spark = bench_session()
    runs = []
    for size in sizes:
        inputs = SCRATCH / f"in-{size}"
        shutil.rmtree(inputs, ignore_errors=True)
        rows = write_synthetic_fleet(spark, str(inputs), size)
        for kind in kinds:
            result = {**measure_cold(inputs, size, kind), "input_rows": rows}
            print(json.dumps(result), flush=True)
            runs.append(result)
        shutil.rmtree(inputs, ignore_errors=True)
    document = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    measured = {(r["applications"], r["grouped_map"]) for r in runs}
    earlier = [
        r for r in document.get("cold_runs", []) if (r["applications"], r["grouped_map"]) not in measured
    ]
    document["cold_runs"] = sorted(earlier + runs, key=lambda r: (r["applications"], r["grouped_map"]))
    document["cold_method"] = COLD_METHOD
    write_document(RESULTS, {k: v for k, v in document.items() if k not in ("measured_at", "machine")})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--kinds", default="arrow,pandas")
    parser.add_argument("--cold", action="store_true", help="one run per size and kind, each in a fresh JVM")
    parser.add_argument("--cold-child", nargs=3, metavar=("INPUTS", "SIZE", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    kinds = [GroupedMapKind.parse(k) for k in args.kinds.split(",")]
    if args.cold_child:
        inputs, size, kind = args.cold_child
        return cold_child(Path(inputs), int(size), GroupedMapKind.parse(kind))
    if args.cold:
        return run_cold([int(s) for s in args.sizes.split(",")], kinds)
    spark = bench_session()
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
    document = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    earlier = document.get("runs", [])
    measured = {(r["applications"], r["grouped_map"], r["assignor"]) for r in runs}
    runs = [r for r in earlier if (r["applications"], r["grouped_map"], r["assignor"]) not in measured] + runs
    runs.sort(key=lambda r: (r["applications"], r["grouped_map"], r["assignor"]))
    cold = {"cold_runs": document["cold_runs"]} if "cold_runs" in document else {}
    write_document(
        RESULTS,
        {"benchmark": "fleet planning job, local[2] Spark + Delta", "method": METHOD, "runs": runs, **cold},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
