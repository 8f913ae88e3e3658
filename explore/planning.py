"""Plan scenario dicts (scenario.md) with the pure planner and see them as a run: the same frames the fleet
job writes, so every analysis, comparison and plot works on a what-if plan exactly as on a job run.

Nothing here touches the real inputs: scenarios are dicts the caller owns, and they are never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from fleet_assignor.explore.frames import (
    ASSIGNMENTS_COLUMNS,
    CLIENT_ASSIGNMENTS_COLUMNS,
    CLIENTS_COLUMNS,
    RESULTS_COLUMNS,
    TASK_PARTITIONS_COLUMNS,
    TRANSITIONS_COLUMNS,
    RunFrames,
)
from fleet_assignor.explore.ordering import sort_frame
from fleet_assignor.schemas.contract import (
    COMPLETE,
    INVALID_INPUT,
    METRIC_COLUMNS,
    NO_ERROR,
    ROLLED_OUT,
    assignment_rows,
    client_assignment_rows,
    result_row,
    scenario_consumers,
    transition_rows,
    warnings_naming_rows,
)

if TYPE_CHECKING:
    from fleet_assignor.assignor.planner import PlanResult
    from fleet_assignor.assignor.scenario import Scenario

__all__ = [
    "METRIC_COLUMNS",
    "FleetPlan",
    "clients_frame",
    "frames_from_plans",
    "plan_fleet",
    "plan_one",
    "scenario_consumers",
    "task_partitions_frame",
]


@dataclass(frozen=True, eq=False)
class FleetPlan:
    """Scenarios planned together: the raw result objects (None for unusable input) and their frames."""

    frames: RunFrames
    scenarios: dict[str, dict]
    results: dict[str, dict | None]
    errors: dict[str, str] = field(default_factory=dict)


def plan_fleet(
    scenarios: Iterable[Mapping],
    *,
    now_ms: int,
    assignor: str | None = None,
    run_id: str = "plan",
) -> FleetPlan:
    """Plan each scenario as the job plans each application (`load_scenario` + `plan`, the calls of
    `assignor.planner.plan_scenario`); `results` holds the result objects.

    Warnings name the input rows they are about, as the job's do (`schemas.contract.describe_path`: the
    rows `scenario_rows` writes for the scenario). An unusable scenario (ScenarioError) becomes an
    `INVALID_INPUT` results row naming the JSON path and never stops the others.
    """
    from fleet_assignor.assignor.planner import plan
    from fleet_assignor.assignor.scenario import ScenarioError, load_scenario

    by_app: dict[str, dict] = {}
    plans: dict[str, tuple[Scenario, PlanResult] | None] = {}
    errors: dict[str, str] = {}
    for scenario in scenarios:
        app_id = str(scenario.get("app_id"))
        if app_id in by_app:
            raise ValueError(f"two scenarios for application {app_id!r}")
        by_app[app_id] = dict(scenario)
        try:
            loaded = load_scenario(dict(scenario), now_ms=now_ms)
            loaded = warnings_naming_rows(loaded, scenario)
            plans[app_id] = (loaded, plan(loaded, assignor=assignor))
        except ScenarioError as error:
            plans[app_id] = None
            errors[app_id] = str(error)
    frames = frames_from_plans(by_app, plans, errors, run_id=run_id, now_ms=now_ms)
    results = {app_id: None if p is None else p[1].as_dict() for app_id, p in plans.items()}
    return FleetPlan(frames=frames, scenarios=by_app, results=results, errors=errors)


def plan_one(
    scenario: Mapping, *, now_ms: int, assignor: str | None = None, run_id: str = "plan"
) -> FleetPlan:
    """`plan_fleet` of a single application."""
    return plan_fleet([scenario], now_ms=now_ms, assignor=assignor, run_id=run_id)


# ------------------------------------------------------------------------------------- result -> rows


def frames_from_plans(
    scenarios: Mapping[str, Mapping],
    plans: Mapping[str, tuple[Scenario, PlanResult] | None],
    errors: Mapping[str, str],
    *,
    run_id: str,
    now_ms: int,
) -> RunFrames:
    """The job's output rows for these plans (the contract's conversions, the job's own), with the run's
    `run_id` and `planned_at` the job adds, plus the inputs frames from the scenarios."""
    from fleet_assignor.assignor.transitions import task_transitions

    planned_at = _timestamp(now_ms)
    results, assignments, clients, transitions = [], [], [], []
    for app_id in scenarios:
        planned = plans.get(app_id)
        if planned is None:
            results.append(_invalid_input_row(run_id, app_id, errors.get(app_id), planned_at))
            continue
        loaded, result = planned
        results.append(result_row(result, run_id=run_id, app_id=app_id, planned_at=planned_at))
        if result.status.value not in ROLLED_OUT:
            continue
        assignments += assignment_rows(result, run_id=run_id, app_id=app_id)
        clients += map(_with_deadline, client_assignment_rows(result, run_id=run_id, app_id=app_id))
        transitions += transition_rows(task_transitions(loaded, result), run_id=run_id, app_id=app_id)
    return RunFrames.of(
        run_id,
        results=pd.DataFrame(results, columns=RESULTS_COLUMNS),
        assignments=sort_frame(
            pd.DataFrame(assignments, columns=ASSIGNMENTS_COLUMNS),
            ["app_id", "process_id", "task_type", "task_id"],
        ),
        client_assignments=sort_frame(
            pd.DataFrame(clients, columns=CLIENT_ASSIGNMENTS_COLUMNS), ["app_id", "process_id"]
        ),
        transitions=sort_frame(
            pd.DataFrame(transitions, columns=TRANSITIONS_COLUMNS), ["app_id", "process_id", "task_id"]
        ),
        clients=clients_frame(scenarios.values()),
        task_partitions=task_partitions_frame(scenarios.values()),
        run={"run_id": run_id, "planned_at": planned_at, "status": COMPLETE},
    )


def _timestamp(ms: int | None) -> pd.Timestamp | None:
    return None if ms is None else pd.Timestamp(int(ms), unit="ms", tz="UTC")


def _with_deadline(row: dict) -> dict:
    """A client row with its follow-up deadline as the timestamp the job writes."""
    row["followup_rebalance_deadline"] = _timestamp(row.pop("followup_rebalance_deadline_ms"))
    return row


def _invalid_input_row(run_id: str, app_id: str, detail: str | None, planned_at) -> dict:
    row = {c: None for c in RESULTS_COLUMNS}
    row.update(
        run_id=run_id,
        app_id=app_id,
        status=INVALID_INPUT,
        error=NO_ERROR,
        error_detail=detail,
        planned_at=planned_at,
    )
    return row


# ------------------------------------------------------------------------------------ inputs frames


def clients_frame(scenarios: Iterable[Mapping]) -> pd.DataFrame:
    rows = []
    for scenario in scenarios:
        for client in scenario.get("clients") or []:
            consumers, prev_active, prev_standby = scenario_consumers(client)
            rows.append(
                {
                    "app_id": scenario.get("app_id"),
                    "process_id": client["process_id"],
                    "rack_id": client.get("rack") or None,
                    "client_tags": dict(client.get("tags") or {}),
                    "consumers": consumers,
                    "num_threads": len(consumers),
                    "prev_active": prev_active,
                    "prev_standby": prev_standby,
                }
            )
    return pd.DataFrame(rows, columns=CLIENTS_COLUMNS)


def task_partitions_frame(scenarios: Iterable[Mapping]) -> pd.DataFrame:
    rows = []
    for scenario in scenarios:
        for task in scenario.get("tasks") or []:
            for p in task.get("partitions") or []:
                rows.append(
                    {
                        "app_id": scenario.get("app_id"),
                        "task_id": task["id"],
                        "topic": p["topic"],
                        "partition": p["partition"],
                        "is_source": bool(p.get("source")),
                        "is_changelog": bool(p.get("changelog")),
                        "racks": list(p.get("racks") or []),
                    }
                )
    return pd.DataFrame(rows, columns=TASK_PARTITIONS_COLUMNS)
