"""Speed of the exact rack-aware optimizer (issue 4): min_traffic and balance_subtopology at 200 tasks x 20
clients, 1,000 x 50 and 10,000 x 200; 3 racks; every partition's replicas on 1 or on 2 of the 3 racks.

Each task reads one source partition and has one changelog partition (KIP-924 actives count both). Tasks
come from 10 subtopologies and start dealt round-robin in TaskId order over the clients in ProcessId order
(the high-availability assignor's first placement); clients sit on racks round-robin. Costs: traffic 10,
non-overlap 1 (the high-availability defaults). Time is one call of `optimize_rack_aware_active_tasks`,
best of ``--repeat`` runs. Kafka's own solver takes 190 s (2 of 3 racks) and 419 s (1 of 3) at 1,000 x 50
on this machine (rack.md §5.5).

Plus the KIP-924 standby optimizer (no tags: one global exact solve) with 1 standby per task, same shapes.

Writes ``benchmarks/results/bench_rack.json``. Run: ``make bench`` or
``python -m benchmarks.bench_rack [--repeat N] [--max-tasks N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

from fleet_assignor.assignor import (  # noqa: E402
    ApplicationState,
    AssignedTask,
    AssignmentConfigs,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    ProcessId,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)
from fleet_assignor.assignor.rack import (  # noqa: E402
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)
from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams  # noqa: E402

RESULTS = REPO_ROOT / "benchmarks" / "results" / "bench_rack.json"
SHAPES = [(200, 20), (1_000, 50), (10_000, 200)]
STRATEGIES = ["min_traffic", "balance_subtopology"]
REPLICA_RACKS = [1, 2]
RACKS = ["rack-0", "rack-1", "rack-2"]
SUBTOPOLOGIES = 10
TARGET_SECONDS = {1_000: 1.0, 10_000: 30.0}


def _state(tasks: int, clients: int, replica_racks: int, strategy: str, seed: int = 42) -> ApplicationState:
    rng = random.Random(seed)
    per_sub = tasks // SUBTOPOLOGIES
    infos = []
    for n in range(tasks):
        sub, part = divmod(n, per_sub)
        partitions = (
            TaskTopicPartition(TopicPartition(f"in-{sub}", part), True, False,
                               frozenset(rng.sample(RACKS, replica_racks))),
            TaskTopicPartition(TopicPartition(f"store-{sub}-changelog", part), False, True,
                               frozenset(rng.sample(RACKS, replica_racks))),
        )  # fmt: skip
        infos.append(TaskInfo(TaskId(sub, part), True, frozenset({f"store-{sub}"}), partitions))
    states = [
        KafkaStreamsState(ProcessId.of(i + 1), 1, (f"c{i}",), rack_id=RACKS[i % len(RACKS)])
        for i in range(clients)
    ]
    configs = AssignmentConfigs(
        rack_aware_assignment_strategy=strategy, rack_aware_traffic_cost=10, rack_aware_non_overlap_cost=1
    )
    return ApplicationState.of(infos, states, configs)


def _round_robin(state: ApplicationState) -> dict[ProcessId, KafkaStreamsAssignment]:
    clients = list(state.clients)
    tasks: dict[ProcessId, list[AssignedTask]] = {c: [] for c in clients}
    for n, task in enumerate(state.all_tasks()):
        tasks[clients[n % len(clients)]].append(AssignedTask.active(task))
    return {c: KafkaStreamsAssignment.of(c, ts) for c, ts in tasks.items()}


def run_case(tasks: int, clients: int, replica_racks: int, strategy: str, repeat: int) -> dict[str, Any]:
    state = _state(tasks, clients, replica_racks, strategy)
    params = RackAwareOptimizationParams.of(state)
    best, result = float("inf"), None
    for _ in range(repeat):
        assignments = _round_robin(state)
        started = time.perf_counter()
        result = optimize_rack_aware_active_tasks(params, assignments)
        best = min(best, time.perf_counter() - started)
    target = TARGET_SECONDS.get(tasks)
    return {
        "tasks": tasks,
        "clients": clients,
        "racks": len(RACKS),
        "replica_racks": replica_racks,
        "strategy": strategy,
        "seconds": round(best, 4),
        "target_seconds": target,
        "within_target": None if target is None else best < target,
        **{k: v for k, v in result.as_dict().items() if k not in ("enabled", "disabled_reason", "task_type")},
    }


def run_standby_case(tasks: int, clients: int, replica_racks: int, standbys: int) -> dict[str, Any]:
    """The KIP-924 standby optimizer (no client tags: one global exact solve) on standbys dealt to the next
    ``standbys`` clients after each active, from the same round-robin start."""
    state = _state(tasks, clients, replica_racks, "min_traffic")
    state = ApplicationState(
        state.tasks, state.clients, replace(state.configs, num_standby_replicas=standbys), state.now_ms
    )
    assignments = _round_robin(state)
    order = list(state.clients)
    for n, task in enumerate(state.all_tasks()):
        for k in range(1, standbys + 1):
            assignments[order[(n + k) % clients]].assign_task(AssignedTask.standby(task))
    started = time.perf_counter()
    result = optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(state), assignments)
    seconds = time.perf_counter() - started
    return {
        "tasks": tasks,
        "clients": clients,
        "racks": len(RACKS),
        "replica_racks": replica_racks,
        "strategy": "standby",
        "standby_replicas": standbys,
        "seconds": round(seconds, 4),
        **{k: v for k, v in result.as_dict().items() if k not in ("enabled", "disabled_reason", "task_type")},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--max-tasks", type=int, default=max(t for t, _ in SHAPES))
    args = parser.parse_args(argv)
    cases = []
    for tasks, clients in SHAPES:
        if tasks > args.max_tasks:
            continue
        for replica_racks in REPLICA_RACKS:
            for strategy in STRATEGIES:
                case = run_case(tasks, clients, replica_racks, strategy, args.repeat if tasks < 10_000 else 1)
                cases.append(case)
                print(
                    f"{tasks:>6} x {clients:<4} replicas on {replica_racks}/3  {strategy:<20} "
                    f"{case['seconds']:8.3f} s  cross-rack {case['cross_rack_partitions_before']} -> "
                    f"{case['cross_rack_partitions_after']}, moved {case['tasks_moved']}",
                    flush=True,
                )
    for tasks, clients in SHAPES:
        if tasks > args.max_tasks:
            continue
        case = run_standby_case(tasks, clients, 1, 1)
        cases.append(case)
        print(
            f"{tasks:>6} x {clients:<4} replicas on 1/3  standby (1 replica)   {case['seconds']:8.3f} s  "
            f"cross-rack {case['cross_rack_partitions_before']} -> {case['cross_rack_partitions_after']}, "
            f"moved {case['tasks_moved']}",
            flush=True,
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {"benchmark": "rack", "python": platform.python_version(), "machine": platform.machine(),
             "cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2), "cases": cases},
            indent=2,
        ) + "\n"
    )  # fmt: skip
    print(f"wrote {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
