"""assignor.sticky.active_placement: the first placement of actives (assignors.md §7.2): previous owners
within quota, then previous standby holders, then the best client; the tie-break bookkeeping is reset
after it."""

from __future__ import annotations

from fleet_assignor.assignor import AssignmentConfigs
from fleet_assignor.assignor.sticky.active_placement import (
    assign_actives,
    best_client,
    least_loaded_among,
    least_loaded_overall,
)
from fleet_assignor.assignor.sticky.state import ACTIVE, STANDBY, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, app_state, stateless_task, streams_state

TASKS = (TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3)


def _state(*clients, tasks=TASKS) -> StickyState:
    return StickyState(app_state([stateless_task(t) for t in tasks], clients, AssignmentConfigs()))


def _owners(state: StickyState) -> list[int]:
    return state.active_owner


def test_previous_owners_keep_their_tasks_within_quota_and_the_rest_is_spread():
    """Quota: 4 tasks // 2 threads = 2 per thread. Client 0 owned three, keeps the first two."""
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]), streams_state(2))
    assign_actives(state, preserve=False)
    assert _owners(state) == [0, 0, 1, 1]


def test_preserve_keeps_every_previous_active_whatever_the_quota():
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]), streams_state(2))
    assign_actives(state, preserve=True)
    assert _owners(state)[:3] == [0, 0, 0]


def test_a_previous_standby_holder_within_quota_takes_the_task():
    state = _state(
        streams_state(1), streams_state(2, previous_standby=[TASK_0_3]), tasks=(TASK_0_0, TASK_0_3)
    )
    assign_actives(state, preserve=False)
    assert _owners(state) == [0, 1]


def test_no_threads_leave_every_task_unassigned():
    state = _state(tasks=TASKS)
    assign_actives(state, preserve=False)
    assert _owners(state) == [-1, -1, -1, -1]


def test_the_tie_breaks_are_reset_for_the_standby_phase():
    state = _state(streams_state(1, previous_active=list(TASKS)), streams_state(2))
    assign_actives(state, preserve=False)
    assert state.waiting == [0, 0] and state.displaced == [0, 0]
    assert all(key[2:4] == (0, 0) for key in state.key_of)


def test_best_client_is_the_previous_owner_unless_it_should_balance():
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1]), streams_state(2))
    assert best_client(state, 0) == 0
    state.place(1, 0, ACTIVE)  # the owner now runs one task per thread and client 1 none
    assert best_client(state, 0) == 1


def test_best_client_falls_back_to_a_previous_standby_holder_that_need_not_balance():
    state = _state(
        streams_state(1, previous_active=[TASK_0_0]),
        streams_state(2, previous_standby=[TASK_0_0]),
        streams_state(3, 2),
    )
    state.place(1, 0, ACTIVE)  # owner loaded; client 2 (2 threads) is less loaded than the standby holder
    assert best_client(state, 0) == 1


def test_least_loaded_prefers_a_client_that_forms_a_new_pair():
    state = _state(streams_state(1), streams_state(2), streams_state(3))
    state.place(0, 0, ACTIVE)
    state.place(1, 0, ACTIVE)
    state.place(1, 1, STANDBY)  # client 1 holds only 0_1, already paired with 0_0 through client 0
    state.place(2, 2, ACTIVE)
    assert least_loaded_among(state, 0, [1, 2]) == 2  # equal load: client 1 would pair nothing new
    assert least_loaded_among(state, 0, []) is None
    assert least_loaded_overall(state, 0) == 2


def test_least_loaded_overall_for_an_unplaced_task_is_the_first_key():
    state = _state(streams_state(1), streams_state(2, 3))
    assert least_loaded_overall(state, 3) == 1  # empty clients tie on load: more threads first
