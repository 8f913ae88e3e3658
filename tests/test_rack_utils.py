"""KIP-924 rack optimizers: TaskAssignmentUtilsTest's rack cases (rack.md §10), the enablement checks of
§2.2 as one table, and the POLICY.md §4 fixes (each test fails on Kafka's behaviour)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fleet_assignor.assignor import AssignedTask, KafkaStreamsAssignment, TaskInfo
from fleet_assignor.assignor.rack import (
    OptimizedTaskType,
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)
from fleet_assignor.assignor.rack.enablement import utils_enablement
from fleet_assignor.assignor.rack.graph import ceil_share
from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams
from tests.fixtures import (
    SIX_TASKS,
    STANDBY_LAYOUT_ACTIVE,
    STANDBY_LAYOUT_STANDBY,
    pid,
    rack_app_state,
    rack_client,
    rack_task,
    tid,
    ttp,
)

STRATEGIES = ["min_traffic", "balance_subtopology"]


def one_partition_task(text: str, racks) -> TaskInfo:
    """TaskAssignmentUtilsTest's tasks: one partition that is both source and changelog."""
    topic_partition = ttp(f"topic-{text}", 0, racks, source=True, changelog=True)
    return TaskInfo(tid(text), True, frozenset({"store"}), (topic_partition,))


def assignments_of(active: dict[int, list[str]], standby: dict[int, list[str]] | None = None):
    result = {}
    for n in sorted(set(active) | set(standby or {})):
        tasks = [AssignedTask.active(tid(t)) for t in active.get(n, [])]
        tasks += [AssignedTask.standby(tid(t)) for t in (standby or {}).get(n, [])]
        result[pid(n)] = KafkaStreamsAssignment.of(pid(n), tasks)
    return result


def layout(assignments) -> dict[int, tuple[list[str], list[str]]]:
    return {
        p.uuid.int: ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
        for p, a in assignments.items()
    }


def _app(tasks, clients, strategy, **configs):
    configs.setdefault("rack_aware_traffic_cost", 100)
    configs.setdefault("rack_aware_non_overlap_cost", 1)
    return rack_app_state(tasks, clients, rack_aware_assignment_strategy=strategy, **configs)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_optimize_active_task_simple(strategy):
    tasks = [one_partition_task("0_0", {"rack-2"}), one_partition_task("0_1", {"rack-1"})]
    app = _app(tasks, [rack_client(1, "rack-1"), rack_client(2, "rack-2")], strategy)
    assignments = assignments_of({1: ["0_0"], 2: ["0_1"]})
    result = optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments) == {1: (["0_1"], []), 2: (["0_0"], [])}
    assert (result.cross_rack_partitions_before, result.cross_rack_partitions_after) == (2, 0)
    assert result.tasks_moved == 2 and result.total_cost == 2
    again = optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments) == {1: (["0_1"], []), 2: (["0_0"], [])}
    assert again.tasks_moved == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_optimize_standby_tasks_basic(strategy):
    tasks = [one_partition_task("0_0", {"rack-2"}), one_partition_task("0_1", {"rack-3"})]
    clients = [rack_client(1, "rack-1"), rack_client(2, "rack-2"), rack_client(3, "rack-3")]
    app = _app(tasks, clients, strategy, num_standby_replicas=1)
    assignments = assignments_of({1: ["0_0", "0_1"]}, {2: ["0_1"], 3: ["0_0"]})
    result = optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments) == {1: (["0_0", "0_1"], []), 2: ([], ["0_0"]), 3: ([], ["0_1"])}
    assert (result.cross_rack_partitions_before, result.cross_rack_partitions_after) == (2, 0)
    assert result.tasks_moved == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_not_violate_client_tags_during_standby_optimization_same_rack(strategy):
    tasks = [one_partition_task("0_0", {"r2"}), one_partition_task("0_1", {"r3"})]
    clients = [rack_client(n, "r1", tags={"az": az}) for n, az in ((1, "1"), (2, "1"), (3, "2"), (4, "3"))]
    app = _app(tasks, clients, strategy, num_standby_replicas=1, rack_aware_assignment_tags=("az",))
    assignments = assignments_of({1: ["0_0"], 2: ["0_1"]}, {3: ["0_1"], 4: ["0_0"]})
    before = layout(assignments)
    optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments) == before


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_keep_actives_already_on_a_shared_rack(strategy):
    tasks = [one_partition_task("0_0", {"r1", "r2"}), one_partition_task("0_1", {"r2", "r3"})]
    clients = [rack_client(1, "r1"), rack_client(2, "r2"), rack_client(3, "r3")]
    app = _app(tasks, clients, strategy)
    assignments = assignments_of({1: ["0_0"], 3: ["0_1"]})
    result = optimize_rack_aware_active_tasks(
        RackAwareOptimizationParams.of(app).for_tasks([tid("0_0"), tid("0_1")]), assignments
    )
    assert layout(assignments) == {1: (["0_0"], []), 2: ([], []), 3: (["0_1"], [])}
    assert result.cross_rack_partitions_after == 0 and result.tasks_moved == 0


# --- enablement (rack.md §2.2; stands in for Kafka's describe/caching enablement tests, §10 rule (a))
@pytest.mark.parametrize(
    ("case", "task_type", "expected_reason"),
    [
        ("ok", OptimizedTaskType.ACTIVE, None),
        ("ok", OptimizedTaskType.STANDBY, None),
        ("strategy none", OptimizedTaskType.ACTIVE, "rack_aware_assignment_strategy is none"),
        ("no traffic cost", OptimizedTaskType.ACTIVE, "rack_aware_traffic_cost is not set"),
        ("no non-overlap cost", OptimizedTaskType.STANDBY, "rack_aware_non_overlap_cost is not set"),
        (
            "client without rack",
            OptimizedTaskType.ACTIVE,
            "client 00000000-0000-0000-0000-000000000002 has no rack",
        ),
        (
            "source without racks",
            OptimizedTaskType.ACTIVE,
            "partition src-0 of task 0_0 has no rack information",
        ),
        ("source without racks", OptimizedTaskType.STANDBY, None),  # standbys only need changelog racks
        (
            "changelog without racks",
            OptimizedTaskType.STANDBY,
            "partition log-0 of task 0_0 has no rack info",
        ),
        ("changelog without racks", OptimizedTaskType.ACTIVE, "partition log-0 of task 0_0 has no rack info"),
    ],
)
def test_enablement_checks_with_stated_reason(case, task_type, expected_reason):
    source_racks = set() if case == "source without racks" else {"r1"}
    changelog_racks = set() if case == "changelog without racks" else {"r1"}
    task = TaskInfo(
        tid("0_0"),
        True,
        frozenset({"s"}),
        (
            ttp("src", 0, source_racks, source=True, changelog=False),
            ttp("log", 0, changelog_racks, source=False, changelog=True),
        ),
    )
    clients = [rack_client(1, "r1"), rack_client(2, None if case == "client without rack" else "r2")]
    app = rack_app_state(
        [task], clients, rack_aware_assignment_strategy="none" if case == "strategy none" else "min_traffic"
    )
    traffic = None if case == "no traffic cost" else 10
    non_overlap = None if case == "no non-overlap cost" else 1
    result = utils_enablement(app, task_type, traffic, non_overlap)
    assert result.enabled is (expected_reason is None)
    if expected_reason is not None:
        assert result.reason.startswith(expected_reason)


def test_disabled_optimization_reports_reason_and_changes_nothing():
    tasks = [one_partition_task("0_0", {"rack-2"}), one_partition_task("0_1", {"rack-1"})]
    app = rack_app_state(
        tasks,
        [rack_client(1, "rack-1"), rack_client(2, None)],
        rack_aware_assignment_strategy="min_traffic",
        rack_aware_traffic_cost=10,
        rack_aware_non_overlap_cost=1,
    )
    assignments = assignments_of({1: ["0_0"], 2: ["0_1"]})
    result = optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert not result.enabled and "has no rack" in result.disabled_reason
    assert layout(assignments) == {1: (["0_0"], []), 2: (["0_1"], [])}


# --- POLICY.md §4 fixes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_policy_fix_standby_optimizer_checks_client_tags_against_real_destination(strategy):
    """Swapping the standbys of C2 (az b) and C3 (az a) would halve traffic, but would put 0_0's standby in
    az a next to its active: the tag spread of 0_0 drops from {a, b} to {a}. Kafka's predicate compares
    the source with itself and swaps; ours refuses."""
    tasks = [one_partition_task("0_0", {"r3"}), one_partition_task("0_1", {"r2"})]
    clients = [
        rack_client(1, "r1", tags={"az": "a"}),
        rack_client(2, "r2", tags={"az": "b"}),
        rack_client(3, "r3", tags={"az": "a"}),
        rack_client(4, "r4", tags={"az": "c"}),
    ]
    app = _app(tasks, clients, strategy, num_standby_replicas=1, rack_aware_assignment_tags=("az",))
    assignments = assignments_of({1: ["0_0"], 4: ["0_1"]}, {2: ["0_0"], 3: ["0_1"]})
    result = optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments)[2] == ([], ["0_0"]) and layout(assignments)[3] == ([], ["0_1"])
    assert result.tasks_moved == 0
    # Control: without the tag rule (what Kafka's predicate amounts to) the same input is swapped.
    untagged = _app(tasks, clients, strategy, num_standby_replicas=1)
    swapped = assignments_of({1: ["0_0"], 4: ["0_1"]}, {2: ["0_0"], 3: ["0_1"]})
    optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(untagged), swapped)
    assert layout(swapped)[2] == ([], ["0_1"]) and layout(swapped)[3] == ([], ["0_0"])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_policy_fix_active_never_moves_onto_its_own_standby(strategy):
    """0_0 reads rack r2 only and its standby sits on C2 (r2): the cheapest move would put the active
    there, and Kafka's map overwrite would silently drop the standby. The edge is left out instead."""
    tasks = [one_partition_task("0_0", {"r2"}), one_partition_task("0_1", {"r1"})]
    app = _app(tasks, [rack_client(1, "r1"), rack_client(2, "r2")], strategy, num_standby_replicas=1)
    assignments = assignments_of({1: ["0_0"], 2: ["0_1"]}, {2: ["0_0"]})
    result = optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert layout(assignments) == {1: (["0_0"], []), 2: (["0_1"], ["0_0"])}
    assert result.tasks_moved == 0
    # Control: without that standby the two actives swap racks.
    free = assignments_of({1: ["0_0"], 2: ["0_1"]})
    optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(app), free)
    assert layout(free) == {1: (["0_1"], []), 2: (["0_0"], [])}


def test_policy_fix_cost_overrides_satisfy_the_gate():
    """Kafka's gate reads only the configs, so the sticky assignor's default costs never take effect."""
    tasks = [one_partition_task("0_0", {"rack-2"}), one_partition_task("0_1", {"rack-1"})]
    app = rack_app_state(
        tasks,
        [rack_client(1, "rack-1"), rack_client(2, "rack-2")],
        rack_aware_assignment_strategy="min_traffic",
    )
    assignments = assignments_of({1: ["0_0"], 2: ["0_1"]})
    params = (
        RackAwareOptimizationParams.of(app).with_traffic_cost_override(1).with_non_overlap_cost_override(0)
    )
    result = optimize_rack_aware_active_tasks(params, assignments)
    assert result.enabled
    assert layout(assignments) == {1: (["0_1"], []), 2: (["0_0"], [])}


def test_policy_fix_balance_capacity_uses_exact_integers():
    """orig 7, T 25, v 25: Kafka's doubles give 7.000000000000001 and a cap of 8; the exact cap is 7."""
    assert math.ceil(7 * 1.0 / 25 * 25) == 8  # Kafka's order of operations in IEEE-754 doubles
    assert ceil_share(np.array([7], dtype=np.int64), 25, 25).tolist() == [7]
    assert ceil_share(np.array([3, 4, 0], dtype=np.int64), 5, 7).tolist() == [
        3,
        3,
        0,
    ]  # ceil(15/7), ceil(20/7)


def test_standby_placement_without_tags_is_global_and_beats_pairwise_search():
    """rack.md §10's standby layout on the KIP-924 path without tags: Kafka's pairwise swaps reach 60 -> 20
    (2 remote changelog partitions); the exact count-preserving re-placement gets no higher, keeps every
    client's standby count and never puts a standby next to its active or twice on one client."""
    clients = [rack_client(n) for n in (1, 2, 3, 4, 6, 7)]
    app = _app([rack_task(t) for t in SIX_TASKS], clients, "min_traffic", num_standby_replicas=2,
               rack_aware_traffic_cost=10)  # fmt: skip
    assignments = assignments_of(STANDBY_LAYOUT_ACTIVE, STANDBY_LAYOUT_STANDBY)
    result = optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(app), assignments)
    assert result.cross_rack_partitions_before == 6
    assert result.cross_rack_partitions_after <= 2
    after = layout(assignments)
    assert {n: len(s) for n, (_, s) in after.items()} == {
        n: len(s) for n, s in STANDBY_LAYOUT_STANDBY.items()
    }
    for _n, (actives, standbys) in after.items():
        assert not set(actives) & set(standbys)
    assert sorted(t for _, s in after.values() for t in s) == sorted(
        t for s in STANDBY_LAYOUT_STANDBY.values() for t in s
    )
