"""A `TaskAssignor` that returns an assignment written by hand, read from the application's
`assignor_configs` (key `plan`, a JSON object). Use it to see what a manual assignment would do (its
transitions, moves, rack traffic, validation) through exactly the planner and job a real assignor runs in:

    configs["assignor"] = "fleet_assignor.explore.scripted:ScriptedAssignor"
    configs["assignor_configs"] = {"plan": json.dumps({"<process id>": {"active": ["0_1"], "standby": [],
                                                                       "warmup": []}})}

Clients not named in the plan get nothing. The plan is taken as given, so invalid ones reach validation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from fleet_assignor.assignor import (
    ApplicationState,
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    TaskId,
)

PLAN_KEY = "plan"


def plan_config(plan: Mapping[str, Mapping[str, list[str]]]) -> dict[str, str]:
    """The `assignor_configs` value that makes ScriptedAssignor return `plan`."""
    return {PLAN_KEY: json.dumps(plan, sort_keys=True)}


class ScriptedAssignor:
    """Returns the configured plan; every client of the application appears in the result."""

    def __init__(self) -> None:
        self._plan: dict[str, dict[str, list[str]]] = {}

    def configure(self, configs: Mapping[str, str]) -> None:
        raw = configs.get(PLAN_KEY)
        if raw is None:
            raise ValueError(f"ScriptedAssignor needs assignor_configs[{PLAN_KEY!r}] (a JSON object)")
        self._plan = json.loads(raw)

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        assignments = []
        for process_id in sorted(application_state.clients):
            entry = self._plan.get(str(process_id), {})
            tasks = [AssignedTask.active(TaskId.parse(t)) for t in entry.get("active", [])]
            tasks += [AssignedTask.standby(TaskId.parse(t)) for t in entry.get("standby", [])]
            tasks += [AssignedTask.warmup(TaskId.parse(t)) for t in entry.get("warmup", [])]
            assignments.append(KafkaStreamsAssignment.of(process_id, tasks))
        unknown = set(self._plan) - {str(p) for p in application_state.clients}
        if unknown:
            raise ValueError(f"ScriptedAssignor: plan names unknown clients {sorted(unknown)}")
        return TaskAssignment.of(assignments)


__all__ = ["PLAN_KEY", "ScriptedAssignor", "plan_config"]
