"""`fallback_prior`: keep the previous actives, place the rest, and ask for a follow-up rebalance
(assignors.md §6.2, POLICY.md §3).

Kafka runs it when lags could not be fetched: the legacy sticky assignor in preserving mode, no rack
optimization, lags ignored. Here it is a KIP-924 `TaskAssignor` like every other assignor (POLICY.md §4).
"""

from __future__ import annotations

from collections.abc import Mapping

from fleet_assignor.assignor.assignment import AssignedTask, KafkaStreamsAssignment, TaskAssignment
from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.gc_pause import collector_paused
from fleet_assignor.assignor.legacy_sticky import LegacyStickyTaskAssignor
from fleet_assignor.assignor.limits import deadline_after
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import ApplicationState


def legacy_client_states(application_state: ApplicationState) -> dict[ProcessId, ClientState]:
    """Fresh ClientStates (nothing assigned yet) in signed ProcessId order."""
    return {
        pid: ClientState.from_kafka_streams_state(state)
        for pid, state in application_state.kafka_streams_states(True).items()
    }


def to_kafka_streams_assignment(client: ClientState) -> KafkaStreamsAssignment:
    warmups = set(client.warmup_tasks)
    return KafkaStreamsAssignment.of(
        client.process_id,
        [AssignedTask.active(t) for t in client.active_tasks]
        + [AssignedTask.warmup(t) if t in warmups else AssignedTask.standby(t) for t in client.standby_tasks],
    )


class FallbackPriorTaskAssignor:
    """Every previous active stays with its previous owner (two claimants: the later in ProcessId order keeps
    it), the other tasks go to the least-loaded clients, every task with a changelog gets up to
    ``num_standby_replicas`` standbys, and the client with the smallest ProcessId is asked to rebalance again
    one probing interval from now (Kafka: the group leader; the planner has none)."""

    def __init__(self) -> None:
        self.configs: dict[str, str] = {}

    def configure(self, configs: Mapping[str, str]) -> None:
        self.configs = dict(configs)

    @collector_paused
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        configs = application_state.assignment_configs()
        clients = legacy_client_states(application_state)
        LegacyStickyTaskAssignor(must_preserve_active_task_assignment=True).assign(
            clients,
            list(application_state.all_tasks()),
            application_state.stateful_task_ids(),
            configs,
            rack_optimizer=None,
        )
        assignments = [to_kafka_streams_assignment(client) for client in clients.values()]
        if assignments:  # always asks for a probing rebalance, on the smallest ProcessId
            deadline = deadline_after(application_state.now_ms, configs.probing_rebalance_interval_ms)
            assignments[0] = assignments[0].with_followup_rebalance(deadline)
        return TaskAssignment.of(assignments)

    def on_assignment_computed(
        self, assignment: TaskAssignment, application_state: ApplicationState, error: AssignmentError
    ) -> None:
        return None
