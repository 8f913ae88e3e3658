"""What an assignor returns: tasks per client (KIP-924 ``KafkaStreamsAssignment`` / ``TaskAssignment``)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import methodcaller
from types import MappingProxyType

from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.task_id import TaskId, in_task_order


class AssignedTaskType(enum.Enum):
    ACTIVE = "ACTIVE"
    STANDBY = "STANDBY"


@dataclass(frozen=True, slots=True)
class AssignedTask:
    """A task in one role on one client. ``is_warmup`` marks a standby placed only to warm state up for a
    later move; it is bookkeeping for reports and does not take part in equality, as Kafka's AssignedTask
    has no such notion."""

    id: TaskId
    type: AssignedTaskType
    is_warmup: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if self.is_warmup and self.type is not AssignedTaskType.STANDBY:
            raise ValueError(f"only a standby can be a warmup, not {self.type.value} task {self.id}")

    @classmethod
    def active(cls, task: TaskId) -> AssignedTask:
        found = _ACTIVE.get(task)
        return found if found is not None else _shared(_ACTIVE, cls(task, AssignedTaskType.ACTIVE))

    @classmethod
    def standby(cls, task: TaskId) -> AssignedTask:
        found = _STANDBY.get(task)
        return found if found is not None else _shared(_STANDBY, cls(task, AssignedTaskType.STANDBY))

    @classmethod
    def warmup(cls, task: TaskId) -> AssignedTask:
        return cls(task, AssignedTaskType.STANDBY, is_warmup=True)


ACTIVE = AssignedTaskType.ACTIVE
STANDBY = AssignedTaskType.STANDBY

# A client's task ids by role: (actives, standbys with the warmups, warmups).
TaskIdsByRole = tuple[frozenset[TaskId], frozenset[TaskId], frozenset[TaskId]]

# The values are immutable, so one object per task and role serves every assignment: an assignor returns
# one per task and replica, and building a frozen dataclass costs a microsecond. Equality is by value, so
# a full table can simply be emptied (a worker planning many applications meets many task ids).
_ACTIVE: dict[TaskId, AssignedTask] = {}
_STANDBY: dict[TaskId, AssignedTask] = {}
_SHARED_MAX = 1 << 16


def _shared(table: dict[TaskId, AssignedTask], made: AssignedTask) -> AssignedTask:
    if len(table) >= _SHARED_MAX:
        table.clear()
    return table.setdefault(made.id, made)


class KafkaStreamsAssignment:
    """The tasks one client gets, keyed by task id (one role per task), plus an optional follow-up deadline
    (epoch milliseconds; 0 means "rebalance again immediately")."""

    __slots__ = ("_by_role", "_followup_rebalance_deadline", "_process_id", "_tasks")

    def __init__(
        self,
        process_id: ProcessId,
        tasks: dict[TaskId, AssignedTask] | None = None,
        followup_rebalance_deadline: int | None = None,
    ) -> None:
        self._process_id = process_id
        self._tasks: dict[TaskId, AssignedTask] = {} if tasks is None else tasks
        self._followup_rebalance_deadline = followup_rebalance_deadline
        self._by_role: TaskIdsByRole | None = None  # given by `with_roles` until a task changes

    @classmethod
    def with_roles(
        cls,
        process_id: ProcessId,
        tasks: dict[TaskId, AssignedTask],
        by_role: TaskIdsByRole,
        followup_rebalance_deadline: int | None = None,
    ) -> KafkaStreamsAssignment:
        """An assignment of ``tasks`` whose caller has their ids by role already (an assignor keeping one
        set per role): ``by_role`` must be what `task_ids_by_role` reads from ``tasks``, and is returned by
        it until a task is assigned or removed."""
        assignment = cls(process_id, tasks, followup_rebalance_deadline)
        assignment._by_role = by_role
        return assignment

    @classmethod
    def of(cls, process_id: ProcessId, assigned_tasks: Iterable[AssignedTask]) -> KafkaStreamsAssignment:
        """Build from tasks; the same task id twice (in any roles) raises ValueError, as in Kafka."""
        tasks: dict[TaskId, AssignedTask] = {}
        for task in assigned_tasks:
            if task.id in tasks:
                raise ValueError(f"task {task.id} assigned twice to client {process_id}")
            tasks[task.id] = task
        return cls(process_id, tasks)

    def process_id(self) -> ProcessId:
        return self._process_id

    def with_followup_rebalance(self, deadline_ms: int) -> KafkaStreamsAssignment:
        """A new assignment sharing this one's tasks, asking the client to rebalance again at the deadline."""
        self._by_role = None  # either may change the shared tasks from now on
        return KafkaStreamsAssignment(self._process_id, self._tasks, int(deadline_ms))

    def followup_rebalance_deadline(self) -> int | None:
        return self._followup_rebalance_deadline

    def assign_task(self, task: AssignedTask) -> None:
        """Put the task in, replacing any role the same task id held here."""
        self._by_role = None
        self._tasks[task.id] = task

    def remove_task(self, task: AssignedTask | TaskId) -> None:
        """Remove by task id, whatever the role (Kafka ignores the type here too)."""
        self._by_role = None
        self._tasks.pop(task.id if isinstance(task, AssignedTask) else task, None)

    def tasks(self) -> Mapping[TaskId, AssignedTask]:
        return MappingProxyType(self._tasks)

    def holds(self, task: TaskId) -> bool:
        return task in self._tasks

    def role_of(self, task: TaskId) -> AssignedTaskType | None:
        assigned = self._tasks.get(task)
        return None if assigned is None else assigned.type

    def task_ids_by_role(self) -> TaskIdsByRole:
        """The task ids as (actives, standbys with the warmups, warmups): what the planner's validation,
        metrics and result read, each client once. An assignor that keeps these sets anyway may return
        them precomputed (`with_roles`; `streams_sticky` and `high_availability` do)."""
        # Read with a default: a subclass whose own `__init__` skips this one's has no value in the slot.
        given: TaskIdsByRole | None = getattr(self, "_by_role", None)
        if given is not None:
            return given
        tasks = self._tasks.values()
        return (
            frozenset(a.id for a in tasks if a.type is ACTIVE),
            frozenset(a.id for a in tasks if a.type is STANDBY),
            frozenset(a.id for a in tasks if a.is_warmup),
        )

    def active_tasks(self) -> list[TaskId]:
        return in_task_order(t for t, a in self._tasks.items() if a.type is ACTIVE)

    def standby_tasks(self) -> list[TaskId]:
        """Standbys, warmups included, sorted."""
        return in_task_order(t for t, a in self._tasks.items() if a.type is STANDBY)

    def warmup_tasks(self) -> list[TaskId]:
        return in_task_order(t for t, a in self._tasks.items() if a.is_warmup)

    def copy(self) -> KafkaStreamsAssignment:
        return KafkaStreamsAssignment(self._process_id, dict(self._tasks), self._followup_rebalance_deadline)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KafkaStreamsAssignment):
            return NotImplemented
        return (
            self._process_id == other._process_id
            and self._tasks == other._tasks
            and self._followup_rebalance_deadline == other._followup_rebalance_deadline
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as a Java object with equals only

    def __repr__(self) -> str:
        return (
            f"KafkaStreamsAssignment({self._process_id}, active={[str(t) for t in self.active_tasks()]}, "
            f"standby={[str(t) for t in self.standby_tasks()]}, followup={self._followup_rebalance_deadline})"
        )


@dataclass(frozen=True, slots=True)
class TaskAssignment:
    """An assignor's answer: one `KafkaStreamsAssignment` per client, in the order returned."""

    assignments: tuple[KafkaStreamsAssignment, ...]

    @classmethod
    def of(cls, assignments: Iterable[KafkaStreamsAssignment] | Mapping[ProcessId, KafkaStreamsAssignment]):
        if isinstance(assignments, Mapping):
            assignments = assignments.values()
        return cls(tuple(assignments))

    def assignment(self) -> tuple[KafkaStreamsAssignment, ...]:
        return self.assignments

    def __iter__(self) -> Iterator[KafkaStreamsAssignment]:
        return iter(self.assignments)

    def __len__(self) -> int:
        return len(self.assignments)

    def by_process_id(self) -> dict[ProcessId, KafkaStreamsAssignment]:
        """Assignments keyed by client; a client listed twice keeps its last assignment (as Kafka)."""
        return {a.process_id(): a for a in self.assignments}


_TASK_IDS_BY_ROLE = methodcaller("task_ids_by_role")


def task_ids_by_role_of(task_assignment: TaskAssignment) -> tuple[TaskIdsByRole, ...]:
    """Each assignment's `task_ids_by_role()`, in order (validation and the planner's result read them)."""
    return tuple(map(_TASK_IDS_BY_ROLE, task_assignment))
