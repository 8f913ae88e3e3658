"""One application, planned: compact JSON in, the flat output rows of schemas.tables.PLANNED_ROWS out.

Runs inside the grouped map (no Spark here). It calls the same functions as the one-application planner
(`assignor.planner.plan_scenario` is `load_scenario` + `plan`), so an application's rows equal what
`fleet-assignor app plan` says about its scenario; the scenario is loaded once and reused for the task
transitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fleet_assignor.assignor.planner import PlanStatus, plan
from fleet_assignor.assignor.registry import HIGH_AVAILABILITY
from fleet_assignor.assignor.scenario import ScenarioError, load_scenario
from fleet_assignor.assignor.transitions import task_transitions
from fleet_assignor.jobs.scenario_shape import (
    AppInput,
    describe_path,
    invalid_input_detail,
    shape_application,
)
from fleet_assignor.schemas.tables import PLANNED_ROWS, ROW_ASSIGNMENT, ROW_CLIENT, ROW_RESULT, ROW_TRANSITION

COLUMNS: tuple[str, ...] = tuple(PLANNED_ROWS.fieldNames())
# The columns each kind of row fills; every other column of PLANNED_ROWS is null in rows of that kind, and
# rows are sparse dicts of these columns only (jobs.grouped reads a missing one as null).
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    ROW_RESULT: ("kind", "app_id", "restore_lag", *COLUMNS[COLUMNS.index("restore_lag") + 1 :]),
    ROW_ASSIGNMENT: (
        "kind", "app_id", "process_id", "consumer_client_id", "task_id", "task_type", "is_warmup",
    ),
    ROW_CLIENT: (
        "kind", "app_id", "process_id", "active_tasks", "standby_tasks", "followup_rebalance_deadline_ms",
    ),
    ROW_TRANSITION: ("kind", "app_id", "process_id", "task_id", "transition", "restore_lag"),
}  # fmt: skip
INVALID_INPUT = "INVALID_INPUT"
# Statuses whose plan is rolled out (POLICY.md §4, §5): an invalid assignment never is.
ROLLED_OUT = frozenset({PlanStatus.OK.value, PlanStatus.ASSIGNOR_FAILED.value})


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """What every application of one run shares."""

    now_ms: int  # the run's planning instant (POLICY.md §7)
    assignor: str | None = None  # overrides each application's configured assignor
    # The custom `module:Class` assignors the job's configuration allows; a table row naming any other is
    # INVALID_INPUT and nothing is imported (table data never chooses code to run).
    allowed_assignors: frozenset[str] = frozenset()

    def importable_assignors(self) -> frozenset[str]:
        """The allowlist, plus a custom `assignor` override: the operator's own command line is the job's
        configuration too."""
        override = {self.assignor} if self.assignor is not None else set()
        return self.allowed_assignors | override


def _row(kind: str, app_id: str, **values: Any) -> dict[str, Any]:
    """A row of one kind: the columns of KIND_COLUMNS[kind] only (every other column is null)."""
    return {"kind": kind, "app_id": app_id, **values}


def plan_application(app_id: str, compact_json: str, settings: PlanSettings) -> list[dict[str, Any]]:
    """All output rows of one application. Never raises: unusable input is one INVALID_INPUT row, and so is
    a failure of any other kind in this application's work (the assignor's own are ASSIGNOR_FAILED)."""
    try:
        app = shape_application(app_id, compact_json)
    except Exception as e:
        return [failed_row(app_id, f"could not be shaped: {type(e).__name__}: {e}", settings)]
    if app.problems:
        return [invalid_input_row(app, invalid_input_detail(app.problems), settings)]
    try:
        scenario = load_scenario(app.scenario, source=f"application {app_id}", now_ms=settings.now_ms)
        planned = plan(
            scenario, assignor=settings.assignor, allowed_assignors=settings.importable_assignors()
        )
        result = planned.as_dict()
        rows = [result_row(app_id, result)]
        if result["status"] in ROLLED_OUT:
            rows += assignment_rows(app_id, result)
            rows += client_rows(app_id, result)
            rows += [_row(ROW_TRANSITION, app_id, **t.as_row()) for t in task_transitions(scenario, planned)]
    except ScenarioError as e:
        where = describe_path(app.scenario, e.path)
        return [invalid_input_row(app, f"{where}: {e.reason} (scenario path {e.path})", settings)]
    except Exception as e:
        return [invalid_input_row(app, f"could not be planned: {type(e).__name__}: {e}", settings)]
    return rows


def failed_row(app_id: str, detail: str, settings: PlanSettings) -> dict[str, Any]:
    """The one INVALID_INPUT row of an application whose input could not even be shaped."""
    return invalid_input_row(AppInput(app_id, {}, ()), detail, settings)


def invalid_input_row(app: AppInput, detail: str, settings: PlanSettings) -> dict[str, Any]:
    """The one row of an unusable application: status INVALID_INPUT, metric columns null."""
    configured = (app.scenario.get("configs") or {}).get("assignor")
    return _row(
        ROW_RESULT,
        app.app_id,
        assignor=settings.assignor or configured or HIGH_AVAILABILITY,
        status=INVALID_INPUT,
        error="NONE",
        error_detail=detail,
        probing_rebalance=False,
    )


def result_row(app_id: str, result: dict[str, Any]) -> dict[str, Any]:
    metrics = result["metrics"]
    return _row(
        ROW_RESULT,
        app_id,
        assignor=result["assignor"],
        status=result["status"],
        error=result["error"],
        error_detail=result["error_detail"],
        probing_rebalance=bool(result["probing_rebalance"]),
        num_clients=metrics["num_clients"],
        num_threads=metrics["num_threads"],
        num_tasks=metrics["num_tasks"],
        num_stateful_tasks=metrics["num_stateful_tasks"],
        active_moves=metrics["active_moves"],
        standby_moves=metrics["standby_moves"],
        warmups=metrics["warmups"],
        unassigned_tasks=list(result["unassigned"]),
        max_tasks_per_thread=float(metrics["max_tasks_per_thread"]),
        min_tasks_per_thread=float(metrics["min_tasks_per_thread"]),
        cross_rack_cost=metrics["cross_rack_cost"],
        restore_lag=metrics["restore_lag"],
        duration_ms=float(result["elapsed_ms"]),
    )


def assignment_rows(app_id: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (client, consumer, task): the thread inside the client that runs the task."""
    rows = []
    for entry in result["assignment"]:
        warmups = set(entry.get("warmup") or ())
        for consumer, tasks in entry["consumers"].items():
            for task in tasks.get("active") or ():
                rows.append(
                    _row(ROW_ASSIGNMENT, app_id, process_id=entry["process_id"], consumer_client_id=consumer,
                         task_id=task, task_type="ACTIVE", is_warmup=False)
                )  # fmt: skip
            for task in tasks.get("standby") or ():
                rows.append(
                    _row(ROW_ASSIGNMENT, app_id, process_id=entry["process_id"], consumer_client_id=consumer,
                         task_id=task, task_type="STANDBY", is_warmup=task in warmups)
                )  # fmt: skip
    return rows


def client_rows(app_id: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per client of the result, clients that got no task included."""
    return [
        _row(
            ROW_CLIENT,
            app_id,
            process_id=entry["process_id"],
            active_tasks=list(entry["active"]),
            standby_tasks=list(entry["standby"]),
            followup_rebalance_deadline_ms=entry["followup_rebalance_deadline_ms"],
        )
        for entry in result["assignment"]
    ]
