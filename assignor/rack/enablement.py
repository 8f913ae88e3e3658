"""When rack-aware optimization may run (rack.md §2), with the reason when it may not.

A client's rack is one value here: the input layer already rejects a client whose consumers report
different racks (tables.md, INVALID_INPUT), which is Kafka's "different rackId" check; an empty rack is
"no rack". A partition's racks are the racks of all its replicas; empty means unknown.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.rack.costs import PartitionScope
from fleet_assignor.assignor.state import ApplicationState, TaskInfo


class OptimizedTaskType(enum.Enum):
    ACTIVE = "ACTIVE"
    STANDBY = "STANDBY"


@dataclass(frozen=True, slots=True)
class Enablement:
    enabled: bool
    reason: str | None = None

    @classmethod
    def ok(cls) -> Enablement:
        return cls(True, None)

    @classmethod
    def disabled(cls, reason: str) -> Enablement:
        return cls(False, reason)


def _client_without_rack(application_state: ApplicationState) -> str | None:
    for process_id, state in application_state.clients.items():
        if not state.rack_id:
            return f"client {process_id} has no rack (client.rack)"
    return None


def _partition_without_racks(tasks: Iterable[TaskInfo], scope: PartitionScope) -> str | None:
    for task in tasks:
        for partition in scope.partitions(task):
            if not partition.rack_ids:
                return f"partition {partition.topic_partition} of task {task.id} has no rack information"
    return None


def legacy_enablement(application_state: ApplicationState) -> Enablement:
    """`canEnableRackAwareAssignor` (rack.md §2.1): client racks, source partitions' racks and, with
    standbys configured, changelog partitions' racks. One answer for actives and standbys alike."""
    configs = application_state.assignment_configs()
    if configs.rack_aware_assignment_strategy is RackAwareStrategy.NONE:
        return Enablement.disabled("rack_aware_assignment_strategy is none")
    tasks = application_state.all_tasks().values()
    reason = _client_without_rack(application_state) or _partition_without_racks(tasks, PartitionScope.SOURCE)
    if reason is None and configs.num_standby_replicas > 0:
        reason = _partition_without_racks(tasks, PartitionScope.CHANGELOG)
    return Enablement.ok() if reason is None else Enablement.disabled(reason)


def utils_enablement(
    application_state: ApplicationState,
    task_type: OptimizedTaskType,
    traffic_cost: int | None,
    non_overlap_cost: int | None,
) -> Enablement:
    """`canPerformRackAwareOptimization` (rack.md §2.2). ``traffic_cost`` / ``non_overlap_cost`` are the
    override-or-config values: unlike Kafka, an override satisfies the gate (POLICY.md §4)."""
    configs = application_state.assignment_configs()
    if configs.rack_aware_assignment_strategy is RackAwareStrategy.NONE:
        return Enablement.disabled("rack_aware_assignment_strategy is none")
    if traffic_cost is None:
        return Enablement.disabled("rack_aware_traffic_cost is not set")
    if non_overlap_cost is None:
        return Enablement.disabled("rack_aware_non_overlap_cost is not set")
    scope = PartitionScope.ALL if task_type is OptimizedTaskType.ACTIVE else PartitionScope.CHANGELOG
    reason = _client_without_rack(application_state) or _partition_without_racks(
        application_state.all_tasks().values(), scope
    )
    return Enablement.ok() if reason is None else Enablement.disabled(reason)
