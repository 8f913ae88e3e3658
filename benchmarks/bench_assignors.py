"""Speed of the HighAvailabilityTaskAssignor and the KIP-924 StickyTaskAssignor at Kafka's scale (issue 3).

Shapes (one stateful subtopology, 1 thread per client and 1 standby unless stated), Kafka's scale-test
shapes plus a realistic one:
  6,000 tasks x 2 clients; 1,000 tasks x 1,000 clients; 1,000 tasks x 100 clients with 50 standbys;
  1,000 tasks x 10 clients x 1,000 threads; 2,000 tasks (10 subtopologies, half stateful) x 100 clients
  x 2 threads with a previous assignment and lags.
For each assignor: the first assignment, then a second one fed with the first (running actives report
lag -2, standbys a small lag), which exercises the stickiness and movement paths. Time is the best of a
few runs of ``assign`` on a loaded state; peak memory is traced in a separate run (tracing slows Python).

Plus whole plans at 300 clients x 3,000 tasks (issue 25; ``--part rack_plans``): every built-in assignor
x rack strategy, through ``planner.plan_scenario`` (load, assign, validation, distribution, metrics), on 10
stateful subtopologies x 300 partitions, 1 standby, 2 threads per client, clients round-robin on 3 racks,
every partition's replicas on 1 or on 2 random racks, without or with a previous assignment and lags; on
the shapes with history also 2 standbys and client tags (zone, or zone and cluster, as the rack-aware
assignment tags), with 1 and 2 standbys (rows' ``standbys`` and ``tags``).
Time is CPU time (``time.process_time``: on a shared machine the wall clock mostly measures the
scheduler), median of ``--repeat`` warm plans after a first one.

Writes ``benchmarks/results/bench_assignors.json`` (its ``rack_plans`` key for the whole plans). Run:
``make bench`` or ``python -m benchmarks.bench_assignors [--repeat N] [--only SHAPE] [--part PART]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

from fleet_assignor.assignor.high_availability import HighAvailabilityTaskAssignor  # noqa: E402
from fleet_assignor.assignor.planner import plan_scenario  # noqa: E402
from fleet_assignor.assignor.scenario import load_scenario  # noqa: E402
from fleet_assignor.assignor.sticky import StickyTaskAssignor  # noqa: E402

RESULTS = REPO_ROOT / "benchmarks" / "results" / "bench_assignors.json"
END_OFFSET = 1_000_000  # a client without state is this far behind: never caught up
STANDBY_LAG = 100  # a warmed-up standby: within the default acceptable recovery lag
NOW_MS = 1_700_000_000_000
ASSIGNORS = {"high_availability": HighAvailabilityTaskAssignor, "sticky": StickyTaskAssignor}


def _pid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012x}"


def _task(sub: int, part: int, stateful: bool, app: str) -> dict[str, Any]:
    partitions = [{"topic": f"{app}-in-{sub}", "partition": part, "source": True, "changelog": False}]
    if stateful:
        partitions.append(
            {"topic": f"{app}-store-{sub}-changelog", "partition": part, "source": False, "changelog": True}
        )
    return {
        "id": f"{sub}_{part}",
        "stateful": stateful,
        "stores": [f"store-{sub}"] if stateful else [],
        "partitions": partitions,
    }


def _shape(
    name: str,
    *,
    subtopologies: list[tuple[int, bool]],
    clients: int,
    threads: int,
    standbys: int,
    history_seed: int | None = None,
) -> dict[str, Any]:
    """A scenario dict; ``subtopologies`` = [(partitions, stateful)]. With ``history_seed``, a random
    previous assignment (each task previously active somewhere, standbys on other clients) with lags."""
    tasks = [
        _task(s, p, stateful, name) for s, (count, stateful) in enumerate(subtopologies) for p in range(count)
    ]
    client_dicts = [{"process_id": _pid(i + 1), "threads": threads} for i in range(clients)]
    scenario = {
        "app_id": name,
        "configs": {"num_standby_replicas": standbys, "max_warmup_replicas": 2},
        "tasks": tasks,
        "clients": client_dicts,
    }
    stateful_ids = [t["id"] for t in tasks if t["stateful"]]
    if history_seed is None:
        for c in client_dicts:
            c["lags"] = {t: END_OFFSET for t in stateful_ids}
        return scenario
    rng = random.Random(history_seed)
    prev_active: dict[int, list[str]] = {i: [] for i in range(clients)}
    prev_standby: dict[int, list[str]] = {i: [] for i in range(clients)}
    stateful_set = set(stateful_ids)
    for t in tasks:
        owner = rng.randrange(clients)
        prev_active[owner].append(t["id"])
        if t["id"] in stateful_set:
            others = [i for i in range(clients) if i != owner]
            for i in rng.sample(others, min(standbys, len(others))):
                prev_standby[i].append(t["id"])
    return _with_history(scenario, prev_active, prev_standby)


def _with_history(scenario: dict[str, Any], prev_active: dict, prev_standby: dict) -> dict[str, Any]:
    """Previous actives report -2, previous standbys a small lag, everything else the full changelog."""
    stateful_ids = [t["id"] for t in scenario["tasks"] if t["stateful"]]
    out = dict(scenario)
    out["clients"] = []
    for i, c in enumerate(scenario["clients"]):
        actives, standbys = set(prev_active.get(i, ())), set(prev_standby.get(i, ()))
        lags = {
            t: (-2 if t in actives else STANDBY_LAG if t in standbys else END_OFFSET) for t in stateful_ids
        }
        out["clients"].append(
            {**c, "prev_active": sorted(actives), "prev_standby": sorted(standbys), "lags": lags}
        )
    return out


def _fed_with(scenario: dict[str, Any], result) -> dict[str, Any]:
    """The scenario of the next rebalance: each client's result becomes its previous assignment."""
    index = {c["process_id"]: i for i, c in enumerate(scenario["clients"])}
    prev_active = {index[str(a.process_id())]: [str(t) for t in a.active_tasks()] for a in result}
    prev_standby = {index[str(a.process_id())]: [str(t) for t in a.standby_tasks()] for a in result}
    return _with_history(scenario, prev_active, prev_standby)


SHAPES = {
    "6000_tasks_x_2_clients": dict(subtopologies=[(6000, True)], clients=2, threads=1, standbys=1),
    "1000_tasks_x_1000_clients": dict(subtopologies=[(1000, True)], clients=1000, threads=1, standbys=1),
    "1000_tasks_x_100_clients_50_standbys": dict(
        subtopologies=[(1000, True)], clients=100, threads=1, standbys=50
    ),
    "1000_tasks_x_10_clients_x_1000_threads": dict(
        subtopologies=[(1000, True)], clients=10, threads=1000, standbys=1
    ),
    "2000_tasks_x_100_clients_x_2_threads_with_history": dict(
        subtopologies=[(200, s % 2 == 0) for s in range(10)],
        clients=100,
        threads=2,
        standbys=1,
        history_seed=7,
    ),
}


def _time_assign(assignor_cls, state, repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = assignor_cls().assign(state)
        best = min(best, time.perf_counter() - started)
    return best * 1000.0, result


def _peak_memory(assignor_cls, state) -> float:
    tracemalloc.start()
    try:
        assignor_cls().assign(state)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / (1 << 20)


def run(repeat: int, only: str | None) -> list[dict[str, Any]]:
    rows = []
    for shape_name, spec in SHAPES.items():
        if only and only not in shape_name:
            continue
        scenario = _shape(shape_name, **spec)
        for assignor_name, assignor_cls in ASSIGNORS.items():
            first_state = load_scenario(scenario, now_ms=NOW_MS).application_state
            first_ms, first = _time_assign(assignor_cls, first_state, repeat)
            second_state = load_scenario(_fed_with(scenario, first), now_ms=NOW_MS).application_state
            second_ms, _ = _time_assign(assignor_cls, second_state, repeat)
            row = {
                "shape": shape_name,
                "assignor": assignor_name,
                "tasks": len(scenario["tasks"]),
                "clients": len(scenario["clients"]),
                "first_ms": round(first_ms, 1),
                "second_ms": round(second_ms, 1),
                "first_peak_mib": round(_peak_memory(assignor_cls, first_state), 1),
                "second_peak_mib": round(_peak_memory(assignor_cls, second_state), 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


# --- whole plans at 300 clients x 3,000 tasks with racks (issue 25) ---------------------------------------

RACK_PLAN_ASSIGNORS = ("high_availability", "sticky", "fallback_prior", "streams_sticky")
RACK_PLAN_STRATEGIES = ("none", "min_traffic", "balance_subtopology")
RACK_PLAN_RACKS = ("rack-0", "rack-1", "rack-2")
# name: (racks per partition's replicas, seed of the previous assignment or None for a first one)
RACK_PLAN_SHAPES: dict[str, tuple[int, int | None]] = {
    "3000_tasks_x_300_clients_replicas_on_1_rack": (1, None),
    "3000_tasks_x_300_clients_replicas_on_2_racks": (2, None),
    "3000_tasks_x_300_clients_replicas_on_1_rack_with_history": (1, 25),
    "3000_tasks_x_300_clients_replicas_on_2_racks_with_history": (2, 26),
}
RACK_PLAN_TARGET_MS = 500.0
# (standbys, client tag keys): the plain variant on every shape, the others on the shapes with history.
RACK_PLAN_VARIANTS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, ()),
    (2, ()),
    (1, ("zone",)),
    (2, ("zone",)),
    (1, ("zone", "cluster")),
    (2, ("zone", "cluster")),
)


def rack_plan_scenario(
    shape: str, strategy: str, standbys: int = 1, tag_keys: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One of the ``RACK_PLAN_SHAPES`` with the given rack strategy (costs: the assignor's defaults),
    ``standbys`` standby replicas and, with ``tag_keys``, client tags zone (3 values) and cluster (2 values)
    round-robin (so zone follows the rack) configured as the rack-aware assignment tags."""
    replica_racks, history_seed = RACK_PLAN_SHAPES[shape]
    scenario = _shape(
        shape,
        subtopologies=[(300, True)] * 10,
        clients=300,
        threads=2,
        standbys=1,
        history_seed=history_seed,
    )
    rng = random.Random(1000 * replica_racks + (history_seed or 0))
    for task in scenario["tasks"]:
        for partition in task["partitions"]:
            partition["racks"] = sorted(rng.sample(RACK_PLAN_RACKS, replica_racks))
    for i, client in enumerate(scenario["clients"]):
        client["rack"] = RACK_PLAN_RACKS[i % len(RACK_PLAN_RACKS)]
        client["lags"] = {t: lag for t, lag in client["lags"].items() if lag != END_OFFSET}
    _report_whole_changelogs(scenario["clients"], [t["id"] for t in scenario["tasks"]], rng)
    scenario["configs"] = {
        **scenario["configs"],
        "rack_aware_assignment_strategy": strategy,
        "num_standby_replicas": standbys,
    }
    if tag_keys:
        scenario["configs"]["rack_aware_assignment_tags"] = list(tag_keys)
        for i, client in enumerate(scenario["clients"]):
            tags = {"zone": f"z{i % 3}", "cluster": f"k{i % 2}"}
            client["tags"] = {key: tags[key] for key in tag_keys}
    return scenario


def _report_whole_changelogs(clients: list[dict[str, Any]], task_ids: list[str], rng: random.Random) -> None:
    """Clients report lags only for the tasks they keep state for (as Kafka's clients do): one random client
    per task holds a stale copy a whole changelog behind, so every client without the task's state still
    lags by ``END_OFFSET`` (a missing lag is the task's whole changelog: the largest one reported)."""
    for task in task_ids:
        lags = clients[rng.randrange(len(clients))]["lags"]
        lags.setdefault(task, END_OFFSET)


def _plan_cpu_ms(scenario: dict[str, Any], assignor: str, repeat: int) -> tuple[float, float]:
    """CPU ms of the first plan and the median of ``repeat`` warm ones."""
    started = time.process_time()
    plan_scenario(scenario, assignor=assignor, now_ms=0)
    first = (time.process_time() - started) * 1000.0
    warm = []
    for _ in range(repeat):
        started = time.process_time()
        plan_scenario(scenario, assignor=assignor, now_ms=0)
        warm.append((time.process_time() - started) * 1000.0)
    return first, statistics.median(warm)


def run_rack_plans(repeat: int, only: str | None) -> list[dict[str, Any]]:
    rows = []
    for shape in RACK_PLAN_SHAPES:
        if only and only not in shape:
            continue
        variants = RACK_PLAN_VARIANTS if RACK_PLAN_SHAPES[shape][1] is not None else RACK_PLAN_VARIANTS[:1]
        for standbys, tag_keys in variants:
            for strategy in RACK_PLAN_STRATEGIES:
                scenario = rack_plan_scenario(shape, strategy, standbys, tag_keys)
                for assignor in RACK_PLAN_ASSIGNORS:
                    first_ms, median_ms = _plan_cpu_ms(scenario, assignor, repeat)
                    row = {
                        "shape": shape,
                        "assignor": assignor,
                        "strategy": strategy,
                        "standbys": standbys,
                        "tags": list(tag_keys),
                        "tasks": len(scenario["tasks"]),
                        "clients": len(scenario["clients"]),
                        "first_cpu_ms": round(first_ms, 1),
                        "warm_median_cpu_ms": round(median_ms, 1),
                        "within_target": median_ms <= RACK_PLAN_TARGET_MS,
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts")
    parser.add_argument("--only", help="run only shapes whose name contains this")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--part",
        choices=("all", "assign", "rack_plans"),
        default="all",
        help="assign: the assignors' assign() shapes; rack_plans: the whole plans with racks (issue 25); "
        "a part not run keeps its results from the existing JSON",
    )
    args = parser.parse_args(argv)
    from benchmarks.host_probe import host_probe_ms

    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    # The host's speed when each part ran (benchmarks/host_probe.py); a part not run keeps its earlier one.
    probes = dict(previous.get("host_probe_ms", {}))
    rows = previous.get("results", [])
    if args.part != "rack_plans":
        probes["assign"] = host_probe_ms()
        rows = run(args.repeat, args.only)
    rack_rows = previous.get("rack_plans", [])
    if args.part != "assign":
        probes["rack_plans"] = host_probe_ms()
        rack_rows = run_rack_plans(args.repeat, args.only)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "bench_assignors",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": args.repeat,
        "results": rows,
        "rack_plans": rack_rows,
        "rack_plans_target_ms": RACK_PLAN_TARGET_MS,
        "host_probe_ms": probes,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
