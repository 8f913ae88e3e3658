"""Kafka's randomized rack tests (rack.md §10: shouldOptimizeRandomActive, shouldMaintainOriginalAssignment-
ForMinCost, shouldOptimizeRandomStandby, testAssignTaskFromMinCostFlow), the legacy enablement checks of
§2.1 as a table, and the strategy factory."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fleet_assignor.assignor import ClientState, KafkaStreamsState, TaskInfo
from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.rack import RackAwareTaskAssignor
from fleet_assignor.assignor.rack.graph import build_problem
from fleet_assignor.assignor.standby import assign_standby_replicas
from tests.fixtures import pid, rack_app_state, tid, ttp

STRATEGIES = ["min_traffic", "balance_subtopology"]
COSTS = {"stateful": (10, 1), "stateless": (1, 0)}


def _random_topology(rng: random.Random, subtopologies: int, partitions: int, racks: int) -> list[TaskInfo]:
    """Task i_j reads topic i and topic i+1, partition j; each partition has 1-3 replicas on random racks;
    its changelog lives on random racks too."""
    rack_names = [f"rack{r}" for r in range(racks)]
    topic_racks = {
        (topic, p): rng.sample(rack_names, rng.randint(1, 3))
        for topic in range(subtopologies + 1)
        for p in range(partitions)
    }
    tasks = []
    for sub in range(subtopologies):
        for p in range(partitions):
            parts = [
                ttp(f"topic{t}", p, topic_racks[(t, p)], source=True, changelog=False) for t in (sub, sub + 1)
            ]
            parts.append(ttp(f"store{sub}-changelog", p, rng.sample(rack_names, rng.randint(1, 3)),
                             source=False, changelog=True))  # fmt: skip
            tasks.append(TaskInfo(tid(f"{sub}_{p}"), True, frozenset({"s"}), tuple(parts)))
    return tasks


def _clients(count: int, racks: int, *, tags: bool = False, capacity: int = 1) -> list[KafkaStreamsState]:
    return [
        KafkaStreamsState(pid(n + 1), capacity, (f"c{n}",), rack_id=f"rack{n % racks}",
                          client_tags={"rack": f"rack{n % racks}"} if tags else {})
        for n in range(count)
    ]  # fmt: skip


def _deal_randomly(app, rng: random.Random) -> dict:
    states = {p: ClientState.from_kafka_streams_state(s) for p, s in app.clients.items()}
    tasks = list(app.all_tasks())
    rng.shuffle(tasks)
    clients = list(states.values())
    for n, task in enumerate(tasks):
        clients[n % len(clients)].assign_active(task)
    return states


def _skew_per_subtopology(states) -> int:
    worst = 0
    subs = {t.subtopology for s in states.values() for t in s.active_tasks}
    for sub in subs:
        counts = [sum(1 for t in s.active_tasks if t.subtopology == sub) for s in states.values()]
        worst = max(worst, max(counts) - min(counts))
    return worst


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
@pytest.mark.parametrize("seed", range(3))
def test_should_optimize_random_active(strategy, kind, seed):
    rng = random.Random(seed)
    app = rack_app_state(
        _random_topology(rng, 40, 3, 30), _clients(30, 30), rack_aware_assignment_strategy=strategy
    )
    states = _deal_randomly(app, rng)
    counts = {p: s.active_task_count for p, s in states.items()}
    rack = RackAwareTaskAssignor(app)
    assert rack.can_enable_rack_awareness()
    tc, nc = COSTS[kind]
    after = rack.optimize_active_tasks(list(app.all_tasks()), states, tc, nc)
    assert after <= rack.last_active_cost_before
    assert {p: s.active_task_count for p, s in states.items()} == counts
    assert sorted(t for s in states.values() for t in s.active_tasks) == sorted(app.all_tasks())
    if strategy == "balance_subtopology":  # caps ceil(4 * 3 / 120) = 1 per subtopology and client
        assert _skew_per_subtopology(states) <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", range(3))
def test_should_maintain_original_assignment_for_min_cost(strategy, seed):
    """Traffic cost 0, non-overlap 1: min_traffic keeps the input exactly; balance gives a valid answer
    (ours also keeps the input wherever the subtopology caps allow it)."""
    rng = random.Random(seed)
    app = rack_app_state(
        _random_topology(rng, 40, 3, 20), _clients(30, 20), rack_aware_assignment_strategy=strategy
    )
    states = _deal_randomly(app, rng)
    original = {p: s.active_set() for p, s in states.items()}
    rack = RackAwareTaskAssignor(app)
    cost = rack.optimize_active_tasks(list(app.all_tasks()), states, 0, 1)
    assert rack.last_active_cost_before == 0
    if strategy == "min_traffic":
        assert cost == 0
        assert {p: s.active_set() for p, s in states.items()} == original
    else:
        assert {p: s.active_task_count for p, s in states.items()} == {p: len(t) for p, t in original.items()}
        assert _skew_per_subtopology(states) <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", range(2))
def test_should_optimize_random_standby(strategy, seed):
    """Kafka's shape scaled down to keep the suite fast (Kafka: 50 racks, 60 x 3 tasks, 50 clients): 20
    racks, 30 x 3 tasks, 20 clients of capacity 3, 3 standbys placed by the client-tag assignor with the
    rack as tag; the optimizer with the tag rule keeps replicas on distinct racks and the counts."""
    rng = random.Random(seed)
    app = rack_app_state(
        _random_topology(rng, 30, 3, 20), _clients(20, 20, tags=True, capacity=3),
        rack_aware_assignment_strategy=strategy, num_standby_replicas=3, rack_aware_assignment_tags=("rack",),
    )  # fmt: skip
    states = _deal_randomly(app, rng)
    assign_standby_replicas(states, list(app.all_tasks()), app.assignment_configs())
    standby_counts = {p: s.standby_task_count for p, s in states.items()}
    rack = RackAwareTaskAssignor(app)

    def distinct_tags_kept(source, destination, task, clients):
        others = {
            s.rack_id
            for s in clients.values()
            if s not in (source, destination) and s.has_assigned_task(task)
        }
        return len(others | {destination.rack_id}) >= len(others | {source.rack_id})

    after = rack.optimize_standby_tasks(states, 10, 1, distinct_tags_kept)
    assert after <= rack.last_standby_cost_before
    assert {p: s.standby_task_count for p, s in states.items()} == standby_counts
    for task in app.all_tasks():
        holders = [s.rack_id for s in states.values() if s.has_assigned_task(task)]
        assert len(holders) == len(set(holders))


# --- legacy enablement (rack.md §2.1), one table for Kafka's describe/caching tests (§10 rule (a)) -------
@pytest.mark.parametrize(
    ("case", "standbys", "reason"),
    [
        ("ok", 1, None),
        ("strategy none", 0, "rack_aware_assignment_strategy is none"),
        ("client without rack", 0, "client 00000000-0000-0000-0000-000000000002 has no rack"),
        ("source without racks", 0, "partition src-0 of task 0_0 has no rack information"),
        ("changelog without racks", 1, "partition log-0 of task 0_0 has no rack information"),
        ("changelog without racks", 0, None),  # changelog racks matter only with standbys configured
    ],
)
def test_legacy_enablement_with_stated_reason(case, standbys, reason):
    task = TaskInfo(tid("0_0"), True, frozenset({"s"}), (
        ttp("src", 0, set() if case == "source without racks" else {"r1"}, source=True, changelog=False),
        ttp("log", 0, set() if case == "changelog without racks" else {"r1"}, source=False, changelog=True),
    ))  # fmt: skip
    clients = [
        KafkaStreamsState(pid(1), 1, ("c1",), rack_id="r1"),
        KafkaStreamsState(pid(2), 1, ("c2",), rack_id=None if case == "client without rack" else "r2"),
    ]
    strategy = "none" if case == "strategy none" else "min_traffic"
    rack = RackAwareTaskAssignor(
        rack_app_state(
            [task], clients, rack_aware_assignment_strategy=strategy, num_standby_replicas=standbys
        )
    )
    assert rack.can_enable_rack_awareness() is (reason is None)
    assert (rack.disabled_reason or "").startswith(reason or "")


def test_factory_refuses_strategy_none():
    costs = np.zeros((1, 1), dtype=np.int64)
    with pytest.raises(ValueError, match="Rack aware assignment is disabled"):
        build_problem(RackAwareStrategy.NONE, [tid("0_0")], costs, np.ones((1, 1), bool),
                      np.zeros(1, dtype=np.int64), 1, lambda t: t.subtopology)  # fmt: skip


def test_factory_balance_groups_by_subtopology_with_exact_caps():
    tasks = [tid(t) for t in ("0_0", "0_1", "0_2", "1_0")]
    current = np.array([0, 0, 1, 1], dtype=np.int64)
    problem = build_problem(RackAwareStrategy.BALANCE_SUBTOPOLOGY, tasks, np.zeros((4, 2), dtype=np.int64),
                            np.ones((4, 2), bool), current, 2, lambda t: t.subtopology)  # fmt: skip
    assert problem.groups.tolist() == [0, 0, 0, 1]
    assert problem.group_capacity.tolist() == [[2, 2], [1, 1]]  # ceil(2*3/4), ceil(2*1/4)
    assert problem.client_capacity.tolist() == [2, 2]
