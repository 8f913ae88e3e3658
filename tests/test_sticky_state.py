"""assignor.sticky.state: previous ownership in index form, the clients' key order kept sorted as tasks are
placed and moved, and the round trip through assignment maps."""

from __future__ import annotations

from fleet_assignor.assignor import AssignedTaskType, AssignmentConfigs, ProcessId
from fleet_assignor.assignor.sticky.state import ACTIVE, STANDBY, StickyState
from tests.fixtures import (
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    app_state,
    pid,
    stateful_task,
    streams_state,
)

NEGATIVE = ProcessId.parse("ffffffff-0000-0000-0000-000000000001")  # signed order: before pid(1)


def _state(*clients, tasks=(TASK_0_0, TASK_0_1, TASK_0_2), standbys=0) -> StickyState:
    configs = AssignmentConfigs(0, 1, standbys, 60_000, ())
    return StickyState(app_state([stateful_task(t) for t in tasks], clients, configs))


def _sorted_keys(state: StickyState) -> bool:
    return state.by_key == sorted(state.key_of) and len(state.by_key) == len(state.pids)


def test_clients_and_tasks_are_ranked_in_signed_process_id_and_task_id_order():
    state = _state(streams_state(pid(2)), streams_state(NEGATIVE))
    assert state.pids == [NEGATIVE, pid(2)]
    assert state.tasks == [TASK_0_0, TASK_0_1, TASK_0_2]
    assert state.task_index[TASK_0_2] == 2


def test_a_task_claimed_twice_keeps_the_later_owner_and_every_claimant():
    state = _state(
        streams_state(1, previous_active=[TASK_0_0], previous_standby=[TASK_0_1]),
        streams_state(2, previous_active=[TASK_0_0], previous_standby=[TASK_0_1]),
    )
    assert state.prev_active == [1, -1, -1]
    assert state.prev_owners == [[0, 1], [], []]
    assert state.prev_standby == [[], [0, 1], []]


def test_placing_updates_counts_masks_holders_and_the_key_order():
    state = _state(streams_state(1, 2), streams_state(2, 1))
    assert state.by_key[0][-1] == 0  # equally empty: more threads first
    state.place(0, 1, ACTIVE)
    state.place(1, 1, STANDBY)
    assert (state.active_count, state.total, state.mask) == ([0, 1], [0, 2], [0, 0b11])
    assert state.holders[0] == [1] and state.holders[1] == [1]
    assert state.active_owner == [1, -1, -1]
    assert state.load(1) == 2.0 and state.min_load() == 0.0
    assert _sorted_keys(state) and state.by_key[-1][-1] == 1


def test_should_balance_load_needs_a_full_thread_and_a_less_loaded_client():
    state = _state(streams_state(1), streams_state(2))
    state.place(0, 0, ACTIVE)
    assert state.should_balance_load(0)  # 1 task per thread, client 1 has none
    assert not state.should_balance_load(1)  # empty
    state.place(1, 1, ACTIVE)
    assert not state.should_balance_load(0)  # nobody is less loaded


def test_eligible_means_empty_or_holding_a_task_not_yet_paired():
    state = _state(streams_state(1), streams_state(2), streams_state(3))
    state.place(0, 0, ACTIVE)
    state.place(1, 0, STANDBY)
    state.place(1, 1, ACTIVE)
    partners = state.partners(0)  # 0_0 shares client 0 with 0_1
    assert partners == 0b11
    assert state.eligible(2, partners)  # empty
    assert not state.eligible(1, partners)  # holds only 0_1, already paired with 0_0
    state.place(2, 1, STANDBY)
    assert state.eligible(1, partners)  # now also 0_2, a new pair


def test_moving_an_active_keeps_the_books_and_the_key_order():
    state = _state(streams_state(1), streams_state(2))
    state.place(0, 0, ACTIVE)
    state.place(1, 0, ACTIVE)
    state.move_active(1, 0, 1)
    assert state.roles == [{0: ACTIVE}, {1: ACTIVE}]
    assert (state.active_count, state.total, state.mask) == ([1, 1], [1, 1], [0b1, 0b10])
    assert state.holders[1] == [1] and state.active_owner[1] == 1
    assert _sorted_keys(state)


def test_active_moves_counts_previous_actives_on_none_of_their_claimants():
    state = _state(
        streams_state(1, previous_active=[TASK_0_0, TASK_0_1]),
        streams_state(2, previous_active=[TASK_0_1]),
        streams_state(3),
    )
    state.place(0, 2, ACTIVE)  # 0_0 away from its owner: a move
    state.place(1, 1, ACTIVE)  # 0_1 on one of its two claimants: kept
    state.place(2, 2, ACTIVE)  # 0_2 had no owner
    assert state.active_moves() == 1


def test_the_assignment_map_round_trip_rebuilds_the_same_state():
    state = _state(streams_state(1), streams_state(2), standbys=1)
    state.place(0, 0, ACTIVE)
    state.place(0, 1, STANDBY)
    state.place(1, 1, ACTIVE)
    before = (state.roles, state.active_count, state.total, state.mask, state.holders, state.active_owner)
    before = tuple(map(repr, before))
    state.reload(state.assignment_map())
    after = (state.roles, state.active_count, state.total, state.mask, state.holders, state.active_owner)
    assert tuple(map(repr, after)) == before
    assert _sorted_keys(state)


def test_to_assignments_lists_every_client_in_order_with_roles():
    state = _state(streams_state(2), streams_state(1), streams_state(3), standbys=2)
    state.place(0, 0, ACTIVE)
    state.place(0, 1, STANDBY)
    state.place(0, 2, STANDBY)
    assignments = state.to_assignments()
    assert [a.process_id() for a in assignments] == [pid(1), pid(2), pid(3)]
    assert assignments[0].tasks()[TASK_0_0].type is AssignedTaskType.ACTIVE
    first, second = assignments[1].tasks()[TASK_0_0], assignments[2].tasks()[TASK_0_0]
    assert first.type is AssignedTaskType.STANDBY and first is second  # one immutable object per task
