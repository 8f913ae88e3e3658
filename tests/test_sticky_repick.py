"""assignor.sticky.repick: with every client's active count fixed (or given), which tasks fill it so that
the most previous actives stay: checked against every possible filling on small cases."""

from __future__ import annotations

import itertools
import random

import pytest

from fleet_assignor.assignor import AssignmentConfigs, TaskId
from fleet_assignor.assignor.sticky.repick import repick_to_keep_previous_actives
from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, app_state, stateless_task, streams_state


def _state(owned: list[list[TaskId]], tasks) -> StickyState:
    clients = [streams_state(i + 1, previous_active=prev) for i, prev in enumerate(owned)]
    return StickyState(app_state([stateless_task(t) for t in tasks], clients, AssignmentConfigs()))


def _kept(state: StickyState) -> int:
    return sum(1 for j, owners in enumerate(state.prev_owners) if state.active_owner[j] in owners)


def _best_possible(state: StickyState, counts: list[int]) -> int:
    """Every way to give each client exactly its count of the placed tasks, the most previous actives."""
    tasks = [j for j, owner in enumerate(state.active_owner) if owner >= 0]
    slots = [c for c, n in enumerate(counts) for _ in range(n)]
    return max(
        sum(1 for j, c in zip(tasks, order, strict=True) if c in state.prev_owners[j])
        for order in set(itertools.permutations(slots))
    )


def test_each_client_keeps_min_of_its_count_and_its_previous_tasks():
    state = _state([[TASK_0_0, TASK_0_1], [TASK_0_2]], [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3])
    for j, client in enumerate([1, 1, 0, 0]):  # everything on the wrong client
        state.place(j, client, ACTIVE)
    repick_to_keep_previous_actives(state)
    assert state.active_count == [2, 2]  # counts kept
    assert state.active_owner[:3] == [0, 0, 1]  # all three previous actives back
    assert state.by_key == sorted(state.key_of)


def test_tasks_already_on_a_previous_owner_never_move():
    state = _state([[TASK_0_0], [TASK_0_1]], [TASK_0_0, TASK_0_1, TASK_0_2])
    state.place(0, 0, ACTIVE)
    state.place(1, 0, ACTIVE)
    state.place(2, 1, ACTIVE)
    repick_to_keep_previous_actives(state)
    assert state.active_owner == [0, 1, 0]


def test_an_augmenting_path_moves_a_task_with_two_owners_to_make_room():
    """0_0 is claimed by both clients and sits on client 0, which 0_1 (owned by client 0 only) needs."""
    state = _state([[TASK_0_0, TASK_0_1], [TASK_0_0]], [TASK_0_0, TASK_0_1])
    state.place(0, 0, ACTIVE)
    state.place(1, 1, ACTIVE)
    repick_to_keep_previous_actives(state)
    assert state.active_owner == [1, 0]
    assert _kept(state) == 2


def test_given_counts_replace_the_current_ones_and_fill_in_process_id_order():
    state = _state([[TASK_0_0], [], []], [TASK_0_0, TASK_0_1, TASK_0_2])
    for j in range(3):
        state.place(j, 0, ACTIVE)
    repick_to_keep_previous_actives(state, [1, 1, 1])
    assert state.active_owner == [0, 1, 2]
    assert state.active_count == [1, 1, 1]


@pytest.mark.parametrize("seed", range(40))
def test_the_repick_reaches_the_best_possible_filling(seed):
    rng = random.Random(seed)
    tasks = [TaskId(0, p) for p in range(rng.randint(1, 6))]
    n_clients = rng.randint(1, 3)
    owned: list[list[TaskId]] = [[] for _ in range(n_clients)]
    for task in tasks:
        for client in rng.sample(range(n_clients), rng.randint(0, min(2, n_clients))):
            owned[client].append(task)
    state = _state(owned, tasks)
    for j in range(len(tasks)):
        state.place(j, rng.randrange(n_clients), ACTIVE)
    counts = list(state.active_count)
    repick_to_keep_previous_actives(state)
    assert state.active_count == counts
    assert _kept(state) == _best_possible(state, counts)
