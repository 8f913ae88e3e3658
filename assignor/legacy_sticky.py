"""Kafka's pre-3.8 sticky assignor on ClientStates (assignors.md §6.1), the engine of `fallback_prior`.

Deterministic orders (POLICY.md §3) where Kafka iterates hash maps and sets: clients in signed ProcessId
order, tasks in TaskId order. So when two clients claim the same previous active, the later client in
ProcessId order is its previous owner (Kafka: the later in HashMap order overwrites), and among equally
loaded clients the first in ProcessId order wins.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol, cast

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
        self.pairs = TaskPairs(all_tasks)
        self.held: dict[ProcessId, list[int]] = {pid: [] for pid in self.clients}  # task indexes, any role
        self.previous_active_owner: dict[TaskId, ProcessId] = {}
        self.previous_standby_owners: dict[TaskId, list[ProcessId]] = {}
        for pid, client in self.clients.items():
            for task in client.previous_active:
                self.previous_active_owner[task] = pid  # the later client in ProcessId order keeps it
            for task in client.previous_standby:
                self.previous_standby_owners.setdefault(task, []).append(pid)

    # --- placing ---------------------------------------------------------------------------------------
    def _place(self, client: ClientState, task: TaskId, *, active: bool) -> None:
        index = self.pairs.index_of(task)
        held = self.held[client.process_id]
        self.pairs.add_pairs(index, held)
        held.append(index)
        if active:
            client.assign_active(task)
        else:
            client.assign_standby(task)

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
        all_clients = list(self.clients)
        for task in sorted(unassigned):
            self._place(self.clients[self.find_client(task, all_clients)], task, active=True)

    def assign_standby_tasks(self, num_standby_replicas: int) -> None:
        for task in self.stateful_tasks:
            for _ in range(num_standby_replicas):
                candidates = [pid for pid, c in self.clients.items() if not c.has_assigned_task(task)]
                if not candidates:
                    log.warning(
                        "not enough clients to place %d standby replicas of task %s",
                        num_standby_replicas,
                        task,
                    )
                    break
                self._place(self.clients[self.find_client(task, candidates)], task, active=False)

    # --- choosing a client -----------------------------------------------------------------------------
    def find_client(self, task: TaskId, candidates: list[ProcessId]) -> ProcessId:
        """The previous owner if it is a candidate and not overloaded, else a previous standby owner, else the
        least-loaded candidate."""
        if len(candidates) == 1:
            return candidates[0]
        candidate_set = set(candidates)
        owner = self.previous_active_owner.get(task)
        previous = owner if owner in candidate_set else self._least_loaded_standby_owner(task, candidates)
        if previous is None:
            return self._least_loaded(task, candidates)
        if self._should_balance_load(previous):
            standby = self._least_loaded_standby_owner(task, candidates)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded(task, candidates)
            return standby
        return previous

    def _should_balance_load(self, pid: ProcessId) -> bool:
        client = self.clients[pid]
        return client.reached_capacity() and any(
            other.has_more_available_capacity_than(client) for other in self.clients.values()
        )

    def _least_loaded_standby_owner(self, task: TaskId, candidates: list[ProcessId]) -> ProcessId | None:
        owners = set(self.previous_standby_owners.get(task, ()))
        within = [pid for pid in candidates if pid in owners]
        return self._least_loaded(task, within) if within else None

    def _least_loaded(self, task: TaskId, ids: list[ProcessId]) -> ProcessId:
        """`ids` is never empty (callers hold at least one candidate), so a client is always found."""
        found = self._find_least_loaded(task, ids, check_pairs=True)
        if found is None:
            found = self._find_least_loaded(task, ids, check_pairs=False)
        return cast(ProcessId, found)

    def _find_least_loaded(
        self, task: TaskId, ids: list[ProcessId], *, check_pairs: bool
    ) -> ProcessId | None:
        best: ProcessId | None = None
        index = self.pairs.index_of(task)
        for pid in ids:
            client = self.clients[pid]
            if client.assigned_task_count == 0:
                return pid
            if (best is None or client.has_more_available_capacity_than(self.clients[best])) and (
                not check_pairs or self.pairs.has_new_pair(index, self.held[pid])
            ):
                best = pid
        return best


__all__ = ["LegacyRackOptimizer", "LegacyStickyTaskAssignor", "TaskPairs"]
