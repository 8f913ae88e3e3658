"""One optimization run shared by both paths: costs, strategy graph, exact solve, and what changed."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.rack.costs import RackCosts, RemoteCounts, edge_costs
from fleet_assignor.assignor.rack.graph import build_problem
from fleet_assignor.assignor.rack.solver import (
    InfeasiblePlacementError,
    PlacementProblem,
    solve_placement,
    solve_two_clients,
)
from fleet_assignor.assignor.task_id import TaskId


@dataclass(frozen=True, slots=True)
class PlacementOutcome:
    """``placement[i]``: the new client index of ``tasks[i]``. ``remote_before`` / ``remote_after``: the
    cross-rack partitions of the optimized tasks; ``cost``: the optimum's total (traffic of the new
    placement plus non-overlap for each moved task), Kafka's "cost after" for actives."""

    tasks: tuple[TaskId, ...]
    current: np.ndarray
    placement: np.ndarray
    remote_before: int
    remote_after: int
    moved: int
    cost: int

    def moves(self) -> list[tuple[TaskId, int, int]]:
        """(task, from client index, to client index) for every task that changed client, in task order."""
        changed = np.nonzero(self.placement != self.current)[0]
        return [(self.tasks[i], int(self.current[i]), int(self.placement[i])) for i in changed]


def optimize_placement(
    strategy: RackAwareStrategy,
    tasks: Sequence[TaskId],
    client_racks: Sequence[str | None],
    current: np.ndarray,
    allowed: np.ndarray,
    remote: RemoteCounts,
    costs: RackCosts,
    group_of: Callable[[TaskId], Hashable],
) -> PlacementOutcome:
    rows = np.arange(len(tasks))
    remote_matrix = remote.matrix(tasks, client_racks)
    cost_matrix = edge_costs(remote_matrix, current, costs)
    problem = build_problem(strategy, tasks, cost_matrix, allowed, current, len(client_racks), group_of)
    try:
        placement = solve_placement(problem)
    except InfeasiblePlacementError:
        # Only balance_subtopology with left-out edges (a task may not go onto its standby's client) can
        # get here: Kafka's caps always admit a placement when every edge exists, ours may not. Let every
        # cap admit at least the input's count, so that keeping the input is always possible.
        placement = solve_placement(with_input_admitted(problem))
    return PlacementOutcome(
        tuple(tasks),
        current,
        placement,
        int(remote_matrix[rows, current].sum()) if len(tasks) else 0,
        int(remote_matrix[rows, placement].sum()) if len(tasks) else 0,
        int((placement != current).sum()),
        int(cost_matrix[rows, placement].sum()) if len(tasks) else 0,
    )


def balanced_pair_placement(
    tasks: Sequence[TaskId],
    current: Sequence[int],
    client_racks: Sequence[str | None],
    remote: RemoteCounts,
    costs: RackCosts,
    group_of: Callable[[TaskId], Any],  # a sortable key (graph.build_problem)
) -> list[int]:
    """``optimize_placement(BALANCE_SUBTOPOLOGY, ...).placement`` for two clients with every edge allowed (a
    standby pair of the KIP-924 swaps, solved thousands of times at 300 clients), in plain Python numbers:
    the same edge costs (`edge_costs`), tie-break (`solver.tie_broken_costs`) and caps
    (`graph.build_problem`), solved by `solver.solve_two_clients`."""
    return _pair_placement(tasks, current, client_racks, remote, costs, group_of)


def min_traffic_pair_placement(
    tasks: Sequence[TaskId],
    current: Sequence[int],
    client_racks: Sequence[str | None],
    remote: RemoteCounts,
    costs: RackCosts,
) -> list[int]:
    """``optimize_placement(MIN_TRAFFIC, ...).placement`` for two clients with every edge allowed (a standby
    pair of the swaps, both paths), in plain Python numbers: min_traffic's problem is one group whose caps
    are the client counts, which `balanced_pair_placement` builds when every task has the same group; both
    end in the same sort of the cost differences (`solver._two_clients`, `solver.solve_two_clients`)."""
    return _pair_placement(tasks, current, client_racks, remote, costs, _one_group)


def _one_group(task: TaskId) -> int:
    return 0


def _pair_placement(
    tasks: Sequence[TaskId],
    current: Sequence[int],
    client_racks: Sequence[str | None],
    remote: RemoteCounts,
    costs: RackCosts,
    group_of: Callable[[TaskId], Any],
) -> list[int]:
    return pair_placement_of_counts(
        remote.counts_on(tasks, client_racks[0]),
        remote.counts_on(tasks, client_racks[1]),
        current,
        list(map(group_of, tasks)),
        costs,
    )


def pair_placement_of_counts(
    first_remote: Sequence[int],
    second_remote: Sequence[int],
    current: Sequence[int],
    group_keys: Sequence[Any],
    costs: RackCosts,
) -> list[int]:
    """`balanced_pair_placement` from the tasks' numbers alone, the tasks in task order: their remote
    partitions on the first and the second client's rack, their current client (0 or 1) and their group
    keys (sortable; one key for all: min_traffic). The swap screen keeps these per standby and builds a
    pair's problem without the task ids."""
    scale = len(current) + 1
    traffic, moved = costs.traffic * scale, costs.non_overlap * scale + 1
    # `edge_costs` then `tie_broken_costs`: (cost + non_overlap unless held) x scale + 1 unless held
    tie_broken = [
        [traffic * first, traffic * second + moved]
        if holder == 0
        else [traffic * first + moved, traffic * second]
        for first, second, holder in zip(first_remote, second_remote, current, strict=True)
    ]
    keys = sorted(set(group_keys))
    groups = list(map({key: i for i, key in enumerate(keys)}.__getitem__, group_keys))
    tasks, on_first = len(current), current.count(0)
    on_second = tasks - on_first
    # graph.ceil_share per group and client
    caps = [
        [-(-on_first * size // tasks), -(-on_second * size // tasks)] for size in map(group_keys.count, keys)
    ]
    return solve_two_clients(tie_broken, groups, caps, [on_first, on_second])


def with_input_admitted(problem: PlacementProblem) -> PlacementProblem:
    """The same problem with each (group, client) cap raised to the input placement's count there."""
    counts = np.zeros_like(problem.group_capacity)
    np.add.at(counts, (problem.groups, problem.current), 1)
    return replace(problem, group_capacity=np.maximum(problem.group_capacity, counts))
