"""A custom assignor for the plan-follower live test: our sticky assignment with each client's tasks handed
to the next client in ProcessId order, an assignment none of Kafka's assignors would make from the same
state, so a live assignment equal to it can only come from following the plan."""

from __future__ import annotations

from fleet_assignor.assignor.assignment import KafkaStreamsAssignment, TaskAssignment
from fleet_assignor.assignor.state import ApplicationState
from fleet_assignor.assignor.sticky import StickyTaskAssignor
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor


class RotatingAssignor(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        by_pid = StickyTaskAssignor().assign(application_state).by_process_id()
        pids = sorted(by_pid)
        rotated = [
            KafkaStreamsAssignment.of(pid, by_pid[pids[(i + 1) % len(pids)]].tasks().values())
            for i, pid in enumerate(pids)
        ]
        return TaskAssignment.of(rotated)
