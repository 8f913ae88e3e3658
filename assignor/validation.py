"""Checking an assignor's answer (POLICY.md §5, replacing Kafka's ``validateTaskAssignment``).

The answer is read as flat (process id, task id, role) rows, a warmup counting as a standby, so the result
does not depend on the order the assignor returned its clients in: every problem is found, the error is the
first problem by `AssignmentError` precedence, and the problems are listed in (precedence, ProcessId, TaskId)
order. A `TaskAssignment` may list the same client twice; that is how one client can end up with a task twice
as active, or as active and standby.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fleet_assignor.assignor.assignment import AssignedTaskType, TaskAssignment
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_id import TaskId


@dataclass(frozen=True, slots=True)
class AssignmentRow:
    """One task in one role on one client, as returned (duplicates kept)."""

    process_id: ProcessId
    task_id: TaskId
    role: AssignedTaskType


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


def assignment_rows(task_assignment: TaskAssignment) -> list[AssignmentRow]:
    return [
        AssignmentRow(assignment.process_id(), assigned.id, assigned.type)
        for assignment in task_assignment
        for assigned in assignment.tasks().values()
    ]


def _active_assigned_multiple_times(rows: list[AssignmentRow]) -> Iterator[Problem]:
    holders: dict[TaskId, list[ProcessId]] = {}
    for row in rows:
        if row.role is AssignedTaskType.ACTIVE:
            holders.setdefault(row.task_id, []).append(row.process_id)
    for task, clients in holders.items():
        if len(clients) > 1:
            clients.sort()
            listed = ", ".join(str(c) for c in clients)
            yield Problem(
                AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
                clients[0],
                task,
                f"task {task} is active {len(clients)} times, on clients {listed}",
            )


def _active_and_standby_on_same_client(rows: list[AssignmentRow]) -> Iterator[Problem]:
    roles: dict[tuple[ProcessId, TaskId], set[AssignedTaskType]] = {}
    for row in rows:
        roles.setdefault((row.process_id, row.task_id), set()).add(row.role)
    for (client, task), held in roles.items():
        if len(held) > 1:
            yield Problem(
                AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS,
                client,
                task,
                f"task {task} is both active and standby on client {client}",
            )


def _invalid_standby_tasks(state: ApplicationState, rows: list[AssignmentRow]) -> Iterator[Problem]:
    tasks = state.all_tasks()
    seen: set[tuple[ProcessId, TaskId]] = set()
    for row in rows:
        info = tasks.get(row.task_id)
        key = (row.process_id, row.task_id)
        if (
            row.role is AssignedTaskType.STANDBY
            and info is not None
            and not info.has_changelog
            and key not in seen
        ):
            seen.add(key)
            yield Problem(
                AssignmentError.INVALID_STANDBY_TASK,
                row.process_id,
                row.task_id,
                f"task {row.task_id} has no changelog partition but is a standby on client {row.process_id}",
            )


def _missing_process_ids(state: ApplicationState, task_assignment: TaskAssignment) -> Iterator[Problem]:
    returned = {a.process_id() for a in task_assignment}
    for client in state.kafka_streams_states(False):
        if client not in returned:
            yield Problem(
                AssignmentError.MISSING_PROCESS_ID, client, None, f"client {client} has no assignment"
            )


def _unknown_process_ids(state: ApplicationState, task_assignment: TaskAssignment) -> Iterator[Problem]:
    known = state.kafka_streams_states(False)
    for client in sorted({a.process_id() for a in task_assignment if a.process_id() not in known}):
        yield Problem(
            AssignmentError.UNKNOWN_PROCESS_ID, client, None, f"client {client} is not a known client"
        )


def _unknown_task_ids(state: ApplicationState, rows: list[AssignmentRow]) -> Iterator[Problem]:
    tasks = state.all_tasks()
    seen: set[tuple[ProcessId, TaskId]] = set()
    for row in rows:
        key = (row.process_id, row.task_id)
        if row.task_id not in tasks and key not in seen:
            seen.add(key)
            yield Problem(
                AssignmentError.UNKNOWN_TASK_ID,
                row.process_id,
                row.task_id,
                f"task {row.task_id} on client {row.process_id} is not a task of the application",
            )


def unassigned_tasks(state: ApplicationState, rows: list[AssignmentRow]) -> tuple[TaskId, ...]:
    """Tasks of the application that no client runs as active (allowed, but reported)."""
    active = {row.task_id for row in rows if row.role is AssignedTaskType.ACTIVE}
    return tuple(task for task in state.all_tasks() if task not in active)


def validate_task_assignment(
    application_state: ApplicationState, task_assignment: TaskAssignment
) -> ValidationResult:
    """Every problem of the assignment, the first by precedence as the error (NONE when there is none)."""
    rows = assignment_rows(task_assignment)
    found = [
        *_active_assigned_multiple_times(rows),
        *_active_and_standby_on_same_client(rows),
        *_invalid_standby_tasks(application_state, rows),
        *_missing_process_ids(application_state, task_assignment),
        *_unknown_process_ids(application_state, task_assignment),
        *_unknown_task_ids(application_state, rows),
    ]
    problems = tuple(sorted(found, key=Problem.sort_key))
    return ValidationResult(
        error=problems[0].error if problems else AssignmentError.NONE,
        problems=problems,
        detail="; ".join(str(p) for p in problems) if problems else None,
        unassigned=unassigned_tasks(application_state, rows),
    )
