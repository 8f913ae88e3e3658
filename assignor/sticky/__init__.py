"""Kafka's public KIP-924 ``StickyTaskAssignor`` (assignors.md §7) in deterministic form (POLICY.md §3).

Actives: previous owners keep their tasks while within quota, then previous standby holders take tasks,
then the rest go to the best client (`active_placement`). Standbys: the same choice among the clients that
do not hold the task (`standbys`). Rack-aware optimization runs through `assignor.rack` (`racks`; POLICY.md
§4: the assignor's own default costs apply when the configs leave them unset).

Where Kafka iterates hash maps we use signed ProcessId and TaskId order, plus deliberate improvements
(POLICY.md §3), all measured against Kafka's answers:
* among equally loaded clients, the least-loaded pick breaks ties by threads, previous actives still
  waiting and previous actives placed elsewhere (the key order of `state`);
* a pass keeps every client's active count but re-picks which tasks fill it so that the most previous
  actives stay (an exact maximum matching, `repick`);
* a pass narrows the spread by moving only tasks that cost no kept previous active (`spread`);
* then the counts themselves are re-chosen where other counts are no worse in both spread and moves
  (`active_counts`), and after the rack optimizers two actives swap clients where that gives a previous
  active back to its owner at no higher traffic cost (`racks.give_back_previous_actives`).
"""

from __future__ import annotations

from collections.abc import Mapping

from fleet_assignor.assignor.assignment import TaskAssignment
from fleet_assignor.assignor.errors import ConfigException
from fleet_assignor.assignor.gc_pause import collector_paused
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.sticky.active_counts import improve_active_counts
from fleet_assignor.assignor.sticky.active_placement import assign_actives
from fleet_assignor.assignor.sticky.racks import (
    STATEFUL_NON_OVERLAP_COST,
    STATEFUL_TRAFFIC_COST,
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    optimize_actives_for_racks,
    optimize_standbys_for_racks,
)
from fleet_assignor.assignor.sticky.repick import repick_to_keep_previous_actives
from fleet_assignor.assignor.sticky.spread import balance_active_spread
from fleet_assignor.assignor.sticky.standbys import assign_standbys
from fleet_assignor.assignor.sticky.state import StickyState
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor

__all__ = [
    "STATEFUL_NON_OVERLAP_COST",
    "STATEFUL_TRAFFIC_COST",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "StickyTaskAssignor",
]


class StickyTaskAssignor(BaseTaskAssignor):
    """``must_preserve_active_task_assignment``: every previous active stays with its previous owner
    whatever the balance, no rack optimization, and the first client asks for an immediate follow-up."""

    MUST_PRESERVE_CONFIG = "must_preserve_active_task_assignment"

    def __init__(self, must_preserve_active_task_assignment: bool = False) -> None:
        self.must_preserve_active_task_assignment = must_preserve_active_task_assignment

    def configure(self, configs: Mapping[str, str]) -> None:
        """``assignor_configs`` may set ``must_preserve_active_task_assignment`` to "true" or "false"."""
        super().configure(configs)
        value = configs.get(self.MUST_PRESERVE_CONFIG)
        if value is None:
            return
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise ConfigException(self.MUST_PRESERVE_CONFIG, value, 'must be "true" or "false"')
        self.must_preserve_active_task_assignment = text == "true"

    @collector_paused
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        state = StickyState(application_state)
        preserve = self.must_preserve_active_task_assignment
        assign_actives(state, preserve)
        if not preserve:
            repick_to_keep_previous_actives(state)
            if balance_active_spread(state):
                repick_to_keep_previous_actives(state)
            improve_active_counts(state)
            optimize_actives_for_racks(state)
        assign_standbys(state)
        if not preserve:
            optimize_standbys_for_racks(state)
        assignments = state.to_assignments()
        if preserve and assignments:
            # Kafka gives the immediate follow-up to the first client of its map: ours is the smallest id.
            assignments[0] = assignments[0].with_followup_rebalance(0)
        return TaskAssignment.of(assignments)
