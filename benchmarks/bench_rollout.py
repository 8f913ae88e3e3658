"""What the rollout report (issue 22) adds to planning one application, on the synthetic fleet.

The job plans every application (`load_scenario` + `plan`) and would then call `rollout_report` with the
scenario and plan it has; this measures that call alone, per application, on the applications of
`jobs.synthetic.generate_fleet` (median ~20 tasks, a tail up to 2,000), turned into scenarios with
`explore.input_scenarios.scenarios_from_tables`. Each application's report is timed ``--repeat`` times and the
fastest kept (other processes share the 2 cores); planning is timed the same way for scale.

Writes ``benchmarks/results/bench_rollout.json``: median, p90, p99 and max ms added per application, the
same for planning, and the share of applications that need more than one round (a follow-up replan);
with the default settings, then without the task and time budgets (every application simulated until it
converges or reaches max_rounds) for scale.
Run: ``python -m benchmarks.bench_rollout [--apps N] [--seed S] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import pandas as pd

from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.rollout import RolloutReport, RolloutSettings, rollout_report
from fleet_assignor.assignor.scenario import Scenario, load_scenario
from fleet_assignor.explore.input_scenarios import scenarios_from_tables
from fleet_assignor.jobs.synthetic import generate_fleet

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results" / "bench_rollout.json"
NOW_MS = 1_700_000_000_000


def fleet_scenarios(num_apps: int, seed: int) -> list[Scenario]:
    tables = {name: pd.DataFrame(rows) for name, rows in generate_fleet(num_apps, seed).items() if rows}
    return [load_scenario(s, now_ms=NOW_MS) for s in scenarios_from_tables(tables)]


def fastest_ms(repeat: int, run: Any) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        best = min(best, (time.perf_counter() - started) * 1000.0)
    return best, value


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "median": round(statistics.median(ordered), 4),
        "p90": round(at(0.90), 4),
        "p99": round(at(0.99), 4),
        "max": round(ordered[-1], 4),
        "mean": round(statistics.fmean(ordered), 4),
    }


def measure(scenarios: list[Scenario], settings: RolloutSettings, repeat: int) -> dict[str, Any]:
    plan_ms, report_ms, multi_ms = [], [], []
    reports: list[RolloutReport] = []
    for scenario in scenarios:
        planned_ms, planned = fastest_ms(repeat, lambda s=scenario: plan(s))
        added_ms, report = fastest_ms(repeat, lambda s=scenario, p=planned: rollout_report(s, p, settings))
        plan_ms.append(planned_ms)
        report_ms.append(added_ms)
        reports.append(report)
        if report.rounds_simulated > 1:
            multi_ms.append(added_ms)
    stops = collections.Counter(r.stop_reason.value for r in reports)
    risks = collections.Counter(flag.name for r in reports for flag in r.risks)
    tasks = [r.tasks for r in reports]
    typical = [ms for ms, r in zip(report_ms, reports, strict=True) if 20 <= r.tasks <= 30]
    return {
        "settings": {
            "restore_records_per_second": settings.restore_records_per_second,
            "max_rounds": settings.max_rounds,
            "max_replanned_tasks": settings.max_replanned_tasks,
            "time_budget_ms": settings.time_budget_ms,
        },
        "applications": len(scenarios),
        "tasks_per_application": {"median": statistics.median(tasks), "max": max(tasks)},
        "report_ms_added_per_application": percentiles(report_ms),
        "report_ms_added_20_to_30_tasks": percentiles(typical),
        "plan_ms_per_application": percentiles(plan_ms),
        "report_over_plan_total": round(sum(report_ms) / sum(plan_ms), 4),
        # the first plan asks a follow-up: the application needs more than one round
        "share_needing_more_than_one_round": round(
            sum(r.probing_rebalances > 0 for r in reports) / len(reports), 4
        ),
        "share_simulated_more_than_one_round": round(len(multi_ms) / len(reports), 4),
        "report_ms_when_simulated_more_than_one_round": percentiles(multi_ms) if multi_ms else None,
        "stop_reasons": dict(stops),
        "risk_flags_raised": dict(risks),
        "rounds_simulated_max": max(r.rounds_simulated for r in reports),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    scenarios = fleet_scenarios(args.apps, args.seed)
    load_before = os.getloadavg()
    default = measure(scenarios, RolloutSettings(), args.repeat)  # what the job would run with
    # for scale: every application simulated to convergence (up to max_rounds), no task or time budget
    unbounded = measure(
        scenarios, RolloutSettings(max_replanned_tasks=None, time_budget_ms=None), args.repeat
    )
    report = {
        "benchmark": "bench_rollout",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "fleet": {"generator": "jobs.synthetic.generate_fleet", "apps": args.apps, "seed": args.seed},
        "method": f"fastest of {args.repeat} runs per application, rollout_report after plan",
        "default_settings": default,
        "without_task_or_time_budget": unbounded,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
