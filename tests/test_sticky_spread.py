"""assignor.sticky.spread: narrowing the spread of actives per thread by moving only tasks whose move keeps
every previous active that stays."""

from __future__ import annotations

from fleet_assignor.assignor import AssignmentConfigs
from fleet_assignor.assignor.sticky.spread import balance_active_spread
from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, app_state, stateless_task, streams_state

TASKS = (TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3)


def _placed(clients, owners: list[int]) -> StickyState:
    state = StickyState(app_state([stateless_task(t) for t in TASKS], clients, AssignmentConfigs()))
    for j, client in enumerate(owners):
        state.place(j, client, ACTIVE)
    return state


def test_free_tasks_move_from_the_most_to_the_least_loaded_client():
    state = _placed([streams_state(1), streams_state(2)], [0, 0, 0, 1])
    assert balance_active_spread(state) is True
    assert state.active_count == [2, 2]
    assert state.active_owner == [1, 0, 0, 1]  # the lowest free task went
    assert state.by_key == sorted(state.key_of)


def test_a_task_the_receiving_client_owned_goes_first():
    state = _placed([streams_state(1), streams_state(2, previous_active=[TASK_0_2])], [0, 0, 0, 1])
    assert balance_active_spread(state) is True
    assert state.active_owner == [0, 0, 1, 1]


def test_kept_previous_actives_never_move_even_if_the_spread_stays_wide():
    state = _placed([streams_state(1, previous_active=list(TASKS[:3])), streams_state(2)], [0, 0, 0, 1])
    assert balance_active_spread(state) is False
    assert state.active_owner == [0, 0, 0, 1]


def test_a_task_owned_by_both_clients_may_move():
    both = [TASK_0_0, TASK_0_1, TASK_0_2]
    state = _placed([streams_state(1, previous_active=both), streams_state(2, previous_active=[TASK_0_0])],
                    [0, 0, 0, 1])  # fmt: skip
    assert balance_active_spread(state) is True
    assert state.active_owner == [1, 0, 0, 1]


def test_nothing_moves_when_a_move_would_not_narrow_the_pair():
    """Loads 1 and 1/2 (two threads): moving a task gives 0 and 1, no narrower."""
    state = _placed([streams_state(1), streams_state(2, 2)], [0, 1])
    assert balance_active_spread(state) is False
    assert state.active_owner[:2] == [0, 1]
