"""Narrowing the spread of actives per thread without moving any kept previous active (POLICY.md §3).

Kafka's sticky assignor balances only through its "should balance load" test, which lets a loaded previous
owner keep a task while another client has one task per thread less; ties then decide the spread. This pass
moves only tasks whose move costs no kept previous active.
"""

from __future__ import annotations

from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState


def balance_active_spread(state: StickyState) -> bool:
    """A task that its client did not own before (moving it costs nothing) goes from a more to a less
    loaded client while that narrows their difference, preferring a task the receiving client owned
    before. Returns whether anything moved."""
    n_clients = len(state.pids)
    threads, count = state.threads, state.active_count
    moved = False
    for _ in range(len(state.tasks)):  # each move strictly narrows one pair: bounded, this is a guard
        by_load = sorted(range(n_clients), key=lambda i: (count[i] / threads[i], i))
        move = _spread_move(state, by_load)
        if move is None:
            return moved
        state.move_active(*move)
        moved = True
    return moved


def _spread_move(state: StickyState, by_load: list[int]) -> tuple[int, int, int] | None:
    """The first (most loaded source, least loaded destination) pair where moving one task that costs
    no kept previous active (the source did not own it, or the destination owned it too) shrinks their
    difference (|after| < before) and stays within the current extremes, so the overall spread never
    grows; sum(active^2 / threads) strictly drops with each such move."""
    if not by_load:
        return None
    threads, count, owners = state.threads, state.active_count, state.prev_owners
    highest = count[by_load[-1]] / threads[by_load[-1]]
    lowest = count[by_load[0]] / threads[by_load[0]]
    for source in reversed(by_load):
        source_load = count[source] / threads[source]
        source_after = (count[source] - 1) / threads[source]
        if source_after < lowest:
            continue
        actives = sorted(j for j, role in state.roles[source].items() if role is ACTIVE)
        free = [j for j in actives if source not in owners[j]]
        shared = [j for j in actives if source in owners[j] and len(owners[j]) > 1]
        if not free and not shared:
            continue
        for destination in by_load:
            destination_load = count[destination] / threads[destination]
            skew = source_load - destination_load
            if skew <= 0:
                break
            destination_after = (count[destination] + 1) / threads[destination]
            if abs(source_after - destination_after) >= skew or destination_after > highest:
                continue
            owned = [j for j in free + shared if destination in owners[j]]
            if owned or free:
                return min(owned or free), source, destination
    return None
