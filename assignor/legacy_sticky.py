"""Kafka's pre-3.8 sticky assignor on ClientStates (assignors.md §6.1), the engine of `fallback_prior`.

Deterministic orders (POLICY.md §3) where Kafka iterates hash maps and sets: clients in signed ProcessId
order, tasks in TaskId order. So when two clients claim the same previous active, the later client in
ProcessId order is its previous owner (Kafka: the later in HashMap order overwrites), and among equally
loaded clients the first in ProcessId order wins.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

import numpy as np

from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.configs import AssignmentConfigs
from fleet_assignor.assignor.errors import TaskAssignmentException
from fleet_assignor.assignor.process_id import ProcessId
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
    """Unordered task pairs already placed together on some client; placement prefers new pairs so that no
    two clients end up with the same task sets.

    Tasks are numbered (`index_of`) and pairs kept as integers: a big application places millions of pairs,
    and hashing TaskIds dominated the run time.
    """

    def __init__(self, tasks: Sequence[TaskId]) -> None:
        self._index = {task: i for i, task in enumerate(tasks)}
        self._size = len(self._index)
        self._max_pairs = self._size * (self._size - 1) // 2
        self._pairs: set[int] = set()

    def index_of(self, task: TaskId) -> int:
        return self._index[task]

    def _key(self, i: int, j: int) -> int:
        return i * self._size + j if i < j else j * self._size + i

    def has_new_pair(self, task: int, others: Collection[int]) -> bool:
        """Some task of ``others`` (indexes) was never placed together with ``task`` (an index)."""
        if len(self._pairs) >= self._max_pairs:
            return False
        return any(self._key(task, other) not in self._pairs for other in others)

    def add_pairs(self, task: int, others: Collection[int]) -> None:
        for other in others:
            self._pairs.add(self._key(task, other))

    def __len__(self) -> int:
        return len(self._pairs)


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
                lambda *_: True,
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


class _Loads:
    """Every client's task count and load (``assigned_task_load``, the same float) by rank in ProcessId
    order, so the least-loaded searches compare them in numpy instead of asking each client."""

    def __init__(self, clients: Sequence[ClientState]) -> None:
        self._clients = clients
        self.capacity = np.array([c.capacity for c in clients], dtype=np.int64)
        self.count = np.zeros(len(clients), dtype=np.int64)
        self.load = np.zeros(len(clients), dtype=np.float64)
        for rank in range(len(clients)):
            self.update(rank)

    def update(self, rank: int) -> None:
        client = self._clients[rank]
        self.count[rank] = client.assigned_task_count
        self.load[rank] = client.assigned_task_load

    def anyone_less_loaded_than(self, rank: int) -> bool:
        """Some client ``has_more_available_capacity_than`` this one."""
        load, capacity = self.load[rank], self.capacity[rank]
        return bool(np.any((self.load < load) | ((self.load == load) & (self.capacity > capacity))))

    def by_available_capacity(self, ranks: np.ndarray) -> np.ndarray:
        """``ranks`` from the most available capacity on (lower load, then more threads); ties keep their
        order (lexsort is stable), as a scan keeping the first strictly better client does."""
        return ranks[np.lexsort((-self.capacity[ranks], self.load[ranks]))]


class _StickyRun:
    """The state of one assignment: clients (ProcessId order), previous owners, and placed task pairs.
    Clients are named by rank in ProcessId order while choosing."""

    def __init__(
        self,
        clients: Mapping[ProcessId, ClientState],
        all_tasks: list[TaskId],
        stateful_tasks: list[TaskId],
        must_preserve: bool,
    ) -> None:
        self.clients = {pid: clients[pid] for pid in sorted(clients)}
        self.order = list(self.clients.values())
        self.rank = {pid: rank for rank, pid in enumerate(self.clients)}
        self.all_tasks = all_tasks
        self.stateful_tasks = stateful_tasks
        self.must_preserve = must_preserve
        self.pairs = TaskPairs(all_tasks)
        self.held: list[list[int]] = [[] for _ in self.order]  # per rank: task indexes, any role
        self.loads = _Loads(self.order)
        self.previous_active_owner: dict[TaskId, int] = {}
        self.previous_standby_owners: dict[TaskId, list[int]] = {}
        for rank, client in enumerate(self.order):
            for task in client.previous_active:
                self.previous_active_owner[task] = rank  # the later client in ProcessId order keeps it
            for task in client.previous_standby:
                self.previous_standby_owners.setdefault(task, []).append(rank)

    # --- placing ---------------------------------------------------------------------------------------
    def _place(self, rank: int, task: TaskId, *, active: bool) -> None:
        index = self.pairs.index_of(task)
        held = self.held[rank]
        self.pairs.add_pairs(index, held)
        held.append(index)
        client = self.order[rank]
        if active:
            client.assign_active(task)
        else:
            client.assign_standby(task)
        self.loads.update(rank)

    def assign_active_tasks(self) -> None:
        total_capacity = sum(c.capacity for c in self.clients.values())
        if total_capacity == 0:
            if self.all_tasks:
                raise TaskAssignmentException("no client has a thread to run tasks on")
            return
        tasks_per_thread = len(self.all_tasks) // total_capacity
        known = set(self.all_tasks)
        unassigned = set(self.all_tasks)
        # 1. previous owners keep their actives (all of them when preserving; else up to their quota)
        for task in sorted(self.previous_active_owner):
            owner = self.previous_active_owner[task]
            if task in known and (
                self.must_preserve or self.order[owner].has_unfulfilled_quota(tasks_per_thread)
            ):
                self._place(owner, task, active=True)
                unassigned.discard(task)
        # 2. a previous standby owner with room takes the task
        for task in sorted(unassigned):
            for rank in self.previous_standby_owners.get(task, ()):
                if self.order[rank].has_unfulfilled_quota(tasks_per_thread):
                    self._place(rank, task, active=True)
                    unassigned.discard(task)
                    break
        # 3. the rest, each on the best client of the whole group
        everyone = np.ones(len(self.order), dtype=bool)
        for task in sorted(unassigned):
            self._place(self.find_client(task, everyone), task, active=True)

    def assign_standby_tasks(self, num_standby_replicas: int) -> None:
        # The rack optimizer may have moved actives since they were placed (never a client's count).
        holders: dict[TaskId, list[int]] = {}
        for rank, client in enumerate(self.order):
            self.loads.update(rank)
            for task in (*client.active_set(), *client.standby_set()):
                holders.setdefault(task, []).append(rank)
        for task in self.stateful_tasks:
            held_by = holders.setdefault(task, [])
            for _ in range(num_standby_replicas):
                candidates = np.ones(len(self.order), dtype=bool)
                candidates[held_by] = False
                if not candidates.any():
                    log.warning(
                        "not enough clients to place %d standby replicas of task %s",
                        num_standby_replicas,
                        task,
                    )
                    break
                rank = self.find_client(task, candidates)
                self._place(rank, task, active=False)
                held_by.append(rank)

    # --- choosing a client -----------------------------------------------------------------------------
    def find_client(self, task: TaskId, candidates: np.ndarray) -> int:
        """The previous owner if it is a candidate and not overloaded, else a previous standby owner, else the
        least-loaded candidate. ``candidates``: a mask over the ranks, never empty."""
        ranks = np.flatnonzero(candidates)
        if len(ranks) == 1:
            return int(ranks[0])
        owner = self.previous_active_owner.get(task)
        previous = (
            owner
            if owner is not None and candidates[owner]
            else self._least_loaded_standby_owner(task, candidates)
        )
        if previous is None:
            return self._least_loaded(task, ranks)
        if self._should_balance_load(previous):
            standby = self._least_loaded_standby_owner(task, candidates)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded(task, ranks)
            return standby
        return previous

    def _should_balance_load(self, rank: int) -> bool:
        return self.order[rank].reached_capacity() and self.loads.anyone_less_loaded_than(rank)

    def _least_loaded_standby_owner(self, task: TaskId, candidates: np.ndarray) -> int | None:
        within = sorted(rank for rank in set(self.previous_standby_owners.get(task, ())) if candidates[rank])
        return self._least_loaded(task, np.array(within, dtype=np.int64)) if within else None

    def _least_loaded(self, task: TaskId, ranks: np.ndarray) -> int:
        """The first client without tasks, else the one with the most available capacity that forms a new
        task pair, else the one with the most available capacity (ties: ProcessId order). ``ranks`` is
        ascending and never empty."""
        empty = np.flatnonzero(self.loads.count[ranks] == 0)
        if len(empty):
            return int(ranks[empty[0]])
        ordered = self.loads.by_available_capacity(ranks).tolist()
        index = self.pairs.index_of(task)
        for rank in ordered:
            if self.pairs.has_new_pair(index, self.held[rank]):
                return rank
        return ordered[0]


__all__ = ["LegacyRackOptimizer", "LegacyStickyTaskAssignor", "TaskPairs"]
