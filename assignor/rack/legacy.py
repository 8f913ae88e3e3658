"""The legacy-path rack optimizer (Kafka's ``RackAwareTaskAssignor``, rack.md §2.1, §6, §7) on `ClientState`s,
used by the high-availability and legacy sticky assignors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.rack.costs import PartitionScope, RackCosts, RemoteCounts
from fleet_assignor.assignor.rack.enablement import Enablement, legacy_enablement
from fleet_assignor.assignor.rack.graph import current_holders, legacy_subtopology_of
from fleet_assignor.assignor.rack.placement import min_traffic_pair_placement, optimize_placement
from fleet_assignor.assignor.rack.swaps import (
    STANDBY_OPTIMIZER_MAX_ITERATION,
    SwapBounds,
    SwapScreen,
    swap_rounds,
)
from fleet_assignor.assignor.rack.tag_spread import TagSpreadDestinations
from fleet_assignor.assignor.standby import TagSpreadStandbyMove
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.task_movement import TASK_ORDER

__all__ = ["STANDBY_OPTIMIZER_MAX_ITERATION", "LegacyMovePredicate", "RackAwareTaskAssignor"]

LegacyMovePredicate = Callable[[ClientState, ClientState, TaskId, Mapping[ProcessId, ClientState]], bool]


class RackAwareTaskAssignor:
    """Rack-aware optimization of a legacy assignor's working state; enablement is evaluated once."""

    def __init__(self, application_state: ApplicationState) -> None:
        self._state = application_state
        self._enablement: Enablement | None = None
        self._source = RemoteCounts(application_state.all_tasks(), PartitionScope.SOURCE)
        self._changelog = RemoteCounts(application_state.all_tasks(), PartitionScope.CHANGELOG)
        self.last_active_cost_before: int | None = None
        self.last_standby_cost_before: int | None = None

    def enablement(self) -> Enablement:
        if self._enablement is None:
            self._enablement = legacy_enablement(self._state)
        return self._enablement

    def can_enable_rack_awareness(self) -> bool:
        return self.enablement().enabled

    @property
    def disabled_reason(self) -> str | None:
        return self.enablement().reason

    def _require_enabled(self) -> None:
        if not self.can_enable_rack_awareness():
            raise RuntimeError(f"rack-aware optimization is disabled: {self.disabled_reason}")

    # --- actives (rack.md §6) ------------------------------------------------------------------------------
    def optimize_active_tasks(
        self,
        tasks: Sequence[TaskId],
        clients: Mapping[ProcessId, ClientState],
        traffic_cost: int,
        non_overlap_cost: int,
    ) -> int:
        """Re-place ``tasks`` (actives) at minimum cost; every client keeps its count of them. Returns the
        optimum's cost (traffic plus non-overlap for moved tasks), as Kafka does. A task never moves onto a
        client holding its standby (POLICY.md §4: that edge is left out)."""
        if not tasks:
            return 0
        self._require_enabled()
        task_ids = sorted(set(tasks))
        client_ids = sorted(clients)
        states = [clients[c] for c in client_ids]
        current = current_holders(task_ids, client_ids, [s.active_set() for s in states])
        # POLICY.md §4: no edge onto a client holding the task's standby.
        row_of = {t: i for i, t in enumerate(task_ids)}
        allowed = np.ones((len(task_ids), len(states)), dtype=bool)
        for column, state in enumerate(states):
            for task in state.standby_set():
                if task in row_of:
                    allowed[row_of[task], column] = False
        strategy = self._state.assignment_configs().rack_aware_assignment_strategy
        outcome = optimize_placement(
            strategy,
            task_ids,
            [s.rack_id for s in states],
            current,
            allowed,
            self._source,
            RackCosts(traffic_cost, non_overlap_cost),
            legacy_subtopology_of,
        )
        self.last_active_cost_before = outcome.remote_before * traffic_cost
        for task, source, _destination in outcome.moves():
            states[source].unassign_active(task)
        for task, _source, destination in outcome.moves():
            states[destination].assign_active(task)
        return outcome.cost

    # --- standbys (rack.md §7) -----------------------------------------------------------------------------
    def standby_cost(self, clients: Mapping[ProcessId, ClientState], traffic_cost: int) -> int:
        """Traffic of every standby replica (rack.md §3.2: non-overlap never counts here)."""
        return traffic_cost * sum(
            self._changelog.count(task, state.rack_id)
            for state in clients.values()
            for task in state.standby_set()
        )

    def optimize_standby_tasks(
        self,
        clients: Mapping[ProcessId, ClientState],
        traffic_cost: int,
        non_overlap_cost: int,
        move_predicate: LegacyMovePredicate,
    ) -> int:
        """Pairwise standby swaps between clients on different racks, up to 4 rounds while anything moves.
        Each client keeps its standby count; a standby never lands on a client holding the task in any role,
        and only where ``move_predicate(source, destination, task, clients)`` allows. Returns the standby
        traffic cost afterwards."""
        self._require_enabled()
        self.last_standby_cost_before = self.standby_cost(clients, traffic_cost)
        costs = RackCosts(traffic_cost, non_overlap_cost)
        client_ids = sorted(clients)
        # Kafka's loop over every pair; the pairs the screen or the bounds rule out would keep their
        # standbys (swaps.py).
        screen = self._swap_screen(clients, client_ids, move_predicate, costs)
        if screen is not None:

            def swap_screened(i: int, j: int) -> bool:
                standbys = screen.pair(i, j)
                moves = [] if standbys is None else standbys.moves(costs)
                pair = (clients[client_ids[i]], clients[client_ids[j]])
                for row, source, _ in moves:
                    pair[source].unassign_standby(screen.task(row))
                for row, _, destination in moves:
                    pair[destination].assign_standby(screen.task(row))
                if moves:
                    screen.moved_rows([(row, (i, j)[destination]) for row, _, destination in moves])
                return bool(moves)

            swap_rounds(len(client_ids), screen, swap_screened)
            return self.standby_cost(clients, traffic_cost)
        bounds = SwapBounds(
            [clients[c].rack_id for c in client_ids],
            lambda i: clients[client_ids[i]].standby_set(),
            self._changelog,
            traffic_cost,
            non_overlap_cost,
        )

        def swap(i: int, j: int) -> bool:
            if not self._optimize_pair(clients, client_ids[i], client_ids[j], costs, move_predicate):
                return False
            bounds.refresh(i)
            bounds.refresh(j)
            return True

        swap_rounds(len(client_ids), bounds, swap)
        return self.standby_cost(clients, traffic_cost)

    def _swap_screen(
        self,
        clients: Mapping[ProcessId, ClientState],
        client_ids: list[ProcessId],
        move_predicate: LegacyMovePredicate,
        costs: RackCosts,
    ) -> SwapScreen | None:
        """The exact pair screen for the client-tag rule (asked for all clients at once), else None: any
        other predicate is asked pair by pair behind `SwapBounds`. That includes `AnyStandbyMove`: then
        every standby is movable but to a holder of the task, the bounds leave almost only pairs that move
        (at 300 x 3,000 with 2 standbys: 574 solved pairs), and building the screen costs more than it
        saves."""
        if not isinstance(move_predicate, TagSpreadStandbyMove):
            return None
        destinations = TagSpreadDestinations([move_predicate.tags_of(clients[c]).items() for c in client_ids])
        states = [clients[c] for c in client_ids]
        holders: dict[TaskId, set[int]] = {}
        for rank, state in enumerate(states):
            for task in state.active_set() | state.standby_set():
                holders.setdefault(task, set()).add(rank)
        return SwapScreen(
            [state.rack_id for state in states],
            [state.standby_set() for state in states],
            holders,
            destinations,
            self._changelog,
            costs.traffic,
            costs.non_overlap,
            None,  # the legacy pairs are solved with min_traffic's graph, whatever the strategy
        )

    def _optimize_pair(
        self,
        clients,
        first: ProcessId,
        second: ProcessId,
        costs: RackCosts,
        move_predicate: LegacyMovePredicate,
    ) -> bool:
        a, b = clients[first], clients[second]
        if a.rack_id == b.rack_id:
            return False  # no cross-rack traffic to save between two clients on one rack
        movable_a = _movable_standbys(a, b, clients, move_predicate)
        movable_b = _movable_standbys(b, a, clients, move_predicate)
        return bool(self._swap_standbys(a, b, movable_a, movable_b, costs))

    def _swap_standbys(
        self, a: ClientState, b: ClientState, movable_a: set[TaskId], movable_b: set[TaskId], costs: RackCosts
    ) -> list[tuple[TaskId, int, int]]:
        """Solve one pair exactly over its movable standbys and apply it; the moves (task, from, to), 0 for
        ``a`` and 1 for ``b``."""
        if not movable_a or not movable_b:
            return []  # only swaps keep both clients' standby counts
        tasks = sorted_task_ids(movable_a | movable_b, TASK_ORDER)
        current = [0 if t in movable_a else 1 for t in tasks]
        placement = min_traffic_pair_placement(tasks, current, [a.rack_id, b.rack_id], self._changelog, costs)
        pair = (a, b)
        moves = [(t, s, d) for t, s, d in zip(tasks, current, placement, strict=True) if s != d]
        for task, source, _ in moves:
            pair[source].unassign_standby(task)
        for task, _, destination in moves:
            pair[destination].assign_standby(task)
        return moves


def _movable_standbys(
    source: ClientState,
    destination: ClientState,
    clients: Mapping[ProcessId, ClientState],
    move_predicate: LegacyMovePredicate,
) -> set[TaskId]:
    return {
        task
        for task in source.standby_set()
        if not destination.has_assigned_task(task) and move_predicate(source, destination, task, clients)
    }
