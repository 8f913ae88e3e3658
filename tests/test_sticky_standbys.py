"""assignor.sticky.standbys: standby replicas of changelog tasks only, never on a client already holding
the task, the previous owner or standby holder first, and the key-order walks behind each pick."""

from __future__ import annotations

from fleet_assignor.assignor import AssignmentConfigs
from fleet_assignor.assignor.sticky.standbys import _KeyOrderWalk, assign_standbys
from fleet_assignor.assignor.sticky.state import ACTIVE, STANDBY, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, app_state, stateful_task, stateless_task, streams_state


def _state(clients, standbys: int, task_infos=None) -> StickyState:
    infos = task_infos or [stateful_task(TASK_0_0), stateless_task(TASK_0_1)]
    return StickyState(app_state(infos, clients, AssignmentConfigs(0, 1, standbys, 60_000, ())))


def _standby_holders(state: StickyState, j: int) -> list[int]:
    return sorted(i for i in range(len(state.pids)) if state.roles[i].get(j) is STANDBY)


def test_only_tasks_with_a_changelog_get_standbys_and_never_beside_their_active():
    state = _state([streams_state(n) for n in (1, 2, 3)], standbys=2)
    state.place(0, 0, ACTIVE)
    state.place(1, 1, ACTIVE)
    assign_standbys(state)
    assert _standby_holders(state, 0) == [1, 2]
    assert _standby_holders(state, 1) == []


def test_replicas_stop_when_every_client_holds_the_task():
    state = _state([streams_state(1), streams_state(2)], standbys=3)
    state.place(0, 0, ACTIVE)
    assign_standbys(state)
    assert _standby_holders(state, 0) == [1]


def test_no_standbys_configured_places_none():
    state = _state([streams_state(1), streams_state(2)], standbys=0)
    state.place(0, 0, ACTIVE)
    assign_standbys(state)
    assert state.roles == [{0: ACTIVE}, {}]


def test_the_previous_standby_holder_is_preferred_over_a_less_loaded_client():
    clients = [streams_state(1), streams_state(2, 4), streams_state(3, previous_standby=[TASK_0_0])]
    state = _state(clients, standbys=1)
    state.place(0, 0, ACTIVE)
    assign_standbys(state)
    assert _standby_holders(state, 0) == [2]


def test_a_loaded_previous_holder_gives_way_to_the_least_loaded_client():
    clients = [streams_state(1), streams_state(2, 4), streams_state(3, previous_standby=[TASK_0_0])]
    state = _state(clients, standbys=1)
    state.place(0, 0, ACTIVE)
    state.place(1, 2, ACTIVE)  # client 2 now runs a task per thread while client 1 runs none
    assign_standbys(state)
    assert _standby_holders(state, 0) == [1]


def test_key_order_walks_only_skip_forward():
    walk = _KeyOrderWalk([(0.0, -1, 0, 0, 3), (0.5, -1, 0, 0, 1), (1.0, -2, 0, 0, 2)])  # keys: client last
    assert walk.first_open({3}) == 1
    assert walk.first_open(set()) == 1  # once skipped, a holder is never looked at again
    assert walk.first_eligible(set(), lambda c: c == 2) == 2
    assert walk.least_loaded({1, 2, 3}, lambda c: True) is None
    walk = _KeyOrderWalk([(0.0, -1, 0, 0, 4), (0.0, -1, 0, 0, 5)])
    assert walk.least_loaded({4}, lambda c: False) == 5  # none eligible: the first open one
