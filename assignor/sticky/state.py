"""The assignment the sticky assignor builds, in index form, with the indexes its choices need.

Internals address clients by their rank in ProcessId order and tasks by their rank in TaskId order. Where
Kafka iterates hash maps we use those orders (POLICY.md §3).

Clients are kept sorted by the key of Kafka's least-loaded pick, extended by one deliberate improvement
(POLICY.md §3, measured against Kafka's answers): among equally loaded clients the pick prefers the client
with more threads (a task raises its load least, so the spread stays narrow), then the one with the fewest
of its own previous actives still waiting to be placed (sorted order otherwise makes an over-quota client
keep its lowest task ids and lose the others), then the one with the most previous actives placed
elsewhere (the re-pick can hand one back), then the smaller ProcessId.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping

from fleet_assignor.assignor.assignment import AssignedTask, AssignedTaskType, KafkaStreamsAssignment
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_id import TaskId

ACTIVE = AssignedTaskType.ACTIVE
STANDBY = AssignedTaskType.STANDBY


class StickyState:
    """Previous ownership, the assignment being built (roles, counts, task bitmasks, holders) and the
    clients in key order."""

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
        self.key_of = [self._key(i) for i in range(n_clients)]
        self.by_key = sorted(self.key_of)

    # --- keys and loads -------------------------------------------------------------------------------
    def load(self, i: int) -> float:
        return self.total[i] / self.threads[i]

    def _key(self, i: int) -> tuple[float, int, int, int, int]:
        return (self.total[i] / self.threads[i], -self.threads[i], self.waiting[i], -self.displaced[i], i)

    def rekey(self, i: int) -> None:
        old = self.key_of[i]
        new = self._key(i)
        if new == old:
            return
        by_key = self.by_key
        del by_key[bisect_left(by_key, old)]
        insort(by_key, new)
        self.key_of[i] = new

    def rekey_all(self) -> None:
        for i in range(len(self.pids)):
            self.rekey(i)

    def min_load(self) -> float:
        return self.by_key[0][0]

    def should_balance_load(self, i: int) -> bool:
        """Kafka's ``shouldBalanceLoad``: loaded (>= 1 task per thread) and some client is strictly less
        loaded."""
        load = self.load(i)
        return load >= 1 and self.min_load() < load

    def has_room(self, i: int, per_thread: int) -> bool:
        return self.active_count[i] < self.threads[i] * per_thread

    # --- task pairs (Kafka's least-loaded pick) -------------------------------------------------------
    def partners(self, j: int) -> int:
        """Tasks sharing a client with task j now, as a bitmask (Kafka's task pairs; see `eligible`)."""
        combined = 0
        for d in self.holders[j]:
            combined |= self.mask[d]
        return combined

    def eligible(self, i: int, partners: int) -> bool:
        """Pass 1 of Kafka's least-loaded pick: an empty client, or one holding a task not yet paired with
        the task being placed. Pairs are tasks that share a client in the assignment being built; before
        any re-pick or rack move this is exactly Kafka's pair set, as nothing is ever removed."""
        return self.total[i] == 0 or (self.mask[i] & ~partners) != 0

    # --- placing and moving tasks ---------------------------------------------------------------------
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
                self.rekey(owner)
        self.rekey(i)

    def place(self, j: int, i: int, role: AssignedTaskType) -> None:
        """Place task j on client i, outside the waiting bookkeeping of the first active placement."""
        self._record(j, i, role)
        self.rekey(i)

    def _record(self, j: int, i: int, role: AssignedTaskType) -> None:
        self.roles[i][j] = role
        self.total[i] += 1
        self.mask[i] |= 1 << j
        self.holders[j].append(i)
        if role is ACTIVE:
            self.active_count[i] += 1
            self.active_owner[j] = i

    def unrecord_active(self, j: int, i: int) -> None:
        """Take active task j off client i; the caller places it again and re-keys client i."""
        del self.roles[i][j]
        self.total[i] -= 1
        self.mask[i] &= ~(1 << j)
        self.active_count[i] -= 1
        self.holders[j].remove(i)

    def move_active(self, j: int, source: int, destination: int) -> None:
        self.unrecord_active(j, source)
        self.rekey(source)
        self.place(j, destination, ACTIVE)

    def placed_actives(self) -> list[int]:
        """Tasks with an active owner, in TaskId order."""
        return [j for j, owner in enumerate(self.active_owner) if owner >= 0]

    def active_moves(self) -> int:
        """Previous actives now running on none of the clients that claimed them."""
        return sum(
            1
            for j, owners in enumerate(self.prev_owners)
            if owners and self.active_owner[j] >= 0 and self.active_owner[j] not in owners
        )

    # --- to and from assignment maps ------------------------------------------------------------------
    def assignment_map(self) -> dict[ProcessId, KafkaStreamsAssignment]:
        return {pid: assignment for pid, assignment in zip(self.pids, self.to_assignments(), strict=False)}

    def reload(self, assignments: Mapping[ProcessId, KafkaStreamsAssignment]) -> None:
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
            for task, assigned in sorted(assignment.tasks().items(), key=_by_task_order):
                self._record(self.task_index[task], i, assigned.type)
        # The keys once, sorted once: what re-keying after every placement ends with (a key per client).
        self.key_of = [self._key(i) for i in range(n_clients)]
        self.by_key = sorted(self.key_of)

    def to_assignments(self) -> list[KafkaStreamsAssignment]:
        tasks = self.tasks
        active, standby = AssignedTask.active, AssignedTask.standby
        result = []
        for i, pid in enumerate(self.pids):
            roles = self.roles[i]
            assigned = {}
            for j in sorted(roles):
                task = tasks[j]
                assigned[task] = active(task) if roles[j] is ACTIVE else standby(task)
            result.append(KafkaStreamsAssignment(pid, assigned))
        return result


def _by_task_order(item: tuple[TaskId, AssignedTask]) -> int | tuple[bool, str, int, int]:
    """An assignment's (task, assigned) item by its task's int order key (TaskId order, without a Python
    comparison per pair; named among unnamed ids fail to compare, as TaskIds do)."""
    return item[0].order_key
