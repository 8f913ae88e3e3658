"""The flow problems of the two strategies (rack.md §4.3 min_traffic, §4.4 balance_subtopology), as
`PlacementProblem`s for the exact solver.

Both keep every client's task count (the sink capacities are the original counts). balance_subtopology
also caps, per subtopology g and client c, the tasks of g on c at ``ceil(orig[c] * v_g / T)`` in exact
integers (POLICY.md §4; Kafka's double arithmetic sometimes rounds one higher).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.rack.solver import PlacementProblem
from fleet_assignor.assignor.task_id import TaskId


class RackAssignmentError(ValueError):
    """The assignment handed to the optimizer is not a valid starting flow."""


def current_holders(
    tasks: Sequence[TaskId], clients: Sequence[object], held: Sequence[Collection[TaskId]]
) -> np.ndarray:
    """The client index holding each task (``held[c]``: what client c holds in the role optimized); raises
    on a task held by none or by two (rack.md §4.3's two checks)."""
    row_of = {task: row for row, task in enumerate(tasks)}
    current = np.full(len(tasks), -1, dtype=np.int64)
    for index, client_tasks in enumerate(held):
        for task in client_tasks:
            row = row_of.get(task)
            if row is None:
                continue
            if current[row] >= 0:
                raise RackAssignmentError(
                    f"Task {task} assigned to multiple clients {clients[index]}, {clients[current[row]]}"
                )
            current[row] = index
    missing = np.nonzero(current < 0)[0]
    if len(missing):
        raise RackAssignmentError(f"Task {tasks[int(missing[0])]} not assigned to any client")
    return current


def ceil_share(orig: np.ndarray, group_size: int, total: int) -> np.ndarray:
    """``ceil(orig * v / T)`` per client, exactly."""
    return -((-orig * np.int64(group_size)) // np.int64(total))


def build_problem(
    strategy: RackAwareStrategy,
    tasks: Sequence[TaskId],
    costs: np.ndarray,
    allowed: np.ndarray,
    current: np.ndarray,
    client_count: int,
    group_of: Callable[[TaskId], Any],  # a sortable key: subtopology, or one group for all
) -> PlacementProblem:
    """The strategy's problem over ``tasks`` (rows of ``costs``) and ``client_count`` clients."""
    orig = np.bincount(current, minlength=client_count).astype(np.int64)
    if strategy is RackAwareStrategy.MIN_TRAFFIC:
        return PlacementProblem.single_group(costs, allowed, current, orig)
    if strategy is not RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        raise ValueError("Rack aware assignment is disabled")
    keys = sorted({group_of(task) for task in tasks})
    index = {key: i for i, key in enumerate(keys)}
    groups = np.array([index[group_of(task)] for task in tasks], dtype=np.int64)
    sizes = np.bincount(groups, minlength=len(keys))
    caps = (
        np.stack([ceil_share(orig, int(size), len(tasks)) for size in sizes])
        if len(keys)
        else (np.zeros((0, client_count), dtype=np.int64))
    )
    return PlacementProblem(costs, allowed, current, orig, groups, caps)


def subtopology_of(task: TaskId) -> int:
    """KIP-924 grouping: the subtopology number only (rack.md §4.4)."""
    return task.subtopology


def legacy_subtopology_of(task: TaskId) -> tuple[str, int]:
    """Legacy grouping: Kafka's Subtopology (node group, then named topology)."""
    return (task.topology_name or "", task.subtopology)
