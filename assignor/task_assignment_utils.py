"""Helpers for KIP-924 assignors (Kafka's ``TaskAssignmentUtils``, assignors.md §8), minus the rack optimizers
(those live in `assignor.rack`).

Everything works on ``dict[ProcessId, KafkaStreamsAssignment]`` maps kept in signed ProcessId order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from fleet_assignor.assignor.assignment import ACTIVE, AssignedTask, KafkaStreamsAssignment
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.standby import (
    place_standbys_by_client_tags,
    place_standbys_by_load,
    tag_spread_allows_move,
)
from fleet_assignor.assignor.state import ApplicationState, KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId
from fleet_assignor.assignor.validation import ValidationResult, validate_task_assignment

__all__ = [
    "AllowAllStandbyMoves",
    "AssignmentView",
    "ClientTagSpreadPredicate",
    "MoveStandbyTaskPredicate",
    "RackAwareOptimizationParams",
    "ValidationResult",
    "default_standby_task_assignment",
    "identity_assignment",
    "standby_move_predicate",
    "validate_task_assignment",
]


# --- RackAwareOptimizationParams (assignors.md §8.1) -----------------------------------------------------
@dataclass(frozen=True)
class RackAwareOptimizationParams:
    """What to optimise and with which cost overrides; ``tasks_to_optimize`` None means "every task of that
    kind currently in the assignments". Each ``with_``/``for_`` returns a new object."""

    application_state: ApplicationState
    traffic_cost_override: int | None = None
    non_overlap_cost_override: int | None = None
    tasks_to_optimize: tuple[TaskId, ...] | None = None

    @classmethod
    def of(cls, application_state: ApplicationState) -> RackAwareOptimizationParams:
        return cls(application_state)

    def for_stateful_tasks(self) -> RackAwareOptimizationParams:
        """Tasks with a state store (TaskInfo.is_stateful), as Kafka selects them here."""
        tasks = self.application_state.all_tasks()
        return replace(
            self, tasks_to_optimize=tuple(sorted(t for t, info in tasks.items() if info.is_stateful))
        )

    def for_stateless_tasks(self) -> RackAwareOptimizationParams:
        tasks = self.application_state.all_tasks()
        chosen = tuple(sorted(t for t, info in tasks.items() if not info.is_stateful))
        return replace(self, tasks_to_optimize=chosen)

    def for_tasks(self, tasks: Iterable[TaskId]) -> RackAwareOptimizationParams:
        return replace(self, tasks_to_optimize=tuple(sorted(set(tasks))))

    def with_traffic_cost_override(self, cost: int) -> RackAwareOptimizationParams:
        return replace(self, traffic_cost_override=cost)

    def with_non_overlap_cost_override(self, cost: int) -> RackAwareOptimizationParams:
        return replace(self, non_overlap_cost_override=cost)


# --- standby move predicates (assignors.md §8.1, §5.3.4) -------------------------------------------------
class MoveStandbyTaskPredicate(Protocol):
    """May the rack-aware standby optimizer move ``task``'s standby from source to destination?"""

    def can_move_standby_task(
        self,
        source: KafkaStreamsState,
        destination: KafkaStreamsState,
        task: TaskId,
        assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    ) -> bool: ...


class AllowAllStandbyMoves:
    """Without client tags any standby move is fine."""

    def can_move_standby_task(self, source, destination, task, assignments) -> bool:
        return True


class ClientTagSpreadPredicate:
    """With client tags, a move may not reduce the number of distinct tag entries covering the task.

    It reads the real destination's tags (POLICY.md §4): Kafka hands the source in its place, so its check
    compares the source with itself and lets every move through.
    """

    def __init__(self, states: Mapping[ProcessId, KafkaStreamsState]) -> None:
        self._states = states

    def tags_of(self, client: ProcessId) -> Mapping[str, str]:
        return self._states[client].client_tags

    def can_move_standby_task(
        self,
        source: KafkaStreamsState,
        destination: KafkaStreamsState,
        task: TaskId,
        assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    ) -> bool:
        view = AssignmentView(self._states, assignments)
        return tag_spread_allows_move(view, source.process_id, destination.process_id, task)


def standby_move_predicate(application_state: ApplicationState) -> MoveStandbyTaskPredicate:
    """The predicate the standby optimizer must respect for this application's configs."""
    if not application_state.assignment_configs().rack_aware_assignment_tags:
        return AllowAllStandbyMoves()
    return ClientTagSpreadPredicate(application_state.kafka_streams_states(False))


# --- identity and default standby assignment (assignors.md §8.3, §8.4) -----------------------------------
def identity_assignment(application_state: ApplicationState) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Every client keeps its previous actives and standbys; every client is present, even if empty.

    Unlike Kafka we keep only tasks the application still has (and standbys only of tasks with a
    changelog), so the identity assignment always validates: the planner falls back to it when an assignor
    fails (POLICY.md §4) and it must be safe to roll out.
    """
    tasks = application_state.all_tasks()
    result: dict[ProcessId, KafkaStreamsAssignment] = {}
    for process_id, state in application_state.kafka_streams_states(False).items():
        actives = [t for t in state.sorted_previous_active_tasks if t in tasks]
        standbys = [
            t
            for t in state.sorted_previous_standby_tasks
            if t in tasks and tasks[t].has_changelog and t not in state.previous_active_tasks
        ]
        result[process_id] = KafkaStreamsAssignment.of(
            process_id,
            [AssignedTask.active(t) for t in actives] + [AssignedTask.standby(t) for t in standbys],
        )
    return result


class AssignmentView:
    """A `StandbyPlacementView` over KIP-924 states and assignments (load = tasks per thread)."""

    def __init__(
        self,
        states: Mapping[ProcessId, KafkaStreamsState],
        assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    ) -> None:
        self._states = states
        self._assignments = assignments
        self._ids = sorted(p for p in states if p in assignments)

    def client_ids(self) -> Sequence[ProcessId]:
        return self._ids

    def tags_of(self, client: ProcessId) -> Mapping[str, str]:
        return self._states[client].client_tags

    def holds(self, client: ProcessId, task: TaskId) -> bool:
        return self._assignments[client].holds(task)

    def holds_active(self, client: ProcessId, task: TaskId) -> bool:
        return self._assignments[client].role_of(task) is ACTIVE

    def active_tasks_of(self, client: ProcessId) -> Iterable[TaskId]:
        return self._assignments[client].active_tasks()

    def load(self, client: ProcessId) -> float:
        return len(self._assignments[client].tasks()) / self._states[client].num_processing_threads

    def assign_standby(self, client: ProcessId, task: TaskId) -> None:
        self._assignments[client].assign_task(AssignedTask.standby(task))


def _fill_missing_clients(
    application_state: ApplicationState, assignments: dict[ProcessId, KafkaStreamsAssignment]
) -> None:
    """Add an empty assignment for every known client without one, then keep the map in ProcessId order."""
    for process_id in application_state.kafka_streams_states(False):
        if process_id not in assignments:
            assignments[process_id] = KafkaStreamsAssignment.of(process_id, ())
    ordered = sorted(assignments.items())
    assignments.clear()
    assignments.update(ordered)


def default_standby_task_assignment(
    application_state: ApplicationState, assignments: dict[ProcessId, KafkaStreamsAssignment]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Give every task with a changelog partition up to ``num_standby_replicas`` standbys, mutating and
    returning ``assignments``; actives are never moved.

    With ``rack_aware_assignment_tags`` the standbys are spread over distinct tag values (tasks visited in
    `assignor.standby.client_tag_task_order`, fallback in TaskId order); otherwise each goes to the client
    with the fewest tasks per thread (tasks in TaskId order). Kafka iterates a HashSet in both cases
    (POLICY.md §3). With 0 replicas nothing is placed (POLICY.md §4: Kafka's tag path places one).
    """
    _fill_missing_clients(application_state, assignments)
    configs = application_state.assignment_configs()
    if configs.num_standby_replicas <= 0:
        return assignments
    eligible = frozenset(t for t, info in application_state.all_tasks().items() if info.has_changelog)
    view = AssignmentView(application_state.kafka_streams_states(False), assignments)
    if configs.rack_aware_assignment_tags:
        place_standbys_by_client_tags(
            view, eligible, configs.num_standby_replicas, configs.rack_aware_assignment_tags
        )
    else:
        place_standbys_by_load(view, eligible, configs.num_standby_replicas)
    return assignments
