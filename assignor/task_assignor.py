"""The KIP-924 assignor interface every assignor, built-in or custom, is used through."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from fleet_assignor.assignor.assignment import TaskAssignment
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.state import ApplicationState


@runtime_checkable
class TaskAssignor(Protocol):
    """``assign`` is required; ``configure`` and ``on_assignment_computed`` are optional hooks.

    The planner calls ``configure(assignor_configs)`` once before ``assign``, and
    ``on_assignment_computed(assignment, application_state, error)`` after validating the result.
    """

    def assign(self, application_state: ApplicationState) -> TaskAssignment: ...


class BaseTaskAssignor:
    """Convenience base with no-op hooks; subclasses implement ``assign``."""

    def configure(self, configs: Mapping[str, str]) -> None:
        self.configs = dict(configs)

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        raise NotImplementedError

    def on_assignment_computed(
        self, assignment: TaskAssignment, application_state: ApplicationState, error: AssignmentError
    ) -> None:
        return None
