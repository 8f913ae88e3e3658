"""The KIP-924 standby optimizer without tags against brute force: on small random instances its total
(traffic x remote changelog partitions + non-overlap x new standby placements) equals the minimum over every
re-placement that keeps each client's standby count, never doubles a task on a client and never puts a
standby next to its active."""

from __future__ import annotations

import itertools
import random

from fleet_assignor.assignor import AssignedTask, KafkaStreamsAssignment, TaskInfo
from fleet_assignor.assignor.rack import optimize_rack_aware_standby_tasks
from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams
from tests.fixtures import pid, rack_app_state, rack_client, tid, ttp

RACKS = ["r1", "r2", "r3"]


def _instance(rng: random.Random):
    n_clients, n_tasks = rng.randint(3, 4), rng.randint(1, 3)
    tasks = [
        TaskInfo(tid(f"0_{i}"), True, frozenset({"s"}), (
            ttp("in", i, rng.sample(RACKS, 1), source=True, changelog=False),
            ttp("log", i, rng.sample(RACKS, rng.randint(1, 2)), source=False, changelog=True),
        ))
        for i in range(n_tasks)
    ]  # fmt: skip
    clients = [rack_client(n + 1, rng.choice(RACKS)) for n in range(n_clients)]
    active, standby = {}, {}
    for i in range(n_tasks):
        owners = rng.sample(range(1, n_clients + 1), rng.randint(2, min(3, n_clients)))
        active.setdefault(owners[0], []).append(f"0_{i}")
        for owner in owners[1:]:
            standby.setdefault(owner, []).append(f"0_{i}")
    return tasks, clients, active, standby


def _assignments(clients, active, standby):
    return {
        c.process_id: KafkaStreamsAssignment.of(
            c.process_id,
            [AssignedTask.active(tid(t)) for t in active.get(c.process_id.uuid.int, [])]
            + [AssignedTask.standby(tid(t)) for t in standby.get(c.process_id.uuid.int, [])],
        )
        for c in clients
    }


def _brute_force(tasks, clients, active, standby, tc, nc) -> int:
    racks = {c.process_id.uuid.int: c.rack_id for c in clients}
    names = [str(t.id) for t in tasks]
    changelog = {str(t.id): [p.rack_ids for p in t.changelog_partitions] for t in tasks}
    holders = {t: {n for n, ts in standby.items() if t in ts} for t in names}
    owner = {t: n for n, ts in active.items() for t in ts}
    counts = {n: len(ts) for n, ts in standby.items()}
    options = []
    for t in names:
        allowed = [n for n in racks if n != owner[t]]
        options.append([set(c) for c in itertools.combinations(allowed, len(holders[t]))])
    best = None
    for choice in itertools.product(*options):
        load = {}
        for chosen in choice:
            for n in chosen:
                load[n] = load.get(n, 0) + 1
        if {n: v for n, v in load.items() if v} != {n: v for n, v in counts.items() if v}:
            continue
        total = 0
        for t, chosen in zip(names, choice, strict=False):
            total += sum(tc * sum(racks[n] not in rs for rs in changelog[t]) for n in chosen)
            total += nc * len(chosen - holders[t])
        best = total if best is None or total < best else best
    return best


def test_global_standby_placement_is_optimal_on_random_small_instances():
    rng = random.Random(924)
    for _ in range(150):
        tasks, clients, active, standby = _instance(rng)
        tc, nc = rng.choice([(10, 1), (1, 10), (1, 0), (3, 2)])
        strategy = rng.choice(["min_traffic", "balance_subtopology"])
        app = rack_app_state(tasks, clients, rack_aware_assignment_strategy=strategy,
                             rack_aware_traffic_cost=tc, rack_aware_non_overlap_cost=nc,
                             num_standby_replicas=2)  # fmt: skip
        assignments = _assignments(clients, active, standby)
        result = optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(app), assignments)
        assert result.total_cost == _brute_force(tasks, clients, active, standby, tc, nc)
        for p, a in assignments.items():
            assert not set(a.active_tasks()) & set(a.standby_tasks())
            assert len(a.standby_tasks()) == len(standby.get(p.uuid.int, []))
        assert pid(1) in assignments
