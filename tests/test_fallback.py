"""fallback_prior (assignors.md §6.2, §11.7; POLICY.md §3 and §4)."""

from __future__ import annotations

import uuid

import pytest

from fleet_assignor.assignor import (
    AssignmentConfigs,
    AssignmentError,
    ProcessId,
    TaskAssignmentException,
    TaskAssignor,
    TaskId,
)
from fleet_assignor.assignor.fallback import FallbackPriorTaskAssignor
from fleet_assignor.assignor.validation import validate_task_assignment
from tests.fixtures import (
    PID_1,
    PID_2,
    PID_3,
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_0_3,
    TASK_1_0,
    app_state,
    stateful_task,
    stateless_task,
    streams_state,
)

NOW_MS = 1_700_000_000_000


def configs(standbys: int = 0, probing_ms: int = 60_000) -> AssignmentConfigs:
    return AssignmentConfigs(0, 1, standbys, probing_ms, ())


def by_client(assignment):
    return {a.process_id(): a for a in assignment}


def test_should_violate_balance_to_preserve_active_task_stickiness():
    tasks = [TASK_0_2, TASK_0_0, TASK_0_1]  # shuffled, as in Kafka's test
    state = app_state(
        [stateless_task(t) for t in tasks],
        [streams_state(1, 1, previous_active=tasks), streams_state(2, 1)],
        configs(),
        NOW_MS,
    )
    assignor = FallbackPriorTaskAssignor()
    result = by_client(assignor.assign(state))
    assert result[PID_1].active_tasks() == [TASK_0_0, TASK_0_1, TASK_0_2]
    assert result[PID_2].active_tasks() == []
    # Kafka's assign returns true: a probing rebalance one interval later, not immediately.
    assert result[PID_1].followup_rebalance_deadline() == NOW_MS + 60_000


def test_is_a_task_assignor_with_its_hooks():
    assignor = FallbackPriorTaskAssignor()
    assert isinstance(assignor, TaskAssignor)
    assignor.configure({"some.key": "v"})
    assert assignor.configs == {"some.key": "v"}
    state = app_state([stateless_task(TASK_0_0)], [streams_state(1)], configs(), NOW_MS)
    result = assignor.assign(state)
    assert assignor.on_assignment_computed(result, state, AssignmentError.NONE) is None


def test_always_requests_a_followup_on_the_smallest_process_id_only():
    high_bit = ProcessId.of(uuid.UUID("c0000000-0000-0000-0000-000000000000"))  # smallest in signed order
    state = app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1)],
        [streams_state(2, previous_active=[TASK_0_0]), streams_state(high_bit), streams_state(1)],
        configs(probing_ms=120_000),
        NOW_MS,
    )
    assignment = FallbackPriorTaskAssignor().assign(state)
    assert [a.process_id() for a in assignment] == [high_bit, PID_1, PID_2]
    deadlines = {a.process_id(): a.followup_rebalance_deadline() for a in assignment}
    assert deadlines == {high_bit: NOW_MS + 120_000, PID_1: None, PID_2: None}


def test_two_claimants_of_a_previous_active_the_later_in_process_id_order_keeps_it():
    high_bit = ProcessId.of(uuid.UUID("80000000-0000-0000-0000-000000000005"))  # sorts before PID_1
    state = app_state(
        [stateless_task(TASK_0_0), stateless_task(TASK_0_1)],
        [streams_state(high_bit, previous_active=[TASK_0_0]), streams_state(1, previous_active=[TASK_0_0])],
        configs(),
        NOW_MS,
    )
    result = by_client(FallbackPriorTaskAssignor().assign(state))
    assert result[PID_1].active_tasks() == [TASK_0_0]
    assert result[high_bit].active_tasks() == [TASK_0_1]


def test_places_the_rest_and_ignores_previous_tasks_the_application_no_longer_has():
    gone = TaskId(9, 0)
    state = app_state(
        [stateless_task(t) for t in (TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3)],
        [streams_state(1, 2, previous_active=[TASK_0_0, gone]), streams_state(2, 2), streams_state(3, 1)],
        configs(),
        NOW_MS,
    )
    assignment = FallbackPriorTaskAssignor().assign(state)
    result = by_client(assignment)
    assert TASK_0_0 in result[PID_1].active_tasks()
    placed = sorted(t for a in assignment for t in a.active_tasks())
    assert placed == [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]
    assert validate_task_assignment(state, assignment).error is AssignmentError.NONE
    # every client got work: the new tasks went to the least-loaded clients
    assert all(a.active_tasks() for a in assignment)


@pytest.mark.parametrize("standbys, clients, expected", [(1, 3, 1), (2, 3, 2), (3, 3, 2), (2, 1, 0)])
def test_every_task_with_a_changelog_gets_min_of_replicas_and_other_clients_standbys(
    standbys, clients, expected
):
    state = app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1), stateless_task(TASK_1_0)],
        [streams_state(n, 2) for n in range(1, clients + 1)],
        configs(standbys),
        NOW_MS,
    )
    assignment = FallbackPriorTaskAssignor().assign(state)
    for task in (TASK_0_0, TASK_0_1):
        assert sum(task in a.standby_tasks() for a in assignment) == expected
    assert all(TASK_1_0 not in a.standby_tasks() for a in assignment)
    assert validate_task_assignment(state, assignment).error is AssignmentError.NONE


def test_lags_are_ignored():
    def plan(lags):
        state = app_state(
            [stateful_task(TASK_0_0), stateful_task(TASK_0_1)],
            [
                streams_state(1, previous_active=[TASK_0_0], lags={TASK_0_0: -2, TASK_0_1: lags}),
                streams_state(2, previous_active=[TASK_0_1], lags={TASK_0_0: 10**9, TASK_0_1: 10**9}),
            ],
            configs(1),
            NOW_MS,
        )
        return [
            (a.process_id(), a.active_tasks(), a.standby_tasks())
            for a in FallbackPriorTaskAssignor().assign(state)
        ]

    assert plan(0) == plan(10**12)
    assert plan(0)[0][1] == [TASK_0_0] and plan(0)[1][1] == [TASK_0_1]


def test_no_clients_at_all():
    assert len(FallbackPriorTaskAssignor().assign(app_state([], [], configs(), NOW_MS))) == 0
    with pytest.raises(TaskAssignmentException, match="no client has a thread to run tasks on"):
        FallbackPriorTaskAssignor().assign(app_state([stateless_task(TASK_0_0)], [], configs(), NOW_MS))


def test_loaded_by_name_through_the_registry():
    from fleet_assignor.assignor.registry import load_assignor

    assert isinstance(load_assignor("fallback_prior"), FallbackPriorTaskAssignor)


def test_same_input_same_output():
    def plan():
        state = app_state(
            [stateful_task(t) for t in (TASK_0_0, TASK_0_1, TASK_0_2)] + [stateless_task(TASK_1_0)],
            [
                streams_state(3, 2, previous_standby=[TASK_0_1]),
                streams_state(1, 1, previous_active=[TASK_0_2]),
                streams_state(2, 3),
            ],
            configs(1),
            NOW_MS,
        )
        return [
            (a.process_id(), a.active_tasks(), a.standby_tasks(), a.followup_rebalance_deadline())
            for a in FallbackPriorTaskAssignor().assign(state)
        ]

    first = plan()
    assert first == plan()
    assert [row[0] for row in first] == [PID_1, PID_2, PID_3]
