"""The Spark schemas of every table of the contract (`schemas.contract`), derived from it, and the schema
drift check of the job's inputs (Spark-only).

Nullability is what our own writer produces; the schema check ignores it (other writers, delta-rs among
them, mark every column nullable).
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

from fleet_assignor.schemas import contract
from fleet_assignor.schemas.contract import ArrayOf, ColumnType, MapOf, StructOf, Table

_ATOMS: dict[str, DataType] = {
    "string": StringType(),
    "bigint": LongType(),
    "int": IntegerType(),
    "boolean": BooleanType(),
    "double": DoubleType(),
    "timestamp": TimestampType(),
}


def spark_type(column_type: ColumnType) -> DataType:
    """The Spark type of a contract column type (elements, map values and struct fields nullable)."""
    if isinstance(column_type, ArrayOf):
        return ArrayType(spark_type(column_type.element), True)
    if isinstance(column_type, MapOf):
        return MapType(spark_type(column_type.key), spark_type(column_type.value), True)
    if isinstance(column_type, StructOf):
        return StructType([StructField(n, spark_type(t), True) for n, t in column_type.fields])
    return _ATOMS[column_type.name]


def spark_schema(table: Table) -> StructType:
    return StructType([StructField(c.name, spark_type(c.type), c.nullable) for c in table.columns])


APPLICATIONS = spark_schema(contract.APPLICATIONS)
TASKS = spark_schema(contract.TASKS)
CLIENT_SUBSCRIPTIONS = spark_schema(contract.CLIENT_SUBSCRIPTIONS)
TASK_OFFSETS = spark_schema(contract.TASK_OFFSETS)
CHANGELOG_END_OFFSETS = spark_schema(contract.CHANGELOG_END_OFFSETS)
PARTITION_RACKS = spark_schema(contract.PARTITION_RACKS)

RUNS = spark_schema(contract.RUNS)
ASSIGNMENTS = spark_schema(contract.ASSIGNMENTS)
CLIENT_ASSIGNMENTS = spark_schema(contract.CLIENT_ASSIGNMENTS)
ASSIGNMENT_RESULTS = spark_schema(contract.ASSIGNMENT_RESULTS)
TASK_TRANSITIONS = spark_schema(contract.TASK_TRANSITIONS)
ROLLOUT = spark_schema(contract.ROLLOUT)

INPUT_TABLES: dict[str, StructType] = {name: spark_schema(t) for name, t in contract.INPUT_TABLES.items()}
# The order the job writes them in: `runs` last, as it marks the run complete.
OUTPUT_TABLES: dict[str, StructType] = {name: spark_schema(t) for name, t in contract.OUTPUT_TABLES.items()}
# The grouped map's return schema (contract.PLANNED_ROWS).
PLANNED_ROWS = spark_schema(contract.PLANNED_ROWS)


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
