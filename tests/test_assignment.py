import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    AssignedTaskType,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
)

P1, P2 = ProcessId.of(1), ProcessId.of(2)
T00, T01 = TaskId(0, 0), TaskId(0, 1)


def test_of_rejects_the_same_task_twice_in_any_role():
    with pytest.raises(ValueError, match="0_0"):
        KafkaStreamsAssignment.of(P1, [AssignedTask.active(T00), AssignedTask.standby(T00)])


def test_assign_task_overwrites_the_role_and_remove_ignores_the_type():
    a = KafkaStreamsAssignment.of(P1, [AssignedTask.active(T00)])
    a.assign_task(AssignedTask.standby(T00))
    assert a.role_of(T00) is AssignedTaskType.STANDBY
    a.remove_task(AssignedTask.active(T00))
    assert not a.holds(T00)


def test_with_followup_rebalance_shares_the_tasks_and_keeps_the_original():
    a = KafkaStreamsAssignment.of(P1, [AssignedTask.active(T00)])
    b = a.with_followup_rebalance(1234)
    assert b.followup_rebalance_deadline() == 1234 and a.followup_rebalance_deadline() is None
    a.assign_task(AssignedTask.standby(T01))
    assert b.standby_tasks() == [T01]


def test_roles_given_with_the_tasks_are_read_until_a_task_changes():
    given = (frozenset({T00}), frozenset(), frozenset())
    a = KafkaStreamsAssignment.with_roles(P1, {T00: AssignedTask.active(T00)}, given)
    assert a.task_ids_by_role() is given
    a.assign_task(AssignedTask.warmup(T01))
    assert a.task_ids_by_role() == (frozenset({T00}), frozenset({T01}), frozenset({T01}))
    b = KafkaStreamsAssignment.with_roles(P1, {T00: AssignedTask.active(T00)}, given)
    b.remove_task(T00)
    assert b.task_ids_by_role() == (frozenset(), frozenset(), frozenset())


def test_roles_given_with_the_tasks_follow_a_change_made_through_a_follow_up_copy():
    given = (frozenset({T00}), frozenset(), frozenset())
    a = KafkaStreamsAssignment.with_roles(P1, {T00: AssignedTask.active(T00)}, given, 7)
    assert a.followup_rebalance_deadline() == 7
    b = a.with_followup_rebalance(1234)
    b.assign_task(AssignedTask.standby(T01))  # the two share their tasks
    assert a.task_ids_by_role() == b.task_ids_by_role() == (frozenset({T00}), frozenset({T01}), frozenset())


def test_a_subclass_that_skips_the_base_init_still_reads_its_roles_from_its_tasks():
    class OwnInit(KafkaStreamsAssignment):  # a custom assignor's own assignment type
        def __init__(self, process_id, tasks):
            self._process_id, self._tasks, self._followup_rebalance_deadline = process_id, tasks, None

    own = OwnInit(P1, {T00: AssignedTask.active(T00), T01: AssignedTask.warmup(T01)})
    assert own.task_ids_by_role() == (frozenset({T00}), frozenset({T01}), frozenset({T01}))


def test_sorted_views_and_warmups():
    a = KafkaStreamsAssignment.of(
        P1, [AssignedTask.warmup(T01), AssignedTask.active(TaskId(1, 0)), AssignedTask.active(T00)]
    )
    assert a.active_tasks() == [T00, TaskId(1, 0)]
    assert a.standby_tasks() == [T01] and a.warmup_tasks() == [T01]
    with pytest.raises(ValueError, match="only a standby can be a warmup"):
        AssignedTask(T00, AssignedTaskType.ACTIVE, is_warmup=True)


def test_assigned_task_equality_ignores_the_warmup_flag():
    assert AssignedTask.warmup(T00) == AssignedTask.standby(T00)
    assert AssignedTask.active(T00) != AssignedTask.standby(T00)


def test_task_assignment_keeps_order_and_last_duplicate_wins_by_process_id():
    first = KafkaStreamsAssignment.of(P1, [AssignedTask.active(T00)])
    second = KafkaStreamsAssignment.of(P1, [AssignedTask.active(T01)])
    other = KafkaStreamsAssignment.of(P2, [])
    ta = TaskAssignment.of([first, other, second])
    assert list(ta) == [first, other, second]
    assert ta.by_process_id()[P1] is second


def test_active_and_standby_values_are_shared_and_their_tables_bounded():
    from fleet_assignor.assignor import assignment

    task = TaskId(3, 1)
    assert AssignedTask.active(task) is AssignedTask.active(task)
    assert AssignedTask.standby(task) == AssignedTask(task, assignment.STANDBY)
    for partition in range(assignment._SHARED_MAX + 5):
        AssignedTask.standby(TaskId(9, partition))
    assert len(assignment._STANDBY) <= assignment._SHARED_MAX
    assert AssignedTask.standby(TaskId(9, 0)) == AssignedTask(TaskId(9, 0), assignment.STANDBY)
