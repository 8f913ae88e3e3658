"""Kafka Streams' default assignor, ``HighAvailabilityTaskAssignor`` (assignors.md §4), reproduced exactly.

Phases, all in signed ProcessId / TaskId order:
  A. stateful actives round-robin over the clients, then balanced over threads (rack-optimized if enabled);
  B. standby replicas, balanced over threads (rack-optimized if enabled);
  C. per stateful task: the caught-up clients and the clients by lag;
  D. actives moved off clients that are not caught up (warmups left behind, within the budget);
  E. standbys moved likewise;
  F. stateless actives to the least-loaded client by active load (rack-optimized if enabled).
A probing rebalance is requested when phase D scheduled or phase E performed any movement; the follow-up
deadline goes on the client with the smallest ProcessId (POLICY.md §4).

The legacy entry point `assign_high_availability` works on `ClientState`s as Kafka's internal interface does;
`HighAvailabilityTaskAssignor` wraps it in the KIP-924 `TaskAssignor` protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import is_
from typing import Any

import numpy as np

from fleet_assignor.assignor.assignment import (
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    TaskIdsByRole,
)
from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.configs import AssignmentConfigs, RackAwareStrategy
from fleet_assignor.assignor.distribution import ConsumerTasks, lone_consumer_share
from fleet_assignor.assignor.gc_pause import collector_paused
from fleet_assignor.assignor.limits import deadline_after
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.rack import RackAwareTaskAssignor
from fleet_assignor.assignor.standby import create_standby_task_assignor
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.task_movement import (
    TASK_ORDER,
    LagTable,
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)

# Rack-aware costs HA uses when the configs leave them unset (assignors.md §1.8).
STATEFUL_TRAFFIC_COST = 10
STATEFUL_NON_OVERLAP_COST = 1
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0

MovePredicate = Callable[[ClientState, ClientState], bool]


class HighAvailabilityTaskAssignor(BaseTaskAssignor):
    """The KIP-924 face of Kafka's default assignor. Reads lags; never reads the clock (the follow-up
    deadline derives from ``application_state.now_ms``)."""

    @collector_paused
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        states = application_state.kafka_streams_states(True)
        clients = {pid: ClientState.from_kafka_streams_state(states[pid]) for pid in sorted(states)}
        configs = application_state.assignment_configs()
        probing = assign_high_availability(
            clients,
            application_state.all_tasks().keys(),
            application_state.stateful_task_ids(),
            configs,
            rack_assignor=_rack_assignor_for(application_state),
        )
        deadline = (
            deadline_after(application_state.now_ms, configs.probing_rebalance_interval_ms)
            if probing
            else None
        )
        return to_task_assignment(clients, deadline, order_hint=application_state.all_tasks().keys())


def to_task_assignment(
    clients: Mapping[ProcessId, ClientState],
    deadline_ms: int | None,
    order_hint: Iterable[TaskId] = (),
) -> TaskAssignment:
    """One assignment per client in ProcessId order; the deadline (if any) on the smallest ProcessId.
    ``order_hint``: tasks likely already in TaskId order (the application's), which makes ranking cheap."""
    states = [clients[pid] for pid in sorted(clients)]
    actives = [state.active_set() for state in states]
    standby_sets = [state.standby_set() for state in states]
    order = _task_rank(actives, standby_sets, order_hint=order_hint)
    assignments = []
    active, standby = AssignedTask.active, AssignedTask.standby
    for rank, state in enumerate(states):
        warmups = set(state.warmup_tasks)
        client_actives, client_standbys = actives[rank], standby_sets[rank]
        ordered_actives = sorted(client_actives, key=order)
        ordered_standbys = sorted(client_standbys, key=order)
        tasks = {t: active(t) for t in ordered_actives}
        for t in ordered_standbys:
            tasks[t] = AssignedTask.warmup(t) if t in warmups else standby(t)
        deadline = int(deadline_ms) if rank == 0 and deadline_ms is not None else None
        if not client_actives.isdisjoint(client_standbys):  # kept once, as a standby: let the dict say so
            assignments.append(KafkaStreamsAssignment(state.process_id, tasks, deadline))
            continue
        by_role = (client_actives, client_standbys, client_standbys.intersection(warmups))
        pid, consumers = state.process_id, state.consumers
        if len(consumers) == 1:
            share = lone_consumer_share(ordered_actives, ordered_standbys)
            assignments.append(
                OneConsumerAssignment.with_share(pid, tasks, by_role, consumers[0], share, deadline)
            )
        else:
            assignments.append(KafkaStreamsAssignment.with_roles(pid, tasks, by_role, deadline))
    return TaskAssignment.of(assignments)


class OneConsumerAssignment(KafkaStreamsAssignment):
    """The assignment of a client with one consumer, which runs every task of it: its share, each role in
    TaskId order (what `distribute_client_tasks` makes of it), comes from the sorted lists the assignment
    was built from, and is offered to the planner (`consumer_tasks`) until a task changes."""

    __slots__ = ("_share",)
    _share: dict[str, ConsumerTasks] | None

    @classmethod
    def with_share(
        cls,
        process_id: ProcessId,
        tasks: dict[TaskId, AssignedTask],
        by_role: TaskIdsByRole,
        consumer: str,
        share: ConsumerTasks,
        followup_rebalance_deadline: int | None = None,
    ) -> OneConsumerAssignment:
        assignment = cls(process_id, tasks, followup_rebalance_deadline)
        assignment._by_role = by_role
        assignment._share = {consumer: share}
        return assignment

    def consumer_tasks(self) -> Mapping[str, ConsumerTasks] | None:
        """The lone consumer's share while the tasks are as built (None after a change, or when made without
        `with_share`: the planner then splits the tasks itself)."""
        share: dict[str, ConsumerTasks] | None = getattr(self, "_share", None)
        return share

    def assign_task(self, task: AssignedTask) -> None:
        self._share = None
        super().assign_task(task)

    def remove_task(self, task: AssignedTask | TaskId) -> None:
        self._share = None
        super().remove_task(task)

    def with_followup_rebalance(self, deadline_ms: int) -> KafkaStreamsAssignment:
        self._share = None  # the copy shares the tasks and may change them
        return super().with_followup_rebalance(deadline_ms)


def _task_rank(
    *task_sets: Sequence[frozenset[TaskId]], order_hint: Iterable[TaskId] = ()
) -> Callable[[TaskId], Any]:
    """A sort key giving TaskId order: every assigned task's rank in one sort of them all, so each client's
    tasks sort by small ints (at 6,000 tasks x 2 clients the per-client TaskId sorts were a third of the
    output step; with many replicas each task is ranked once, not once per replica). Falls back to
    `TASK_ORDER` when some tasks do not compare (named with unnamed), so any error is raised where it was.
    Tasks of ``order_hint`` come first: the sort is near linear on input already in order; extra tasks in
    the hint only widen the ranking."""
    every: dict[TaskId, None] = dict.fromkeys(order_hint)
    for sets in task_sets:
        for tasks in sets:
            every.update(dict.fromkeys(tasks))
    try:
        ranked = sorted_task_ids(every, TASK_ORDER)
    except TypeError:
        return TASK_ORDER
    return {task: k for k, task in enumerate(ranked)}.__getitem__


def _rack_assignor_for(application_state: ApplicationState) -> RackAwareTaskAssignor | None:
    if application_state.assignment_configs().rack_aware_assignment_strategy is RackAwareStrategy.NONE:
        return None
    return RackAwareTaskAssignor(application_state)


def assign_high_availability(
    clients: Mapping[ProcessId, ClientState],
    all_tasks: Iterable[TaskId],
    stateful_tasks: Iterable[TaskId],
    configs: AssignmentConfigs,
    rack_assignor=None,
) -> bool:
    """Kafka's legacy ``HighAvailabilityTaskAssignor.assign``: mutates the (empty) ClientStates and returns
    whether a probing rebalance is needed. ``rack_assignor`` is a `RackAwareTaskAssignor` or None."""
    # Deduplicated in input order, not through a set: the application's tasks come in TaskId order, on
    # which the sort is near linear.
    stateful = sorted_task_ids(dict.fromkeys(stateful_tasks), TASK_ORDER)
    stateful_set = set(stateful)
    stateless = sorted_task_ids((t for t in dict.fromkeys(all_tasks) if t not in stateful_set), TASK_ORDER)
    order = sorted(clients)
    ordered = [clients[pid] for pid in order]
    rack = _RackGate(rack_assignor, configs)

    # Phase A
    _assign_round_robin(ordered, stateful)
    balance_tasks_over_threads(ordered, active=True, allowed=_always)
    rack.optimize_active(stateful, clients, stateful=True)

    # Phase B
    if configs.num_standby_replicas > 0:
        # HA passes no rack source to the factory: tags configured -> tag-aware, else least-loaded (§4.3).
        standby_assignor = create_standby_task_assignor(configs)
        standby_assignor.assign(clients, stateful, configs)
        balance_tasks_over_threads(ordered, active=False, allowed=standby_assignor.is_allowed_task_movement)
        rack.optimize_standby(clients, configs, standby_assignor.is_allowed_standby_movement)

    # Phase C
    table = LagTable(order, stateful, _lag_rows(ordered, stateful), configs.acceptable_recovery_lag)
    caught_up, by_lag = table.caught_up(), table.by_lag()

    # Phases D and E share one warmup budget
    budget = WarmupBudget(configs.max_warmup_replicas)
    warmups: dict[ProcessId, set[TaskId]] = {}
    active_movements = assign_active_task_movements(caught_up, by_lag, clients, warmups, budget)
    standby_movements = assign_standby_task_movements(caught_up, by_lag, clients, budget, warmups)

    # Phase F (the optimizer is called even with no stateless task, as Kafka does; it returns at once)
    _assign_stateless_actives(ordered, stateless)
    rack.optimize_active(stateless, clients, stateful=False)

    return active_movements + standby_movements > 0


def _always(source: ClientState, destination: ClientState) -> bool:
    return True


def _assign_round_robin(ordered: Sequence[ClientState], stateful: Sequence[TaskId]) -> None:
    """Task k (TaskId order) to client k mod n (ProcessId order), ignoring capacity and history."""
    count = len(ordered)
    if count == 0:
        return
    for k, task in enumerate(stateful):
        ordered[k % count].assign_active(task)


def balance_tasks_over_threads(
    ordered: Sequence[ClientState], *, active: bool, allowed: MovePredicate
) -> None:
    """Move tasks of one role from higher to lower per-thread load until a full pass moves nothing
    (assignors.md §4.2). Load counts actives and standbys in both roles, as Kafka's does."""
    count = len(ordered)
    caps = [state.capacity for state in ordered]
    totals = [state.assigned_task_count for state in ordered]
    loads = [totals[i] / caps[i] for i in range(count)]
    moved_any = True
    while moved_any:
        moved_any = False
        lowest = min(loads, default=0.0)
        for s in range(count):
            # No destination can be less loaded than the least-loaded client: skip the whole row.
            if loads[s] <= lowest:
                continue
            source = ordered[s]
            for d in range(count):
                if d == s or not _should_move_a_task(totals, caps, loads, s, d):
                    continue
                destination = ordered[d]
                snapshot = sorted_task_ids(
                    source.active_set() if active else source.standby_set(), TASK_ORDER
                )
                moved_here = False
                for task in snapshot:
                    if not _should_move_a_task(totals, caps, loads, s, d):
                        break
                    if destination.has_assigned_task(task) or not allowed(source, destination):
                        continue
                    if active:
                        source.unassign_active(task)
                        destination.assign_active(task)
                    else:
                        source.unassign_standby(task)
                        destination.assign_standby(task)
                    totals[s] -= 1
                    totals[d] += 1
                    loads[s] = totals[s] / caps[s]
                    loads[d] = totals[d] / caps[d]
                    moved_here = True
                if moved_here:
                    moved_any = True
                    lowest = min(loads)
                    if loads[s] <= lowest:
                        break


def _should_move_a_task(totals: list[int], caps: list[int], loads: list[float], s: int, d: int) -> bool:
    """Kafka's ``shouldMoveATask``: only if it shrinks the skew without reversing it."""
    skew = loads[s] - loads[d]
    if skew <= 0:
        return False
    proposed = (totals[s] - 1.0) / caps[s] - (totals[d] + 1.0) / caps[d]
    if proposed < 0:
        return False
    return proposed < skew


def _lag_rows(ordered: Sequence[ClientState], stateful: Sequence[TaskId]) -> np.ndarray:
    """Every client's lag for every stateful task (clients x tasks, int64).

    Loaded scenarios give every client the same lag keys in the same order (the same TaskId objects), so
    the rows are read in that order and permuted once, instead of hashing a TaskId per (client, task).
    """
    if not ordered or not stateful:
        return np.zeros((len(ordered), len(stateful)), dtype=np.int64)
    first_keys = list(ordered[0].task_lags.keys())
    shared = len(first_keys) == len(stateful) and all(
        len(state.task_lags) == len(first_keys) and all(map(is_, state.task_lags.keys(), first_keys))
        for state in ordered
    )
    if shared:
        position = {task: k for k, task in enumerate(first_keys)}
        if all(task in position for task in stateful):
            rows = np.empty((len(ordered), len(first_keys)), dtype=np.int64)
            for row, state in enumerate(ordered):  # fromiter: no list of Python ints per client
                rows[row] = np.fromiter(state.task_lags.values(), dtype=np.int64, count=len(first_keys))
            return rows[:, [position[task] for task in stateful]]
    return np.array([[state.lag_for(task) for task in stateful] for state in ordered], dtype=np.int64)


def _assign_stateless_actives(ordered: Sequence[ClientState], stateless: Sequence[TaskId]) -> None:
    """Each stateless task to the client with the smallest (active load, ProcessId). Only the polled client's
    load changes between polls, so a heap with one live entry per client is Kafka's priority set here."""
    import heapq

    if not ordered:
        return
    heap = [(state.active_task_load, i) for i, state in enumerate(ordered)]
    heapq.heapify(heap)
    for task in stateless:
        _, i = heapq.heappop(heap)
        state = ordered[i]
        state.assign_active(task)
        heapq.heappush(heap, (state.active_task_load, i))


class _RackGate:
    """Calls the rack-aware optimizer where Kafka calls it, if the rack assignor can be enabled (evaluated
    once per assignment, as Kafka caches it)."""

    def __init__(self, rack_assignor, configs: AssignmentConfigs) -> None:
        self._rack = rack_assignor
        self._configs = configs
        self._enabled: bool | None = None

    def enabled(self) -> bool:
        if self._enabled is None:
            self._enabled = self._rack is not None and bool(self._rack.can_enable_rack_awareness())
        return self._enabled

    def optimize_active(
        self, tasks: Sequence[TaskId], clients: Mapping[ProcessId, ClientState], *, stateful: bool
    ) -> None:
        if not self.enabled():
            return
        if stateful:
            traffic = _or_default(self._configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST)
            non_overlap = _or_default(self._configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST)
        else:
            traffic, non_overlap = STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST
        self._rack.optimize_active_tasks(list(tasks), clients, traffic, non_overlap)

    def optimize_standby(
        self, clients: Mapping[ProcessId, ClientState], configs: AssignmentConfigs, move_predicate
    ) -> None:
        if not self.enabled():
            return
        traffic = _or_default(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST)
        non_overlap = _or_default(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST)
        self._rack.optimize_standby_tasks(clients, traffic, non_overlap, move_predicate)


def _or_default(value: int | None, default: int) -> int:
    return default if value is None else value
