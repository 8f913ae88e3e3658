"""Phases D and E of the HighAvailabilityTaskAssignor: moving tasks towards caught-up clients
(Kafka's ``TaskMovement``, assignors.md §4.4-§4.6).

After the balanced placement of phases A and B, an active (or standby) sitting on a client that is not
caught up is moved to a caught-up client when one exists (or to the most caught-up one), and the client it
leaves may keep a *warmup* copy to catch up for a later probing rebalance. A shared warmup budget limits
those copies.

Inputs are the caught-up sets and the by-lag orders of every stateful task, computed once by the caller
(phase C). Clients are addressed by ProcessId; internally they are indexed by their rank in signed
ProcessId order so the hot loops compare small ints.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Mapping, Sequence
from operator import attrgetter
from typing import cast

import numpy as np

from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.java_order import java_heap_offer, java_heap_poll
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids

LATEST_OFFSET = -2  # the lag of a running active: caught up by definition
UNBOUNDED_RECOVERY_LAG = (1 << 63) - 1  # acceptable_recovery_lag = Long.MAX_VALUE: everyone is caught up

# TaskId order as a sort key: computed once per element instead of a Python-level comparison per pair.
# (A named id compared with an unnamed one raises TypeError, as Kafka refuses that comparison.)
TASK_ORDER = attrgetter("topology_name", "subtopology", "partition")

# A caught-up set up to this size is scanned directly when picking the least-loaded member; larger sets
# go through a heap of all clients (both answer "the member with the smallest (load, ProcessId)").
_SCAN_LIMIT = 48


class WarmupBudget:
    """The shared ``max_warmup_replicas`` budget of phases D and E (assignors.md §4.4).

    Every non-swap active move and every performed standby move spends one unit, whether or not a warmup
    is left behind, so the count may go negative: this is Kafka's behaviour and it is kept.
    """

    __slots__ = ("remaining",)

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def take(self) -> bool:
        """Spend one unit; True when one was still available (checked before the decrement)."""
        available = self.remaining > 0
        self.remaining -= 1
        return available


class _ClientsByLoad:
    """Kafka's ConstrainedPrioritySet over caught-up clients, weight = assigned task load (assignors.md §3).

    ``poll`` answers the member with the smallest (assigned_task_load, ProcessId) among the task's caught-up
    clients that passes ``extra``, and removes it. Callers re-offer a client after changing its load, so
    reading loads at poll time is exactly Kafka's comparator behaviour.
    """

    __slots__ = ("_heap", "_member", "_states", "_version")

    def __init__(self, states: Sequence[ClientState]) -> None:
        self._states = states
        self._member = [False] * len(states)
        self._version = [0] * len(states)
        self._heap: list[tuple[float, int, int]] = []

    def _load(self, index: int) -> float:
        return self._states[index].assigned_task_load

    def offer(self, index: int) -> None:
        self._member[index] = True
        self._version[index] += 1
        heapq.heappush(self._heap, (self._load(index), index, self._version[index]))

    def poll(self, candidates: Sequence[int], extra: Callable[[int], bool] | None = None) -> int | None:
        best = (
            self._scan(candidates, extra) if len(candidates) <= _SCAN_LIMIT else self._pop(candidates, extra)
        )
        if best is not None:
            self._member[best] = False
        return best

    def _scan(self, candidates: Sequence[int], extra: Callable[[int], bool] | None) -> int | None:
        member, states = self._member, self._states
        best: int | None = None
        best_load = 0.0
        for index in candidates:  # ascending index = ascending ProcessId, so the first minimum wins ties
            if not member[index] or (extra is not None and not extra(index)):
                continue
            load = states[index].assigned_task_load
            if best is None or load < best_load:
                best, best_load = index, load
        return best

    def _pop(self, candidates: Sequence[int], extra: Callable[[int], bool] | None) -> int | None:
        allowed = set(candidates)
        heap, member, version = self._heap, self._member, self._version
        rejected: list[tuple[float, int, int]] = []
        found: int | None = None
        while heap:
            entry = heapq.heappop(heap)
            load, index, stamp = entry
            if not member[index] or version[index] != stamp:
                continue  # superseded by a later offer, or polled
            current = self._load(index)
            if current != load:  # defensive: a load changed without a re-offer
                heapq.heappush(heap, (current, index, stamp))
                continue
            if index in allowed and (extra is None or extra(index)):
                found = index
                break
            rejected.append(entry)
        for entry in rejected:
            heapq.heappush(heap, entry)
        return found


class _JavaPriorityQueue:
    """``java.util.PriorityQueue`` with its exact sift rules (assignors.md Appendix A.3).

    Phase E schedules one movement per (task, destination); movements of the same task compare equal, and
    Kafka serves them in its heap's order. Reproducing the heap makes that order, and so the result, Kafka's.
    """

    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: list[tuple[tuple, object]] = []

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: tuple, item: object) -> None:
        java_heap_offer(self._queue, (key, item))

    def poll(self) -> object:
        result = self._queue[0][1]
        java_heap_poll(self._queue)
        return result


class LagTable:
    """Phase C (assignors.md §4.4) for every stateful task at once: lags index-aligned with the clients in
    signed ProcessId order, the caught-up test, and each task's smallest lag.

    Caught up = running active (-2), or an unbounded acceptable lag, or 0 <= lag <= acceptable; so an
    unknown lag (-3) never is otherwise. `caught_up()` and `by_lag()` give the two per-task views phases D
    and E read, as mappings keyed by TaskId (Kafka's shapes) that also answer by index, without hashing.
    """

    def __init__(
        self,
        order: Sequence[ProcessId],
        tasks: Sequence[TaskId],
        lags: np.ndarray,
        acceptable_recovery_lag: int,
    ) -> None:
        self.order = list(order)
        self.tasks = list(tasks)
        self.task_index = {t: j for j, t in enumerate(self.tasks)}
        by_task = np.ascontiguousarray(np.asarray(lags, dtype=np.int64).reshape(len(order), len(tasks)).T)
        self.lags = by_task  # tasks x clients
        if acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG:
            self.caught = np.ones(by_task.shape, dtype=bool)
        else:
            self.caught = (by_task == LATEST_OFFSET) | ((by_task >= 0) & (by_task <= acceptable_recovery_lag))
        self.min_lag_array = (  # the ufunc's own reduce: `ndarray.min` adds a Python wrapper per call
            np.minimum.reduce(by_task, axis=1) if len(order) else np.zeros(len(self.tasks), dtype=np.int64)
        )
        self.min_lags = self.min_lag_array.tolist()
        self._candidates: dict[int, tuple[int, ...]] = {}

    def candidate_indices(self, j: int) -> tuple[int, ...]:
        found = self._candidates.get(j)
        if found is None:
            found = tuple(self.caught[j].nonzero()[0].tolist())  # 1-d: the method skips numpy's wrapper
            self._candidates[j] = found
        return found

    def lag_order_indices(self, j: int) -> list[int]:
        """Clients by (lag, ProcessId): a stable sort of the ProcessId-ordered row."""
        return self.lags[j].argsort(kind="stable").tolist()

    def caught_up(self) -> CaughtUpView:
        return CaughtUpView(self)

    def by_lag(self) -> LagOrder:
        return LagOrder(self)


class CaughtUpView(Mapping[TaskId, tuple[ProcessId, ...]]):
    """task -> its caught-up clients, in ProcessId order."""

    def __init__(self, table: LagTable) -> None:
        self.table = table

    def __getitem__(self, task: TaskId) -> tuple[ProcessId, ...]:
        order = self.table.order
        return tuple(order[i] for i in self.table.candidate_indices(self.table.task_index[task]))

    def __iter__(self):
        return iter(self.table.tasks)

    def __len__(self) -> int:
        return len(self.table.tasks)


class LagOrder(Mapping[TaskId, list[ProcessId]]):
    """task -> every client by (lag ascending, ProcessId); the sentinels -3 and -2 sort first."""

    def __init__(self, table: LagTable) -> None:
        self.table = table

    def __getitem__(self, task: TaskId) -> list[ProcessId]:
        order = self.table.order
        return [order[i] for i in self.table.lag_order_indices(self.table.task_index[task])]

    def __iter__(self):
        return iter(self.table.tasks)

    def __len__(self) -> int:
        return len(self.table.tasks)


class _Plan:
    """Index views shared by both phases: from a `LagTable` when the caller has one for these clients,
    else from Kafka-shaped mappings (the unit tests give caught-up sets and lag orders by hand)."""

    def __init__(
        self,
        caught_up: Mapping[TaskId, Collection[ProcessId]],
        by_lag: Mapping[TaskId, Sequence[ProcessId]],
        clients: Mapping[ProcessId, ClientState],
    ) -> None:
        self.order = sorted(clients)
        self.index = {pid: i for i, pid in enumerate(self.order)}
        self.states = [clients[pid] for pid in self.order]
        self._caught_up = caught_up
        self._by_lag = by_lag
        self._candidates: dict[TaskId, tuple[int, ...]] = {}
        self._caught_sets: dict[TaskId, frozenset[int]] = {}
        table = caught_up.table if isinstance(caught_up, CaughtUpView) else None
        if table is not None and not (
            isinstance(by_lag, LagOrder) and by_lag.table is table and table.order == self.order
        ):
            table = None
        self._table = table

    def candidates(self, task: TaskId) -> tuple[int, ...]:
        """The task's caught-up clients as sorted indices."""
        if self._table is not None:
            return self._table.candidate_indices(self._table.task_index[task])
        found = self._candidates.get(task)
        if found is None:
            index = self.index
            found = tuple(sorted(index[pid] for pid in self._caught_up[task]))
            self._candidates[task] = found
            self._caught_sets[task] = frozenset(found)
        return found

    def is_caught_up(self, task: TaskId, client: int) -> bool:
        if self._table is not None:
            return bool(self._table.caught[self._table.task_index[task], client])
        self.candidates(task)
        return client in self._caught_sets[task]

    def by_lag(self, task: TaskId) -> list[int]:
        if self._table is not None:
            return self._table.lag_order_indices(self._table.task_index[task])
        index = self.index
        return [index[pid] for pid in self._by_lag[task]]

    def to_move(self, held: Sequence[Sequence[TaskId]]) -> list[tuple[TaskId, int]]:
        """The (task, client) pairs with ``should_move``, ``held[client]`` listing the client's candidate
        tasks: clients in index order, each client's tasks in TaskId order.

        With a lag table the test runs on every held task at once in numpy (at 6,000 tasks x 2 clients the
        per-task test was most of phases D and E); a held task the table does not know raises KeyError, as
        ``should_move`` does.
        """
        table = self._table
        if table is None:
            return [
                (task, client)
                for client, tasks in enumerate(held)
                for task in sorted_task_ids(tasks, TASK_ORDER)
                if self.should_move(task, client)
            ]
        flat = [task for tasks in held for task in tasks]
        if not flat:
            return []
        rows = np.fromiter(map(table.task_index.__getitem__, flat), dtype=np.intp, count=len(flat))
        columns = np.arange(len(held), dtype=np.intp).repeat([len(tasks) for tasks in held])
        lags = table.lags[rows, columns]
        moving = ~table.caught[rows, columns] & (table.min_lag_array[rows] < lags)
        chosen = [
            (flat[k], client)
            for k, client in zip(moving.nonzero()[0].tolist(), columns[moving].tolist(), strict=True)
        ]
        chosen.sort(key=lambda pair: (pair[1], TASK_ORDER(pair[0])))
        return chosen

    def should_move(self, task: TaskId, client: int) -> bool:
        """Not caught up here, and some client has a strictly smaller lag (assignors.md §4.5 step 2)."""
        table = self._table
        if table is not None:
            j = table.task_index[task]
            if table.caught[j, client]:
                return False
            return table.min_lags[j] < int(table.lags[j, client])
        if self.is_caught_up(task, client):
            return False
        first = next(iter(self._by_lag[task]))
        return self.states[self.index[first]].lag_for(task) < self.states[client].lag_for(task)


def _most_caught_up(by_lag: Sequence[int], destination: int, eligible: Callable[[int], bool]) -> int | None:
    """Walk the by-lag order up to the destination; the first eligible client before it."""
    for client in by_lag:
        if client == destination:
            return None
        if eligible(client):
            return client
    return None


def assign_active_task_movements(
    caught_up: Mapping[TaskId, Collection[ProcessId]],
    by_lag: Mapping[TaskId, Sequence[ProcessId]],
    clients: Mapping[ProcessId, ClientState],
    warmups: dict[ProcessId, set[TaskId]],
    budget: WarmupBudget,
) -> int:
    """Phase D: move actives off clients that are not caught up; return the number of movements scheduled.

    Movements run in (number of caught-up clients, TaskId) order. Each tries, in turn: a swap with a
    caught-up client holding a standby (free), a move to the least-loaded caught-up client, a move to the
    most caught-up client. A non-swap move spends budget and leaves a warmup on the old owner while the
    budget lasts (recorded in ``warmups``).
    """
    plan = _Plan(caught_up, by_lag, clients)
    states = plan.states
    picker = _ClientsByLoad(states)
    movements: list[tuple[tuple[int, tuple[str | None, int, int]], TaskId, int]] = []
    held = [[t for t in state.active_set() if t in state.task_lags] for state in states]
    for task, client in plan.to_move(held):
        movements.append(((len(plan.candidates(task)), TASK_ORDER(task)), task, client))
    for client in range(len(states)):
        picker.offer(client)
    # Each active task has one owner, so the keys are unique and a sort gives Kafka's poll order.
    movements.sort(key=lambda m: m[0])

    for _, task, destination in movements:
        source = _swap_with_caught_up_standby(plan, picker, task, destination)
        if source is None:
            source = _move_to_caught_up_client(plan, picker, task, destination, warmups, budget)
        if source is None:
            source = _move_to_most_caught_up_client(plan, task, destination, warmups, budget)
        if source is None:
            raise RuntimeError(
                f"tried to move task {task} to a more caught-up client as scheduled, but none exists"
            )
        picker.offer(source)
        picker.offer(destination)
    return len(movements)


def _swap(task: TaskId, source: ClientState, destination: ClientState) -> None:
    """The source's standby becomes the active; the destination keeps a plain standby (no budget)."""
    source.unassign_standby(task)
    source.assign_active(task)
    destination.unassign_active(task)
    destination.assign_standby(task)


def _move_active(
    task: TaskId,
    source: ClientState,
    destination: ClientState,
    warmups: dict[ProcessId, set[TaskId]],
    budget: WarmupBudget,
) -> None:
    source.assign_active(task)
    destination.unassign_active(task)
    if budget.take():
        destination.assign_standby(task, warmup=True)
        warmups.setdefault(destination.process_id, set()).add(task)


def _swap_with_caught_up_standby(plan: _Plan, picker: _ClientsByLoad, task: TaskId, destination: int):
    states = plan.states
    source = picker.poll(plan.candidates(task), lambda c: states[c].has_standby(task))
    if source is not None:
        _swap(task, states[source], states[destination])
    return source


def _move_to_caught_up_client(plan, picker, task, destination, warmups, budget):
    states = plan.states
    source = picker.poll(plan.candidates(task))
    if source is not None:
        _move_active(task, states[source], states[destination], warmups, budget)
    return source


def _move_to_most_caught_up_client(plan, task, destination, warmups, budget):
    states = plan.states
    source = _most_caught_up(plan.by_lag(task), destination, lambda c: True)
    if source is None:
        return None
    if states[source].has_standby(task):
        _swap(task, states[source], states[destination])
    else:
        _move_active(task, states[source], states[destination], warmups, budget)
    return source


def assign_standby_task_movements(
    caught_up: Mapping[TaskId, Collection[ProcessId]],
    by_lag: Mapping[TaskId, Sequence[ProcessId]],
    clients: Mapping[ProcessId, ClientState],
    budget: WarmupBudget,
    warmups: Mapping[ProcessId, Collection[TaskId]],
) -> int:
    """Phase E: move standbys (not the warmups of phase D) off clients that are not caught up; return the
    number of movements performed.

    The new copy goes to the least-loaded caught-up client not holding the task, else to the most caught-up
    such client before the destination in lag order. While the budget lasts the old copy stays as a warmup.
    """
    plan = _Plan(caught_up, by_lag, clients)
    states = plan.states
    picker = _ClientsByLoad(states)
    queue = _JavaPriorityQueue()
    held = []
    for state in states:
        skip = warmups.get(state.process_id, ())
        held.append([t for t in state.standby_set() if t not in skip])
    for task, destination in plan.to_move(held):
        queue.add((len(plan.candidates(task)), TASK_ORDER(task)), (task, destination))
    for destination in range(len(states)):
        picker.offer(destination)

    performed = 0
    while queue:
        task, destination = cast(tuple[TaskId, int], queue.poll())

        def eligible(client: int, task: TaskId = task) -> bool:
            return not states[client].has_assigned_task(task)

        source = picker.poll(plan.candidates(task), eligible)
        if source is None:
            source = _most_caught_up(plan.by_lag(task), destination, eligible)
        if source is None:
            continue  # every better client already holds the task: nowhere to move it
        states[source].assign_standby(task)
        dest_state = states[destination]
        dest_state.unassign_standby(task)
        if budget.take():
            dest_state.assign_standby(task, warmup=True)  # the old copy stays, as a warmup
        picker.offer(source)
        picker.offer(destination)
        performed += 1
    return performed
