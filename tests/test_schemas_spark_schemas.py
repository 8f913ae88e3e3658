"""The table contract in schemas/: names and types checked, nullability ignored, extra columns allowed."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from fleet_assignor.schemas.contract import APPLICATION_CONFIG_COLUMNS
from fleet_assignor.schemas.spark_schemas import (
    APPLICATIONS,
    ASSIGNMENT_RESULTS,
    INPUT_TABLES,
    OUTPUT_TABLES,
    PLANNED_ROWS,
    TASKS,
    schema_drifts,
    strip_nullability,
)


def test_tables_md_column_names():
    assert set(INPUT_TABLES) == {
        "applications", "tasks", "client_subscriptions", "task_offsets", "changelog_end_offsets",
        "partition_racks",
    }  # fmt: skip
    assert list(OUTPUT_TABLES)[-1] == "runs"
    assert TASKS.fieldNames() == [
        "app_id",
        "task_id",
        "state_stores",
        "source_partitions",
        "changelog_partitions",
    ]
    assert (
        "restore_lag" in ASSIGNMENT_RESULTS.fieldNames() and "planned_at" in ASSIGNMENT_RESULTS.fieldNames()
    )


def test_nullability_is_ignored_but_types_are_not():
    all_nullable = strip_nullability(TASKS)
    assert schema_drifts("tasks", all_nullable, TASKS) == []
    narrowed = StructType(
        [f if f.name != "source_partitions" else StructField(
            f.name,
            ArrayType(StructType([StructField("topic", StringType()), StructField("partition", LongType())])))
         for f in TASKS.fields]
    )  # fmt: skip
    (drift,) = schema_drifts("tasks", narrowed, TASKS)
    assert (drift.table, drift.column) == ("tasks", "source_partitions")
    assert "bigint" in drift.problem


def test_missing_column_is_named_and_extra_columns_are_allowed():
    fields = [f for f in TASKS.fields if f.name != "state_stores"] + [StructField("extra", IntegerType())]
    (drift,) = schema_drifts("tasks", StructType(fields), TASKS)
    assert str(drift).startswith("table tasks, column state_stores: missing")


def test_planned_rows_cover_every_output_column_the_grouped_map_fills():
    planned = set(PLANNED_ROWS.fieldNames())
    for table in ("assignments", "client_assignments", "task_transitions"):
        assert set(OUTPUT_TABLES[table].fieldNames()) - {"run_id", "followup_rebalance_deadline"} <= planned
    assert set(ASSIGNMENT_RESULTS.fieldNames()) - {"run_id", "planned_at"} <= planned


def test_application_config_columns_are_the_applications_columns_after_the_keys():
    # The Spark-free list (workers, explore) must follow the schema if a config column is added or renamed.
    names = [f.name for f in APPLICATIONS.fields]
    assert list(APPLICATION_CONFIG_COLUMNS) == names[names.index("cluster_id") + 1 :]


def test_planned_rows_carry_every_result_column_the_job_does_not_add():
    planned = {f.name: f.dataType for f in PLANNED_ROWS.fields}
    for field in ASSIGNMENT_RESULTS.fields:
        if field.name not in ("run_id", "planned_at"):
            assert planned[field.name] == field.dataType, field.name


def test_every_spark_schema_is_the_contract_s_table():
    from fleet_assignor.schemas import contract
    from fleet_assignor.schemas.spark_schemas import spark_schema

    tables = {**contract.INPUT_TABLES, **contract.OUTPUT_TABLES}
    assert list(INPUT_TABLES) == list(contract.INPUT_TABLES)
    assert list(OUTPUT_TABLES) == list(contract.OUTPUT_TABLES)
    for name, schema in {**INPUT_TABLES, **OUTPUT_TABLES}.items():
        assert schema == spark_schema(tables[name]), name
        assert [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields] == [
            (c.name, c.type.simple_string, c.nullable) for c in tables[name].columns
        ], name


def test_derived_schemas_are_the_ones_written_out_before():
    from pyspark.sql.types import MapType, TimestampType

    assert (
        StructType(
            [
                StructField("app_id", StringType(), True),
                StructField("task_id", StringType(), True),
                StructField("state_stores", ArrayType(StringType(), True), True),
                *(
                    StructField(
                        name,
                        ArrayType(
                            StructType(
                                [
                                    StructField("topic", StringType(), True),
                                    StructField("partition", IntegerType(), True),
                                ]
                            ),
                            True,
                        ),
                        True,
                    )
                    for name in ("source_partitions", "changelog_partitions")
                ),
            ]
        )
        == TASKS
    )
    runs = OUTPUT_TABLES["runs"]
    assert runs["run_id"].nullable is False
    assert runs["input_versions"].dataType == MapType(StringType(), LongType(), True)
    assert runs["completed_at"].dataType == TimestampType()
    assert APPLICATIONS["app_id"].nullable is False


def test_the_contract_s_arrow_schemas_are_spark_s_own_conversion():
    from pyspark.sql.pandas.types import to_arrow_schema

    from fleet_assignor.schemas import contract

    tables = {**contract.INPUT_TABLES, **contract.OUTPUT_TABLES}
    for name, schema in {**INPUT_TABLES, **OUTPUT_TABLES}.items():
        assert contract.arrow_schema(tables[name]) == to_arrow_schema(schema), name
    assert contract.arrow_schema(contract.PLANNED_ROWS) == to_arrow_schema(PLANNED_ROWS)
