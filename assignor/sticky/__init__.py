"""Kafka's public KIP-924 ``StickyTaskAssignor`` (assignors.md §7) in deterministic form (POLICY.md §3).

Actives: previous owners keep their tasks while within quota, then previous standby holders take tasks,
then the rest go to the best client (previous owner unless overloaded, else a previous standby holder, else
the least-loaded client preferring one that makes a new pair of co-located tasks). Standbys: the same
choice among the clients that do not hold the task. Rack-aware optimization runs through
`assignor.rack` (POLICY.md §4: the assignor's own default costs apply when the configs leave them unset).

Where Kafka iterates hash maps we use signed ProcessId and TaskId order, plus two deliberate improvements
(POLICY.md §3), both measured against Kafka's answers:
* among equally loaded clients, the least-loaded pick prefers the client with more threads (a task
  raises its load least, so the spread stays narrow), then the one with the fewest of its own previous
  actives still waiting to be placed (sorted order otherwise makes an over-quota client keep its lowest
  task ids and lose the others), then the one with the most previous actives placed elsewhere (the
  re-pick can hand one back), then the smaller ProcessId;
* a final pass keeps every client's active count but re-picks which tasks fill it so that the most
  previous actives stay (an exact maximum matching, see `repick_to_keep_previous_actives`);
* then the counts themselves are re-chosen where other counts are no worse in both spread and moves
  (`improve_active_counts`), and after the rack optimizers two actives swap clients where that gives a
  previous active back to its owner at no higher traffic cost (`_give_back_previous_actives`).

Internals address clients by their rank in ProcessId order and tasks by their rank in TaskId order.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import cast

from fleet_assignor.assignor.assignment import (
    AssignedTask,
    AssignedTaskType,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.errors import ConfigException
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.rack import (
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor
from fleet_assignor.assignor.task_id import TaskId

# The KIP-924 sticky assignor's default rack costs (assignors.md §1.8).
STATEFUL_TRAFFIC_COST = 1
STATEFUL_NON_OVERLAP_COST = 10
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0

ACTIVE = AssignedTaskType.ACTIVE
STANDBY = AssignedTaskType.STANDBY


class StickyTaskAssignor(BaseTaskAssignor):
    """``must_preserve_active_task_assignment``: every previous active stays with its previous owner
    whatever the balance, no rack optimization, and the first client asks for an immediate follow-up."""

    MUST_PRESERVE_CONFIG = "must_preserve_active_task_assignment"

    def __init__(self, must_preserve_active_task_assignment: bool = False) -> None:
        self.must_preserve_active_task_assignment = must_preserve_active_task_assignment

    def configure(self, configs: Mapping[str, str]) -> None:
        """``assignor_configs`` may set ``must_preserve_active_task_assignment`` to "true" or "false"."""
        super().configure(configs)
        value = configs.get(self.MUST_PRESERVE_CONFIG)
        if value is None:
            return
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise ConfigException(self.MUST_PRESERVE_CONFIG, value, 'must be "true" or "false"')
        self.must_preserve_active_task_assignment = text == "true"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        state = _StickyState(application_state)
        preserve = self.must_preserve_active_task_assignment
        state.assign_actives(preserve)
        if not preserve:
            state.repick_to_keep_previous_actives()
            if state.balance_active_spread():
                state.repick_to_keep_previous_actives()
            state.improve_active_counts()
            state.optimize_actives_for_racks()
        state.assign_standbys()
        if not preserve:
            state.optimize_standbys_for_racks()
        assignments = state.to_assignments()
        if preserve and assignments:
            # Kafka gives the immediate follow-up to the first client of its map: ours is the smallest id.
            assignments[0] = assignments[0].with_followup_rebalance(0)
        return TaskAssignment.of(assignments)


class _StickyState:
    """The assignment being built, in index form, with the indexes the choices need."""

    def __init__(self, application_state: ApplicationState) -> None:
        self.application_state = application_state
        states = application_state.kafka_streams_states(False)
        self.pids: list[ProcessId] = sorted(states)
        self.threads = [states[p].num_processing_threads for p in self.pids]
        self.tasks: list[TaskId] = sorted(application_state.all_tasks())
        self.task_index = {t: j for j, t in enumerate(self.tasks)}
        n_clients, n_tasks = len(self.pids), len(self.tasks)

        # previous ownership: a task claimed by two clients keeps the later one in ProcessId order (Kafka
        # overwrites in map order)
        self.prev_active = [-1] * n_tasks
        self.prev_owners: list[list[int]] = [[] for _ in range(n_tasks)]  # every claimant, for the re-pick
        self.prev_standby: list[list[int]] = [[] for _ in range(n_tasks)]
        for i, pid in enumerate(self.pids):
            for t in states[pid].previous_active_tasks:
                j = self.task_index.get(t)
                if j is not None:
                    self.prev_active[j] = i
                    self.prev_owners[j].append(i)
        for i, pid in enumerate(self.pids):
            for t in states[pid].previous_standby_tasks:
                j = self.task_index.get(t)
                if j is not None:
                    self.prev_standby[j].append(i)  # ascending i: clients visited in ProcessId order

        # the assignment: role per (client, task); counts; task bitmasks per client; holders per task
        self.roles: list[dict[int, AssignedTaskType]] = [{} for _ in range(n_clients)]
        self.active_count = [0] * n_clients
        self.total = [0] * n_clients
        self.mask = [0] * n_clients
        self.holders: list[list[int]] = [[] for _ in range(n_tasks)]
        self.active_owner = [-1] * n_tasks

        # previous actives still waiting for placement, per previous owner (the tie-break of POLICY.md §3)
        self.waiting = [0] * n_clients
        self.waiting_tasks: set[int] = set()
        # previous actives now active elsewhere, negated, per previous owner: among equally loaded clients
        # with nothing waiting, the one the re-pick can give a previous active back to goes first
        self.displaced = [0] * n_clients
        # clients sorted by key (load, -threads, waiting, -displaced, index); key_of[i] is client i's entry
        self.key_of = [(0.0, -self.threads[i], 0, 0, i) for i in range(n_clients)]
        self.by_key = sorted(self.key_of)

    # --- keys and loads -------------------------------------------------------------------------------
    def load(self, i: int) -> float:
        return self.total[i] / self.threads[i]

    def _rekey(self, i: int) -> None:
        old = self.key_of[i]
        new = (self.total[i] / self.threads[i], -self.threads[i], self.waiting[i], -self.displaced[i], i)
        if new == old:
            return
        by_key = self.by_key
        del by_key[bisect_left(by_key, old)]
        insort(by_key, new)
        self.key_of[i] = new

    def min_load(self) -> float:
        return self.by_key[0][0]

    def should_balance_load(self, i: int) -> bool:
        """Kafka's ``shouldBalanceLoad``: loaded (>= 1 task per thread) and some client is strictly less
        loaded."""
        load = self.load(i)
        return load >= 1 and self.min_load() < load

    # --- placement ------------------------------------------------------------------------------------
    def finalize(self, j: int, i: int, role: AssignedTaskType) -> None:
        """Place task j on client i and settle the waiting count of its previous owner."""
        self._record(j, i, role)
        if role is ACTIVE:
            owner = self.prev_active[j]
            if j in self.waiting_tasks:
                self.waiting_tasks.discard(j)
                self.waiting[owner] -= 1
                if owner != i:
                    self.displaced[owner] += 1
                self._rekey(owner)
        self._rekey(i)

    def has_room(self, i: int, per_thread: int) -> bool:
        return self.active_count[i] < self.threads[i] * per_thread

    def partners(self, j: int) -> int:
        """Tasks sharing a client with task j now, as a bitmask (Kafka's task pairs; see `_eligible`)."""
        combined = 0
        for d in self.holders[j]:
            combined |= self.mask[d]
        return combined

    def _eligible(self, i: int, partners: int) -> bool:
        """Pass 1 of Kafka's least-loaded pick: an empty client, or one holding a task not yet paired with
        the task being placed. Pairs are tasks that share a client in the assignment being built; before
        any re-pick or rack move this is exactly Kafka's pair set, as nothing is ever removed."""
        return self.total[i] == 0 or (self.mask[i] & ~partners) != 0

    def least_loaded_among(self, j: int, candidates: Sequence[int]) -> int | None:
        """findLeastLoadedClient over a small explicit candidate list."""
        if not candidates:
            return None
        partners = self.partners(j)
        key_of = self.key_of
        eligible = [i for i in candidates if self._eligible(i, partners)]
        return min(eligible or candidates, key=key_of.__getitem__)

    def least_loaded_overall(self, j: int) -> int:
        """findLeastLoadedClient over every client not holding task j, scanning clients by key."""
        partners = self.partners(j)
        holding = self.holders[j]
        fallback = None
        if not holding:  # nothing pairs with an unplaced task: every client passes, the minimum wins
            return self.by_key[0][-1]
        for *_, i in self.by_key:
            if i in holding:
                continue
            if self._eligible(i, partners):
                return i
            if fallback is None:
                fallback = i
        return cast(int, fallback)  # some client does not hold the task (Kafka's precondition)

    def best_client(self, j: int, candidates: Sequence[int] | None) -> int:
        """findBestClientForTask; ``candidates`` None means every client not holding the task."""
        if candidates is not None and len(candidates) == 1:
            return candidates[0]
        if candidates is None:
            holding = self.holders[j]
            open_count = len(self.pids) - len(holding)
            if open_count == 1:
                return next(i for i in range(len(self.pids)) if i not in holding)

            def is_candidate(i: int) -> bool:
                return i not in holding
        else:
            allowed = set(candidates)
            is_candidate = allowed.__contains__  # type: ignore[assignment]  # same signature, faster

        owner = self.prev_active[j]
        standby_holders = [i for i in self.prev_standby[j] if is_candidate(i)]
        previous = (
            owner if owner >= 0 and is_candidate(owner) else self.least_loaded_among(j, standby_holders)
        )
        if previous is None:
            return self._least_loaded(j, candidates)
        if self.should_balance_load(previous):
            standby = self.least_loaded_among(j, standby_holders)
            if standby is None or self.should_balance_load(standby):
                return self._least_loaded(j, candidates)
            return standby
        return previous

    def _least_loaded(self, j: int, candidates: Sequence[int] | None) -> int:
        if candidates is None:
            return self.least_loaded_overall(j)
        return cast(int, self.least_loaded_among(j, candidates))  # candidates is never empty here

    # --- actives (assignors.md §7.2) ----------------------------------------------------------------------
    def assign_actives(self, preserve: bool) -> None:
        n_tasks = len(self.tasks)
        capacity = sum(self.threads)
        if capacity == 0:
            return  # no clients: every task stays unassigned
        per_thread = n_tasks // capacity
        unassigned = [True] * n_tasks
        for j in range(n_tasks):
            owner = self.prev_active[j]
            if owner >= 0 and (preserve or self.has_room(owner, per_thread)):
                self._finalize_plain(j, owner, ACTIVE)
                unassigned[j] = False
        for j in range(n_tasks):
            if not unassigned[j]:
                continue
            for i in self.prev_standby[j]:
                if self.has_room(i, per_thread):
                    self._finalize_plain(j, i, ACTIVE)
                    unassigned[j] = False
                    break
        remaining = [j for j in range(n_tasks) if unassigned[j]]
        self._start_waiting(remaining)
        for j in remaining:
            self.finalize(j, self.best_client(j, None), ACTIVE)
        # the tie-breaks serve the active phase only: standbys go by (load, ProcessId)
        self.waiting = [0] * len(self.pids)
        self.displaced = [0] * len(self.pids)
        for i in range(len(self.pids)):
            self._rekey(i)

    def _finalize_plain(self, j: int, i: int, role: AssignedTaskType) -> None:
        self._record(j, i, role)
        self._rekey(i)

    def _record(self, j: int, i: int, role: AssignedTaskType) -> None:
        self.roles[i][j] = role
        self.total[i] += 1
        self.mask[i] |= 1 << j
        self.holders[j].append(i)
        if role is ACTIVE:
            self.active_count[i] += 1
            self.active_owner[j] = i

    def _start_waiting(self, remaining: Sequence[int]) -> None:
        for j, owner in enumerate(self.prev_active):
            placed = self.active_owner[j]
            if owner >= 0 and placed >= 0 and placed != owner:
                self.displaced[owner] += 1  # moved to a previous standby holder in step 2
        for j in remaining:
            owner = self.prev_active[j]
            if owner >= 0:
                self.waiting_tasks.add(j)
                self.waiting[owner] += 1
        for i in range(len(self.pids)):
            self._rekey(i)

    # --- the final re-pick (POLICY.md §3) -------------------------------------------------------------
    def repick_to_keep_previous_actives(self, counts: Sequence[int] | None = None) -> None:  # noqa: C901 - to be split (issue 19)
        """Keep each client's active count (or set it to ``counts``); re-pick which tasks fill it so the
        most previous actives stay.

        A maximum bipartite b-matching of tasks to their previous owners under the counts (Kuhn's
        augmenting paths, tasks in TaskId order, owners in ProcessId order), seeded with the tasks already
        on a previous owner so those never move. With one owner per task it is simply: client c keeps
        min(count_c, its previous tasks). Unmatched tasks stay where they are if that client still has
        room, else fill the remaining room in TaskId / ProcessId order.
        """
        n_clients = len(self.pids)
        room = list(self.active_count if counts is None else counts)
        new_owner = [-1] * len(self.tasks)
        kept_multi: list[list[int]] = [[] for _ in range(n_clients)]  # kept tasks with several owners
        placed = [j for j, owner in enumerate(self.active_owner) if owner >= 0]
        # seed: tasks already on a previous owner stay, single-owner ones first (a shrunk count may not
        # hold them all; a task with another owner can still go there by an augmenting path)
        for multi in (False, True):
            for j in placed:
                current = self.active_owner[j]
                owners = self.prev_owners[j]
                if (len(owners) > 1) == multi and current in owners and room[current] > 0:
                    self._match(j, current, new_owner, room, kept_multi)
        for j in placed:
            if new_owner[j] < 0 and self.prev_owners[j]:
                self._augment(j, new_owner, room, kept_multi)
        placed = [j for j, owner in enumerate(self.active_owner) if owner >= 0]
        leftovers = []
        for j in placed:
            if new_owner[j] >= 0:
                continue
            current = self.active_owner[j]
            if room[current] > 0:
                new_owner[j] = current
                room[current] -= 1
            else:
                leftovers.append(j)
        c = 0
        for j in leftovers:
            while room[c] == 0:
                c += 1
            new_owner[j] = c
            room[c] -= 1
        changed = [j for j in placed if new_owner[j] != self.active_owner[j]]
        for j in changed:
            old = self.active_owner[j]
            del self.roles[old][j]
            self.total[old] -= 1
            self.mask[old] &= ~(1 << j)
            self.active_count[old] -= 1
            self.holders[j].remove(old)
        for j in changed:
            self._finalize_plain(j, new_owner[j], ACTIVE)
        for i in range(n_clients):
            self._rekey(i)

    def improve_active_counts(self) -> bool:  # noqa: C901 - to be split (issue 19)
        """Re-choose how many actives each client runs when another choice is no worse on both counts.

        The result is judged by the spread of actives per thread (max - min) and by the previous actives
        it moves; once the counts are fixed, the re-pick keeps the most previous actives, so only the
        counts matter. Every count vector with all loads within [L, U] keeps at most
        sum(min(lo_c, own_c)) + min(free, sum(min(hi_c, own_c) - lo_c)) previous actives (lo_c, hi_c: the
        counts L and U allow; own_c: the client's previous actives; free: the tasks above the lows), and
        that bound is reached. Scanning the achievable lowest loads L gives, exactly, the fewest moves
        for a spread and the narrowest spread for a number of moves. Of the counts no worse than the
        current ones on both, this takes the fewest moves, then the narrowest spread. Returns whether
        the counts changed.
        """
        threads, count = self.threads, self.active_count
        n_clients = len(self.pids)
        if n_clients < 2 or min(threads) <= 0:
            return False
        total = sum(count)
        own = [0] * n_clients  # a task claimed by several clients counts for the one running it, if any
        for j, owners in enumerate(self.prev_owners):
            placed = self.active_owner[j]
            if owners and placed >= 0:
                own[placed if placed in owners else self.prev_active[j]] += 1
        kept_now = sum(min(n, k) for n, k in zip(count, own, strict=False))
        low_now = min(Fraction(n, t) for n, t in zip(count, threads, strict=False))
        spread_now = max(Fraction(n, t) for n, t in zip(count, threads, strict=False)) - low_now
        average = Fraction(total, sum(threads))
        distinct = sorted(set(threads))

        def loads_between(low: Fraction, high: Fraction) -> list[Fraction]:
            found = set()
            for t in distinct:
                for k in range(math.ceil(low * t), math.floor(high * t) + 1):
                    found.add(Fraction(k, t))
            return sorted(found)

        def kept_within(low: Fraction, high: Fraction) -> int:
            """The most previous actives kept with every load in [low, high]; -1 if no counts fit."""
            base = extra = room_total = lows = 0
            for t, k in zip(threads, own, strict=False):
                lo, hi = math.ceil(low * t), math.floor(high * t)
                if lo > hi:
                    return -1
                lows += lo
                room_total += hi - lo
                base += min(lo, k)
                extra += max(0, min(hi, k) - lo)
            if lows > total or lows + room_total < total:
                return -1
            return base + min(total - lows, extra)

        lows_to_try = loads_between(average - spread_now, average)
        highs = loads_between(average, average + spread_now)
        # the fewest moves for a spread no wider than now
        best_kept = max(kept_within(low, low + spread_now) for low in lows_to_try)
        if best_kept < kept_now:  # cannot happen (the current counts qualify); a guard
            return False
        # the narrowest spread that keeps that many
        best = None
        for low in lows_to_try:
            candidates = [u for u in highs if u - low <= spread_now]
            lo_index, hi_index = 0, len(candidates)
            while lo_index < hi_index:  # kept_within grows with the upper bound: first one that keeps enough
                middle = (lo_index + hi_index) // 2
                if kept_within(low, candidates[middle]) >= best_kept:
                    hi_index = middle
                else:
                    lo_index = middle + 1
            if lo_index < len(candidates):
                key = (candidates[lo_index] - low, low)
                if best is None or key < best:
                    best = key
        if best is None:
            return False
        width, low = best
        if best_kept == kept_now and width == spread_now:
            return False
        counts = self._counts_within(low, low + width, own, total, best_kept)
        if counts == count:
            return False
        before = list(count)
        moved_before = self.active_moves()
        self.repick_to_keep_previous_actives(counts)
        if self.active_moves() > moved_before:  # a task claimed by two clients can defeat the bound
            self.repick_to_keep_previous_actives(before)
            return False
        return True

    def active_moves(self) -> int:
        """Previous actives now running on none of the clients that claimed them."""
        return sum(
            1
            for j, owners in enumerate(self.prev_owners)
            if owners and self.active_owner[j] >= 0 and self.active_owner[j] not in owners
        )

    def _counts_within(
        self, low: Fraction, high: Fraction, own: list[int], total: int, kept: int
    ) -> list[int]:
        """Counts with every load in [low, high] keeping ``kept`` previous actives: the lows, then one task
        at a time to the client whose load after it is lowest, first among clients still short of their
        own previous actives, then among all with room."""
        threads = self.threads
        lows = [math.ceil(low * t) for t in threads]
        highs = [math.floor(high * t) for t in threads]
        counts = list(lows)
        spare = total - sum(lows)
        kept_so_far = sum(min(n, k) for n, k in zip(counts, own, strict=False))
        for wanted in (True, False):
            heap = [
                (Fraction(counts[i] + 1, threads[i]), -threads[i], i)
                for i in range(len(counts))
                if counts[i] < highs[i] and (not wanted or counts[i] < own[i])
            ]
            heapq.heapify(heap)
            while spare and heap and (not wanted or kept_so_far < kept):
                _, _, i = heapq.heappop(heap)
                counts[i] += 1
                spare -= 1
                kept_so_far += counts[i] <= own[i]
                if counts[i] < highs[i] and (not wanted or counts[i] < own[i]):
                    heapq.heappush(heap, (Fraction(counts[i] + 1, threads[i]), -threads[i], i))
        return counts

    def balance_active_spread(self) -> bool:
        """Narrow the spread of active tasks per thread without moving any kept previous active.

        Kafka's sticky assignor balances only through its "should balance load" test, which lets a loaded
        previous owner keep a task while another client has one task per thread less; ties then decide
        the spread. Here a task that its client did not own before (moving it costs nothing) goes from a
        more to a less loaded client while that narrows their difference, preferring a task the receiving
        client owned before. Returns whether anything moved.
        """
        n_clients = len(self.pids)
        threads, count = self.threads, self.active_count
        moved = False
        for _ in range(len(self.tasks)):  # each move strictly narrows one pair: bounded, this is a guard
            by_load = sorted(range(n_clients), key=lambda i: (count[i] / threads[i], i))
            move = self._spread_move(by_load)
            if move is None:
                return moved
            self._move_active(*move)
            moved = True
        return moved

    def _spread_move(self, by_load: list[int]) -> tuple[int, int, int] | None:
        """The first (most loaded source, least loaded destination) pair where moving one task that costs
        no kept previous active (the source did not own it, or the destination owned it too) shrinks their
        difference (|after| < before) and stays within the current extremes, so the overall spread never
        grows; sum(active^2 / threads) strictly drops with each such move."""
        if not by_load:
            return None
        threads, count, owners = self.threads, self.active_count, self.prev_owners
        highest = count[by_load[-1]] / threads[by_load[-1]]
        lowest = count[by_load[0]] / threads[by_load[0]]
        for source in reversed(by_load):
            source_load = count[source] / threads[source]
            source_after = (count[source] - 1) / threads[source]
            if source_after < lowest:
                continue
            actives = sorted(j for j, role in self.roles[source].items() if role is ACTIVE)
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

    def _match(self, j: int, client: int, new_owner: list[int], room: list[int], kept_multi) -> None:
        new_owner[j] = client
        room[client] -= 1
        if len(self.prev_owners[j]) > 1:
            kept_multi[client].append(j)

    def _augment(self, j: int, new_owner: list[int], room: list[int], kept_multi) -> None:
        """Breadth-first augmenting path from task j through previous owners; moves tasks along it."""
        parent: dict[int, tuple[int, int]] = {}
        queue: list[int] = []
        for c in self.prev_owners[j]:
            parent[c] = (-1, j)
            queue.append(c)
        for c in queue:  # the list grows while we walk it: a FIFO queue
            if room[c] > 0:
                self._shift_along(c, parent, new_owner, room, kept_multi)
                return
            for j2 in kept_multi[c]:
                for c2 in self.prev_owners[j2]:
                    if c2 not in parent:
                        parent[c2] = (c, j2)
                        queue.append(c2)

    def _shift_along(self, end: int, parent, new_owner: list[int], room: list[int], kept_multi) -> None:
        room[end] -= 1
        current = end
        while True:
            previous, task = parent[current]
            new_owner[task] = current
            if len(self.prev_owners[task]) > 1:
                kept_multi[current].append(task)
            if previous < 0:
                return
            kept_multi[previous].remove(task)  # it moved on; its slot at `previous` takes the next task
            current = previous

    # --- standbys (assignors.md §7.5) ---------------------------------------------------------------------
    def assign_standbys(self) -> None:
        replicas = self.application_state.assignment_configs().num_standby_replicas
        if replicas <= 0 or not self.pids:
            return
        infos = self.application_state.all_tasks()
        n_clients = len(self.pids)
        for j, task in enumerate(self.tasks):
            if not infos[task].has_changelog:
                continue
            placer = _StandbyPlacer(self, j)
            for _ in range(replicas):
                if len(self.holders[j]) >= n_clients:
                    break  # every client holds the task: no room for another replica
                client = placer.best_client()
                self._finalize_plain(j, client, STANDBY)
                placer.placed(client)

    # --- rack optimization (assignors.md §7.4, §7.6; POLICY.md §4) ------------------------------------------
    def _rack_strategy_set(self) -> bool:
        """The optimizers return at once under strategy `none` (assignors.md §8.5 step 2): skip the round
        trip through assignment maps then."""
        strategy = self.application_state.assignment_configs().rack_aware_assignment_strategy
        return strategy is not RackAwareStrategy.NONE

    def optimize_actives_for_racks(self) -> None:
        if not self._rack_strategy_set():
            return
        from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams

        configs = self.application_state.assignment_configs()
        params = RackAwareOptimizationParams.of(self.application_state)
        stateful = (
            params.for_stateful_tasks()
            .with_traffic_cost_override(_or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST))
            .with_non_overlap_cost_override(
                _or(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST)
            )
        )
        stateless = (
            params.for_stateless_tasks()
            .with_traffic_cost_override(STATELESS_TRAFFIC_COST)
            .with_non_overlap_cost_override(STATELESS_NON_OVERLAP_COST)
        )
        assignments = self._assignment_map()
        results = (
            optimize_rack_aware_active_tasks(stateful, assignments),
            optimize_rack_aware_active_tasks(stateless, assignments),
        )
        self._reload(assignments)
        if any(result.enabled for result in results):
            self._give_back_previous_actives()

    def _give_back_previous_actives(self) -> None:
        """After the rack optimizers: swap two actives between clients when that puts a previous active
        back on its previous owner without raising the cross-rack traffic cost.

        The optimizers charge the non-overlap cost against the assignment they are given, not against the
        previous one, and the stateless pass charges none: they may move a previous active off its owner
        where an equally cheap placement would keep it. A swap exchanges task a (on client x, not its own)
        with task b on a's previous owner y that y did not own, so both clients keep their counts (and,
        under balance_subtopology, their count per subtopology); each swap keeps one more previous active
        (two if x owned b), so this ends.
        """
        from fleet_assignor.assignor.rack.costs import PartitionScope, RemoteCounts

        states = self.application_state.kafka_streams_states(False)
        racks = [states[pid].rack_id for pid in self.pids]
        info = self.application_state.all_tasks()
        remote = RemoteCounts(info, PartitionScope.ALL)
        configs = self.application_state.assignment_configs()
        balance = configs.rack_aware_assignment_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY
        tasks, owners = self.tasks, self.prev_owners
        # Stateful and stateless actives are optimized in separate passes with their own traffic costs: a
        # swap must not raise the two passes' traffic cost together (each partition weighted by its pass's
        # cost), so a stateful-for-stateless trade never buys a move with dearer stateful traffic.
        stateful_cost = _or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST)
        weight = [stateful_cost if info[t].is_stateful else STATELESS_TRAFFIC_COST for t in tasks]

        def cost(j: int, i: int) -> int:
            return remote.count(tasks[j], racks[i])

        changed = True
        while changed:
            changed = False
            for a in range(len(tasks)):
                x = self.active_owner[a]
                if x < 0 or not owners[a] or x in owners[a]:
                    continue
                best = None
                for y in owners[a]:
                    for b, role in self.roles[y].items():
                        if role is not ACTIVE or y in owners[b]:
                            continue
                        if balance and tasks[b].subtopology != tasks[a].subtopology:
                            continue
                        saved = weight[a] * (cost(a, x) - cost(a, y)) + weight[b] * (cost(b, y) - cost(b, x))
                        if saved < 0:
                            continue
                        key = (-(x in owners[b]), -saved, b, y)
                        if best is None or key < best:
                            best = key
                if best is not None:
                    b, y = best[2], best[3]
                    self._move_active(a, x, y)
                    self._move_active(b, y, x)
                    changed = True

    def _move_active(self, j: int, source: int, destination: int) -> None:
        del self.roles[source][j]
        self.total[source] -= 1
        self.mask[source] &= ~(1 << j)
        self.active_count[source] -= 1
        self.holders[j].remove(source)
        self._rekey(source)
        self._finalize_plain(j, destination, ACTIVE)

    def optimize_standbys_for_racks(self) -> None:
        configs = self.application_state.assignment_configs()
        if configs.num_standby_replicas <= 0 or not self._rack_strategy_set():
            return
        from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams

        params = (
            RackAwareOptimizationParams.of(self.application_state)
            .with_traffic_cost_override(_or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST))
            .with_non_overlap_cost_override(
                _or(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST)
            )
        )
        assignments = self._assignment_map()
        optimize_rack_aware_standby_tasks(params, assignments)
        self._reload(assignments)

    def _stateful_costs(self) -> tuple[int, int]:
        """Configured costs, else the sticky assignor's own defaults (POLICY.md §4 fix)."""
        configs = self.application_state.assignment_configs()
        return (
            _or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST),
            _or(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST),
        )

    def _assignment_map(self) -> dict[ProcessId, KafkaStreamsAssignment]:
        return {pid: assignment for pid, assignment in zip(self.pids, self.to_assignments(), strict=False)}

    def _reload(self, assignments: Mapping[ProcessId, KafkaStreamsAssignment]) -> None:
        """Rebuild the index state from optimized assignments (the optimizer may move tasks around)."""
        n_clients, n_tasks = len(self.pids), len(self.tasks)
        self.roles = [{} for _ in range(n_clients)]
        self.active_count = [0] * n_clients
        self.total = [0] * n_clients
        self.mask = [0] * n_clients
        self.holders = [[] for _ in range(n_tasks)]
        self.active_owner = [-1] * n_tasks
        index = {pid: i for i, pid in enumerate(self.pids)}
        for pid, assignment in assignments.items():
            i = index[pid]
            for task, assigned in sorted(assignment.tasks().items()):
                self._finalize_plain(self.task_index[task], i, assigned.type)
        for i in range(n_clients):
            self._rekey(i)

    # --- output -----------------------------------------------------------------------------------------
    def to_assignments(self) -> list[KafkaStreamsAssignment]:
        tasks = self.tasks
        standbys: dict[int, AssignedTask] = {}  # immutable: one object per task serves every replica
        result = []
        for i, pid in enumerate(self.pids):
            roles = self.roles[i]
            assigned = {}
            for j in sorted(roles):
                if roles[j] is ACTIVE:
                    assigned[tasks[j]] = AssignedTask(tasks[j], ACTIVE)
                else:
                    standby = standbys.get(j)
                    if standby is None:
                        standby = standbys[j] = AssignedTask(tasks[j], STANDBY)
                    assigned[tasks[j]] = standby
            result.append(KafkaStreamsAssignment(pid, assigned))
        return result


class _KeyOrderWalk:
    """Clients in a fixed key order, walked for "the first one still open (not holding the task)" and "the
    first one open and eligible". Both only ever skip further: holders stay holders and, as the task's
    partner set only grows while its replicas are placed, an ineligible client stays ineligible."""

    __slots__ = ("_any", "_eligible", "_order")

    def __init__(self, order: list[int]) -> None:
        self._order = order
        self._any = 0
        self._eligible = 0

    def first_open(self, holding: set[int]) -> int | None:
        order = self._order
        while self._any < len(order) and order[self._any] in holding:
            self._any += 1
        return order[self._any] if self._any < len(order) else None

    def first_eligible(self, holding: set[int], eligible: Callable[[int], bool]) -> int | None:
        order = self._order
        while self._eligible < len(order):
            client = order[self._eligible]
            if client not in holding and eligible(client):
                return client
            self._eligible += 1
        return None

    def least_loaded(self, holding: set[int], eligible: Callable[[int], bool]) -> int | None:
        """findLeastLoadedClient: the first eligible client in key order, else the first open one."""
        found = self.first_eligible(holding, eligible)
        return found if found is not None else self.first_open(holding)


class _StandbyPlacer:
    """findBestClientForTask for the replicas of one task, candidates = clients not holding it.

    Within one task's replicas only the chosen client's key changes, and it then holds the task, so every
    other client keeps its place in a key order taken once per task; walks over that order give each pick
    in amortized constant time (the 1,000 tasks x 100 clients x 50 standbys shape needs it).
    """

    def __init__(self, state: _StickyState, j: int) -> None:
        self._state = state
        self._j = j
        self._holding = set(state.holders[j])
        self._partners = state.partners(j)
        key_of = state.key_of
        open_previous = (i for i in state.prev_standby[j] if i not in self._holding)
        previous = sorted(open_previous, key=key_of.__getitem__)
        self._previous = _KeyOrderWalk(previous)
        self._overall: _KeyOrderWalk | None = None

    def _eligible(self, client: int) -> bool:
        return self._state._eligible(client, self._partners)

    def _least_loaded_previous(self) -> int | None:
        return self._previous.least_loaded(self._holding, self._eligible)

    def _least_loaded_overall(self) -> int:
        if self._overall is None:
            self._overall = _KeyOrderWalk([key[-1] for key in self._state.by_key])
        return cast(int, self._overall.least_loaded(self._holding, self._eligible))  # a client is free

    def best_client(self) -> int:
        state = self._state
        if len(state.pids) - len(self._holding) == 1:
            return self._least_loaded_overall()  # the only open client
        owner = state.prev_active[self._j]
        previous = owner if owner >= 0 and owner not in self._holding else self._least_loaded_previous()
        if previous is None:
            return self._least_loaded_overall()
        if state.should_balance_load(previous):
            standby = self._least_loaded_previous()
            if standby is None or state.should_balance_load(standby):
                return self._least_loaded_overall()
            return standby
        return previous

    def placed(self, client: int) -> None:
        self._holding.add(client)
        self._partners |= self._state.mask[client]


def _or(value: int | None, default: int) -> int:
    return default if value is None else value
