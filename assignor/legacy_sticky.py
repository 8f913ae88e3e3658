"""Kafka's pre-3.8 sticky assignor on ClientStates (assignors.md §6.1), the engine of `fallback_prior`.

Deterministic orders (POLICY.md §3) where Kafka iterates hash maps and sets: clients in signed ProcessId
order, tasks in TaskId order. So when two clients claim the same previous active, the later client in
ProcessId order is its previous owner (Kafka: the later in HashMap order overwrites), and among equally
loaded clients the first in ProcessId order wins.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, cast

from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.configs import AssignmentConfigs
from fleet_assignor.assignor.errors import TaskAssignmentException
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.standby import AnyStandbyMove
from fleet_assignor.assignor.task_id import TaskId

log = logging.getLogger(__name__)

# Rack costs of this assignor when the configs leave them unset (assignors.md §1.8).
DEFAULT_STATEFUL_TRAFFIC_COST = 1
DEFAULT_STATEFUL_NON_OVERLAP_COST = 10
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


class LegacyRackOptimizer(Protocol):
    """The legacy-side rack optimizer (`assignor.rack.RackAwareTaskAssignor`) as this assignor uses it."""

    def can_enable_rack_awareness(self) -> bool: ...

    def optimize_active_tasks(
        self,
        tasks: Sequence[TaskId],
        clients: Mapping[ProcessId, ClientState],
        traffic_cost: int,
        non_overlap_cost: int,
    ) -> int: ...

    def optimize_standby_tasks(
        self,
        clients: Mapping[ProcessId, ClientState],
        traffic_cost: int,
        non_overlap_cost: int,
        move_predicate,
    ) -> int: ...


class TaskPairs:
    """Which tasks have shared a client: placement prefers a client where the task makes a new pair, so
    that no two clients end up with the same task sets.

    A pair has been placed together exactly when some client was given both tasks (a client only gains
    placements during one assignment). So pairs are answered from each client's placed tasks and each
    task's clients, not recorded one by one: 6,000 tasks on two clients are 18 million pairs, which took
    seconds to record.
    """

    def __init__(self, task_count: int) -> None:
        self._pairs_in_all = task_count * (task_count - 1) // 2
        self._tasks: dict[ProcessId, set[TaskId]] = {}
        self._holders: dict[TaskId, list[ProcessId]] = {}
        self._pairs_with_repeats = 0  # an upper bound of the distinct pairs placed
        self._every_pair_placed = False

    def place(self, client: ProcessId, task: TaskId) -> None:
        """``task`` now shares ``client`` with every task placed there before."""
        tasks = self._tasks.setdefault(client, set())
        self._pairs_with_repeats += len(tasks)
        tasks.add(task)
        self._holders.setdefault(task, []).append(client)

    def has_new_pair(self, task: TaskId, client: ProcessId) -> bool:
        """Some task placed on ``client`` never shared a client with ``task``. Once every pair of the
        application's tasks has been placed, no pair is new."""
        tasks = self._tasks.get(client)
        if not tasks:
            return False
        holders = self._holders.get(task, [])
        if client in holders:
            # Placed here before and moved away since (by the rack optimizer): the task with itself is a
            # pair never placed, as in Kafka.
            return not self.every_pair_placed()
        if not holders:
            return True  # nothing was placed with it yet (and so not every pair is placed)
        if len(holders) == 1:
            return not tasks.issubset(self._tasks[holders[0]])
        shared = [self._tasks[holder] for holder in holders]
        return any(all(other not in placed for placed in shared) for other in tasks)

    def every_pair_placed(self) -> bool:
        if not self._every_pair_placed and self._pairs_with_repeats >= self._pairs_in_all:
            self._every_pair_placed = self._count_pairs() == self._pairs_in_all
        return self._every_pair_placed

    def _count_pairs(self) -> int:
        seen: set[frozenset[TaskId]] = set()
        for tasks in self._tasks.values():
            ordered = list(tasks)
            seen.update(frozenset((a, b)) for i, a in enumerate(ordered) for b in ordered[i + 1 :])
        return len(seen)


class _LoadOrder:
    """A phase's clients by Kafka's least-loaded comparison (assigned tasks per thread, then more threads)
    and then ProcessId order, kept as tasks are placed, so that picking a client does not compare them
    all: 300 clients x 3,000 tasks made 1.8 million comparisons."""

    def __init__(self, clients: Sequence[ClientState]) -> None:
        self._clients = list(clients)
        self._position = {client.process_id: i for i, client in enumerate(self._clients)}
        self._keys = sorted(self._key(i) for i in range(len(self._clients)))
        # an ordered set of positions
        self._empty = dict.fromkeys(
            i for i, client in enumerate(self._clients) if client.assigned_task_count == 0
        )

    def _key(self, i: int) -> tuple[float, int, int]:
        client = self._clients[i]
        return (client.assigned_task_count / client.capacity, -client.capacity, i)

    def key_of(self, client: ClientState) -> tuple[float, int, int]:
        return self._key(self._position[client.process_id])

    def moved(self, client: ClientState, before: tuple[float, int, int]) -> None:
        """``client`` was given a task; ``before`` is its key from before."""
        i = self._position[client.process_id]
        del self._keys[bisect.bisect_left(self._keys, before)]
        bisect.insort(self._keys, self._key(i))
        self._empty.pop(i, None)

    def least_loaded(
        self, excluded: Collection[ProcessId], accept: Callable[[ProcessId], bool]
    ) -> ProcessId | None:
        """A client without tasks first (the first one), else the first in order that ``accept``s."""
        for i in self._empty:
            pid = self._clients[i].process_id
            if pid not in excluded:
                return pid
        for _, _, i in self._keys:
            pid = self._clients[i].process_id
            if pid not in excluded and accept(pid):
                return pid
        return None

    def least_loaded_among(
        self, ids: Sequence[ProcessId], accept: Callable[[ProcessId], bool]
    ) -> ProcessId | None:
        """`least_loaded` over a few clients (``ids`` in ProcessId order), by sorting just them."""
        for pid in ids:
            if self._position[pid] in self._empty:
                return pid
        for pid in sorted(ids, key=lambda pid: self._key(self._position[pid])):
            if accept(pid):
                return pid
        return None

    def someone_has_more_capacity_than(self, client: ClientState) -> bool:
        load, negative_capacity, _ = self.key_of(client)
        return self._keys[0][:2] < (load, negative_capacity)


class LegacyStickyTaskAssignor:
    """With ``must_preserve_active_task_assignment`` every previous active stays with its previous owner,
    whatever the balance (the fallback mode)."""

    def __init__(self, must_preserve_active_task_assignment: bool = False) -> None:
        self.must_preserve = must_preserve_active_task_assignment

    def assign(
        self,
        clients: Mapping[ProcessId, ClientState],
        all_tasks: Collection[TaskId],
        stateful_tasks: Collection[TaskId],
        configs: AssignmentConfigs,
        rack_optimizer: LegacyRackOptimizer | None = None,
    ) -> bool:
        """Place actives, then standbys, on the ClientStates in place; never asks for a probing rebalance."""
        run = _StickyRun(clients, sorted(all_tasks), sorted(stateful_tasks), self.must_preserve)
        run.assign_active_tasks()
        enabled = rack_optimizer is not None and rack_optimizer.can_enable_rack_awareness()
        optimizer = rack_optimizer if enabled else None
        if optimizer is not None:
            _optimize_actives(optimizer, run, configs)
        run.assign_standby_tasks(configs.num_standby_replicas)
        if optimizer is not None and configs.num_standby_replicas > 0:
            optimizer.optimize_standby_tasks(
                run.clients,
                _or_default(configs.rack_aware_traffic_cost, DEFAULT_STATEFUL_TRAFFIC_COST),
                _or_default(configs.rack_aware_non_overlap_cost, DEFAULT_STATEFUL_NON_OVERLAP_COST),
                AnyStandbyMove(),
            )
        return False


def _or_default(value: int | None, default: int) -> int:
    return default if value is None else value


def _optimize_actives(
    rack_optimizer: LegacyRackOptimizer, run: _StickyRun, configs: AssignmentConfigs
) -> None:
    stateful = set(run.stateful_tasks)
    rack_optimizer.optimize_active_tasks(
        run.stateful_tasks,
        run.clients,
        _or_default(configs.rack_aware_traffic_cost, DEFAULT_STATEFUL_TRAFFIC_COST),
        _or_default(configs.rack_aware_non_overlap_cost, DEFAULT_STATEFUL_NON_OVERLAP_COST),
    )
    rack_optimizer.optimize_active_tasks(
        [t for t in run.all_tasks if t not in stateful],
        run.clients,
        STATELESS_TRAFFIC_COST,
        STATELESS_NON_OVERLAP_COST,
    )


class _StickyRun:
    """The state of one assignment: clients (ProcessId order), previous owners, and placed task pairs."""

    def __init__(
        self,
        clients: Mapping[ProcessId, ClientState],
        all_tasks: list[TaskId],
        stateful_tasks: list[TaskId],
        must_preserve: bool,
    ) -> None:
        self.clients = {pid: clients[pid] for pid in sorted(clients)}
        self.all_tasks = all_tasks
        self.stateful_tasks = stateful_tasks
        self.must_preserve = must_preserve
        self.pairs = TaskPairs(len(set(all_tasks)))
        self.order = _LoadOrder(list(self.clients.values()))
        self.previous_active_owner: dict[TaskId, ProcessId] = {}
        self.previous_standby_owners: dict[TaskId, list[ProcessId]] = {}
        for pid, client in self.clients.items():
            for task in client.previous_active:
                self.previous_active_owner[task] = pid  # the later client in ProcessId order keeps it
            for task in client.previous_standby:
                self.previous_standby_owners.setdefault(task, []).append(pid)

    # --- placing ---------------------------------------------------------------------------------------
    def _place(self, client: ClientState, task: TaskId, *, active: bool) -> None:
        before = self.order.key_of(client)
        self.pairs.place(client.process_id, task)
        if active:
            client.assign_active(task)
        else:
            client.assign_standby(task)
        self.order.moved(client, before)

    def assign_active_tasks(self) -> None:
        total_capacity = sum(c.capacity for c in self.clients.values())
        if total_capacity == 0:
            if self.all_tasks:
                raise TaskAssignmentException("no client has a thread to run tasks on")
            return
        self.order = _LoadOrder(list(self.clients.values()))
        tasks_per_thread = len(self.all_tasks) // total_capacity
        known = set(self.all_tasks)
        unassigned = set(self.all_tasks)
        # 1. previous owners keep their actives (all of them when preserving; else up to their quota)
        for task in sorted(self.previous_active_owner):
            owner = self.clients[self.previous_active_owner[task]]
            if task in known and (self.must_preserve or owner.has_unfulfilled_quota(tasks_per_thread)):
                self._place(owner, task, active=True)
                unassigned.discard(task)
        # 2. a previous standby owner with room takes the task
        for task in sorted(unassigned):
            for pid in self.previous_standby_owners.get(task, ()):
                client = self.clients[pid]
                if client.has_unfulfilled_quota(tasks_per_thread):
                    self._place(client, task, active=True)
                    unassigned.discard(task)
                    break
        # 3. the rest, each on the best client of the whole group
        for task in sorted(unassigned):
            self._place(self.clients[self.find_client(task, frozenset())], task, active=True)

    def assign_standby_tasks(self, num_standby_replicas: int) -> None:
        # The rack optimizer may have moved actives since the active phase.
        self.order = _LoadOrder(list(self.clients.values()))
        holders = self._holders(self.stateful_tasks)
        for task in self.stateful_tasks:
            holding = holders[task]
            for _ in range(num_standby_replicas):
                if len(holding) == len(self.clients):
                    log.warning(
                        "not enough clients to place %d standby replicas of task %s",
                        num_standby_replicas,
                        task,
                    )
                    break
                pid = self.find_client(task, holding)
                self._place(self.clients[pid], task, active=False)
                holding.add(pid)

    def _holders(self, tasks: Collection[TaskId]) -> dict[TaskId, set[ProcessId]]:
        """The clients that hold each of ``tasks`` now, in any role."""
        holders: dict[TaskId, set[ProcessId]] = {task: set() for task in tasks}
        for pid, client in self.clients.items():
            for task in (*client.active_set(), *client.standby_set()):
                if task in holders:
                    holders[task].add(pid)
        return holders

    # --- choosing a client -----------------------------------------------------------------------------
    def find_client(self, task: TaskId, excluded: Collection[ProcessId]) -> ProcessId:
        """Among the clients not ``excluded`` (there is one at least): the previous owner if not
        overloaded, else a previous standby owner, else the least-loaded one."""
        if len(self.clients) - len(excluded) == 1:
            return next(pid for pid in self.clients if pid not in excluded)
        owner = self.previous_active_owner.get(task)
        previous = (
            owner
            if owner is not None and owner not in excluded
            else self._least_loaded_standby_owner(task, excluded)
        )
        if previous is None:
            return self._least_loaded(task, excluded)
        if self._should_balance_load(previous):
            standby = self._least_loaded_standby_owner(task, excluded)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded(task, excluded)
            return standby
        return previous

    def _should_balance_load(self, pid: ProcessId) -> bool:
        client = self.clients[pid]
        return client.reached_capacity() and self.order.someone_has_more_capacity_than(client)

    def _least_loaded_standby_owner(self, task: TaskId, excluded: Collection[ProcessId]) -> ProcessId | None:
        # in ProcessId order, as the owners were listed
        within = [pid for pid in self.previous_standby_owners.get(task, ()) if pid not in excluded]
        if not within:
            return None
        return self._pairing_first(task, lambda accept: self.order.least_loaded_among(within, accept))

    def _least_loaded(self, task: TaskId, excluded: Collection[ProcessId]) -> ProcessId:
        """There is a client not ``excluded`` (callers hold at least one candidate), so one is found."""
        found = self._pairing_first(task, lambda accept: self.order.least_loaded(excluded, accept))
        return cast(ProcessId, found)

    def _pairing_first(
        self, task: TaskId, least_loaded: Callable[[Callable[[ProcessId], bool]], ProcessId | None]
    ) -> ProcessId | None:
        """The least-loaded client where ``task`` makes a new task pair, else the least-loaded one."""
        found = least_loaded(lambda pid: self.pairs.has_new_pair(task, pid))
        return found if found is not None else least_loaded(lambda _: True)


__all__ = ["LegacyRackOptimizer", "LegacyStickyTaskAssignor", "TaskPairs"]
