"""Plan scenario dicts (scenario.md) with the pure planner and see them as a run: the same frames the fleet
job writes, so every analysis, comparison and plot works on a what-if plan exactly as on a job run.

Nothing here touches the real inputs: scenarios are dicts the caller owns, and they are never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
from fleet_assignor.explore.ordering import sort_frame, sorted_tasks

METRIC_COLUMNS = (
    "num_clients",
    "num_threads",
    "num_tasks",
    "num_stateful_tasks",
    "active_moves",
    "standby_moves",
    "warmups",
    "max_tasks_per_thread",
    "min_tasks_per_thread",
    "cross_rack_cost",
    "restore_lag",
)
# Statuses whose plan the job writes out (tables.md: INVALID_* get no assignment rows).
WRITTEN_STATUSES = ("OK", "ASSIGNOR_FAILED")


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
    """Plan each scenario with `assignor.planner.plan_scenario` (the job's own per-application call).

    An unusable scenario (ScenarioError) becomes an `INVALID_INPUT` results row naming the JSON path, as
    the job does, and never stops the others.
    """
    from fleet_assignor.assignor.planner import plan_scenario
    from fleet_assignor.assignor.scenario import ScenarioError

    by_app: dict[str, dict] = {}
    results: dict[str, dict | None] = {}
    errors: dict[str, str] = {}
    for scenario in scenarios:
        app_id = str(scenario.get("app_id"))
        if app_id in by_app:
            raise ValueError(f"two scenarios for application {app_id!r}")
        by_app[app_id] = dict(scenario)
        try:
            results[app_id] = plan_scenario(dict(scenario), assignor=assignor, now_ms=now_ms)
        except ScenarioError as error:
            results[app_id] = None
            errors[app_id] = str(error)
    frames = frames_from_plans(by_app, results, errors, run_id=run_id, now_ms=now_ms)
    return FleetPlan(frames=frames, scenarios=by_app, results=results, errors=errors)


def plan_one(
    scenario: Mapping, *, now_ms: int, assignor: str | None = None, run_id: str = "plan"
) -> FleetPlan:
    """`plan_fleet` of a single application."""
    return plan_fleet([scenario], now_ms=now_ms, assignor=assignor, run_id=run_id)


# ------------------------------------------------------------------------------------- result -> rows


def frames_from_plans(
    scenarios: Mapping[str, Mapping],
    results: Mapping[str, dict | None],
    errors: Mapping[str, str],
    *,
    run_id: str,
    now_ms: int,
) -> RunFrames:
    """The job's output rows for these plans (tables.md), plus the inputs frames from the scenarios."""
    planned_at = _timestamp(now_ms)
    result_rows, assignment_rows, client_rows, transition_rows = [], [], [], []
    for app_id, scenario in scenarios.items():
        result = results.get(app_id)
        if result is None:
            result_rows.append(_invalid_input_row(run_id, app_id, errors.get(app_id), planned_at))
            continue
        result_rows.append(_result_row(run_id, app_id, result, planned_at))
        if result["status"] not in WRITTEN_STATUSES:
            continue
        assignment_rows += _assignment_rows(run_id, app_id, result)
        client_rows += _client_rows(run_id, app_id, result)
        transition_rows += _transition_rows(run_id, app_id, scenario, result, now_ms)
    return RunFrames.of(
        run_id,
        results=pd.DataFrame(result_rows, columns=RESULTS_COLUMNS),
        assignments=sort_frame(
            pd.DataFrame(assignment_rows, columns=ASSIGNMENTS_COLUMNS),
            ["app_id", "process_id", "task_type", "task_id"],
        ),
        client_assignments=sort_frame(
            pd.DataFrame(client_rows, columns=CLIENT_ASSIGNMENTS_COLUMNS), ["app_id", "process_id"]
        ),
        transitions=sort_frame(
            pd.DataFrame(transition_rows, columns=TRANSITIONS_COLUMNS), ["app_id", "process_id", "task_id"]
        ),
        clients=clients_frame(scenarios.values()),
        task_partitions=task_partitions_frame(scenarios.values()),
        run={"run_id": run_id, "planned_at": planned_at, "status": "COMPLETE"},
    )


def _timestamp(ms: int | None) -> pd.Timestamp | None:
    return None if ms is None else pd.Timestamp(int(ms), unit="ms", tz="UTC")


def _invalid_input_row(run_id: str, app_id: str, detail: str | None, planned_at) -> dict:
    row = {c: None for c in RESULTS_COLUMNS}
    row.update(
        run_id=run_id,
        app_id=app_id,
        status="INVALID_INPUT",
        error="NONE",
        error_detail=detail,
        planned_at=planned_at,
    )
    return row


def _result_row(run_id: str, app_id: str, result: Mapping, planned_at) -> dict:
    metrics = result.get("metrics") or {}
    row = {
        "run_id": run_id,
        "app_id": app_id,
        "assignor": result.get("assignor"),
        "status": result["status"],
        "error": result.get("error"),
        "error_detail": result.get("error_detail"),
        "probing_rebalance": bool(result.get("probing_rebalance")),
        "unassigned_tasks": list(result.get("unassigned") or []),
        "planned_at": planned_at,
        "duration_ms": result.get("elapsed_ms"),
    }
    row.update({m: metrics.get(m) for m in METRIC_COLUMNS})
    return row


def _assignment_rows(run_id: str, app_id: str, result: Mapping) -> list[dict]:
    rows = []
    for client in result.get("assignment") or []:
        warmups = set(client.get("warmup") or [])
        for consumer, owned in sorted((client.get("consumers") or {}).items()):
            for task in owned.get("active") or []:
                rows.append(
                    _assignment(run_id, app_id, client["process_id"], consumer, task, "ACTIVE", False)
                )
            for task in owned.get("standby") or []:
                rows.append(
                    _assignment(
                        run_id, app_id, client["process_id"], consumer, task, "STANDBY", task in warmups
                    )
                )
    return rows


def _assignment(run_id, app_id, process_id, consumer, task, task_type, warmup) -> dict:
    return {
        "run_id": run_id,
        "app_id": app_id,
        "process_id": process_id,
        "consumer_client_id": consumer,
        "task_id": task,
        "task_type": task_type,
        "is_warmup": warmup,
    }


def _client_rows(run_id: str, app_id: str, result: Mapping) -> list[dict]:
    return [
        {
            "run_id": run_id,
            "app_id": app_id,
            "process_id": client["process_id"],
            "active_tasks": sorted_tasks(client.get("active") or []),
            "standby_tasks": sorted_tasks(client.get("standby") or []),
            "followup_rebalance_deadline": _timestamp(client.get("followup_rebalance_deadline_ms")),
        }
        for client in result.get("assignment") or []
    ]


def _transition_rows(run_id: str, app_id: str, scenario: Mapping, result: Mapping, now_ms: int) -> list[dict]:
    """tables.md `task_transitions`, computed by the planner's own `assignor.transitions`."""
    from fleet_assignor.assignor.scenario import load_scenario
    from fleet_assignor.assignor.transitions import task_transitions

    loaded = load_scenario(dict(scenario), now_ms=now_ms)
    return [{"run_id": run_id, "app_id": app_id, **t.as_row()} for t in task_transitions(loaded, result)]


# ------------------------------------------------------------------------------------ inputs frames


def scenario_consumers(client: Mapping) -> tuple[list[str], list[str], list[str]]:
    """(consumer ids, prev_active, prev_standby) of a scenario client, following scenario.md: consumers may
    be strings or objects with their own history, or absent (then `<process_id>-<i>` for each thread)."""
    consumers = client.get("consumers") or []
    ids, prev_active, prev_standby = (
        [],
        list(client.get("prev_active") or []),
        list(client.get("prev_standby") or []),
    )
    for consumer in consumers:
        if isinstance(consumer, Mapping):
            ids.append(consumer["id"])
            prev_active += [t for t in consumer.get("prev_active") or [] if t not in prev_active]
            prev_standby += [t for t in consumer.get("prev_standby") or [] if t not in prev_standby]
        else:
            ids.append(consumer)
    if not ids:
        ids = [f"{client['process_id']}-{i}" for i in range(1, int(client.get("threads") or 0) + 1)]
    return ids, prev_active, prev_standby


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
