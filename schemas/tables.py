"""Spark schemas of every table of docs/tables.md: the one source of truth for reading, checking,
writing and the grouped-map return schemas.

Nullability here is what our own writer produces; the schema check ignores it (other writers, delta-rs
among them, mark every column nullable).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

STRING = StringType()
LONG = LongType()
INT = IntegerType()
BOOL = BooleanType()
DOUBLE = DoubleType()
TIMESTAMP = TimestampType()
STRINGS = ArrayType(STRING, True)
STRING_MAP = MapType(STRING, STRING, True)
TOPIC_PARTITIONS = ArrayType(
    StructType([StructField("topic", STRING, True), StructField("partition", INT, True)]), True
)


def _field(name: str, data_type: DataType, nullable: bool = True) -> StructField:
    return StructField(name, data_type, nullable)


# ---------------------------------------------------------------------------------------------- inputs

APPLICATIONS = StructType(
    [
        _field("app_id", STRING, False),
        _field("cluster_id", STRING),
        _field("assignor", STRING),
        _field("acceptable_recovery_lag", LONG),
        _field("max_warmup_replicas", INT),
        _field("num_standby_replicas", INT),
        _field("probing_rebalance_interval_ms", LONG),
        _field("rack_aware_assignment_strategy", STRING),
        _field("rack_aware_traffic_cost", INT),
        _field("rack_aware_non_overlap_cost", INT),
        _field("rack_aware_assignment_tags", STRINGS),
        _field("assignor_configs", STRING_MAP),
    ]
)

TASKS = StructType(
    [
        _field("app_id", STRING),
        _field("task_id", STRING),
        _field("state_stores", STRINGS),
        _field("source_partitions", TOPIC_PARTITIONS),
        _field("changelog_partitions", TOPIC_PARTITIONS),
    ]
)

CLIENT_SUBSCRIPTIONS = StructType(
    [
        _field("app_id", STRING),
        _field("process_id", STRING),
        _field("consumer_client_id", STRING),
        _field("rack_id", STRING),
        _field("client_tags", STRING_MAP),
        _field("host_info", STRING),
        _field("prev_active_tasks", STRINGS),
        _field("prev_standby_tasks", STRINGS),
    ]
)

TASK_OFFSETS = StructType(
    [
        _field("app_id", STRING),
        _field("process_id", STRING),
        _field("consumer_client_id", STRING),
        _field("task_id", STRING),
        _field("offset_sum", LONG),
    ]
)

CHANGELOG_END_OFFSETS = StructType(
    [
        _field("app_id", STRING),
        _field("topic", STRING),
        _field("partition", INT),
        _field("end_offset", LONG),
    ]
)

PARTITION_RACKS = StructType(
    [
        _field("cluster_id", STRING),
        _field("topic", STRING),
        _field("partition", INT),
        _field("replica_racks", STRINGS),
    ]
)

# --------------------------------------------------------------------------------------------- outputs

RUNS = StructType(
    [
        _field("run_id", STRING, False),
        _field("planned_at", TIMESTAMP),
        _field("status", STRING),
        _field("input_versions", MapType(STRING, LONG, True)),
        _field("num_applications", INT),
        _field("num_ok", INT),
        _field("num_invalid_input", INT),
        _field("num_invalid_assignment", INT),
        _field("num_assignor_failed", INT),
        _field("completed_at", TIMESTAMP),
    ]
)

ASSIGNMENTS = StructType(
    [
        _field("run_id", STRING),
        _field("app_id", STRING),
        _field("process_id", STRING),
        _field("consumer_client_id", STRING),
        _field("task_id", STRING),
        _field("task_type", STRING),
        _field("is_warmup", BOOL),
    ]
)

CLIENT_ASSIGNMENTS = StructType(
    [
        _field("run_id", STRING),
        _field("app_id", STRING),
        _field("process_id", STRING),
        _field("active_tasks", STRINGS),
        _field("standby_tasks", STRINGS),
        _field("followup_rebalance_deadline", TIMESTAMP),
    ]
)

ASSIGNMENT_RESULTS = StructType(
    [
        _field("run_id", STRING),
        _field("app_id", STRING),
        _field("assignor", STRING),
        _field("status", STRING),
        _field("error", STRING),
        _field("error_detail", STRING),
        _field("probing_rebalance", BOOL),
        _field("num_clients", INT),
        _field("num_threads", INT),
        _field("num_tasks", INT),
        _field("num_stateful_tasks", INT),
        _field("active_moves", INT),
        _field("standby_moves", INT),
        _field("warmups", INT),
        _field("unassigned_tasks", STRINGS),
        _field("max_tasks_per_thread", DOUBLE),
        _field("min_tasks_per_thread", DOUBLE),
        _field("cross_rack_cost", LONG),
        _field("restore_lag", LONG),
        _field("planned_at", TIMESTAMP),
        _field("duration_ms", DOUBLE),
    ]
)

TASK_TRANSITIONS = StructType(
    [
        _field("run_id", STRING),
        _field("app_id", STRING),
        _field("process_id", STRING),
        _field("task_id", STRING),
        _field("transition", STRING),
        _field("restore_lag", LONG),
    ]
)

INPUT_TABLES: dict[str, StructType] = {
    "applications": APPLICATIONS,
    "tasks": TASKS,
    "client_subscriptions": CLIENT_SUBSCRIPTIONS,
    "task_offsets": TASK_OFFSETS,
    "changelog_end_offsets": CHANGELOG_END_OFFSETS,
    "partition_racks": PARTITION_RACKS,
}

# The order the job writes them in: `runs` last, as it marks the run complete.
OUTPUT_TABLES: dict[str, StructType] = {
    "assignment_results": ASSIGNMENT_RESULTS,
    "assignments": ASSIGNMENTS,
    "client_assignments": CLIENT_ASSIGNMENTS,
    "task_transitions": TASK_TRANSITIONS,
    "runs": RUNS,
}

PARTITION_COLUMN = "run_id"


# --------------------------------------------------------------------------------------- schema checks


@dataclass(frozen=True, slots=True)
class SchemaDrift:
    """One difference between a table's schema and the contract."""

    table: str
    column: str
    problem: str

    def __str__(self) -> str:
        return f"table {self.table}, column {self.column}: {self.problem}"


class SchemaDriftError(ValueError):
    """Input tables whose schema breaks the contract; raised before anything is written."""

    def __init__(self, drifts: list[SchemaDrift]):
        self.drifts = tuple(drifts)
        super().__init__("schema drift: " + "; ".join(str(d) for d in drifts))


def strip_nullability(data_type: DataType) -> DataType:
    """The same type with every nullability flag set to True (checks compare names and types only)."""
    if isinstance(data_type, StructType):
        return StructType(
            [StructField(f.name, strip_nullability(f.dataType), True) for f in data_type.fields]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(strip_nullability(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(strip_nullability(data_type.keyType), strip_nullability(data_type.valueType), True)
    return data_type


def schema_drifts(table: str, actual: StructType, expected: StructType) -> list[SchemaDrift]:
    """Missing columns and columns of another type; extra columns are allowed (tables.md)."""
    found = {f.name: f.dataType for f in actual.fields}
    drifts = []
    for want in expected.fields:
        if want.name not in found:
            drifts.append(SchemaDrift(table, want.name, f"missing (expected {want.dataType.simpleString()})"))
            continue
        got = found[want.name]
        if strip_nullability(got) != strip_nullability(want.dataType):
            drifts.append(
                SchemaDrift(
                    table,
                    want.name,
                    f"type {got.simpleString()}, expected {want.dataType.simpleString()}",
                )
            )
    return drifts


def check_input_schemas(actual: dict[str, StructType]) -> None:
    """Raise SchemaDriftError naming every (table, column) that breaks the contract."""
    drifts = [d for name, schema in actual.items() for d in schema_drifts(name, schema, INPUT_TABLES[name])]
    if drifts:
        raise SchemaDriftError(drifts)


# ------------------------------------------------------------------------------ grouped-map return schema

# The grouped map returns one flat frame per application whose rows are of four kinds; the job splits it
# into the output tables. Columns a kind does not use are null. Deadlines travel as epoch milliseconds.
ROW_RESULT = "RESULT"
ROW_ASSIGNMENT = "ASSIGNMENT"
ROW_CLIENT = "CLIENT"
ROW_TRANSITION = "TRANSITION"

# The RESULT rows carry assignment_results' columns but these: the job adds run_id and planned_at, and
# app_id and restore_lag are shared with other kinds (listed once, above them).
_RESULT_COLUMNS_NOT_REPEATED = ("run_id", "app_id", "restore_lag", "planned_at")

PLANNED_ROWS = StructType(
    [
        _field("kind", STRING, False),
        _field("app_id", STRING, False),
        # ASSIGNMENT, CLIENT, TRANSITION
        _field("process_id", STRING),
        # ASSIGNMENT
        _field("consumer_client_id", STRING),
        _field("task_id", STRING),
        _field("task_type", STRING),
        _field("is_warmup", BOOL),
        # CLIENT
        _field("active_tasks", STRINGS),
        _field("standby_tasks", STRINGS),
        _field("followup_rebalance_deadline_ms", LONG),
        # TRANSITION (task_id too)
        _field("transition", STRING),
        # TRANSITION and RESULT
        _field("restore_lag", LONG),
        # RESULT
        *(f for f in ASSIGNMENT_RESULTS.fields if f.name not in _RESULT_COLUMNS_NOT_REPEATED),
    ]
)

# The grouped map's input: one row per application.
APP_SCENARIOS = StructType([_field("app_id", STRING, False), _field("scenario", STRING)])
