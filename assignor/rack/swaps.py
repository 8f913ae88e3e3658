"""Which client pairs of the pairwise standby swaps (rack.md §7) could move anything at all.

Kafka tries every pair of clients on different racks, up to 4 rounds, and solves each pair exactly; at a
few hundred clients almost every pair leaves its standbys where they are, and solving it costs far more
than knowing it will. A pair (a, b) keeps both clients' standby counts, so what it can change is a set of
swaps: a standby t of a to b against a standby u of b to a. One swap changes the cost by

    traffic x (remote(t, b) - remote(t, a) + remote(u, a) - remote(u, b)) + 2 x non_overlap,

and a set of swaps by the sum of theirs. With ``gain(x, r)`` = traffic x the most remote partitions one
standby of x saves on rack r (max over x's standbys of remote(t, rack of x) - remote(t, r)), no swap
lowers the cost unless ``gain(a, rack b) + gain(b, rack a) > 2 x non_overlap``. The pair's exact solve
then keeps the input: among placements of equal cost it takes the one with the fewest moves, and every
other one moves at least two standbys without lowering the cost (for min_traffic's two-client solve this
is `solver._two_clients` sorting every standby of a before every standby of b). The gains are taken over
all of a client's standbys, a superset of the ones the pair may move, so they only over-estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

import numpy as np

from fleet_assignor.assignor.rack.costs import RemoteCounts
from fleet_assignor.assignor.task_id import TaskId

# The gain of a client without standbys: no swap with it exists, whatever the other side saves.
_NO_STANDBY = -(np.int64(1) << np.int64(60))


class SwapBounds:
    """``gain(x, r)`` per client (rank in the sorted client ids) and rack; refreshed when x's standbys
    change."""

    def __init__(
        self,
        client_racks: Sequence[str | None],
        standbys_of: Callable[[int], Collection[TaskId]],
        remote: RemoteCounts,
        traffic: int,
        non_overlap: int,
    ) -> None:
        self._racks = list(dict.fromkeys(client_racks))
        column = {rack: i for i, rack in enumerate(self._racks)}
        self._rack_column = np.array([column[rack] for rack in client_racks], dtype=np.int64)
        self._standbys_of = standbys_of
        self._remote = remote
        self._traffic = traffic
        self._threshold = 2 * non_overlap
        self._per_task: dict[TaskId, list[int]] = {}
        self._gain = np.zeros((len(client_racks), len(self._racks)), dtype=np.int64)
        self._version = 0
        for client in range(len(client_racks)):
            self.refresh(client)

    def _remote_per_rack(self, task: TaskId) -> list[int]:
        row = self._per_task.get(task)
        if row is None:
            row = [self._remote.count(task, rack) for rack in self._racks]
            self._per_task[task] = row
        return row

    def refresh(self, client: int) -> None:
        """Recompute client's gains (its standbys changed)."""
        tasks = self._standbys_of(client)
        self._version += 1
        if not tasks:
            self._gain[client] = _NO_STANDBY
            return
        remote = np.array([self._remote_per_rack(t) for t in tasks], dtype=np.int64)
        own = remote[:, self._rack_column[client]][:, None]
        self._gain[client] = np.int64(self._traffic) * (own - remote).max(axis=0)

    def _may_improve(self, first: int, start: int) -> np.ndarray:
        """Over the clients from ``start`` on: whether a swap with ``first`` could lower the cost."""
        racks = self._rack_column[start:]
        own = self._rack_column[first]
        saved = self._gain[first, racks] + self._gain[start:, own]
        return (racks != own) & (saved > self._threshold)

    def partners(self, first: int) -> Iterator[int]:
        """The clients after ``first`` (in rank order) whose pair with it could move a standby, looked at
        again after every refresh: the caller solves each pair and refreshes the two clients if it moved."""
        start = first + 1
        while start < len(self._rack_column):
            version = self._version
            for second in (np.flatnonzero(self._may_improve(first, start)) + start).tolist():
                yield second
                if self._version != version:
                    start = second + 1
                    break
            else:
                return
