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

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fleet_assignor.assignor.rack.costs import RackCosts, RemoteCounts
from fleet_assignor.assignor.rack.placement import pair_placement_of_counts
from fleet_assignor.assignor.rack.tag_spread import TagSpreadDestinations
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.task_movement import TASK_ORDER

# The gain of a client without standbys: no swap with it exists, whatever the other side saves.
_NO_STANDBY = -(np.int64(1) << np.int64(60))


def rescanned_partners(
    first: int, clients: int, candidates: Callable[[int], np.ndarray], version: Callable[[], int]
) -> Iterator[int]:
    """The clients after ``first`` that ``candidates(start)`` marks (a mask over the clients from ``start``
    on), in rank order. After a change (``version()`` moved on) the rest are marked again: a move changes
    which later pairs can move."""
    start = first + 1
    while start < clients:
        seen = version()
        for second in (np.flatnonzero(candidates(start)) + start).tolist():
            yield second
            if version() != seen:
                start = second + 1
                break
        else:
            return


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
        return rescanned_partners(
            first,
            len(self._rack_column),
            lambda start: self._may_improve(first, start),
            lambda: self._version,
        )


# Kafka's bound on standby optimization rounds ("usually stops after 3 rounds").
STANDBY_OPTIMIZER_MAX_ITERATION = 4


class PairSearch(Protocol):
    def partners(self, first: int) -> Iterable[int]:
        """The clients after ``first`` (ranks) whose pair with it is to be solved, in rank order."""
        ...


def swap_rounds(clients: int, search: PairSearch, swap: Callable[[int, int], bool]) -> None:
    """Kafka's loop (rack.md §7): up to 4 rounds while anything moved, over the pairs i < j in rank order
    that ``search`` does not rule out; ``swap(i, j)`` solves one pair, says whether it moved anything and
    tells ``search`` what changed."""
    moved, rounds = True, 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved, rounds = False, rounds + 1
        for first in range(clients):
            for second in search.partners(first):
                if swap(first, second):
                    moved = True


# A gain below any real one: the side has no standby it may move.
_NO_GAIN = -(np.int64(1) << np.int64(60))


@dataclass(frozen=True, slots=True)
class PairStandbys:
    """A pair's movable standbys, in task order: their rows in the screen, their remote partitions on the
    first and on the second client's rack, their holder (0: the first client, 1: the second) and their
    group (balance_subtopology's, by rank of the key; 0 for all without groups)."""

    rows: list[int]
    first_remote: list[int]
    second_remote: list[int]
    holders: list[int]
    groups: list[int]

    def moves(self, costs: RackCosts) -> list[tuple[int, int, int]]:
        """The pair's exact solve (`placement.pair_placement_of_counts`): (row, from, to) for every standby
        that changes client, 0 for the first client and 1 for the second, in task order."""
        placement = pair_placement_of_counts(
            self.first_remote, self.second_remote, self.holders, self.groups, costs
        )
        return [
            (row, source, destination)
            for row, source, destination in zip(self.rows, self.holders, placement, strict=True)
            if source != destination
        ]


class SwapScreen:
    """The exact movable standbys of every client pair, and from them which pairs could move anything, for
    the two movement rules the assignors use: every move allowed, or the client-tag rule
    (`TagSpreadDestinations`). `SwapBounds` over-estimates a pair's gains from all of a client's standbys
    and cannot tell a pair whose standbys may not move (its predicate is asked pair by pair); here a pair
    is ruled out only when its exact solve keeps its input:

    * a side has no movable standby (no swap exists), or
    * no swap of movable standbys lowers the cost (the best swap's saving, the sum of the two sides' best
      movable gains, is at most 2 x non_overlap; see the module docstring) and, for balance_subtopology,
      the input is within the pair's caps ``ceil(movable(c) x movable of the group / movable)`` (graph.py):
      every other placement of equal counts is then a set of swaps, each not cheaper, and the tie-break
      prefers fewer moves, so the input is the unique optimum.

    Rows are standby replicas (client, task); ``allowed[row, d]``: the row's task may move onto client d
    (d does not hold it and the rule allows). Each client's rows sit in a fixed number of slots (a pair
    swaps as many standbys each way), padded with a row that allows nothing.
    """

    def __init__(
        self,
        client_racks: Sequence[str | None],
        standbys: Sequence[Collection[TaskId]],
        holders: Mapping[TaskId, set[int]],
        destinations: TagSpreadDestinations | None,
        remote: RemoteCounts,
        traffic: int,
        non_overlap: int,
        group_of: Callable[[TaskId], Any] | None,  # a sortable key (graph.build_problem)
    ) -> None:
        """``standbys[c]``: client c's standbys to optimize; ``holders[t]``: every client holding t in any
        role (kept up to date here); ``destinations``: the client-tag rule, None when every move is
        allowed; ``group_of``: balance_subtopology's groups, None for min_traffic."""
        clients = len(client_racks)
        racks = list(dict.fromkeys(client_racks))
        column = {rack: i for i, rack in enumerate(racks)}
        self._rack_column = np.array([column[rack] for rack in client_racks], dtype=np.int64)
        self._rack_of = self._rack_column.tolist()
        # other_rack[k, c]: client c is not on rack column k (a pair on one rack saves no traffic).
        self._other_rack = self._rack_column[None, :] != np.arange(len(racks))[:, None]
        self._holders = holders
        self._destinations = destinations
        self._traffic = np.int64(traffic)
        self._threshold = 2 * non_overlap
        self._tasks: list[TaskId] = []
        owners: list[int] = []
        for client, tasks in enumerate(standbys):
            for task in sorted(tasks):
                self._tasks.append(task)
                owners.append(client)
        rows = len(self._tasks)
        self._padding = rows
        self._rows_of_task: dict[TaskId, list[int]] = {}
        for row, task in enumerate(self._tasks):
            self._rows_of_task.setdefault(task, []).append(row)
        self._owner_of = list(owners)
        self._rank = self._task_ranks()
        self._remote = np.zeros((rows + 1, len(racks)), dtype=np.int64)
        if rows:  # one assignment of every row's counts (per task one numpy call cost more than the counts)
            per_task = {task: remote.row(task, racks) for task in self._rows_of_task}
            self._remote[:rows] = [per_task[task] for task in self._tasks]
        self._groups = 0
        self._group = np.zeros(rows + 1, dtype=np.int64)
        if group_of is not None:
            keys = sorted({group_of(task) for task in self._tasks})
            index = {key: i for i, key in enumerate(keys)}
            self._groups = len(keys)
            self._group[:rows] = [index[group_of(task)] for task in self._tasks]
        # A pair's problem is ~20 rows: read off Python lists, not gathered from the arrays (numpy's cost is
        # per call): per rack column each row's remote partitions, and each row's group.
        self._remote_on = self._remote.T.tolist()
        self._group_of = self._group.tolist()
        width = max((len(tasks) for tasks in standbys), default=0)
        self._slots = np.full((clients, width), rows, dtype=np.int64)
        self._slot_of = [0] * rows
        filled = [0] * clients
        for row, client in enumerate(owners):
            self._slots[client, filled[client]] = row
            self._slot_of[row] = filled[client]
            filled[client] += 1
        # A saving is at most traffic x the spread of the row's remote counts over the racks: when twice the
        # largest spread is within 2 x non_overlap (the sticky assignors' costs), no swap ever pays.
        spread = self._remote[:rows].max(axis=1) - self._remote[:rows].min(axis=1) if rows else np.zeros(1)
        self._swaps_may_pay = 2 * abs(traffic) * int(spread.max()) > self._threshold
        self._allowed = np.zeros((rows + 1, clients), dtype=bool)
        # Its transpose, for the gathers of the savings' test (kept only when swaps may pay).
        self._allowed_by_client = np.zeros((clients, rows + 1), dtype=bool) if self._swaps_may_pay else None
        # saving[k, row]: traffic x partitions the row's standby stops reading remotely on rack column k.
        self._saving = np.zeros((len(racks), rows + 1), dtype=np.int64)
        # For the caps of balance_subtopology: movable[c, g, d], how many of c's standbys in group g may move
        # onto d, kept up to date row by row as moves refill rows (a screen call then reads two slices).
        self._movable: np.ndarray | None = None
        self._fill_rows(list(range(rows)))
        if self._groups > 1:
            self._movable = self._movable_counts(clients)
            # The same counts, a row per (client, group): row client x groups + group, updated in place.
            self._movable_rows = self._movable.reshape(clients * self._groups, clients)
        # The counts towards one client d, towards[g, c] = movable[c, g, d], for the d whose pairs are being
        # screened (`_may_move` reads every partner's count towards it: a strided gather in `movable`).
        # Gathered once per d and patched where moves change counts.
        self._towards_client = -1
        self._towards = np.zeros((0, 0), dtype=np.int32)
        self._version = 0

    def _movable_counts(self, clients: int) -> np.ndarray:
        """movable[c, g, d] from ``allowed``: per client, its slots' allowed rows summed by group (the
        padding row allows nothing). float32 runs the products in BLAS; the counts stay exact."""
        one_hot = np.zeros((self._padding + 1, self._groups), dtype=np.float32)
        one_hot[np.arange(self._padding), self._group[: self._padding]] = 1.0
        by_group = one_hot[self._slots].transpose(0, 2, 1)  # (c, g, slot)
        return np.rint(by_group @ self._allowed[self._slots].astype(np.float32)).astype(np.int32)  # (c, g, d)

    def _fill_rows(self, rows: list[int]) -> np.ndarray:
        """The rows' ``allowed`` (and when swaps may pay its transpose and ``saving``) from their owners and
        holders now, all rows at once: a move refills every row of its tasks (a handful), and numpy's cost is
        per call. Returns the rows' new ``allowed``."""
        if not rows:
            return np.zeros((0, self._allowed.shape[1]), dtype=bool)
        owners = [self._owner_of[row] for row in rows]
        block: np.ndarray
        if self._destinations is None:
            block = np.ones((len(rows), self._allowed.shape[1]), dtype=bool)
        else:
            allowed = self._destinations.allowed
            block = np.array(
                [
                    allowed(owner, self._holders[self._tasks[row]])
                    for row, owner in zip(rows, owners, strict=True)
                ]
            )
        held_at: list[int] = []
        held_by: list[int] = []
        for at, row in enumerate(rows):  # no standby lands on a client holding its task in any role
            holders = self._holders[self._tasks[row]]
            held_at.extend([at] * len(holders))
            held_by.extend(holders)
        if held_at:
            block[held_at, held_by] = False
        self._allowed[rows] = block
        if self._allowed_by_client is not None:
            self._allowed_by_client[:, rows] = block.T
        if self._swaps_may_pay:  # else `_may_move` never reads the savings
            remote = self._remote[rows]
            own = remote[np.arange(len(rows)), self._rack_column[owners]]
            self._saving[:, rows] = (self._traffic * (own[:, None] - remote)).T
        return block

    def _count_keys(self, rows: list[int]) -> list[int]:
        """Each row's row in `movable_rows` (its owner's, for its group)."""
        owner_of, group_of, groups = self._owner_of, self._group_of, self._groups
        return [owner_of[row] * groups + group_of[row] for row in rows]

    def _recount(
        self, keys_before: list[int], before: np.ndarray, rows: list[int], after: np.ndarray
    ) -> None:
        """Refilled rows leave the movable counts under their keys and ``allowed`` before, and come back under
        their keys and ``allowed`` now: row by row in place (a move refills a handful; keys may repeat)."""
        counts = self._movable_rows
        keys_after = self._count_keys(rows)
        # In the counts' own type: a bool row added to an int32 one goes through numpy's buffered casting.
        left, came = before.astype(np.int32), after.astype(np.int32)
        for at, (was, now) in enumerate(zip(keys_before, keys_after, strict=True)):
            if was == now:  # a row whose owner kept it: one update of its change
                counts[now] += came[at] - left[at]
            else:
                counts[was] -= left[at]
                counts[now] += came[at]
        if self._towards_client >= 0:
            column, towards = self._towards_client, self._towards
            for key in {*keys_before, *keys_after}:
                owner, group = divmod(key, self._groups)
                towards[group, owner] = counts[key, column]

    def _task_ranks(self) -> list[int] | None:
        """Each row's place in the task order of a pair's problem (`TASK_ORDER`), None where the ids do
        not sort (named among unnamed: a pair's sort then raises as it did on the ids)."""
        try:
            ordered = sorted_task_ids(self._rows_of_task, TASK_ORDER)
        except TypeError:
            return None
        rank = [0] * len(self._tasks)
        for place, task in enumerate(ordered):
            for row in self._rows_of_task[task]:
                rank[row] = place
        return rank

    def task(self, row: int) -> TaskId:
        return self._tasks[row]

    def _movable_rows_to(self, source: int, destination: int) -> np.ndarray:
        rows = self._slots[source]
        return rows[self._allowed[rows, destination]]

    def pair(self, first: int, second: int) -> PairStandbys | None:
        """The pair's movable standbys (both ways) with the numbers of its exact solve
        (`placement.pair_placement_of_counts`), in task order; None when a side has none (no swap exists)."""
        given = self._movable_rows_to(first, second)
        taken = self._movable_rows_to(second, first)
        if not len(given) or not len(taken):
            return None
        rows = given.tolist() + taken.tolist()
        if self._rank is None:
            rows.sort(key=lambda row: TASK_ORDER(self._tasks[row]))
        else:
            rows.sort(key=self._rank.__getitem__)
        near, far = self._remote_on[self._rack_of[first]], self._remote_on[self._rack_of[second]]
        owner_of, group_of = self._owner_of, self._group_of
        return PairStandbys(
            rows,
            [near[row] for row in rows],
            [far[row] for row in rows],
            [0 if owner_of[row] == first else 1 for row in rows],
            [group_of[row] for row in rows],
        )

    def moved_rows(self, moves: list[tuple[int, int]]) -> None:
        """A pair swapped these standbys (row, to rank; rows as `PairStandbys.rows`); as many go each way."""
        refilled = [row for moved, _ in moves for row in self._rows_of_task[self._tasks[moved]]]
        counted = self._movable is not None
        if counted:
            before, keys_before = self._allowed[refilled], self._count_keys(refilled)
        free: dict[int, list[int]] = {}
        arrived: list[tuple[int, int]] = []
        owner_of = self._owner_of
        for row, destination in moves:
            source, task = owner_of[row], self._tasks[row]
            free.setdefault(source, []).append(self._slot_of[row])
            owner_of[row] = destination
            self._holders[task].discard(source)
            self._holders[task].add(destination)
            arrived.append((row, destination))
        for row, destination in arrived:
            slot = free[destination].pop()
            self._slots[destination, slot] = row
            self._slot_of[row] = slot
        after = self._fill_rows(refilled)
        if counted:
            self._recount(keys_before, before, refilled, after)
        self._version += 1

    def _may_move(self, first: int, start: int) -> np.ndarray:
        """Over the clients from ``start`` on: whether the pair with ``first`` could move a standby."""
        own = self._rack_of[first]
        # Both tests below are false for a partner where a side has no movable standby (no swap exists): a
        # cap is broken only by a side's count of at least one, and a side without one has gain _NO_GAIN.
        # (Reductions by the ufuncs themselves: `ndarray.sum` and `any` add a Python call each.)
        if self._movable is not None:
            here = self._movable[first, :, start:]  # (group, partner): first's standbys that may go there
            if self._towards_client != first:
                self._towards = np.ascontiguousarray(self._movable[:, :, first].T)
                self._towards_client = first
            there = self._towards[:, start:]  # each partner's that may come here
            given, taken = np.add.reduce(here, dtype=np.int32), np.add.reduce(there, dtype=np.int32)
            may_move = _breaks_caps(here, there, given, taken)  # a row in one group
        else:
            may_move = np.zeros(len(self._rack_of) - start, dtype=bool)
        if self._swaps_may_pay:
            racks = self._rack_column[start:]
            rows = self._slots[first]
            partner_slots = self._slots[start:]
            forward = self._allowed[rows, start:]  # first's standbys that may go to each partner
            assert self._allowed_by_client is not None  # kept when swaps may pay
            backward = self._allowed_by_client[first][partner_slots]  # each partner's that may come here
            gain_given = np.where(forward, self._saving[:, rows].T[:, racks], _NO_GAIN).max(axis=0)
            gain_taken = np.where(backward, self._saving[own][partner_slots], _NO_GAIN).max(axis=1)
            may_move |= gain_given + gain_taken > self._threshold
        return self._other_rack[own, start:] & may_move

    def partners(self, first: int) -> Iterator[int]:
        """As `SwapBounds.partners`: looked at again after every move (`moved_rows`)."""
        if self._slots.shape[1] == 0 or (self._groups <= 1 and not self._swaps_may_pay):
            return iter(())  # no standby, or no caps and no swap that pays: no pair moves
        return rescanned_partners(
            first, len(self._rack_column), lambda start: self._may_move(first, start), lambda: self._version
        )


def _breaks_caps(here: np.ndarray, there: np.ndarray, given: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """balance_subtopology: per partner, whether the input breaks a cap of the pair's graph (graph.py), a
    group's count over ``ceil(count x size / total)`` on either side. For integers, n > ceil(q) exactly
    when n - 1 >= q: no division. With n, n' the group's movable standbys here and there, c, c' the
    sides' (given, taken) and t = c + c': (n - 1) t >= c (n + n') is n c' - n' c >= t, and the other
    side's is n' c - n c' >= t: one comparison of |n c' - n' c| for both sides (t at least 1, as a
    partner with nothing movable has no cap to break)."""
    total = np.maximum(given + taken, 1)
    difference = here * taken
    difference -= there * given  # in place, and the largest over the groups compared once
    np.abs(difference, out=difference)
    return np.maximum.reduce(difference) >= total
