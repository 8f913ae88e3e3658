"""The re-pick that keeps the most previous actives (POLICY.md §3), one of our deliberate improvements over
Kafka's sticky assignor, measured against Kafka's answers.

Kafka's sorted-order port makes an over-quota client keep whichever tasks came first; here, once every
client's active count is known, which tasks fill each count is re-picked so that the most previous actives
stay: an exact maximum matching of tasks to their previous owners.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState


def repick_to_keep_previous_actives(state: StickyState, counts: Sequence[int] | None = None) -> None:
    """Keep each client's active count (or set it to ``counts``); re-pick which tasks fill it so the
    most previous actives stay.

    A maximum bipartite b-matching of tasks to their previous owners under the counts (Kuhn's
    augmenting paths, tasks in TaskId order, owners in ProcessId order), seeded with the tasks already
    on a previous owner so those never move. With one owner per task it is simply: client c keeps
    min(count_c, its previous tasks). Unmatched tasks stay where they are if that client still has
    room, else fill the remaining room in TaskId / ProcessId order.
    """
    room = list(state.active_count if counts is None else counts)
    matching = _PreviousOwnerMatching(state.prev_owners, room)
    placed = state.placed_actives()
    matching.keep_tasks_on_previous_owners(placed, state.active_owner)
    for j in placed:
        if matching.new_owner[j] < 0 and state.prev_owners[j]:
            matching.augment(j)
    leftovers = matching.keep_unmatched_in_place(placed, state.active_owner)
    matching.fill_remaining_room(leftovers)
    apply_active_owners(state, placed, matching.new_owner)


class _PreviousOwnerMatching:
    """Tasks matched to previous owners within each client's room; ``new_owner[j]`` is -1 while task j is
    unmatched. ``kept_multi[c]``: the tasks matched to c that have other previous owners, the only ones an
    augmenting path can move on."""

    def __init__(self, prev_owners: list[list[int]], room: list[int]) -> None:
        self.prev_owners = prev_owners
        self.room = room
        self.new_owner = [-1] * len(prev_owners)
        self.kept_multi: list[list[int]] = [[] for _ in range(len(room))]

    def keep_tasks_on_previous_owners(self, placed: Sequence[int], active_owner: Sequence[int]) -> None:
        """The seed: tasks already on a previous owner stay, single-owner ones first (a shrunk count may not
        hold them all; a task with another owner can still go there by an augmenting path)."""
        for multi in (False, True):
            for j in placed:
                current = active_owner[j]
                owners = self.prev_owners[j]
                if (len(owners) > 1) == multi and current in owners and self.room[current] > 0:
                    self._match(j, current)

    def _match(self, j: int, client: int) -> None:
        self.new_owner[j] = client
        self.room[client] -= 1
        if len(self.prev_owners[j]) > 1:
            self.kept_multi[client].append(j)

    def augment(self, j: int) -> None:
        """Breadth-first augmenting path from task j through previous owners; moves tasks along it."""
        parent: dict[int, tuple[int, int]] = {}
        queue: list[int] = []
        for c in self.prev_owners[j]:
            parent[c] = (-1, j)
            queue.append(c)
        for c in queue:  # the list grows while we walk it: a FIFO queue
            if self.room[c] > 0:
                self._shift_along(c, parent)
                return
            for j2 in self.kept_multi[c]:
                for c2 in self.prev_owners[j2]:
                    if c2 not in parent:
                        parent[c2] = (c, j2)
                        queue.append(c2)

    def _shift_along(self, end: int, parent: dict[int, tuple[int, int]]) -> None:
        self.room[end] -= 1
        current = end
        while True:
            previous, task = parent[current]
            self.new_owner[task] = current
            if len(self.prev_owners[task]) > 1:
                self.kept_multi[current].append(task)
            if previous < 0:
                return
            self.kept_multi[previous].remove(task)  # it moved on; its slot at `previous` takes the next task
            current = previous

    def keep_unmatched_in_place(self, placed: Sequence[int], active_owner: Sequence[int]) -> list[int]:
        """An unmatched task stays on its client while that client has room; returns the others."""
        leftovers = []
        for j in placed:
            if self.new_owner[j] >= 0:
                continue
            current = active_owner[j]
            if self.room[current] > 0:
                self.new_owner[j] = current
                self.room[current] -= 1
            else:
                leftovers.append(j)
        return leftovers

    def fill_remaining_room(self, leftovers: Sequence[int]) -> None:
        """The tasks left go, in TaskId order, to the clients with room left, in ProcessId order."""
        c = 0
        for j in leftovers:
            while self.room[c] == 0:
                c += 1
            self.new_owner[j] = c
            self.room[c] -= 1


def apply_active_owners(state: StickyState, placed: Sequence[int], new_owner: Sequence[int]) -> None:
    """Move each of the ``placed`` tasks to ``new_owner[j]`` (the tasks placed stay the same)."""
    changed = [j for j in placed if new_owner[j] != state.active_owner[j]]
    for j in changed:
        state.unrecord_active(j, state.active_owner[j])
    for j in changed:
        state.place(j, new_owner[j], ACTIVE)
    state.rekey_all()
