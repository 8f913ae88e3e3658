"""One application, planned: compact JSON in, the flat output rows of schemas.contract.PLANNED_ROWS out.

Runs inside the grouped map (no Spark here). It calls the same functions as the one-application planner
(`assignor.planner.plan_scenario` is `load_scenario` + `plan`), so an application's rows equal what
`fleet-assignor app plan` says about its scenario; the scenario is loaded once and reused for the task
transitions. The rows come from the typed result through the contract's conversions, the same the
exploration API uses; the numerous kinds (assignments, task transitions) come as columns (`RowBlock`), which
the grouped map hands to Arrow as they are, and as rows made from those columns everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.registry import HIGH_AVAILABILITY
from fleet_assignor.assignor.rollout import RolloutSettings, rollout_report
from fleet_assignor.assignor.scenario import Scenario, ScenarioError, load_scenario
from fleet_assignor.assignor.transitions import task_transition_columns
from fleet_assignor.jobs.scenario_shape import AppInput, invalid_input_detail, shape_application
from fleet_assignor.schemas.contract import (
    INVALID_INPUT,
    NO_ERROR,
    PLANNED_ROWS,
    ROLLED_OUT,
    ROW_ASSIGNMENT,
    ROW_CLIENT,
    ROW_RESULT,
    ROW_ROLLOUT,
    ROW_TRANSITION,
    assignment_columns,
    client_assignment_rows,
    describe_path,
    result_row,
    rollout_row,
    rows_of_columns,
    warnings_naming_rows,
)

COLUMNS: tuple[str, ...] = PLANNED_ROWS.column_names


DEFAULT_ROLLOUT = RolloutSettings()


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """What every application of one run shares."""

    now_ms: int  # the run's planning instant (POLICY.md §7)
    assignor: str | None = None  # overrides each application's configured assignor
    # The custom `module:Class` assignors the job's configuration allows; a table row naming any other is
    # INVALID_INPUT and nothing is imported (table data never chooses code to run).
    allowed_assignors: frozenset[str] = frozenset()
    # How the rollout report simulates and flags each rolled-out plan (conf `[rollout]`, docs/rollout.md).
    rollout: RolloutSettings = DEFAULT_ROLLOUT

    def importable_assignors(self) -> frozenset[str]:
        """The allowlist, plus a custom `assignor` override: the operator's own command line is the job's
        configuration too."""
        override = {self.assignor} if self.assignor is not None else set()
        return self.allowed_assignors | override


@dataclass(frozen=True, slots=True)
class RowBlock:
    """Rows of one kind of one application, column by column (the kind's columns after `kind` and
    `app_id`): the numerous kinds, which the grouped map converts to Arrow without making a dict per row."""

    kind: str
    app_id: str
    columns: dict[str, list[Any]]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), ()))

    def rows(self) -> list[dict[str, Any]]:
        return rows_of_columns(self.columns, kind=self.kind, app_id=self.app_id)


# An application's rows in their order: lists of rows as dicts, and blocks.
Pieces: TypeAlias = "list[list[dict[str, Any]] | RowBlock]"


def flat_rows(pieces: Pieces) -> list[dict[str, Any]]:
    """The pieces' rows as dicts, in order."""
    rows: list[dict[str, Any]] = []
    for piece in pieces:
        rows += piece.rows() if isinstance(piece, RowBlock) else piece
    return rows


def plan_application(app_id: str, compact_json: str, settings: PlanSettings) -> list[dict[str, Any]]:
    """All output rows of one application. Never raises: unusable input is one INVALID_INPUT row, and so is
    a failure of any other kind in this application's work (the assignor's own are ASSIGNOR_FAILED)."""
    return flat_rows(plan_application_pieces(app_id, compact_json, settings))


def plan_application_pieces(app_id: str, compact_json: str, settings: PlanSettings) -> Pieces:
    """`plan_application`'s rows in pieces: its assignments and transitions as blocks, the grouped map's
    input to Arrow."""
    try:
        app = shape_application(app_id, compact_json)
    except Exception as e:
        return [[failed_row(app_id, f"could not be shaped: {type(e).__name__}: {e}", settings)]]
    if app.problems:
        return [[invalid_input_row(app, invalid_input_detail(app.problems), settings)]]
    try:
        scenario = load_scenario(app.scenario, source=f"application {app_id}", now_ms=settings.now_ms)
        scenario = warnings_naming_rows(scenario, app.scenario)
        planned = plan(
            scenario, assignor=settings.assignor, allowed_assignors=settings.importable_assignors()
        )
        pieces: Pieces = [[result_row(planned, kind=ROW_RESULT, app_id=app_id)]]
        if planned.status.value in ROLLED_OUT:
            pieces.append(RowBlock(ROW_ASSIGNMENT, app_id, assignment_columns(planned)))
            pieces.append(client_assignment_rows(planned, kind=ROW_CLIENT, app_id=app_id))
            transitions = task_transition_columns(scenario, planned)
            pieces.append(RowBlock(ROW_TRANSITION, app_id, transitions))
            report = rollout_report(
                scenario,
                planned,
                settings.rollout,
                assignor=settings.assignor,
                allowed_assignors=settings.importable_assignors(),
            )
            rack_aware = is_rack_aware(scenario)
            pieces.append([rollout_row(report, planned, rack_aware, kind=ROW_ROLLOUT, app_id=app_id)])
    except ScenarioError as e:
        where = describe_path(app.scenario, e.path)
        return [[invalid_input_row(app, f"{where}: {e.reason} (scenario path {e.path})", settings)]]
    except Exception as e:
        return [[invalid_input_row(app, f"could not be planned: {type(e).__name__}: {e}", settings)]]
    return pieces


def is_rack_aware(scenario: Scenario) -> bool:
    """Whether the application's configs ask for rack awareness: a rack-aware strategy for its tasks, or
    client tags to spread its standbys over."""
    configs = scenario.application_state.configs
    return configs.rack_aware_assignment_strategy is not RackAwareStrategy.NONE or bool(
        configs.rack_aware_assignment_tags
    )


def failed_row(app_id: str, detail: str, settings: PlanSettings) -> dict[str, Any]:
    """The one INVALID_INPUT row of an application whose input could not even be shaped."""
    return invalid_input_row(AppInput(app_id, {}, ()), detail, settings)


def invalid_input_row(app: AppInput, detail: str, settings: PlanSettings) -> dict[str, Any]:
    """The one row of an unusable application: status INVALID_INPUT, metric columns null."""
    configured = (app.scenario.get("configs") or {}).get("assignor")
    return dict(
        kind=ROW_RESULT,
        app_id=app.app_id,
        assignor=settings.assignor or configured or HIGH_AVAILABILITY,
        status=INVALID_INPUT,
        error=NO_ERROR,
        error_detail=detail,
        probing_rebalance=False,
    )
