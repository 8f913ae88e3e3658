"""How each client's TaskManager carries a plan out (tables.md ``task_transitions``).

One transition per (client, task) in the client's previous tasks or its new ones; a task in both previous
lists counts as previous active (the scenario loader already resolved that).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.metrics import ClientTasks
from fleet_assignor.assignor.planner import PlanResult
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.scenario import LATEST_OFFSET, UNKNOWN_OFFSET, Scenario
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids


class TransitionKind(enum.Enum):
    KEEP_ACTIVE = "KEEP_ACTIVE"  # previous active -> active
    CREATE_ACTIVE = "CREATE_ACTIVE"  # nothing -> active (restores first)
    PROMOTE_STANDBY = "PROMOTE_STANDBY"  # previous standby -> active
    KEEP_STANDBY = "KEEP_STANDBY"  # previous standby -> standby (or warmup)
    CREATE_STANDBY = "CREATE_STANDBY"  # nothing -> standby
    CREATE_WARMUP = "CREATE_WARMUP"  # nothing -> warmup
    DEMOTE_ACTIVE = "DEMOTE_ACTIVE"  # previous active -> standby (or warmup)
    CLOSE = "CLOSE"  # previous task -> nothing


@dataclass(frozen=True, slots=True)
class TaskTransition:
    process_id: ProcessId
    task_id: TaskId
    transition: TransitionKind
    restore_lag: int

    def as_row(self) -> dict[str, Any]:
        return {
            "process_id": str(self.process_id),
            "task_id": str(self.task_id),
            "transition": self.transition.value,
            "restore_lag": self.restore_lag,
        }


class _Role(enum.IntEnum):  # int's hash: a plain Enum member hashes in Python, twice per transition's key
    NONE = 0
    ACTIVE = 1
    STANDBY = 2
    WARMUP = 3


_TRANSITIONS: dict[tuple[_Role, _Role], TransitionKind] = {
    (_Role.ACTIVE, _Role.ACTIVE): TransitionKind.KEEP_ACTIVE,
    (_Role.STANDBY, _Role.ACTIVE): TransitionKind.PROMOTE_STANDBY,
    (_Role.NONE, _Role.ACTIVE): TransitionKind.CREATE_ACTIVE,
    (_Role.ACTIVE, _Role.STANDBY): TransitionKind.DEMOTE_ACTIVE,
    (_Role.ACTIVE, _Role.WARMUP): TransitionKind.DEMOTE_ACTIVE,
    (_Role.STANDBY, _Role.STANDBY): TransitionKind.KEEP_STANDBY,
    (_Role.STANDBY, _Role.WARMUP): TransitionKind.KEEP_STANDBY,
    (_Role.NONE, _Role.STANDBY): TransitionKind.CREATE_STANDBY,
    (_Role.NONE, _Role.WARMUP): TransitionKind.CREATE_WARMUP,
    (_Role.ACTIVE, _Role.NONE): TransitionKind.CLOSE,
    (_Role.STANDBY, _Role.NONE): TransitionKind.CLOSE,
}


def _new_roles(entry: Mapping[str, Any]) -> dict[TaskId, _Role]:
    """A result entry's tasks by role; a warmup is listed among the standbys too, and active wins."""
    roles: dict[TaskId, _Role] = {}
    for key, role in (("warmup", _Role.WARMUP), ("standby", _Role.STANDBY), ("active", _Role.ACTIVE)):
        for text in entry.get(key) or ():
            task = TaskId.parse(text)
            if not (role is _Role.STANDBY and roles.get(task) is _Role.WARMUP):
                roles[task] = role
    return roles


def _end_offset_sums(state: ApplicationState) -> dict[TaskId, int]:
    """For a bare ApplicationState: a client without state lags by the whole changelog, so the largest
    non-negative lag of a task is its end-offset sum (the scenario loader's rule)."""
    sums = {task: 0 for task in state.stateful_task_ids()}
    for client in state.clients.values():
        for task, lag in (client.task_lags or {}).items():
            if task in sums and lag > sums[task]:
                sums[task] = lag
    return sums


def _restore_lag(
    lags: Mapping[TaskId, int] | None,
    end_offset_sums: Mapping[TaskId, int],
    task: TaskId,
    kind: TransitionKind,
) -> int:
    """Changelog records to restore before the task runs here: the lag clamped at 0 (a running active
    owes nothing, an unknown offset owes the whole changelog). `lags` is the client's, None for a client
    the state does not know (it has no state, so it owes the whole changelog)."""
    end_sum = end_offset_sums.get(task)
    if end_sum is None or kind is TransitionKind.CLOSE:
        return 0
    lag = lags.get(task, end_sum) if lags is not None else end_sum
    if lag == LATEST_OFFSET:
        return 0
    if lag == UNKNOWN_OFFSET:
        return max(end_sum, 0)
    return max(lag, 0)


def _roles_of(tasks: ClientTasks) -> dict[TaskId, _Role]:
    """A result's client tasks by role: active wins, then warmup (warmups are among the standbys too)."""
    roles = dict.fromkeys(tasks.standby, _Role.STANDBY)
    roles.update(dict.fromkeys(tasks.warmup, _Role.WARMUP))
    roles.update(dict.fromkeys(tasks.active, _Role.ACTIVE))
    return roles


def task_transitions(
    scenario: Scenario | ApplicationState, result: PlanResult | Mapping[str, Any]
) -> list[TaskTransition]:
    """Transitions for a result of `plan` (or its result object), by client (signed ProcessId order) then
    TaskId.

    Clients of the scenario missing from the result close all their previous tasks.
    """
    transitions: list[TaskTransition] = []
    for pid, tasks, kinds, lags in _transitions_by_client(scenario, result):
        transitions += map(_transition, repeat(pid, len(tasks)), tasks, kinds, lags)
    return transitions


def task_transition_columns(
    scenario: Scenario | ApplicationState, result: PlanResult | Mapping[str, Any]
) -> dict[str, list[Any]]:
    """`task_transitions` column by column, as `TaskTransition.as_row` names and writes the values."""
    process_ids: list[str] = []
    task_ids: list[str] = []
    transitions: list[str] = []
    restore_lags: list[int] = []
    for pid, tasks, kinds, lags in _transitions_by_client(scenario, result):
        process_ids += [str(pid)] * len(tasks)
        task_ids += map(str, tasks)
        transitions += map(_KIND_TEXT.__getitem__, kinds)
        restore_lags += lags
    return {
        "process_id": process_ids,
        "task_id": task_ids,
        "transition": transitions,
        "restore_lag": restore_lags,
    }


_KIND_TEXT = {kind: kind.value for kind in TransitionKind}


def _transitions_by_client(
    scenario: Scenario | ApplicationState, result: PlanResult | Mapping[str, Any]
) -> Iterator[tuple[ProcessId, list[TaskId], list[TransitionKind], list[int]]]:
    """Per client in signed ProcessId order: its tasks in TaskId order, each one's transition and
    restore lag."""
    if isinstance(scenario, Scenario):
        state, end_offset_sums = scenario.application_state, scenario.end_offset_sums
    else:
        state, end_offset_sums = scenario, _end_offset_sums(scenario)
    clients = state.clients
    new: dict[ProcessId, dict[TaskId, _Role]] = {pid: {} for pid in clients}
    if isinstance(result, PlanResult):
        # The fleet job's path: the result's own task sets, no text to parse back.
        for client_result in result.clients:
            new.setdefault(client_result.process_id, {}).update(_roles_of(client_result.tasks))
    else:
        for entry in result.get("assignment") or ():
            new.setdefault(ProcessId.parse(entry["process_id"]), {}).update(_new_roles(entry))
    for pid in sorted(new):
        client = clients.get(pid)
        before: dict[TaskId, _Role] = {}
        if client is not None:
            before.update((t, _Role.STANDBY) for t in client.previous_standby_tasks)
            before.update((t, _Role.ACTIVE) for t in client.previous_active_tasks)
        after = new[pid]
        lags = client.task_lags if client is not None else None
        tasks = sorted_task_ids(before.keys() | after.keys())
        kinds = [_TRANSITIONS[(before.get(task, _Role.NONE), after.get(task, _Role.NONE))] for task in tasks]
        restore_lags = [
            _restore_lag(lags, end_offset_sums, task, kind) for task, kind in zip(tasks, kinds, strict=True)
        ]
        yield pid, tasks, kinds, restore_lags


# ``TaskTransition(...)`` built through its slots (`frozen`): one per task of every client.
_transition: Callable[[ProcessId, TaskId, TransitionKind, int], TaskTransition] = builder(TaskTransition)
