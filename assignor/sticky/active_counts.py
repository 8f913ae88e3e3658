"""Re-choosing how many actives each client runs (POLICY.md §3), one of our deliberate improvements over
Kafka's sticky assignor, measured against Kafka's answers.

After the re-pick (`repick`) the counts themselves are re-chosen where other counts are no worse in both
spread and moves. The result is judged by the spread of actives per thread (max - min) and by the previous
actives it moves; once the counts are fixed, the re-pick keeps the most previous actives, so only the
counts matter. Every count vector with all loads within [L, U] keeps at most
sum(min(lo_c, own_c)) + min(free, sum(min(hi_c, own_c) - lo_c)) previous actives (lo_c, hi_c: the counts L
and U allow; own_c: the client's previous actives; free: the tasks above the lows), and that bound is
reached. Scanning the achievable lowest loads L gives, exactly, the fewest moves for a spread and the
narrowest spread for a number of moves.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from fractions import Fraction

from fleet_assignor.assignor.sticky.repick import apply_active_owners, repick_to_keep_previous_actives
from fleet_assignor.assignor.sticky.state import StickyState


def improve_active_counts(state: StickyState) -> bool:
    """Of the counts no worse than the current ones on both spread and moves, take the fewest moves, then
    the narrowest spread, and re-pick the tasks for them. Returns whether the counts changed.

    The bound counts a task that several clients claim for one of them. Counted for the one running it, a
    claimant with little room can take the credit while another with room is given fewer tasks (and the
    task moves); so the counts are searched again with each such task counted for the claimant it loads
    least, and kept only where that moves fewer previous actives or narrows the spread."""
    counts = _better_counts(state, _previous_actives_per_client(state))
    changed = counts is not None and _repick_unless_it_moves_more(state, counts)
    if any(len(owners) > 1 for owners in state.prev_owners):
        counts = _better_counts(state, _claims_to_the_least_loaded(state))
        changed = (counts is not None and _repick_if_better(state, counts)) or changed
    return changed


def _better_counts(state: StickyState, own: Sequence[int]) -> list[int] | None:
    """Counts better than the current ones on spread or moves and worse on neither by the bound with ``own``
    previous actives per client; None if none are."""
    threads, count = state.threads, state.active_count
    if len(state.pids) < 2 or min(threads) <= 0:
        return None
    search = _CountSearch(threads, own, sum(count))
    kept_now = search.kept(count)
    spread_now = _spread(count, threads)
    lows_to_try = search.loads_between(search.average - spread_now, search.average)
    best_kept = search.most_kept(lows_to_try, spread_now)
    if best_kept < kept_now:  # cannot happen (the current counts qualify); a guard
        return None
    narrowest = search.narrowest_spread(lows_to_try, spread_now, best_kept)
    if narrowest is None:
        return None
    width, low = narrowest
    if best_kept == kept_now and width == spread_now:
        return None
    counts = search.counts_within(low, low + width, best_kept)
    return None if counts == count else counts


def _previous_actives_per_client(state: StickyState) -> list[int]:
    """A task claimed by several clients counts for the one running it, if any."""
    own = [0] * len(state.pids)
    for j, owners in enumerate(state.prev_owners):
        placed = state.active_owner[j]
        if owners and placed >= 0:
            own[placed if placed in owners else state.prev_active[j]] += 1
    return own


def _claims_to_the_least_loaded(state: StickyState) -> list[int]:
    """Previous actives per client, a task several clients claim counted for the claimant whose previous
    actives per thread it raises least (ties to the first in ProcessId order), in TaskId order after the
    tasks one client claims."""
    own = [0] * len(state.pids)
    shared = []
    for j, owners in enumerate(state.prev_owners):
        if state.active_owner[j] < 0 or not owners:
            continue
        if len(owners) == 1:
            own[owners[0]] += 1
        else:
            shared.append(owners)
    threads = state.threads
    for owners in shared:
        chosen = min(owners, key=lambda c: (Fraction(own[c] + 1, threads[c]), c))
        own[chosen] += 1
    return own


def _spread(count: Sequence[int], threads: Sequence[int]) -> Fraction:
    loads = [Fraction(n, t) for n, t in zip(count, threads, strict=False)]
    return max(loads) - min(loads)


def _repick_unless_it_moves_more(state: StickyState, counts: list[int]) -> bool:
    """Re-pick for ``counts``; back to the counts before when that moved more previous actives (a task
    claimed by two clients can defeat the bound)."""
    before = list(state.active_count)
    moved_before = state.active_moves()
    repick_to_keep_previous_actives(state, counts)
    if state.active_moves() > moved_before:
        repick_to_keep_previous_actives(state, before)
        return False
    return True


def _repick_if_better(state: StickyState, counts: list[int]) -> bool:
    """Re-pick for ``counts``; back to the very placement before unless that moves fewer previous actives,
    or as many with a narrower spread."""
    owners_before = list(state.active_owner)
    score_before = (state.active_moves(), _spread(state.active_count, state.threads))
    repick_to_keep_previous_actives(state, counts)
    if (state.active_moves(), _spread(state.active_count, state.threads)) < score_before:
        return True
    apply_active_owners(state, state.placed_actives(), owners_before)
    return False


class _CountSearch:
    """The bound on kept previous actives for loads within [low, high], and the searches over it."""

    def __init__(self, threads: Sequence[int], own: Sequence[int], total: int) -> None:
        self.threads = threads
        self.own = own
        self.total = total
        self.average = Fraction(total, sum(threads))
        self._distinct = sorted(set(threads))

    def kept(self, count: Sequence[int]) -> int:
        return sum(min(n, k) for n, k in zip(count, self.own, strict=False))

    def loads_between(self, low: Fraction, high: Fraction) -> list[Fraction]:
        """Every load some client can have within [low, high], ascending."""
        found = set()
        for t in self._distinct:
            for k in range(math.ceil(low * t), math.floor(high * t) + 1):
                found.add(Fraction(k, t))
        return sorted(found)

    def kept_within(self, low: Fraction, high: Fraction) -> int:
        """The most previous actives kept with every load in [low, high]; -1 if no counts fit."""
        base = extra = room_total = lows = 0
        for t, k in zip(self.threads, self.own, strict=False):
            lo, hi = math.ceil(low * t), math.floor(high * t)
            if lo > hi:
                return -1
            lows += lo
            room_total += hi - lo
            base += min(lo, k)
            extra += max(0, min(hi, k) - lo)
        if lows > self.total or lows + room_total < self.total:
            return -1
        return base + min(self.total - lows, extra)

    def most_kept(self, lows: Sequence[Fraction], spread: Fraction) -> int:
        """The fewest moves for a spread no wider than ``spread``, as previous actives kept."""
        return max(self.kept_within(low, low + spread) for low in lows)

    def narrowest_spread(
        self, lows: Sequence[Fraction], spread: Fraction, kept: int
    ) -> tuple[Fraction, Fraction] | None:
        """(width, lowest load) of the narrowest spread within ``spread`` that keeps ``kept``; ties go to
        the lower load."""
        highs = self.loads_between(self.average, self.average + spread)
        best = None
        for low in lows:
            high = self._lowest_high_keeping(low, [u for u in highs if u - low <= spread], kept)
            if high is not None:
                key = (high - low, low)
                if best is None or key < best:
                    best = key
        return best

    def _lowest_high_keeping(self, low: Fraction, highs: Sequence[Fraction], kept: int) -> Fraction | None:
        """Binary search: kept_within grows with the upper bound, so the first that keeps enough."""
        lo_index, hi_index = 0, len(highs)
        while lo_index < hi_index:
            middle = (lo_index + hi_index) // 2
            if self.kept_within(low, highs[middle]) >= kept:
                hi_index = middle
            else:
                lo_index = middle + 1
        return highs[lo_index] if lo_index < len(highs) else None

    def counts_within(self, low: Fraction, high: Fraction, kept: int) -> list[int]:
        """Counts with every load in [low, high] keeping ``kept`` previous actives: the lows, then one task
        at a time to the client whose load after it is lowest, first among clients still short of their
        own previous actives, then among all with room."""
        threads, own = self.threads, self.own
        highs = [math.floor(high * t) for t in threads]
        counts = [math.ceil(low * t) for t in threads]
        spare = self.total - sum(counts)
        kept_so_far = self.kept(counts)
        for wanted in (True, False):
            heap = [
                (Fraction(counts[i] + 1, threads[i]), -threads[i], i)
                for i in range(len(counts))
                if _can_take_one_more(i, counts, highs, own, wanted)
            ]
            heapq.heapify(heap)
            while spare and heap and (not wanted or kept_so_far < kept):
                _, _, i = heapq.heappop(heap)
                counts[i] += 1
                spare -= 1
                kept_so_far += counts[i] <= own[i]
                if _can_take_one_more(i, counts, highs, own, wanted):
                    heapq.heappush(heap, (Fraction(counts[i] + 1, threads[i]), -threads[i], i))
        return counts


def _can_take_one_more(
    i: int, counts: Sequence[int], highs: Sequence[int], own: Sequence[int], wanted: bool
) -> bool:
    """Below its highest count and, while ``wanted`` (the first round), below its own previous actives."""
    return counts[i] < highs[i] and (not wanted or counts[i] < own[i])
