import pytest

from fleet_assignor.assignor import ClientState, NoLagForTaskError, ProcessId, TaskId

T00, T01, T02 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)


def test_assigning_twice_in_any_role_raises_and_unassign_requires_the_role():
    c = ClientState(ProcessId.of(1), 1)
    c.assign_active(T00)
    with pytest.raises(ValueError, match="task 0_0 is already assigned"):
        c.assign_standby(T00)
    with pytest.raises(ValueError, match="task 0_0 is already assigned"):
        c.assign_active(T00)
    with pytest.raises(ValueError, match="task 0_0 is not a standby"):
        c.unassign_standby(T00)
    c.unassign_active(T00)
    c.assign_standby(T00, warmup=True)
    assert c.warmup_tasks == [T00]
    c.unassign_standby(T00)
    assert c.warmup_tasks == [] and c.assigned_task_count == 0


def test_an_unheld_standby_is_a_plain_standby_as_the_standby_placement_adds_it():
    """`add_unheld_standby` (the least-loaded placement's handle, after it asked `has_assigned_task`) leaves
    the client as `assign_standby` does: a standby, no warmup, counted in the load."""
    added, assigned = ClientState(ProcessId.of(1), 2), ClientState(ProcessId.of(1), 2)
    for c in (added, assigned):
        c.assign_active(T00)
    assert not added.has_assigned_task(T01)
    added.add_unheld_standby(T01)
    assigned.assign_standby(T01)
    for c in (added, assigned):
        assert c.standby_set() == {T01} and c.active_set() == {T00}
        assert c.has_standby(T01) and not c.has_active(T01) and c.warmup_tasks == []
        assert c.assigned_task_load == 1.0
    with pytest.raises(ValueError, match="task 0_1 is already assigned"):
        added.assign_active(T01)


def test_loads_and_quota():
    c = ClientState(ProcessId.of(1), 2)
    c.assign_active(T00)
    c.assign_standby(T01)
    assert c.active_task_load == 0.5 and c.assigned_task_load == 1.0
    assert c.reached_capacity()
    assert c.has_unfulfilled_quota(1) and not c.has_unfulfilled_quota(0)


def test_more_available_capacity_breaks_equal_load_by_capacity():
    small, big = ClientState(ProcessId.of(1), 1), ClientState(ProcessId.of(2), 2)
    assert big.has_more_available_capacity_than(small)
    assert not small.has_more_available_capacity_than(big)
    small.assign_active(T00)
    big.assign_active(T01)
    assert big.has_more_available_capacity_than(small)  # 0.5 < 1.0


def test_zero_capacity_is_refused():
    with pytest.raises(ValueError, match="must have at least one thread, got 0"):
        ClientState(ProcessId.of(1), 0)


def test_stateful_and_stateless_actives_split_on_lag_entries():
    c = ClientState(
        ProcessId.of(1), 1, task_lags={T00: 0}, consumer_previous_stateful={"c": frozenset({T00})}
    )
    c.assign_active(T00)
    c.assign_active(T01)
    assert c.stateful_active_tasks() == [T00] and c.stateless_active_tasks() == [T01]
    assert c.prev_tasks_by_lag("c") == [T00]
    with pytest.raises(NoLagForTaskError, match="has no lag for task 0_2"):
        c.lag_for(T02)


def test_consumers_come_sorted_and_a_mutable_history_is_copied():
    history = {"c2": frozenset({T00})}
    c = ClientState(ProcessId.of(1), 2, consumers=iter(["c2", "c1"]), consumer_previous_stateful=history)
    history["c1"] = frozenset({T01})
    assert c.consumers == ("c1", "c2")
    assert dict(c.consumer_previous_stateful) == {"c2": frozenset({T00})}
