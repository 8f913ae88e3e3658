"""The table contract of docs/tables.md, written once and without Spark: every input and output table
(columns, types, nullability, partition column), the statuses and run states, the lag sentinels and
end-offset rules, and the conversions between the planner's objects and table rows (a typed result ->
output rows; a scenario -> input rows and back).

The job (its driver and its Python workers), the exploration API, the synthetic fleet and the tests all use
this module; the Spark schemas (`schemas.spark_schemas`) and the grouped map's Arrow schema are derived from
it. Plain Python on purpose: `explore` reads the tables with deltalake and must not need pyspark to know
them; pyarrow is imported only by `arrow_schema`.

Nullability is what our own writer produces; the job's schema check ignores it (other writers, delta-rs
among them, mark every column nullable).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from fleet_assignor.assignor.limits import MAX_LONG
from fleet_assignor.assignor.planner import PlanResult, PlanStatus
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.rollout import RolloutReport
from fleet_assignor.assignor.scenario import LATEST_OFFSET, UNKNOWN_OFFSET, Scenario
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.transitions import TaskTransition

if TYPE_CHECKING:
    import pyarrow as pa

# ------------------------------------------------------------------------------------------------ types


@dataclass(frozen=True, slots=True)
class Atom:
    """A scalar column type, named as Spark's `simpleString` names it."""

    name: str

    @property
    def simple_string(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """An array; its elements may be null (as Spark's and Arrow's defaults)."""

    element: ColumnType

    @property
    def simple_string(self) -> str:
        return f"array<{self.element.simple_string}>"


@dataclass(frozen=True, slots=True)
class MapOf:
    """A map; its values may be null."""

    key: ColumnType
    value: ColumnType

    @property
    def simple_string(self) -> str:
        return f"map<{self.key.simple_string},{self.value.simple_string}>"


@dataclass(frozen=True, slots=True)
class StructOf:
    """A struct of nullable fields."""

    fields: tuple[tuple[str, ColumnType], ...]

    @property
    def simple_string(self) -> str:
        return "struct<" + ",".join(f"{n}:{t.simple_string}" for n, t in self.fields) + ">"


ColumnType = Atom | ArrayOf | MapOf | StructOf

STRING = Atom("string")
LONG = Atom("bigint")
INT = Atom("int")
BOOL = Atom("boolean")
DOUBLE = Atom("double")
TIMESTAMP = Atom("timestamp")  # UTC, millisecond precision
STRINGS = ArrayOf(STRING)
STRING_MAP = MapOf(STRING, STRING)
TOPIC_PARTITIONS = ArrayOf(StructOf((("topic", STRING), ("partition", INT))))


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: ColumnType
    nullable: bool = True


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    partition_column: str | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"table {self.name} has no column {name!r}")


def _table(name: str, *columns: tuple, partition_column: str | None = None) -> Table:
    return Table(name, tuple(Column(*c) for c in columns), partition_column)


# ----------------------------------------------------------------------------------------------- inputs

APPLICATIONS = _table(
    "applications",
    ("app_id", STRING, False),
    ("cluster_id", STRING),
    ("assignor", STRING),
    ("acceptable_recovery_lag", LONG),
    ("max_warmup_replicas", INT),
    ("num_standby_replicas", INT),
    ("probing_rebalance_interval_ms", LONG),
    ("rack_aware_assignment_strategy", STRING),
    ("rack_aware_traffic_cost", INT),
    ("rack_aware_non_overlap_cost", INT),
    ("rack_aware_assignment_tags", STRINGS),
    ("assignor_configs", STRING_MAP),
)
TASKS = _table(
    "tasks",
    ("app_id", STRING),
    ("task_id", STRING),
    ("state_stores", STRINGS),
    ("source_partitions", TOPIC_PARTITIONS),
    ("changelog_partitions", TOPIC_PARTITIONS),
)
CLIENT_SUBSCRIPTIONS = _table(
    "client_subscriptions",
    ("app_id", STRING),
    ("process_id", STRING),
    ("consumer_client_id", STRING),
    ("rack_id", STRING),
    ("client_tags", STRING_MAP),
    ("host_info", STRING),
    ("prev_active_tasks", STRINGS),
    ("prev_standby_tasks", STRINGS),
)
TASK_OFFSETS = _table(
    "task_offsets",
    ("app_id", STRING),
    ("process_id", STRING),
    ("consumer_client_id", STRING),
    ("task_id", STRING),
    ("offset_sum", LONG),
)
CHANGELOG_END_OFFSETS = _table(
    "changelog_end_offsets",
    ("app_id", STRING),
    ("topic", STRING),
    ("partition", INT),
    ("end_offset", LONG),
)
PARTITION_RACKS = _table(
    "partition_racks",
    ("cluster_id", STRING),
    ("topic", STRING),
    ("partition", INT),
    ("replica_racks", STRINGS),
)

# The order of tables.md.
INPUT_TABLES: dict[str, Table] = {
    t.name: t
    for t in (APPLICATIONS, TASKS, CLIENT_SUBSCRIPTIONS, TASK_OFFSETS, CHANGELOG_END_OFFSETS, PARTITION_RACKS)
}
INPUT_TABLE_NAMES: tuple[str, ...] = tuple(INPUT_TABLES)

# The `applications` columns that are the scenario's `configs` keys (tables.md, scenario.md): all after the
# two keys.
APPLICATION_CONFIG_COLUMNS: tuple[str, ...] = APPLICATIONS.column_names[2:]
INTEGER_CONFIG_COLUMNS = frozenset(
    c.name for c in APPLICATIONS.columns if c.name in APPLICATION_CONFIG_COLUMNS and c.type in (INT, LONG)
)

# ---------------------------------------------------------------------------------------------- outputs

# Every output table is partitioned by the run: a run replaces exactly its own rows.
PARTITION_COLUMN = "run_id"

RUNS = _table(
    "runs",
    ("run_id", STRING, False),
    ("planned_at", TIMESTAMP),
    ("status", STRING),
    ("input_versions", MapOf(STRING, LONG)),
    ("num_applications", INT),
    ("num_ok", INT),
    ("num_invalid_input", INT),
    ("num_invalid_assignment", INT),
    ("num_assignor_failed", INT),
    ("completed_at", TIMESTAMP),
    # The rollout report's fleet view (docs/rollout.md): totals over the rolled-out applications, how many
    # applications each risk flagged, and the worst application by each flagged risk.
    ("rollout_totals", MapOf(STRING, LONG)),
    ("risk_counts", MapOf(STRING, INT)),
    ("worst_applications", MapOf(STRING, STRING)),
    partition_column=PARTITION_COLUMN,
)
ASSIGNMENTS = _table(
    "assignments",
    ("run_id", STRING),
    ("app_id", STRING),
    ("process_id", STRING),
    ("consumer_client_id", STRING),
    ("task_id", STRING),
    ("task_type", STRING),
    ("is_warmup", BOOL),
    partition_column=PARTITION_COLUMN,
)
CLIENT_ASSIGNMENTS = _table(
    "client_assignments",
    ("run_id", STRING),
    ("app_id", STRING),
    ("process_id", STRING),
    ("active_tasks", STRINGS),
    ("standby_tasks", STRINGS),
    ("followup_rebalance_deadline", TIMESTAMP),
    partition_column=PARTITION_COLUMN,
)
# The metric columns of a result: null in an INVALID_INPUT row.
METRIC_COLUMNS: tuple[str, ...] = (
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
ASSIGNMENT_RESULTS = _table(
    "assignment_results",
    ("run_id", STRING),
    ("app_id", STRING),
    ("assignor", STRING),
    ("status", STRING),
    ("error", STRING),
    ("error_detail", STRING),
    ("probing_rebalance", BOOL),
    ("num_clients", INT),
    ("num_threads", INT),
    ("num_tasks", INT),
    ("num_stateful_tasks", INT),
    ("active_moves", INT),
    ("standby_moves", INT),
    ("warmups", INT),
    ("unassigned_tasks", STRINGS),
    ("max_tasks_per_thread", DOUBLE),
    ("min_tasks_per_thread", DOUBLE),
    ("cross_rack_cost", LONG),
    ("restore_lag", LONG),
    ("planned_at", TIMESTAMP),
    ("duration_ms", DOUBLE),
    partition_column=PARTITION_COLUMN,
)
TASK_TRANSITIONS = _table(
    "task_transitions",
    ("run_id", STRING),
    ("app_id", STRING),
    ("process_id", STRING),
    ("task_id", STRING),
    ("transition", STRING),
    ("restore_lag", LONG),
    partition_column=PARTITION_COLUMN,
)

RISK = StructOf((("name", STRING), ("value", DOUBLE), ("threshold", DOUBLE)))
# What putting one application's plan into effect costs (assignor.rollout.RolloutReport, docs/rollout.md):
# one row per rolled-out application (status OK or ASSIGNOR_FAILED) and run.
ROLLOUT_REPORT_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("tasks", INT),
    ("stateful_tasks", INT),
    ("active_moves", INT),
    ("standby_moves", INT),
    ("warmup_moves", INT),
    ("active_moves_fraction", DOUBLE),
    ("standby_moves_fraction", DOUBLE),
    ("warmup_moves_fraction", DOUBLE),
    ("restore_records", LONG),
    ("active_balance_per_thread_before", DOUBLE),
    ("active_balance_per_thread_after", DOUBLE),
    ("active_balance_per_client_before", INT),
    ("active_balance_per_client_after", INT),
    ("standby_balance_per_thread_before", DOUBLE),
    ("standby_balance_per_thread_after", DOUBLE),
    ("standby_balance_per_client_before", INT),
    ("standby_balance_per_client_after", INT),
    ("cross_rack_before", LONG),
    ("cross_rack_after", LONG),
    ("probing_rebalances", INT),
    ("total_active_moves", INT),
    ("total_standby_moves", INT),
    ("total_warmup_moves", INT),
    ("catch_up_per_round", LONG),
    ("estimated_duration_ms", LONG),
    ("converged", BOOL),
    ("rounds_simulated", INT),
    ("truncated", BOOL),
    ("stop_reason", STRING),
    ("simulation_ms", DOUBLE),
    ("risks", ArrayOf(RISK)),
)
ROLLOUT = _table(
    "rollout",
    ("run_id", STRING),
    ("app_id", STRING),
    ("assignor", STRING),
    ("rack_aware", BOOL),
    *ROLLOUT_REPORT_COLUMNS,
    partition_column=PARTITION_COLUMN,
)

# The order the job writes them in: `runs` last, as it marks the run complete.
OUTPUT_TABLES: dict[str, Table] = {
    t.name: t for t in (ASSIGNMENT_RESULTS, ASSIGNMENTS, CLIENT_ASSIGNMENTS, TASK_TRANSITIONS, ROLLOUT, RUNS)
}
# The tables holding a run's plan (every output table but `runs`).
PLAN_TABLE_NAMES: tuple[str, ...] = tuple(name for name in OUTPUT_TABLES if name != "runs")

# ----------------------------------------------------------------------------- the grouped map's rows

# The grouped map returns one flat frame per application whose rows are of four kinds; the job splits it
# into the output tables. Columns a kind does not use are null. Deadlines travel as epoch milliseconds.
ROW_RESULT = "RESULT"
ROW_ASSIGNMENT = "ASSIGNMENT"
ROW_CLIENT = "CLIENT"
ROW_TRANSITION = "TRANSITION"
ROW_ROLLOUT = "ROLLOUT"

# The RESULT rows carry assignment_results' columns but these: the job adds run_id and planned_at, and
# app_id and restore_lag are shared with other kinds (listed once, above them).
_RESULT_COLUMNS_NOT_REPEATED = ("run_id", "app_id", "restore_lag", "planned_at")

PLANNED_ROWS = Table(
    "planned_rows",
    (
        Column("kind", STRING, False),
        Column("app_id", STRING, False),
        # ASSIGNMENT, CLIENT, TRANSITION
        Column("process_id", STRING),
        # ASSIGNMENT
        Column("consumer_client_id", STRING),
        Column("task_id", STRING),
        Column("task_type", STRING),
        Column("is_warmup", BOOL),
        # CLIENT
        Column("active_tasks", STRINGS),
        Column("standby_tasks", STRINGS),
        Column("followup_rebalance_deadline_ms", LONG),
        # TRANSITION (task_id too)
        Column("transition", STRING),
        # TRANSITION and RESULT
        Column("restore_lag", LONG),
        # RESULT
        *(c for c in ASSIGNMENT_RESULTS.columns if c.name not in _RESULT_COLUMNS_NOT_REPEATED),
        # ROLLOUT (also `assignor`, `active_moves` and `standby_moves`, the same columns as a RESULT's)
        *(c for c in ROLLOUT.columns if c.name not in ("run_id", *ASSIGNMENT_RESULTS.column_names)),
    ),
)
_PLANNED = PLANNED_ROWS.column_names
_RESULT_ROW_COLUMNS = tuple(
    c for c in ASSIGNMENT_RESULTS.column_names if c not in _RESULT_COLUMNS_NOT_REPEATED
)
# The columns each kind of row fills; every other column of PLANNED_ROWS is null in rows of that kind, and
# rows are sparse dicts of these columns only (a missing one is read as null).
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    ROW_RESULT: ("kind", "app_id", "restore_lag", *_RESULT_ROW_COLUMNS),
    ROW_ASSIGNMENT: (
        "kind", "app_id", "process_id", "consumer_client_id", "task_id", "task_type", "is_warmup",
    ),
    ROW_CLIENT: (
        "kind", "app_id", "process_id", "active_tasks", "standby_tasks", "followup_rebalance_deadline_ms",
    ),
    ROW_TRANSITION: ("kind", "app_id", "process_id", "task_id", "transition", "restore_lag"),
    ROW_ROLLOUT: ("kind", *(c for c in ROLLOUT.column_names if c != "run_id")),
}  # fmt: skip

# ------------------------------------------------------------------------------- statuses and run states

OK = PlanStatus.OK.value
INVALID_ASSIGNMENT = PlanStatus.INVALID_ASSIGNMENT.value
ASSIGNOR_FAILED = PlanStatus.ASSIGNOR_FAILED.value
INVALID_INPUT = "INVALID_INPUT"  # found before planning: no result object has it
# The order of the `runs` counts (num_ok, num_invalid_input, ...).
STATUSES: tuple[str, ...] = (OK, INVALID_INPUT, INVALID_ASSIGNMENT, ASSIGNOR_FAILED)
# Statuses whose plan is rolled out (POLICY.md §4, §5): an invalid assignment never is.
ROLLED_OUT = frozenset({OK, ASSIGNOR_FAILED})
NO_ERROR = "NONE"  # `error` of every status but INVALID_ASSIGNMENT

COMPLETE = "COMPLETE"  # the one status of a `runs` row: readers see only runs marked so

ACTIVE = "ACTIVE"  # assignments.task_type
STANDBY = "STANDBY"

# ------------------------------------------------------------------------- lag sentinels, end-offset rules

RUNNING_ACTIVE = LATEST_OFFSET  # -2: the client runs the task as active, caught up by definition
UNKNOWN = UNKNOWN_OFFSET  # -3: the offset (or the end offsets) are unknown
SENTINELS = (RUNNING_ACTIVE, UNKNOWN)


def end_offset_sum(end_offsets: Iterable[int]) -> int:
    """A task's end sum: its changelog partitions' end offsets added, saturating at 2^63-1."""
    return min(sum(end_offsets), MAX_LONG)


def inferred_end_sum(lags: Iterable[int | None]) -> int:
    """A scenario's end sum of a task (scenario.md): the largest non-negative lag reported, 0 if none."""
    return max((int(lag) for lag in lags if lag is not None and lag >= 0), default=0)


def inferred_end_sums(lags_by_client: Iterable[Mapping[str, int | None]]) -> dict[str, int]:
    """`inferred_end_sum` of every task some client reports a lag >= 0 for (any other task's is 0), in one
    pass over the clients' lags instead of one per task."""
    largest: dict[str, int] = {}
    for lags in lags_by_client:
        for task_id, lag in lags.items():
            if lag is not None and lag > largest.get(task_id, -1):  # never a sentinel (-2, -3)
                largest[task_id] = lag
    return largest


def client_lag(offsets: Sequence[int] | None, previous_active: bool, end_sum: int, computed: bool) -> int:
    """A client's lag for a task from its reported offset sums (tables.md "Lags"): -2 if any consumer says
    -2 (or a previous active reports nothing); -3 when the end offsets are missing or the offset is
    unknown; an offset above the end sum is corrupted state, so the whole changelog."""
    if offsets is None:
        if previous_active:
            return RUNNING_ACTIVE
        return end_sum if computed else UNKNOWN
    if RUNNING_ACTIVE in offsets:
        return RUNNING_ACTIVE
    if not computed:
        return UNKNOWN
    offset = max(offsets)
    if offset == UNKNOWN:
        return UNKNOWN
    return end_sum if offset > end_sum else end_sum - offset


def reported_offset(lag: int, end_sum: int, previous_active: bool = False) -> int | None:
    """The offset sum a client reports for a lag (the inverse of `client_lag`); None when the lag says the
    client has no state (the whole changelog or more), which is what a missing row means. A previous
    active's missing row means it runs the task (-2) instead, so it reports offset 0, the changelog's start
    (lag `end_sum`, the most a row can say)."""
    if lag in SENTINELS:
        return lag
    if 0 <= lag < end_sum:
        return end_sum - lag
    if previous_active and lag >= 0:
        return 0
    return None


# ----------------------------------------------------------------------------------- result -> output rows


def _texts(tasks: Iterable[TaskId]) -> list[str]:
    return [str(t) for t in sorted_task_ids(tasks)]


def result_row(planned: PlanResult, **fixed: Any) -> dict[str, Any]:
    """The `assignment_results` row of a plan, without `run_id` and `planned_at` (the run's); `fixed`
    columns (the application, and whatever the caller adds) come first."""
    metrics = planned.metrics
    return {
        **fixed,
        "assignor": planned.assignor,
        "status": planned.status.value,
        "error": planned.error.name,
        "error_detail": planned.error_detail,
        "probing_rebalance": planned.probing_rebalance,
        "num_clients": metrics.num_clients,
        "num_threads": metrics.num_threads,
        "num_tasks": metrics.num_tasks,
        "num_stateful_tasks": metrics.num_stateful_tasks,
        "active_moves": metrics.active_moves,
        "standby_moves": metrics.standby_moves,
        "warmups": metrics.warmups,
        "unassigned_tasks": _texts(planned.unassigned),
        "max_tasks_per_thread": float(metrics.max_tasks_per_thread),
        "min_tasks_per_thread": float(metrics.min_tasks_per_thread),
        "cross_rack_cost": metrics.cross_rack_cost,
        "restore_lag": metrics.restore_lag,
        "duration_ms": float(planned.elapsed_ms),
    }


def rollout_row(report: RolloutReport, planned: PlanResult, rack_aware: bool, **fixed: Any) -> dict[str, Any]:
    """The `rollout` row of a rolled-out plan, without `run_id`; `rack_aware`: whether the application's
    configs asked for rack-aware assignment (a rack-aware strategy, or client tags for its standbys)."""
    return {**fixed, "assignor": planned.assignor, "rack_aware": rack_aware, **report.as_row()}


def assignment_columns(planned: PlanResult) -> dict[str, list[Any]]:
    """`assignments` columns of a plan (no fixed ones): one value per (client, consumer, task), the thread
    inside the client that runs it; per consumer its actives then its standbys, each in task order."""
    process_ids: list[str] = []
    consumer_ids: list[str] = []
    task_ids: list[str] = []
    task_types: list[str] = []
    warmup_flags: list[bool] = []
    for client in planned.clients:
        process_id, warmups = str(client.process_id), client.tasks.warmup
        for consumer, tasks in client.consumers.items():
            active, standby = _in_task_order(tasks.active), _in_task_order(tasks.standby)
            count = len(active) + len(standby)
            process_ids += [process_id] * count
            consumer_ids += [consumer] * count
            task_ids += map(str, active)
            task_ids += map(str, standby)
            task_types += [ACTIVE] * len(active)
            task_types += [STANDBY] * len(standby)
            warmup_flags += [False] * len(active)
            warmup_flags += [task in warmups for task in standby]
    return {
        "process_id": process_ids,
        "consumer_client_id": consumer_ids,
        "task_id": task_ids,
        "task_type": task_types,
        "is_warmup": warmup_flags,
    }


def _in_task_order(tasks: Sequence[TaskId]) -> Sequence[TaskId]:
    # Most consumers hold one task or none per role; the planner's shares are in order already, but a
    # custom assignor's own split need not be.
    return tasks if len(tasks) < 2 else sorted_task_ids(tasks)


def assignment_rows(planned: PlanResult, **fixed: Any) -> list[dict[str, Any]]:
    """`assignments` rows: `assignment_columns` row by row, after the ``fixed`` columns."""
    return rows_of_columns(assignment_columns(planned), **fixed)


def rows_of_columns(columns: Mapping[str, list[Any]], **fixed: Any) -> list[dict[str, Any]]:
    """Columns of equal length (`assignment_columns`, `transitions.task_transition_columns`) as rows, each the
    ``fixed`` columns then these in their order."""
    rows = [dict(fixed) for _ in next(iter(columns.values()), ())]
    for name, values in columns.items():  # column by column: fewer steps than a dict display per row
        for row, value in zip(rows, values, strict=True):
            row[name] = value
    return rows


def client_assignment_rows(planned: PlanResult, **fixed: Any) -> list[dict[str, Any]]:
    """`client_assignments` rows, one per client of the result (clients that got no task included), with
    the follow-up deadline in epoch ms as `followup_rebalance_deadline_ms` (the writer makes it a
    timestamp)."""
    return [
        {
            **fixed,
            "process_id": str(client.process_id),
            "active_tasks": _texts(client.tasks.active),
            "standby_tasks": _texts(client.tasks.standby),
            "followup_rebalance_deadline_ms": client.followup_rebalance_deadline_ms,
        }
        for client in planned.clients
    ]


def transition_rows(transitions: Iterable[TaskTransition], **fixed: Any) -> list[dict[str, Any]]:
    """`task_transitions` rows of `assignor.transitions.task_transitions`."""
    return [{**fixed, **t.as_row()} for t in transitions]


# -------------------------------------------------------------------------------- scenario -> input rows


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


def changelog_tasks(scenario: Mapping) -> list[str]:
    """The scenario's tasks with a changelog partition."""
    return [
        t["id"]
        for t in scenario.get("tasks") or []
        if any(p.get("changelog") for p in t.get("partitions") or [])
    ]


def scenario_end_sums(scenario: Mapping) -> dict[str, int]:
    """Per changelog task: its end-offset sum as scenario.md infers it (`inferred_end_sum` of the lags the
    clients report)."""
    clients = scenario.get("clients") or []
    return {
        task: inferred_end_sum((c.get("lags") or {}).get(task) for c in clients)
        for task in changelog_tasks(scenario)
    }


def scenario_to_input_rows(scenarios: Mapping | Iterable[Mapping]) -> dict[str, list[dict[str, Any]]]:
    """Input table name -> rows (dicts with tables.md's columns) for one scenario or a fleet of them.

    The rows say what the scenario says: per-consumer history when the scenario has it (else the client's
    previous tasks on its first consumer), offset sums from the lags against the inferred end sums (each
    task's on its first changelog partition, 0 on the others; a previous active reports even a lag of the
    whole changelog, which its missing row would turn into -2), broker racks under `cluster_id` = the app
    id (so two applications' topics never share rack rows), and no end-offset rows at all when the
    scenario says `lags_computed: false`. Rows cannot say `lags_computed: false` of an application
    without changelogs, nor keep the end sums the lags of such a scenario imply."""
    fleet = [scenarios] if isinstance(scenarios, Mapping) else list(scenarios)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in INPUT_TABLE_NAMES}
    for scenario in fleet:
        app_id = scenario["app_id"]
        tables["applications"].append(_application_row(scenario))
        tables["tasks"] += [_task_row(app_id, t) for t in scenario.get("tasks") or []]
        ends = scenario_end_sums(scenario)
        for client in scenario.get("clients") or []:
            tables["client_subscriptions"] += _subscription_rows(app_id, client)
            tables["task_offsets"] += _offset_rows(app_id, client, ends)
        if scenario.get("lags_computed", True):
            tables["changelog_end_offsets"] += _end_offset_rows(app_id, scenario, ends)
        tables["partition_racks"] += _rack_rows(app_id, scenario)
    return tables


def merge_input_rows(*fleets: Mapping[str, list[dict]]) -> dict[str, list[dict]]:
    """Concatenate the input rows of several applications, table by table."""
    merged: dict[str, list[dict]] = {t: [] for t in INPUT_TABLE_NAMES}
    for fleet in fleets:
        for table, rows in fleet.items():
            merged[table].extend(rows)
    return merged


def _application_row(scenario: Mapping) -> dict[str, Any]:
    configs = scenario.get("configs") or {}
    row = {"app_id": scenario["app_id"], "cluster_id": scenario["app_id"]}
    row.update({c: configs.get(c) for c in APPLICATION_CONFIG_COLUMNS})
    if row["assignor_configs"] is not None:
        row["assignor_configs"] = dict(row["assignor_configs"])
    return row


def _topic_partitions(task: Mapping, flag: str) -> list[dict[str, Any]]:
    return [
        {"topic": p["topic"], "partition": p["partition"]}
        for p in task.get("partitions") or []
        if p.get(flag)
    ]


def _task_row(app_id: str, task: Mapping) -> dict[str, Any]:
    return {
        "app_id": app_id,
        "task_id": task["id"],
        "state_stores": list(task.get("stores") or []),
        "source_partitions": _topic_partitions(task, "source"),
        "changelog_partitions": _topic_partitions(task, "changelog"),
    }


def _subscription_rows(app_id: str, client: Mapping) -> list[dict[str, Any]]:
    consumer_ids, prev_active, prev_standby = scenario_consumers(client)
    history = {c["id"]: c for c in client.get("consumers") or [] if isinstance(c, Mapping)}
    rows = []
    for i, consumer in enumerate(consumer_ids):
        if history:
            own = history.get(consumer, {})
            active, standby = own.get("prev_active") or [], own.get("prev_standby") or []
        else:
            active, standby = (prev_active, prev_standby) if i == 0 else ([], [])
        rows.append(
            {
                "app_id": app_id,
                "process_id": client["process_id"],
                "consumer_client_id": consumer,
                "rack_id": client.get("rack"),
                "client_tags": dict(client.get("tags") or {}),
                "host_info": None,
                "prev_active_tasks": list(active),
                "prev_standby_tasks": list(standby),
            }
        )
    return rows


def _offset_rows(app_id: str, client: Mapping, ends: Mapping[str, int]) -> list[dict[str, Any]]:
    """One offset row per task the client has state for, or ran with a lag, reported by the client's first
    consumer."""
    consumer_ids, prev_active, _ = scenario_consumers(client)
    ran = set(prev_active)
    rows = []
    for task, lag in sorted((client.get("lags") or {}).items()):
        if task not in ends or lag is None:
            continue
        offset = reported_offset(lag, ends[task], task in ran)
        if offset is None:
            continue
        rows.append(
            {
                "app_id": app_id,
                "process_id": client["process_id"],
                "consumer_client_id": consumer_ids[0],
                "task_id": task,
                "offset_sum": offset,
            }
        )
    return rows


def _end_offset_rows(app_id: str, scenario: Mapping, ends: Mapping[str, int]) -> list[dict[str, Any]]:
    """The task's end-offset sum on its first changelog partition, 0 on the others."""
    rows = []
    for task in scenario.get("tasks") or []:
        for i, p in enumerate(_topic_partitions(task, "changelog")):
            end = ends.get(task["id"], 0) if i == 0 else 0
            rows.append(
                {"app_id": app_id, "topic": p["topic"], "partition": p["partition"], "end_offset": end}
            )
    return rows


def _rack_rows(app_id: str, scenario: Mapping) -> list[dict[str, Any]]:
    seen: dict[tuple[str, int], list[str]] = {}
    for task in scenario.get("tasks") or []:
        for p in task.get("partitions") or []:
            if p.get("racks"):
                seen[(p["topic"], p["partition"])] = list(p["racks"])
    return [
        {"cluster_id": app_id, "topic": topic, "partition": partition, "replica_racks": racks}
        for (topic, partition), racks in sorted(seen.items())
    ]


# -------------------------------------------------------------------- scenario path -> table and row key

_CLIENT_PATH = re.compile(r"^clients\[(\d+)\](?:\.consumers\[(\d+)\])?(?:\.(\w+))?")
_TASK_PATH = re.compile(r"^tasks\[(\d+)\]")
_CONFIG_PATH = re.compile(r"^configs\.(\w+)")
# A consumer's previous tasks in a scenario, and the client_subscriptions column they come from.
_HISTORY_COLUMNS = {"prev_active": "prev_active_tasks", "prev_standby": "prev_standby_tasks"}


def _entry(container: Any, index: int) -> dict[str, Any]:
    """The object at `index` of a list, or an empty one: the path comes from a check that just rejected
    this very input, so any level may be missing or of another type."""
    if isinstance(container, list) and index < len(container) and isinstance(container[index], dict):
        return container[index]
    return {}


def describe_path(scenario: Mapping[str, Any], path: str) -> str:
    """The table, row key and column a scenario JSON path (`clients[2].threads`) stands for (the rows
    `scenario_to_input_rows` writes, and the job reads). Never raises: a key the input lacks reads `None`."""
    app_id = scenario.get("app_id")
    match = _CONFIG_PATH.match(path)
    if match:
        return f"applications row (app_id={app_id}), column {match.group(1)}"
    match = _TASK_PATH.match(path)
    if match:
        task_id = _entry(scenario.get("tasks"), int(match.group(1))).get("id")
        return f"tasks row (task_id={task_id})"
    match = _CLIENT_PATH.match(path)
    if match:
        client = _entry(scenario.get("clients"), int(match.group(1)))
        pid = client.get("process_id")
        field = match.group(3)
        if match.group(2) is not None:
            cid = _entry(client.get("consumers"), int(match.group(2))).get("id")
            column = _HISTORY_COLUMNS.get(field or "")
            suffix = f", column {column}" if column else ""
            return f"client_subscriptions row (process_id={pid}, consumer_client_id={cid}){suffix}"
        if field == "lags":
            return f"task_offsets rows of (process_id={pid})"
        column = {"rack": "rack_id", "tags": "client_tags", "host_info": "host_info"}.get(field or "")
        suffix = f", column {column}" if column else ""
        return f"client_subscriptions rows of (process_id={pid}){suffix}"
    return f"application (app_id={app_id})"


def warnings_naming_rows(loaded: Scenario, scenario: Mapping[str, Any]) -> Scenario:
    """``loaded`` (of ``scenario``) with each warning naming the input rows it is about (`describe_path`)
    instead of its JSON path: what the job and the explorer's `plan_fleet` write."""
    if not loaded.warning_sites:
        return loaded
    return loaded.with_warnings_named(partial(describe_path, scenario))


# -------------------------------------------------------------------------------- input rows -> scenarios

Rows = Iterable[Mapping[str, Any]]


def input_rows_to_scenarios(tables: Mapping[str, Rows], *, apps: Iterable[str] | None = None) -> list[dict]:
    """Scenario dicts (scenario.md) of the applications in the input rows (table name -> rows; `tasks` and
    `client_subscriptions` are required), read with tables.md's rules. Rows the job would reject are not
    checked here: plan those applications with the job.

    Values may come from any reader: a null may be NaN, a list any sequence, a map a dict or (key, value)
    pairs. Tasks come in TaskId order, clients in signed ProcessId order (POLICY.md §2-3)."""
    subscriptions, tasks_of = _by_app(tables["client_subscriptions"]), _by_app(tables["tasks"])
    wanted = set(subscriptions)
    configs = _configs_by_app(tables.get("applications"))
    if "applications" in tables:
        wanted |= set(configs)
    if apps is not None:
        wanted &= set(apps)
    racks = _racks_by_partition(tables.get("partition_racks"))
    ends = _end_offsets_by_partition(tables.get("changelog_end_offsets"))
    offsets = _by_app(tables["task_offsets"]) if "task_offsets" in tables else None
    scenarios = []
    for app_id in sorted(wanted):
        cluster, app_configs = configs.get(app_id, (None, {}))
        tasks = _scenario_tasks(tasks_of.get(app_id, []), cluster, racks)
        end_sums, computed = _end_sums(tasks, ends.get(app_id, {}))
        app_offsets = None if offsets is None else offsets.get(app_id, [])
        clients = _scenario_clients(subscriptions.get(app_id, []), app_offsets, end_sums, computed)
        scenario = {"app_id": app_id, "configs": app_configs, "tasks": tasks, "clients": clients}
        if not computed:
            scenario["lags_computed"] = False
        scenarios.append(scenario)
    return scenarios


def _by_app(rows: Rows) -> dict[Any, list[Mapping[str, Any]]]:
    grouped: dict[Any, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["app_id"], []).append(row)
    return grouped


def _missing(value: Any) -> bool:
    try:
        return value is None or bool(value != value)  # NaN
    except (TypeError, ValueError):
        return False


def _missing_list(values: Any) -> bool:
    return values is None or (not isinstance(values, (list, tuple)) and not hasattr(values, "__len__"))


_NULL = object()


def _config_value(column: str, value: Any) -> Any:
    """A config column's value as the scenario holds it; _NULL when it is null."""
    if column == "rack_aware_assignment_tags" and value is not None and not _missing(value):
        return list(value)
    if column == "assignor_configs" and value is not None and not _missing(value):
        return dict(sorted(dict(value).items()))
    if _missing(value):
        return _NULL
    if column in INTEGER_CONFIG_COLUMNS:
        return int(value)  # pandas reads an integer column with nulls as float
    return value


def _configs_by_app(applications: Rows | None) -> dict[str, tuple[str | None, dict[str, Any]]]:
    result: dict[str, tuple[str | None, dict[str, Any]]] = {}
    for row in applications or ():
        configs = {}
        for column in APPLICATION_CONFIG_COLUMNS:
            value = _config_value(column, row.get(column))
            if value is not _NULL:
                configs[column] = value
        result[row["app_id"]] = (None if _missing(row.get("cluster_id")) else row["cluster_id"], configs)
    return result


def _racks_by_partition(partition_racks: Rows | None) -> dict[tuple[str | None, str, int], list[str]]:
    racks = {}
    for row in partition_racks or ():
        cluster = None if _missing(row["cluster_id"]) else row["cluster_id"]
        values = row["replica_racks"]
        racks[(cluster, row["topic"], int(row["partition"]))] = [] if _missing_list(values) else list(values)
    return racks


def _end_offsets_by_partition(end_offsets: Rows | None) -> dict[str, dict[tuple[str, int], int]]:
    ends: dict[str, dict[tuple[str, int], int]] = {}
    for row in end_offsets or ():
        ends.setdefault(row["app_id"], {})[(row["topic"], int(row["partition"]))] = int(row["end_offset"])
    return ends


def _pairs(values: Any) -> list[tuple[str, int]]:
    if _missing_list(values):
        return []
    return [
        (p["topic"], int(p["partition"])) if isinstance(p, Mapping) else (p[0], int(p[1])) for p in values
    ]


def _scenario_partitions(row: Mapping, cluster: str | None, racks) -> list[dict[str, Any]]:
    flags: dict[tuple[str, int], dict[str, bool]] = {}
    for pair in _pairs(row["source_partitions"]):
        flags.setdefault(pair, {"source": False, "changelog": False})["source"] = True
    for pair in _pairs(row["changelog_partitions"]):
        flags.setdefault(pair, {"source": False, "changelog": False})["changelog"] = True
    return [
        {"topic": t, "partition": p, **f, "racks": racks.get((cluster, t, p), [])}
        for (t, p), f in sorted(flags.items())
    ]


def _task_key(task: str) -> tuple[bool, str, int, int]:
    return TaskId.parse(task).sort_key


def _process_key(process: Any) -> tuple:
    """Signed ProcessId order; a missing id sorts last."""
    if _missing(process):
        return (1,)
    return (0, *ProcessId.parse(process).sort_key)


def _scenario_tasks(rows: list[Mapping], cluster: str | None, racks) -> list[dict[str, Any]]:
    result = []
    for row in sorted(rows, key=lambda r: _task_key(r["task_id"])):
        stores = [] if _missing_list(row["state_stores"]) else list(row["state_stores"])
        partitions = _scenario_partitions(row, cluster, racks)
        result.append(
            {"id": row["task_id"], "stateful": bool(stores), "stores": stores, "partitions": partitions}
        )
    return result


def _end_sums(tasks: list[dict], ends: Mapping[tuple[str, int], int]) -> tuple[dict[str, int], bool]:
    """Per task with a changelog: its end sum; False when one of the application's changelog partitions
    has no end offset (lags cannot be computed)."""
    sums, computed = {}, True
    for task in tasks:
        changelog = [(p["topic"], p["partition"]) for p in task["partitions"] if p["changelog"]]
        if not changelog:
            continue
        if any(pair not in ends for pair in changelog):
            computed = False
        sums[task["id"]] = end_offset_sum(ends.get(pair, 0) for pair in changelog)
    return sums, computed


def _reported_offsets(offsets: Rows | None) -> dict[tuple[str, str], list[int]]:
    reported: dict[tuple[str, str], list[int]] = {}
    for row in offsets or ():
        if not _missing(row["offset_sum"]):
            reported.setdefault((row["process_id"], row["task_id"]), []).append(int(row["offset_sum"]))
    return reported


def _consumer(row: Mapping) -> dict[str, Any]:
    def tasks(column: str) -> list[str]:
        return [] if _missing_list(row[column]) else list(row[column])

    return {
        "id": row["consumer_client_id"],
        "prev_active": tasks("prev_active_tasks"),
        "prev_standby": tasks("prev_standby_tasks"),
    }


def _scenario_clients(
    subscriptions: list[Mapping], offsets: Rows | None, end_sums: Mapping[str, int], computed: bool
) -> list[dict]:
    """The clients of one application (tables.md "Clients"), in signed ProcessId order."""
    reported = _reported_offsets(offsets)
    clients: dict[str, dict[str, Any]] = {}
    for row in sorted(subscriptions, key=lambda r: r["consumer_client_id"]):
        client = clients.setdefault(
            row["process_id"],
            {"process_id": row["process_id"], "consumers": [], "rack": row["rack_id"] or None,
             "tags": dict(sorted(dict(row["client_tags"] or {}).items()))},
        )  # fmt: skip
        client["consumers"].append(_consumer(row))
    for client in clients.values():
        prev_active = {t for c in client["consumers"] for t in c["prev_active"]}
        pid = client["process_id"]
        client["lags"] = {
            task: client_lag(reported.get((pid, task)), task in prev_active, end_sum, computed)
            for task, end_sum in end_sums.items()
        }
    return sorted(clients.values(), key=lambda c: _process_key(c["process_id"]))


# ------------------------------------------------------------------------------------------ Arrow schema


def arrow_type(column_type: ColumnType) -> pa.DataType:
    """The Arrow type of a column type: what Spark's own conversion gives its Spark type."""
    import pyarrow as pa

    if isinstance(column_type, ArrayOf):
        return pa.list_(pa.field("element", arrow_type(column_type.element), True))
    if isinstance(column_type, MapOf):
        return pa.map_(arrow_type(column_type.key), pa.field("value", arrow_type(column_type.value), True))
    if isinstance(column_type, StructOf):
        return pa.struct([pa.field(n, arrow_type(t), True) for n, t in column_type.fields])
    atoms = {
        "string": pa.string(),
        "bigint": pa.int64(),
        "int": pa.int32(),
        "boolean": pa.bool_(),
        "double": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return atoms[column_type.name]


def arrow_schema(table: Table) -> pa.Schema:
    """A table's columns as an Arrow schema (nullability kept)."""
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type), c.nullable) for c in table.columns])
