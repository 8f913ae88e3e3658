"""The KIP-924 rack optimizers (Kafka's ``TaskAssignmentUtils.optimizeRackAware*Tasks``, rack.md §2.2, §6,
§7, assignors.md §8.5) on ``dict[ProcessId, KafkaStreamsAssignment]``, mutated in place.

Clients are taken in signed ProcessId order (Kafka iterates a HashMap here; rack.md §11 item 3). The
POLICY.md §4 fixes: an override satisfies the cost gate; an active never moves onto a client holding
the task's standby; the standby move predicate sees the real destination.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np

from fleet_assignor.assignor.assignment import (
    ACTIVE,
    STANDBY,
    AssignedTask,
    AssignedTaskType,
    KafkaStreamsAssignment,
)
from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.rack.costs import PartitionScope, RackCosts, RemoteCounts
from fleet_assignor.assignor.rack.enablement import Enablement, OptimizedTaskType, utils_enablement
from fleet_assignor.assignor.rack.graph import current_holders, subtopology_of
from fleet_assignor.assignor.rack.placement import (
    balanced_pair_placement,
    min_traffic_pair_placement,
    optimize_placement,
)
from fleet_assignor.assignor.rack.solver import PlacementProblem, solve_placement
from fleet_assignor.assignor.rack.swaps import SwapScreen, swap_rounds
from fleet_assignor.assignor.rack.tag_spread import TagSpreadDestinations
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_assignment_utils import (
    ClientTagSpreadPredicate,
    RackAwareOptimizationParams,
    standby_move_predicate,
)
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.task_movement import TASK_ORDER


@dataclass(frozen=True, slots=True)
class RackOptimizationResult:
    """What one call did. Cross-rack partitions count, for actives, all of the task's partitions and, for
    standbys, its changelog partitions, over the optimized tasks; ``tasks_moved`` counts (client, task)
    placements that are new. ``traffic_cost`` / ``non_overlap_cost`` are None when unset, not overridden."""

    task_type: OptimizedTaskType
    enabled: bool
    disabled_reason: str | None
    traffic_cost: int | None
    non_overlap_cost: int | None
    cross_rack_partitions_before: int | None = 0
    cross_rack_partitions_after: int | None = 0
    tasks_moved: int = 0

    @property
    def total_cost(self) -> int:
        """traffic x cross-rack partitions after + non-overlap x tasks moved (scenario.md, ``rack_cost``)."""
        return (self.traffic_cost or 0) * (self.cross_rack_partitions_after or 0) + (
            self.non_overlap_cost or 0
        ) * self.tasks_moved

    def as_dict(self) -> dict:
        return {
            "task_type": self.task_type.value,
            "traffic_cost": self.traffic_cost,
            "non_overlap_cost": self.non_overlap_cost,
            "cross_rack_partitions_before": self.cross_rack_partitions_before,
            "cross_rack_partitions_after": self.cross_rack_partitions_after,
            "tasks_moved": self.tasks_moved,
            "total_cost": self.total_cost,
            "enabled": self.enabled,
            "disabled_reason": self.disabled_reason,
        }


def _costs_of(params: RackAwareOptimizationParams) -> tuple[int | None, int | None]:
    configs = params.application_state.assignment_configs()
    traffic = params.traffic_cost_override
    non_overlap = params.non_overlap_cost_override
    return (
        configs.rack_aware_traffic_cost if traffic is None else traffic,
        configs.rack_aware_non_overlap_cost if non_overlap is None else non_overlap,
    )


def _tasks_to_optimize(
    params: RackAwareOptimizationParams, assignments, role: AssignedTaskType
) -> list[TaskId]:
    if params.tasks_to_optimize is not None:
        return sorted(set(params.tasks_to_optimize))
    return sorted(
        {t for a in assignments.values() for t, assigned in a.tasks().items() if assigned.type is role}
    )


def _gate(
    params, assignments, task_type: OptimizedTaskType, tasks: list[TaskId]
) -> tuple[Enablement, RackCosts | None]:
    traffic, non_overlap = _costs_of(params)
    if not tasks:
        return Enablement.disabled("no tasks to optimize"), None
    enablement = utils_enablement(params.application_state, task_type, traffic, non_overlap)
    if not enablement.enabled:
        return enablement, None
    # utils_enablement disables the optimizer whenever a cost is unset: both are set here.
    return enablement, RackCosts(cast(int, traffic), cast(int, non_overlap))


def _fill_missing_clients(
    state: ApplicationState, assignments: dict[ProcessId, KafkaStreamsAssignment]
) -> None:
    for process_id in state.clients:
        if process_id not in assignments:
            assignments[process_id] = KafkaStreamsAssignment(process_id)


def optimize_rack_aware_active_tasks(
    params: RackAwareOptimizationParams, assignments: dict[ProcessId, KafkaStreamsAssignment]
) -> RackOptimizationResult:
    """Re-place the active tasks to optimize (``params.tasks_to_optimize``, else every active) at the exact
    minimum of traffic x remote partitions + non-overlap x moves, keeping every client's count of them
    (and, for balance_subtopology, the per-subtopology caps). Mutates ``assignments``."""
    state = params.application_state
    tasks = _tasks_to_optimize(params, assignments, ACTIVE)
    traffic, non_overlap = _costs_of(params)
    enablement, costs = _gate(params, assignments, OptimizedTaskType.ACTIVE, tasks)
    if costs is None:
        return RackOptimizationResult(
            OptimizedTaskType.ACTIVE, False, enablement.reason, traffic, non_overlap
        )
    _fill_missing_clients(state, assignments)
    client_ids = sorted(state.clients)
    held = [[t for t in (assignments[c].active_tasks())] for c in client_ids]
    current = current_holders(tasks, client_ids, held)
    # POLICY.md §4: no edge from a task to a client holding it as a standby (Kafka overwrites the standby).
    allowed = np.ones((len(tasks), len(client_ids)), dtype=bool)
    row_of = {t: i for i, t in enumerate(tasks)}
    for column, process_id in enumerate(client_ids):
        for task in assignments[process_id].standby_tasks():
            if task in row_of:
                allowed[row_of[task], column] = False
    outcome = optimize_placement(
        state.assignment_configs().rack_aware_assignment_strategy,
        tasks,
        [state.clients[c].rack_id for c in client_ids],
        current,
        allowed,
        RemoteCounts(state.all_tasks(), PartitionScope.ALL),
        costs,
        subtopology_of,
    )
    for task, source, destination in outcome.moves():
        assignments[client_ids[source]].remove_task(task)
        assignments[client_ids[destination]].assign_task(AssignedTask.active(task))
    return RackOptimizationResult(
        OptimizedTaskType.ACTIVE,
        True,
        None,
        costs.traffic,
        costs.non_overlap,
        outcome.remote_before,
        outcome.remote_after,
        outcome.moved,
    )


def _standby_remote(remote: RemoteCounts, state: ApplicationState, assignments, tasks: set[TaskId]) -> int:
    # Per client through the counts kept per rack: asked before and after, mostly for the same tasks.
    return sum(
        sum(
            remote.counts_on(
                [t for t in assignment.standby_tasks() if t in tasks], state.clients[pid].rack_id
            )
        )
        for pid, assignment in assignments.items()
        if pid in state.clients
    )


def optimize_rack_aware_standby_tasks(
    params: RackAwareOptimizationParams, assignments: dict[ProcessId, KafkaStreamsAssignment]
) -> RackOptimizationResult:
    """Re-place the standbys to optimize at lower traffic x remote changelog partitions + non-overlap x new
    placements. Every client keeps its standby count and no standby lands on a client holding the task in
    any role. With client tags: Kafka's pairwise swaps between clients on different racks (up to 4 rounds,
    each pair solved exactly with the strategy's graph) where the tag rule, checked against the real
    destination (POLICY.md §4), allows. Without tags: one exact global solve (`_place_standbys_globally`),
    never above what the pairwise search reaches. Mutates ``assignments``."""
    state = params.application_state
    tasks = _tasks_to_optimize(params, assignments, STANDBY)
    traffic, non_overlap = _costs_of(params)
    enablement, costs = _gate(params, assignments, OptimizedTaskType.STANDBY, tasks)
    if costs is None:
        return RackOptimizationResult(
            OptimizedTaskType.STANDBY, False, enablement.reason, traffic, non_overlap
        )
    _fill_missing_clients(state, assignments)
    optimized = set(tasks)
    remote = RemoteCounts(state.all_tasks(), PartitionScope.CHANGELOG)
    before_pairs = _standby_pairs(assignments, optimized)
    before = _standby_remote(remote, state, assignments, optimized)
    if not state.assignment_configs().rack_aware_assignment_tags and _global_solve_affordable(
        state, assignments, optimized
    ):
        _place_standbys_globally(state, assignments, tasks, remote, costs)
    else:
        _swap_standbys_pairwise(state, assignments, optimized, remote, costs)
    after_pairs = _standby_pairs(assignments, optimized)
    return RackOptimizationResult(
        OptimizedTaskType.STANDBY,
        True,
        None,
        costs.traffic,
        costs.non_overlap,
        before,
        _standby_remote(remote, state, assignments, optimized),
        len(after_pairs - before_pairs),
    )


# The global standby solve has one (task, client) node per task with several replicas; past this many
# nodes Kafka's pairwise search is used. Measured here: 2 standbys, 1,000 tasks x 50 clients (50,000 nodes)
# 0.5 s, 2,000 x 100 (200,000 nodes) 3.2 s; one standby per task needs no such node (10,000 x 200: 4 s).
GLOBAL_STANDBY_MAX_NODES = 250_000


def _global_solve_affordable(state, assignments, optimized: set[TaskId]) -> bool:
    replicas: dict[TaskId, int] = {}
    for assignment in assignments.values():
        for task in assignment.standby_tasks():
            if task in optimized:
                replicas[task] = replicas.get(task, 0) + 1
    multi = sum(1 for count in replicas.values() if count > 1)
    return (multi + 1) * len(state.clients) <= GLOBAL_STANDBY_MAX_NODES


def _place_standbys_globally(state, assignments, tasks: list[TaskId], remote: RemoteCounts, costs: RackCosts):
    """Without client tags any count-preserving re-placement is allowed, and Kafka's pairwise swaps (a
    greedy local search, rack.md §7) only ever reach one of them: solve the whole problem exactly instead,
    so the total is never above Kafka's. One row per standby replica; the replicas of a task form a group
    capped at 1 per client (no client holds a task twice); a client holding the task as active is left
    out; every client keeps its number of standbys of the optimized tasks. The subtopology caps of
    balance_subtopology are not applied here (Kafka applies them per client pair, an artifact of its
    pairwise search; without them the optimum can only be lower)."""
    client_ids = sorted(state.clients)
    holders = _standby_holders(assignments, client_ids)
    replicas = _StandbyReplicas.of(tasks, holders)
    if not replicas.rows:
        return
    placement = solve_placement(
        _standby_problem(state, assignments, client_ids, holders, replicas, remote, costs)
    )
    new_holders: dict[TaskId, set[int]] = {}
    for row, task in enumerate(replicas.rows):
        new_holders.setdefault(task, set()).add(int(placement[row]))
    _move_standbys(assignments, client_ids, holders, new_holders)


def _standby_holders(assignments, client_ids: list[ProcessId]) -> dict[TaskId, set[int]]:
    """Per task, the columns (ranks in ``client_ids``) of the clients holding it as a standby."""
    holders: dict[TaskId, set[int]] = {}
    for column, process_id in enumerate(client_ids):
        for task in assignments[process_id].standby_tasks():
            holders.setdefault(task, set()).add(column)
    return holders


@dataclass(frozen=True)
class _StandbyReplicas:
    """The rows of the global solve: one per standby replica of an optimized task, with its current column
    and its group."""

    rows: list[TaskId]
    current: list[int]
    groups: list[int]
    n_groups: int

    @classmethod
    def of(cls, tasks: list[TaskId], holders: Mapping[TaskId, set[int]]) -> _StandbyReplicas:
        rows: list[TaskId] = []
        current: list[int] = []
        groups: list[int] = []
        # A task with one replica cannot land twice on a client: those rows share group 0, whose caps (the
        # client counts) never bind; only tasks with several replicas need a group capped at 1 per client.
        n_groups = 1
        for task in (t for t in tasks if t in holders):
            group = 0
            if len(holders[task]) > 1:
                group, n_groups = n_groups, n_groups + 1
            for index in sorted(holders[task]):
                rows.append(task)
                current.append(index)
                groups.append(group)
        return cls(rows, current, groups, n_groups)


def _standby_problem(
    state,
    assignments,
    client_ids: list[ProcessId],
    holders: Mapping[TaskId, set[int]],
    replicas: _StandbyReplicas,
    remote: RemoteCounts,
    costs: RackCosts,
) -> PlacementProblem:
    """Costs per (replica, client): traffic for its remote partitions, plus non-overlap unless the client
    holds the task now; a client running the task as active is not allowed."""
    rows = replicas.rows
    column = {c: i for i, c in enumerate(client_ids)}
    current_arr = np.asarray(replicas.current, dtype=np.int64)
    held = np.zeros((len(rows), len(client_ids)), dtype=bool)
    allowed = np.ones_like(held)
    # Each client's actives, looked up per row: rows x clients role lookups cost more than the solve.
    active_on = _active_columns(assignments, client_ids, column, set(rows))
    for row, task in enumerate(rows):
        held[row, sorted(holders[task])] = True
        allowed[row, active_on.get(task, [])] = False
    remote_matrix = remote.matrix(rows, [state.clients[c].rack_id for c in client_ids])
    cost_matrix = remote_matrix * np.int64(costs.traffic) + np.where(held, 0, np.int64(costs.non_overlap))
    counts = np.bincount(current_arr, minlength=len(client_ids)).astype(np.int64)
    caps = np.ones((replicas.n_groups, len(client_ids)), dtype=np.int64)
    caps[0] = counts
    groups = np.asarray(replicas.groups, dtype=np.int64)
    return PlacementProblem(cost_matrix, allowed, current_arr, counts, groups, caps)


def _active_columns(
    assignments, client_ids: list[ProcessId], column: Mapping[ProcessId, int], tasks: set[TaskId]
) -> dict[TaskId, list[int]]:
    """Per task of ``tasks``, the columns of the clients running it as active."""
    columns: dict[TaskId, list[int]] = {}
    for process_id in client_ids:
        for task in assignments[process_id].active_tasks():
            if task in tasks:
                columns.setdefault(task, []).append(column[process_id])
    return columns


def _move_standbys(
    assignments,
    client_ids: list[ProcessId],
    before_holders: Mapping[TaskId, set[int]],
    after_holders: Mapping[TaskId, set[int]],
) -> None:
    for task, before in before_holders.items():
        after = after_holders.get(task, before)
        for index in sorted(before - after):
            assignments[client_ids[index]].remove_task(task)
        for index in sorted(after - before):
            assignments[client_ids[index]].assign_task(AssignedTask.standby(task))


def _swap_standbys_pairwise(state, assignments, optimized: set[TaskId], remote: RemoteCounts, costs) -> None:
    """Kafka's loop (rack.md §7) with the real client-tag predicate: up to 4 rounds of exact pair swaps,
    over the pairs `SwapScreen` does not rule out (the others keep their standbys)."""
    strategy = state.assignment_configs().rack_aware_assignment_strategy
    client_ids = sorted(state.clients)
    screen = _swap_screen(state, assignments, client_ids, optimized, remote, costs, strategy)

    def swap(i: int, j: int) -> bool:
        standbys = screen.pair(i, j)
        moves = [] if standbys is None else standbys.moves(costs)
        pair = (i, j)
        for row, source, destination in moves:
            task = screen.task(row)
            assignments[client_ids[pair[source]]].remove_task(task)
            assignments[client_ids[pair[destination]]].assign_task(AssignedTask.standby(task))
        if moves:
            screen.moved_rows([(row, pair[destination]) for row, _, destination in moves])
        return bool(moves)

    swap_rounds(len(client_ids), screen, swap)


def _swap_screen(state, assignments, client_ids, optimized, remote, costs, strategy) -> SwapScreen:
    """The pair screen over the optimized standbys, with the movement rule of `standby_move_predicate`."""
    predicate = standby_move_predicate(state)
    destinations = None
    if isinstance(predicate, ClientTagSpreadPredicate):
        destinations = TagSpreadDestinations([predicate.tags_of(c).items() for c in client_ids])
    holders: dict[TaskId, set[int]] = {}
    for rank, process_id in enumerate(client_ids):
        for task in assignments[process_id].tasks():
            holders.setdefault(task, set()).add(rank)
    return SwapScreen(
        [state.clients[c].rack_id for c in client_ids],
        [[t for t in assignments[c].standby_tasks() if t in optimized] for c in client_ids],
        holders,
        destinations,
        remote,
        costs.traffic,
        costs.non_overlap,
        subtopology_of if strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY else None,
    )


def _standby_pairs(assignments, tasks: set[TaskId]) -> set[tuple[ProcessId, TaskId]]:
    return {(pid, t) for pid, a in assignments.items() for t in a.standby_tasks() if t in tasks}


def _movable(
    state, assignments, source: ProcessId, destination: ProcessId, optimized, predicate
) -> set[TaskId]:
    src, dst = assignments[source], assignments[destination]
    return {
        task
        for task in src.standby_tasks()
        if task in optimized
        and not dst.holds(task)
        and predicate.can_move_standby_task(
            state.clients[source], state.clients[destination], task, assignments
        )
    }


def _swap_pair(
    state: ApplicationState,
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    first: ProcessId,
    second: ProcessId,
    optimized,
    predicate,
    strategy,
    remote,
    costs,
) -> bool:
    """One pair of Kafka's loop, its movable standbys asked of ``predicate`` (the reference the screened
    loop is tested against)."""
    racks = [state.clients[first].rack_id, state.clients[second].rack_id]
    if racks[0] == racks[1]:
        return False
    movable_first = _movable(state, assignments, first, second, optimized, predicate)
    movable_second = _movable(state, assignments, second, first, optimized, predicate)
    moves = _solve_pair(
        assignments, (first, second), racks, movable_first, movable_second, strategy, remote, costs
    )
    return bool(moves)


def _solve_pair(
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    pair: tuple[ProcessId, ProcessId],
    racks: list[str | None],
    movable_first: set[TaskId],
    movable_second: set[TaskId],
    strategy,
    remote,
    costs,
) -> list[tuple[TaskId, int, int]]:
    """Solve one pair exactly over its movable standbys with the strategy's graph and apply it; the moves
    (task, from, to), 0 for the pair's first client and 1 for its second."""
    if not movable_first or not movable_second:
        return []
    tasks = sorted_task_ids(movable_first | movable_second, TASK_ORDER)
    holders = [0 if t in movable_first else 1 for t in tasks]
    if strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        placement = balanced_pair_placement(tasks, holders, racks, remote, costs, subtopology_of)
    else:
        placement = min_traffic_pair_placement(tasks, holders, racks, remote, costs)
    moves = [(t, a, b) for t, a, b in zip(tasks, holders, placement, strict=True) if a != b]
    for task, source, destination in moves:
        assignments[pair[source]].remove_task(task)
        assignments[pair[destination]].assign_task(AssignedTask.standby(task))
    return moves


def cross_rack_partitions(
    state: ApplicationState,
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    task_type: OptimizedTaskType,
) -> int | None:
    """Cross-rack partitions of an assignment (actives: all the task's partitions; standbys: changelog
    partitions); None when a holder has no rack or a counted partition has no racks."""
    scope = PartitionScope.ALL if task_type is OptimizedTaskType.ACTIVE else PartitionScope.CHANGELOG
    role = ACTIVE if task_type is OptimizedTaskType.ACTIVE else STANDBY
    total = 0
    for process_id, assignment in assignments.items():
        rack = state.clients[process_id].rack_id if process_id in state.clients else None
        for task, assigned in assignment.tasks().items():
            if assigned.type is not role:
                continue
            partitions = scope.partitions(state.all_tasks()[task])
            if rack is None or any(not p.rack_ids for p in partitions):
                return None
            total += sum(1 for p in partitions if rack not in p.rack_ids)
    return total
