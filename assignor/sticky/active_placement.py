"""The first placement of the actives (assignors.md §7.2).

Previous owners keep their tasks while within quota, then previous standby holders take tasks, then the
rest go to the best client (previous owner unless overloaded, else a previous standby holder, else the
least-loaded client preferring one that makes a new pair of co-located tasks). The least-loaded pick goes
by the clients' key order (`state`), whose tie-breaks serve this phase only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState


def assign_actives(state: StickyState, preserve: bool) -> None:
    """``preserve``: every previous active stays with its previous owner whatever the quota."""
    capacity = sum(state.threads)
    if capacity == 0:
        return  # no clients: every task stays unassigned
    per_thread = len(state.tasks) // capacity
    unassigned = _keep_previous_actives(state, per_thread, preserve)
    remaining = _give_to_previous_standbys(state, per_thread, unassigned)
    _start_waiting(state, remaining)
    for j in remaining:
        state.finalize(j, best_client(state, j), ACTIVE)
    # the tie-breaks serve the active phase only: standbys go by (load, ProcessId)
    state.waiting = [0] * len(state.pids)
    state.displaced = [0] * len(state.pids)
    state.rekey_all()


def _keep_previous_actives(state: StickyState, per_thread: int, preserve: bool) -> list[int]:
    """Each previous owner keeps its task while within quota; returns the tasks left, in TaskId order."""
    unassigned = []
    for j in range(len(state.tasks)):
        owner = state.prev_active[j]
        if owner >= 0 and (preserve or state.has_room(owner, per_thread)):
            state.place(j, owner, ACTIVE)
        else:
            unassigned.append(j)
    return unassigned


def _give_to_previous_standbys(state: StickyState, per_thread: int, unassigned: list[int]) -> list[int]:
    """The first previous standby holder (ProcessId order) within quota takes the task; returns the tasks
    none took."""
    remaining = []
    for j in unassigned:
        taker = next((i for i in state.prev_standby[j] if state.has_room(i, per_thread)), None)
        if taker is None:
            remaining.append(j)
        else:
            state.place(j, taker, ACTIVE)
    return remaining


def _start_waiting(state: StickyState, remaining: Sequence[int]) -> None:
    for j, owner in enumerate(state.prev_active):
        placed = state.active_owner[j]
        if owner >= 0 and placed >= 0 and placed != owner:
            state.displaced[owner] += 1  # moved to a previous standby holder in step 2
    for j in remaining:
        owner = state.prev_active[j]
        if owner >= 0:
            state.waiting_tasks.add(j)
            state.waiting[owner] += 1
    state.rekey_all()


def best_client(state: StickyState, j: int) -> int:
    """findBestClientForTask among the clients not holding task j."""
    holding = state.holders[j]
    if len(state.pids) - len(holding) == 1:
        return next(i for i in range(len(state.pids)) if i not in holding)
    owner = state.prev_active[j]
    standby_holders = [i for i in state.prev_standby[j] if i not in holding]
    previous = owner if owner >= 0 and owner not in holding else least_loaded_among(state, j, standby_holders)
    if previous is None:
        return least_loaded_overall(state, j)
    if state.should_balance_load(previous):
        standby = least_loaded_among(state, j, standby_holders)
        if standby is None or state.should_balance_load(standby):
            return least_loaded_overall(state, j)
        return standby
    return previous


def least_loaded_among(state: StickyState, j: int, candidates: Sequence[int]) -> int | None:
    """findLeastLoadedClient over a small explicit candidate list."""
    if not candidates:
        return None
    partners = state.partners(j)
    eligible = [i for i in candidates if state.eligible(i, partners)]
    return min(eligible or candidates, key=state.key_of.__getitem__)


def least_loaded_overall(state: StickyState, j: int) -> int:
    """findLeastLoadedClient over every client not holding task j, scanning clients by key."""
    holding = state.holders[j]
    if not holding:  # nothing pairs with an unplaced task: every client passes, the minimum wins
        return state.by_key[0][-1]
    partners = state.partners(j)
    fallback = None
    for *_, i in state.by_key:
        if i in holding:
            continue
        if state.eligible(i, partners):
            return i
        if fallback is None:
            fallback = i
    return cast(int, fallback)  # some client does not hold the task (Kafka's precondition)
