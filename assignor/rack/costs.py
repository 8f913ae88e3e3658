"""The rack cost model (rack.md §1, §3): which partitions count, per-edge costs, default costs per caller."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fleet_assignor.assignor.state import TaskInfo, TaskTopicPartition
from fleet_assignor.assignor.task_id import TaskId


class PartitionScope(enum.Enum):
    """Which of a task's partitions its placement reads across racks (rack.md §3.1, table)."""

    SOURCE = "source"  # legacy actives: source partitions (repartition topics included)
    ALL = "all"  # KIP-924 actives: source and changelog partitions
    CHANGELOG = "changelog"  # standbys on both paths

    def partitions(self, task: TaskInfo) -> tuple[TaskTopicPartition, ...]:
        if self is PartitionScope.SOURCE:
            return task.source_partitions
        if self is PartitionScope.CHANGELOG:
            return task.changelog_partitions
        return task.topic_partitions


@dataclass(frozen=True, slots=True)
class RackCosts:
    """``traffic``: cost per partition with no replica on the client's rack; ``non_overlap``: cost of placing
    a task on a client other than the one the input assignment gave it."""

    traffic: int
    non_overlap: int


# Defaults by caller, not by strategy (rack.md §1 "Effective costs by caller").
HIGH_AVAILABILITY_DEFAULT_COSTS = RackCosts(traffic=10, non_overlap=1)
STICKY_DEFAULT_COSTS = RackCosts(traffic=1, non_overlap=10)
# Stateless actives always use these, whatever the configs say: moving them is free ("0: it was a mistake
# to be 1", PR #14164), so only traffic counts.
STATELESS_COSTS = RackCosts(traffic=1, non_overlap=0)


def resolve_costs(traffic: int | None, non_overlap: int | None, default: RackCosts) -> RackCosts:
    """Configured (or overridden) costs, each falling back to the caller's default."""
    return RackCosts(
        default.traffic if traffic is None else traffic,
        default.non_overlap if non_overlap is None else non_overlap,
    )


def remote_partition_counts(
    tasks: Sequence[TaskInfo], client_racks: Sequence[str | None], scope: PartitionScope
) -> np.ndarray:
    """``counts[t, c]``: how many of task t's partitions (in scope) have no replica on client c's rack.

    A partition is local when the client's rack equals the rack of *any* replica (fetch-from-follower).
    Computed per distinct rack and then spread to the clients, so the work is tasks x racks, not x clients.
    """
    racks = sorted({rack for rack in client_racks if rack is not None})
    rack_index = {rack: i for i, rack in enumerate(racks)}
    per_rack = np.zeros((len(tasks), len(racks) + 1), dtype=np.int64)  # last column: a client without rack
    for row, task in enumerate(tasks):
        partitions = scope.partitions(task)
        per_rack[row, :] = len(partitions)
        for partition in partitions:
            for rack in partition.rack_ids:
                column = rack_index.get(rack)
                if column is not None:
                    per_rack[row, column] -= 1
    columns = np.array(
        [rack_index.get(rack, len(racks)) if rack is not None else len(racks) for rack in client_racks],
        dtype=np.int64,
    )
    return per_rack[:, columns] if len(client_racks) else np.zeros((len(tasks), 0), dtype=np.int64)


def edge_costs(remote: np.ndarray, current: np.ndarray, costs: RackCosts) -> np.ndarray:
    """cost(t, c) = traffic x remote(t, c) + (non_overlap unless c holds t now) (rack.md §3.1)."""
    result = remote * np.int64(costs.traffic) + np.int64(costs.non_overlap)
    held = np.nonzero(current >= 0)[0]
    result[held, current[held]] -= np.int64(costs.non_overlap)
    return result


class RemoteCounts:
    """Remote-partition counts of an application's tasks per rack, for one partition scope, computed once
    per task on first use."""

    def __init__(self, tasks: Mapping[TaskId, TaskInfo], scope: PartitionScope) -> None:
        self._tasks = tasks
        self._scope = scope
        self._cache: dict[TaskId, tuple[int, dict[str, int]]] = {}
        self._on_rack: dict[str | None, dict[TaskId, int]] = {}

    def _entry(self, task: TaskId) -> tuple[int, dict[str, int]]:
        entry = self._cache.get(task)
        if entry is None:
            partitions = self._scope.partitions(self._tasks[task])
            local: dict[str, int] = {}
            for partition in partitions:
                for rack in partition.rack_ids:
                    local[rack] = local.get(rack, 0) + 1
            entry = (len(partitions), local)
            self._cache[task] = entry
        return entry

    def count(self, task: TaskId, rack: str | None) -> int:
        """Partitions of the task with no replica on ``rack`` (all of them for a client without rack)."""
        total, local = self._entry(task)
        return total if rack is None else total - local.get(rack, 0)

    def counts_on(self, tasks: Sequence[TaskId], rack: str | None) -> list[int]:
        """``count(task, rack)`` for each of ``tasks``, kept per rack: the pairwise standby swaps ask for the
        same tasks on the same few racks thousands of times."""
        known = self._on_rack.get(rack)
        if known is None:
            known = self._on_rack[rack] = {}
        try:
            return [known[task] for task in tasks]
        except KeyError:
            for task in tasks:
                if task not in known:
                    known[task] = self.count(task, rack)
            return [known[task] for task in tasks]

    def row(self, task: TaskId, racks: Sequence[str | None]) -> list[int]:
        """``count(task, rack)`` for each of ``racks``."""
        total, local = self._entry(task)
        return [total if rack is None else total - local.get(rack, 0) for rack in racks]

    def matrix(self, tasks: Sequence[TaskId], client_racks: Sequence[str | None]) -> np.ndarray:
        """``remote_partition_counts`` from the per-task counts kept here: the pairwise standby swaps ask for
        the same tasks over and over."""
        racks = list(dict.fromkeys(client_racks))
        per_rack = np.array([self.row(t, racks) for t in tasks], dtype=np.int64)
        column = {rack: i for i, rack in enumerate(racks)}
        columns = np.array([column[rack] for rack in client_racks], dtype=np.int64)
        return per_rack.reshape(len(tasks), len(racks))[:, columns]
