"""An assignor that keeps the previous assignment: the I/O baseline of `make bench` (the same pipeline,
with next to no planning work). Usable as `--assignor jobs.baseline:IdentityAssignor`."""

from __future__ import annotations

from fleet_assignor.assignor import ApplicationState, BaseTaskAssignor, TaskAssignment
from fleet_assignor.assignor.task_assignment_utils import identity_assignment


class IdentityAssignor(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment.of(identity_assignment(application_state))
