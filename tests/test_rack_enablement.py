"""assignor.rack.enablement: when each optimizer may run, and the reason it may not (rack.md §2)."""

from __future__ import annotations

from fleet_assignor.assignor import AssignmentConfigs, TaskInfo, TaskTopicPartition, TopicPartition
from fleet_assignor.assignor.rack.enablement import (
    Enablement,
    OptimizedTaskType,
    legacy_enablement,
    utils_enablement,
)
from tests.fixtures import TASK_0_0, app_state, streams_state


def _task(source_racks=("r1",), changelog_racks=("r1",)) -> TaskInfo:
    return TaskInfo(
        TASK_0_0,
        True,
        frozenset({"s"}),
        (
            TaskTopicPartition(TopicPartition("in", 0), True, False, frozenset(source_racks)),
            TaskTopicPartition(TopicPartition("cl", 0), False, True, frozenset(changelog_racks)),
        ),
    )


def _state(task: TaskInfo, *, strategy="min_traffic", standbys=0, racks=("r1", "r2"), traffic=None,
           non_overlap=None):  # fmt: skip
    configs = AssignmentConfigs(0, 1, standbys, 60_000, (), traffic, non_overlap, strategy)
    clients = [streams_state(n + 1, rack=rack) for n, rack in enumerate(racks)]
    return app_state([task], clients, configs)


def test_enabled_when_every_client_and_partition_has_a_rack():
    state = _state(_task(), standbys=1, traffic=1, non_overlap=1)
    assert legacy_enablement(state) == Enablement.ok() == Enablement(True, None)
    for task_type in OptimizedTaskType:
        assert utils_enablement(state, task_type, 1, 1).enabled


def test_strategy_none_disables_both_paths_first():
    state = _state(_task(source_racks=()), strategy="none", racks=("r1", None))
    expected = Enablement.disabled("rack_aware_assignment_strategy is none")
    assert legacy_enablement(state) == expected
    assert utils_enablement(state, OptimizedTaskType.ACTIVE, 1, 1) == expected


def test_a_client_without_rack_is_named():
    state = _state(_task(), racks=("r1", None))
    reason = legacy_enablement(state).reason
    assert reason == "client 00000000-0000-0000-0000-000000000002 has no rack (client.rack)"
    assert utils_enablement(state, OptimizedTaskType.STANDBY, 1, 1).reason == reason


def test_legacy_checks_changelog_racks_only_with_standbys():
    without_changelog_racks = _task(changelog_racks=())
    assert legacy_enablement(_state(without_changelog_racks, standbys=0)).enabled
    disabled = legacy_enablement(_state(without_changelog_racks, standbys=1))
    assert disabled == Enablement.disabled(
        f"partition {TopicPartition('cl', 0)} of task 0_0 has no rack information"
    )


def test_utils_scope_follows_the_task_type():
    """KIP-924 actives read every partition of the task; standbys only the changelog ones."""
    state = _state(_task(source_racks=()))
    assert not utils_enablement(state, OptimizedTaskType.ACTIVE, 1, 1).enabled
    assert utils_enablement(state, OptimizedTaskType.STANDBY, 1, 1).enabled


def test_utils_needs_both_costs_but_an_override_counts():
    state = _state(_task())
    assert utils_enablement(state, OptimizedTaskType.ACTIVE, None, 1).reason == (
        "rack_aware_traffic_cost is not set"
    )
    assert utils_enablement(state, OptimizedTaskType.ACTIVE, 1, None).reason == (
        "rack_aware_non_overlap_cost is not set"
    )
    assert utils_enablement(state, OptimizedTaskType.ACTIVE, 0, 0).enabled  # zero is a value, not unset
