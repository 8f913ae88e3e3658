"""Checking an assignor's answer (POLICY.md §5, replacing Kafka's ``validateTaskAssignment``).

The answer is read as flat (process id, task id, role) rows, a warmup counting as a standby, so the result
does not depend on the order the assignor returned its clients in: every problem is found, the error is the
first problem by `AssignmentError` precedence, and the problems are listed in (precedence, ProcessId, TaskId)
order. A `TaskAssignment` may list the same client twice; that is how one client can end up with a task twice
as active, or as active and standby.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress
from operator import is_, methodcaller

from fleet_assignor.assignor.assignment import (
    ACTIVE,
    AssignedTask,
    AssignedTaskType,
    TaskAssignment,
    TaskIdsByRole,
    task_ids_by_role_of,
)
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import ApplicationState, has_changelog
from fleet_assignor.assignor.task_id import TaskId


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an assignment; ``task_id`` is None for client-level problems."""

    error: AssignmentError
    process_id: ProcessId
    task_id: TaskId | None
    message: str

    def sort_key(self) -> tuple:
        task = self.task_id
        # Named and unnamed task ids do not compare; order them by (has name, name, subtopology, partition).
        task_key = (
            ()
            if task is None
            else (task.topology_name is not None, task.topology_name or "", task.subtopology, task.partition)
        )
        return (self.error.precedence, self.process_id.sort_key, task_key)

    def __str__(self) -> str:
        return f"{self.error.name}: {self.message}"


@dataclass(frozen=True, slots=True)
class ValidationResult:
    error: AssignmentError
    problems: tuple[Problem, ...]
    detail: str | None
    unassigned: tuple[TaskId, ...]

    @property
    def is_valid(self) -> bool:
        return self.error is AssignmentError.NONE


class _Returned:
    """The answer read once: who holds each task in which role, in the order the assignor returned them.

    Tasks are grouped per returned client object, so a client listed once (the normal case) is read as the
    dict it already is; only a client listed twice needs its roles merged."""

    __slots__ = ("active_holders", "by_client", "process_ids", "standbys")

    def __init__(self, task_assignment: TaskAssignment) -> None:
        self.active_holders: dict[TaskId, list[ProcessId]] = {}
        self.standbys: list[tuple[ProcessId, TaskId]] = []
        self.by_client: dict[ProcessId, list[Mapping[TaskId, AssignedTask]]] = {}
        self.process_ids: list[ProcessId] = []
        holders = self.active_holders
        for assignment in task_assignment:
            process_id = assignment.process_id()
            tasks = assignment.tasks()
            self.process_ids.append(process_id)
            self.by_client.setdefault(process_id, []).append(tasks)
            for task, assigned in tasks.items():
                if assigned.type is ACTIVE:
                    owners = holders.get(task)
                    if owners is None:
                        holders[task] = [process_id]
                    else:
                        owners.append(process_id)
                else:
                    self.standbys.append((process_id, task))

    def tasks_of(self, process_id: ProcessId) -> Iterator[TaskId]:
        for tasks in self.by_client[process_id]:
            yield from tasks


def _active_assigned_multiple_times(returned: _Returned) -> Iterator[Problem]:
    for task, clients in returned.active_holders.items():
        if len(clients) > 1:
            clients = sorted(clients)
            listed = ", ".join(str(c) for c in clients)
            yield Problem(
                AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
                clients[0],
                task,
                f"task {task} is active {len(clients)} times, on clients {listed}",
            )


def _active_and_standby_on_same_client(returned: _Returned) -> Iterator[Problem]:
    # One returned object holds a task in one role only (its tasks are keyed by task id), so a task can be
    # both active and standby on a client only when the client is listed more than once.
    for client, listed in returned.by_client.items():
        if len(listed) < 2:
            continue
        roles: dict[TaskId, set[AssignedTaskType]] = {}
        for tasks in listed:
            for task, assigned in tasks.items():
                roles.setdefault(task, set()).add(assigned.type)
        for task, held in roles.items():
            if len(held) > 1:
                yield Problem(
                    AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS,
                    client,
                    task,
                    f"task {task} is both active and standby on client {client}",
                )


def _invalid_standby_tasks(state: ApplicationState, returned: _Returned) -> Iterator[Problem]:
    tasks = state.all_tasks()
    seen: set[tuple[ProcessId, TaskId]] = set()
    for key in returned.standbys:
        info = tasks.get(key[1])
        if info is not None and not info.has_changelog and key not in seen:
            seen.add(key)
            process_id, task = key
            yield Problem(
                AssignmentError.INVALID_STANDBY_TASK,
                process_id,
                task,
                f"task {task} has no changelog partition but is a standby on client {process_id}",
            )


def _missing_process_ids(state: ApplicationState, returned: _Returned) -> Iterator[Problem]:
    for client in state.clients:
        if client not in returned.by_client:
            yield Problem(
                AssignmentError.MISSING_PROCESS_ID, client, None, f"client {client} has no assignment"
            )


def _unknown_process_ids(state: ApplicationState, returned: _Returned) -> Iterator[Problem]:
    known = state.clients
    for client in sorted(c for c in returned.by_client if c not in known):
        yield Problem(
            AssignmentError.UNKNOWN_PROCESS_ID, client, None, f"client {client} is not a known client"
        )


def _unknown_task_ids(state: ApplicationState, returned: _Returned) -> Iterator[Problem]:
    tasks = state.all_tasks()
    for client in returned.by_client:
        reported: set[TaskId] = set()
        for task in returned.tasks_of(client):
            if task not in tasks and task not in reported:
                reported.add(task)
                yield Problem(
                    AssignmentError.UNKNOWN_TASK_ID,
                    client,
                    task,
                    f"task {task} on client {client} is not a task of the application",
                )


def _unassigned_tasks(state: ApplicationState, returned: _Returned) -> tuple[TaskId, ...]:
    """Tasks of the application that no client runs as active (allowed, but reported)."""
    active = returned.active_holders
    return tuple(task for task in state.all_tasks() if task not in active)


_PROCESS_ID = methodcaller("process_id")


def lists_each_client_in_order(application_state: ApplicationState, task_assignment: TaskAssignment) -> bool:
    """Whether the answer lists the application's own process id objects, each once, in the state's order,
    as the built-in assignors return them: then each client's state is found by place, and neither
    validation nor the result hashes a process id (a Python-level hash, several per client)."""
    clients = application_state.clients
    return len(task_assignment) == len(clients) and all(map(is_, map(_PROCESS_ID, task_assignment), clients))


def _valid_by_sets(
    application_state: ApplicationState,
    task_assignment: TaskAssignment,
    roles: Sequence[TaskIdsByRole] | None = None,
) -> ValidationResult | None:
    """The result of an assignment without problems, found from each client's task-id sets (set operations
    in C instead of a Python step per task and replica); None when some check fails, and the full
    validation then finds and orders the problems. Each check rules out one kind of problem: every known
    client listed exactly once (no missing, unknown or repeated client, so no task both active and standby on
    one), no task active twice, every task known, no standby without a changelog."""
    if not lists_each_client_in_order(application_state, task_assignment):
        clients = application_state.clients
        listed = [a.process_id() for a in task_assignment]
        if len(listed) != len(clients) or len(set(listed)) != len(listed):
            return None
        if not all(process_id in clients for process_id in listed):
            return None
    tasks = application_state.all_tasks()
    # A client's standbys are checked against this set where they are, not gathered into one set first:
    # a lookup per replica instead of an insert (fifty thousand at 1,000 tasks with 50 standbys).
    may_be_standby: AbstractSet[TaskId] = (
        tasks.keys()  # every task has a changelog (most applications): nothing to build
        if all(map(has_changelog, tasks.values()))
        else frozenset(compress(tasks, map(has_changelog, tasks.values())))
    )
    active: set[TaskId] = set()
    active_count = 0
    if roles is None:
        roles = task_ids_by_role_of(task_assignment)
    for client_active, client_standby, _ in roles:
        if not client_standby <= may_be_standby:  # an unknown task, or one without a changelog
            return None
        active_count += len(client_active)
        active |= client_active
    if len(active) != active_count or not active <= tasks.keys():
        return None
    return ValidationResult(
        error=AssignmentError.NONE,
        problems=(),
        detail=None,
        # Every task active somewhere (the usual answer) leaves none unassigned, found without a scan.
        unassigned=() if len(active) == len(tasks) else tuple(task for task in tasks if task not in active),
    )


def validate_task_assignment(
    application_state: ApplicationState,
    task_assignment: TaskAssignment,
    *,
    roles: Sequence[TaskIdsByRole] | None = None,
) -> ValidationResult:
    """Every problem of the assignment, the first by precedence as the error (NONE when there is none).
    ``roles``: each assignment's `task_ids_by_role()`, in order, if the caller has them already (the
    planner reads them for its result too: an assignment without precomputed sets builds them per call)."""
    valid = _valid_by_sets(application_state, task_assignment, roles)
    return valid if valid is not None else _every_problem(application_state, task_assignment)


def _every_problem(application_state: ApplicationState, task_assignment: TaskAssignment) -> ValidationResult:
    """The full check, row by row (what `_valid_by_sets` answers at once for an assignment without one)."""
    returned = _Returned(task_assignment)
    found = [
        *_active_assigned_multiple_times(returned),
        *_active_and_standby_on_same_client(returned),
        *_invalid_standby_tasks(application_state, returned),
        *_missing_process_ids(application_state, returned),
        *_unknown_process_ids(application_state, returned),
        *_unknown_task_ids(application_state, returned),
    ]
    problems = tuple(sorted(found, key=Problem.sort_key))
    return ValidationResult(
        error=problems[0].error if problems else AssignmentError.NONE,
        problems=problems,
        detail="; ".join(str(p) for p in problems) if problems else None,
        unassigned=_unassigned_tasks(application_state, returned),
    )
