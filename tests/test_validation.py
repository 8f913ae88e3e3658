"""validate_task_assignment (POLICY.md §5): a test per AssignmentError, precedence, the problem list."""

from __future__ import annotations

import uuid

from fleet_assignor.assignor import (
    AssignedTask,
    AssignmentError,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
)
from fleet_assignor.assignor.validation import validate_task_assignment
from tests.fixtures import (
    PID_1,
    PID_2,
    PID_3,
    TASK_0_0,
    TASK_0_1,
    TASK_1_0,
    app_state,
    kafka_assignment,
    stateful_task,
    stateless_task,
    streams_state,
)

TASK_9_9 = TaskId(9, 9)


def state_with_two_clients():
    """0_0 and 0_1 have a changelog, 1_0 has none; clients 1 and 2."""
    return app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1), stateless_task(TASK_1_0)],
        [streams_state(1), streams_state(2)],
    )


def validate(*assignments: KafkaStreamsAssignment):
    return validate_task_assignment(state_with_two_clients(), TaskAssignment.of(assignments))


def test_none_when_every_client_is_present_and_every_row_is_sound():
    result = validate(
        kafka_assignment(1, active=[TASK_0_0, TASK_1_0], standby=[TASK_0_1]),
        kafka_assignment(2, active=[TASK_0_1], standby=[TASK_0_0]),
    )
    assert result.error is AssignmentError.NONE
    assert result.problems == ()
    assert result.detail is None
    assert result.unassigned == ()
    assert result.is_valid


def test_unassigned_tasks_are_not_an_error_but_are_named():
    result = validate(kafka_assignment(1, active=[TASK_0_1]), kafka_assignment(2))
    assert result.error is AssignmentError.NONE
    assert result.unassigned == (TASK_0_0, TASK_1_0)


def test_unassigned_counts_a_task_held_only_as_standby():
    result = validate(
        kafka_assignment(1, active=[TASK_0_1, TASK_1_0]), kafka_assignment(2, standby=[TASK_0_0])
    )
    assert result.unassigned == (TASK_0_0,)


def test_active_task_assigned_multiple_times_on_two_clients():
    result = validate(kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(2, active=[TASK_0_0]))
    assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
    assert [(p.process_id, p.task_id) for p in result.problems] == [(PID_1, TASK_0_0)]


def test_active_task_assigned_twice_to_the_same_client():
    # Two assignment objects for client 1 both carry 0_0 as active.
    result = validate(
        kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(2)
    )
    assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
    assert "active 2 times" in result.detail


def test_active_and_standby_task_assigned_to_same_kafka_streams():
    result = validate(
        kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(1, standby=[TASK_0_0]), kafka_assignment(2)
    )
    assert result.error is AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS
    assert [(p.process_id, p.task_id) for p in result.problems] == [(PID_1, TASK_0_0)]


def test_a_warmup_counts_as_a_standby():
    warmup = KafkaStreamsAssignment.of(PID_1, [AssignedTask.warmup(TASK_0_0)])
    result = validate(kafka_assignment(1, active=[TASK_0_0]), warmup, kafka_assignment(2))
    assert result.error is AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS


def test_standby_and_active_of_a_task_on_different_clients_is_fine():
    result = validate(kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(2, standby=[TASK_0_0]))
    assert result.error is AssignmentError.NONE


def test_invalid_standby_task_is_a_standby_of_a_task_without_changelog():
    result = validate(kafka_assignment(1, active=[TASK_1_0]), kafka_assignment(2, standby=[TASK_1_0]))
    assert result.error is AssignmentError.INVALID_STANDBY_TASK
    assert [(p.process_id, p.task_id) for p in result.problems] == [(PID_2, TASK_1_0)]


def test_invalid_standby_looks_at_changelogs_not_at_stores():
    # A task with a store but no changelog partition: Kafka's TaskInfo.isStateful is true, but it has no
    # changelog to restore from, so a standby of it is invalid (POLICY.md §5).
    info = stateful_task(TASK_0_0)
    no_changelog = type(info)(TASK_0_0, True, info.state_store_names, ())
    state = app_state([no_changelog], [streams_state(1), streams_state(2)])
    result = validate_task_assignment(
        state,
        TaskAssignment.of([kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(2, standby=[TASK_0_0])]),
    )
    assert result.error is AssignmentError.INVALID_STANDBY_TASK


def test_missing_process_id():
    result = validate(kafka_assignment(1, active=[TASK_0_0]))
    assert result.error is AssignmentError.MISSING_PROCESS_ID
    assert [(p.process_id, p.task_id) for p in result.problems] == [(PID_2, None)]


def test_unknown_process_id():
    stranger = ProcessId.of(uuid.UUID("ffffffff-0000-0000-0000-000000000000"))
    result = validate(kafka_assignment(1), kafka_assignment(2), kafka_assignment(stranger))
    assert result.error is AssignmentError.UNKNOWN_PROCESS_ID
    assert [p.process_id for p in result.problems] == [stranger]


def test_unknown_task_id():
    result = validate(kafka_assignment(1, active=[TASK_0_0]), kafka_assignment(2, active=[TASK_9_9]))
    assert result.error is AssignmentError.UNKNOWN_TASK_ID
    assert [(p.process_id, p.task_id) for p in result.problems] == [(PID_2, TASK_9_9)]


def test_several_problems_precedence_and_full_sorted_list():
    """Every problem is listed, by (precedence, ProcessId, TaskId); the error is the first, whatever the order
    the assignments were returned in."""
    stranger = ProcessId.of(uuid.UUID("80000000-0000-0000-0000-000000000000"))  # sorts before PID_1 (signed)
    assignments = [
        kafka_assignment(3, active=[TASK_9_9]),  # unknown client holding an unknown task
        kafka_assignment(stranger, standby=[TASK_1_0]),  # unknown client; standby of a task without changelog
        kafka_assignment(2, active=[TASK_0_1], standby=[TASK_1_0]),
        kafka_assignment(1, active=[TASK_0_1]),
    ]
    state = app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1), stateless_task(TASK_1_0)],
        [streams_state(1), streams_state(2), streams_state(4)],
    )
    pid_4 = ProcessId.of(4)
    expected = [
        (AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES, PID_1, TASK_0_1),
        (AssignmentError.INVALID_STANDBY_TASK, stranger, TASK_1_0),
        (AssignmentError.INVALID_STANDBY_TASK, PID_2, TASK_1_0),
        (AssignmentError.MISSING_PROCESS_ID, pid_4, None),
        (AssignmentError.UNKNOWN_PROCESS_ID, stranger, None),
        (AssignmentError.UNKNOWN_PROCESS_ID, PID_3, None),
        (AssignmentError.UNKNOWN_TASK_ID, PID_3, TASK_9_9),
    ]
    for order in (assignments, list(reversed(assignments))):
        result = validate_task_assignment(state, TaskAssignment.of(order))
        assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
        assert [(p.error, p.process_id, p.task_id) for p in result.problems] == expected
        assert result.detail == "; ".join(str(p) for p in result.problems)
        assert result.detail.startswith("ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES: task 0_1")
        assert result.detail.count("; ") == len(expected) - 1
        assert result.unassigned == (TASK_0_0, TASK_1_0)


def test_precedence_not_return_order_decides_between_duplicate_active_and_unknown_task():
    # Kafka returns whichever of UNKNOWN_TASK_ID / ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES it meets first;
    # here the precedence decides, in both return orders.
    first = kafka_assignment(1, active=[TASK_9_9, TASK_0_0])
    second = kafka_assignment(2, active=[TASK_0_0])
    for order in ([first, second], [second, first]):
        result = validate_task_assignment(state_with_two_clients(), TaskAssignment.of(order))
        assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
        assert [p.error for p in result.problems] == [
            AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
            AssignmentError.UNKNOWN_TASK_ID,
        ]


def test_the_set_check_answers_as_the_full_check_on_random_assignments():
    """`_valid_by_sets` answers only assignments without problems, and then as the row-by-row check does;
    random assignments over known and unknown clients and tasks, clients listed once, twice or not, by
    equal ids or by the state's own id objects in its order (then read by place)."""
    import random

    from fleet_assignor.assignor.validation import _every_problem, _valid_by_sets, lists_each_client_in_order

    state = state_with_two_clients()
    tasks = [TASK_0_0, TASK_0_1, TASK_1_0, TASK_9_9]
    rng = random.Random(7)
    answered = 0
    for _ in range(3000):
        listed = []
        sound = rng.random() < 0.5  # each known client once, known tasks: mostly no problem
        for client in [1, 2] if sound else rng.sample([1, 2, 2, 3], rng.randint(0, 4)):
            rows = {}
            for task in rng.sample(tasks[:3] if sound else tasks, rng.randint(0, 3)):
                role = rng.choice(["active", "standby", "warmup"])
                rows[task] = getattr(AssignedTask, role)(task)
            listed.append(KafkaStreamsAssignment(ProcessId.of(client), rows))
        if sound and rng.random() < 0.5:
            listed = [
                KafkaStreamsAssignment(own, dict(a.tasks()))
                for own, a in zip(state.clients, listed, strict=True)
            ]
            assert lists_each_client_in_order(state, TaskAssignment.of(listed))
        task_assignment = TaskAssignment.of(listed)
        full = _every_problem(state, task_assignment)
        quick = _valid_by_sets(state, task_assignment)
        if quick is not None:
            answered += 1
            assert quick == full
        assert validate_task_assignment(state, task_assignment) == full
    assert answered > 300
