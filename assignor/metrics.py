"""Quality figures of one application's result (scenario.md "Metrics"; the same feed `assignment_results`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from fleet_assignor.assignor.assignment import KafkaStreamsAssignment, TaskIdsByRole
from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.limits import MAX_LONG
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.scenario import LATEST_OFFSET, UNKNOWN_OFFSET, Scenario
from fleet_assignor.assignor.state import KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId


@dataclass(frozen=True, slots=True)
class ClientTasks:
    """What one client holds in a result, as plain sets (``standby`` includes the warmups)."""

    active: frozenset[TaskId] = frozenset()
    standby: frozenset[TaskId] = frozenset()
    warmup: frozenset[TaskId] = frozenset()

    @staticmethod
    def of(assignment: KafkaStreamsAssignment) -> ClientTasks:
        """The assignment's task ids by role (built in C, `frozen`: once per client of every plan)."""
        return ClientTasks.of_roles(assignment.task_ids_by_role())

    @staticmethod
    def of_roles(by_role: TaskIdsByRole) -> ClientTasks:
        """`of` from an assignment's `task_ids_by_role()` read before."""
        return _client_tasks(*by_role)


_client_tasks: Callable[[frozenset[TaskId], frozenset[TaskId], frozenset[TaskId]], ClientTasks] = builder(
    ClientTasks
)


@dataclass(frozen=True, slots=True)
class AssignmentMetrics:
    """Field order is the order of the result's ``metrics`` object."""

    active_moves: int
    standby_moves: int
    warmups: int
    cross_rack_cost: int | None
    restore_lag: int
    max_tasks_per_thread: float
    min_tasks_per_thread: float
    num_clients: int
    num_threads: int
    num_tasks: int
    num_stateful_tasks: int

    def as_dict(self) -> dict[str, int | float | None]:
        return asdict(self)


# One row per client of a result: its state (None: a client the application does not have) and its tasks.
ClientRows = Sequence[tuple[KafkaStreamsState | None, ClientTasks]]


def _rows(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> ClientRows:
    clients = scenario.application_state.clients
    return [(clients.get(pid), tasks) for pid, tasks in result.items()]


def compute_metrics(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> AssignmentMetrics:
    return metrics_of_clients(scenario, _rows(scenario, result))


def metrics_of_clients(
    scenario: Scenario, rows: ClientRows, *, each_active_once: bool = False
) -> AssignmentMetrics:
    """`compute_metrics` of a result given as rows, each client once: every figure reads the rows, so a
    caller that already has each client's state (the planner) spares a lookup by process id per client
    and figure. ``each_active_once``: the caller knows no task is active on two clients (validation found
    no problem), so it is not checked again."""
    state = scenario.application_state
    loads = _thread_loads(scenario, rows)
    return AssignmentMetrics(
        active_moves=_active_moves(scenario, rows, each_active_once),
        standby_moves=_standby_moves(rows),
        warmups=sum(len(tasks.warmup) for _, tasks in rows),
        cross_rack_cost=_cross_rack_cost(scenario, rows),
        restore_lag=_restore_lag(scenario, rows),
        max_tasks_per_thread=max(loads, default=0.0),
        min_tasks_per_thread=min(loads, default=0.0),
        num_clients=len(state.clients),
        num_threads=sum(c.num_processing_threads for c in state.clients.values()),
        num_tasks=len(state.tasks),
        num_stateful_tasks=len(scenario.end_offset_sums),
    )


def _thread_loads(scenario: Scenario, rows: ClientRows) -> list[float]:
    """Actives per thread of every client of the application (one without a row holds none)."""
    loads = [len(tasks.active) / c.num_processing_threads for c, tasks in rows if c is not None]
    clients = scenario.application_state.clients.values()
    if len(loads) < len(clients):
        listed = {id(client) for client, _ in rows}
        loads += [0 / client.num_processing_threads for client in clients if id(client) not in listed]
    return loads


def count_active_moves(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> int:
    """Previously active tasks now active on a client that did not hold them active, or on none."""
    return _active_moves(scenario, _rows(scenario, result))


def _active_moves(scenario: Scenario, rows: ClientRows, each_active_once: bool = False) -> int:
    clients = scenario.application_state.clients
    previously_active: set[TaskId] = set().union(*(c.previous_active_tasks for c in clients.values()))
    if not previously_active:  # a first assignment: nothing can move
        return 0
    actives = [tasks.active for _, tasks in rows]
    if each_active_once or len(set().union(*actives)) == sum(map(len, actives)):
        # Each task active once (any valid result): a previous active stays where its client runs it.
        kept = sum(
            len(tasks.active & client.previous_active_tasks) for client, tasks in rows if client is not None
        )
        return len(previously_active) - kept
    active_now: set[TaskId] = set()
    newly_active: set[TaskId] = set()  # active on some client that did not run it before
    for client, tasks in rows:
        active_now |= tasks.active
        newly_active |= tasks.active - client.previous_active_tasks if client is not None else tasks.active
    return len(previously_active - active_now) + len(previously_active & active_now & newly_active)


def count_standby_moves(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> int:
    """Standbys (warmups excluded) on a client that held the task in neither role before."""
    return _standby_moves(_rows(scenario, result))


def _standby_moves(rows: ClientRows) -> int:
    moves = 0
    for client, tasks in rows:
        if not tasks.standby:  # most clients of a big group without standbys
            continue
        # Each difference copies what is left, so only those that can remove something are taken (a
        # first round's clients held nothing; warmups are rare), one after the other (no union built).
        moved = tasks.standby - tasks.warmup if tasks.warmup else tasks.standby
        if client:
            if client.previous_active_tasks:
                moved = moved - client.previous_active_tasks
            if client.previous_standby_tasks and moved:
                moved = moved - client.previous_standby_tasks
        moves += len(moved)
    return moves


def restore_lag(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> int:
    """Records to restore before the actives placed on clients that are not caught up can run."""
    return _restore_lag(scenario, _rows(scenario, result))


def _restore_lag(scenario: Scenario, rows: ClientRows) -> int:
    acceptable = scenario.application_state.configs.acceptable_recovery_lag
    total = 0
    for client, tasks in rows:
        if client is None or not client.task_lags:  # no lags: no task to restore
            continue
        lags = client.task_lags
        for task in tasks.active:
            lag = lags.get(task)
            if lag is None or lag == LATEST_OFFSET or 0 <= lag <= acceptable:
                continue  # no changelog, or caught up
            total += scenario.end_offset_sums[task] if lag == UNKNOWN_OFFSET else lag
    return min(total, MAX_LONG)


def cross_rack_cost(scenario: Scenario, result: Mapping[ProcessId, ClientTasks]) -> int | None:
    """Cross-rack fetches in steady state: actives' source partitions and standbys' changelog partitions
    with no replica on the client's rack. None when a client's rack or a counted partition's racks is
    unknown, as a partial figure would mislead."""
    return _cross_rack_cost(scenario, _rows(scenario, result))


def every_client_has_a_rack(scenario: Scenario) -> bool:
    """Without, there is no cross-rack figure (`cross_rack_cost` is None)."""
    return all(client.rack_id is not None for client in scenario.application_state.clients.values())


def _cross_rack_cost(scenario: Scenario, rows: ClientRows) -> int | None:
    if not every_client_has_a_rack(scenario):
        return None
    cost = 0
    for client, tasks in rows:
        if client is None:
            continue
        for _task, partitions in _counted_partitions(scenario, tasks):
            for partition in partitions:
                if not partition.rack_ids:
                    return None
                cost += client.rack_id not in partition.rack_ids
    return cost


def _counted_partitions(scenario: Scenario, tasks: ClientTasks) -> Iterable:
    infos = scenario.application_state.tasks
    for task in tasks.active:  # the sum does not depend on the order
        if task in infos:
            yield task, infos[task].source_partitions
    for task in tasks.standby:
        if task in infos:
            yield task, infos[task].changelog_partitions
