"""Catalog tables (Databricks, a metastore) instead of paths: reading at a version, replacing one run's
rows, removing a run's rows. Uses the session's local warehouse."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import Writer, delete_run_rows, read_inputs, write_run_rows
from fleet_assignor.jobs.input_writer import input_frame
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES

pytestmark = pytest.mark.spark


def test_catalog_inputs_and_run_scoped_outputs(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS fleet_catalog_test")
    names = {t: f"fleet_catalog_test.{t}" for t in INPUT_TABLES}
    for table, name in names.items():
        rows = [{"app_id": "a", "task_id": "0_0", "state_stores": []}] if table == "tasks" else []
        input_frame(spark, table, rows).write.format("delta").mode("overwrite").saveAsTable(name)
    input_frame(spark, "tasks", [{"app_id": "a", "task_id": "0_1"}]).write.format("delta").mode(
        "append"
    ).saveAsTable(names["tasks"])

    config = JobConfig(input_catalog=names, output_catalog={"assignments": "fleet_catalog_test.assignments"})
    locations = {t: config.input_location(t) for t in INPUT_TABLES}
    latest = read_inputs(spark, locations, {})
    older = read_inputs(spark, locations, {"tasks": 0})
    assert (latest.versions["tasks"], older.versions["tasks"]) == (1, 0)
    assert latest.frames["tasks"].count() == 2 and older.frames["tasks"].count() == 1

    out = config.output_location("assignments")
    rows = spark.createDataFrame(
        [("r1", "a", "p", "c", "0_0", "ACTIVE", False), ("r1", "a", "p", "c", "0_1", "ACTIVE", False)],
        "run_id string, app_id string, process_id string, consumer_client_id string, task_id string, "
        "task_type string, is_warmup boolean",
    )
    write_run_rows(rows, out, Writer.new("r1"))
    write_run_rows(rows.withColumn("run_id", F.lit("r2")), out, Writer.new("r2"))
    write_run_rows(rows, out, Writer.new("r1"))  # a rerun replaces r1's rows
    counts = {r["run_id"]: r["n"] for r in spark.table(out.catalog_name).groupBy("run_id").agg(
        F.count(F.lit(1)).alias("n")).collect()}  # fmt: skip
    assert counts == {"r1": 2, "r2": 2}
    delete_run_rows(spark, out, Writer.new("r1"))
    assert [r["run_id"] for r in spark.table(out.catalog_name).select("run_id").distinct().collect()] == [
        "r2"
    ]


@pytest.mark.parametrize("where", ["path", "catalog"])
def test_a_table_written_by_an_older_release_gains_the_new_columns(spark, tmp_path, where):
    """An output table that lacks a column the contract added since (here in the middle of the row): the
    next run's rows land in their own columns by name, and the earlier run reads null there."""
    old_rows = spark.createDataFrame([("r1", "a", 3)], "run_id string, app_id string, moves int")
    new_rows = spark.createDataFrame(
        [("r2", "b", "MANY_MOVES", 4)], "run_id string, app_id string, flag string, moves int"
    )
    if where == "path":
        config = JobConfig(output_path=str(tmp_path))
    else:
        spark.sql("CREATE DATABASE IF NOT EXISTS fleet_catalog_test")
        spark.sql("DROP TABLE IF EXISTS fleet_catalog_test.evolving")
        config = JobConfig(output_catalog={"rollout": "fleet_catalog_test.evolving"})
    out = config.output_location("rollout")
    write_run_rows(old_rows, out, Writer.new("r1"))
    write_run_rows(new_rows, out, Writer.new("r2"))
    write_run_rows(new_rows, out, Writer.new("r2"))  # the rerun replaces its rows, the columns are there
    table = spark.read.format("delta").load(out.path) if where == "path" else spark.table(out.catalog_name)
    got = sorted(tuple(r) for r in table.select("run_id", "app_id", "flag", "moves").collect())
    assert got == [("r1", "a", None, 3), ("r2", "b", "MANY_MOVES", 4)]
