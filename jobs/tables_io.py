"""Reading the input tables (latest or a given Delta version, schema-checked) and writing the outputs
(one Delta transaction per table replacing exactly one run's rows; `runs` last)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from jobs.config import TableLocation
from schemas.tables import INPUT_TABLES, PARTITION_COLUMN, SchemaDriftError, check_input_schemas

log = logging.getLogger("fleet_assignor.tables")


class InputTableError(RuntimeError):
    """An input table that cannot be read at all (missing, not Delta, no such version)."""


@dataclass(frozen=True)
class InputSnapshot:
    """The input tables as read: contract columns only, and the Delta version read of each."""

    frames: dict[str, DataFrame]
    versions: dict[str, int]


# --------------------------------------------------------------------------------------------- reading


def _delta_table(spark: SparkSession, location: TableLocation) -> DeltaTable | None:
    if location.path is not None:
        return (
            DeltaTable.forPath(spark, location.path)
            if DeltaTable.isDeltaTable(spark, location.path)
            else None
        )
    if not spark.catalog.tableExists(location.catalog_name):
        return None
    return DeltaTable.forName(spark, location.catalog_name)


def latest_version(spark: SparkSession, location: TableLocation) -> int:
    table = _delta_table(spark, location)
    if table is None:
        raise InputTableError(f"input table {location.name}: no Delta table at {location}")
    return int(table.history(1).select("version").first()[0])


def read_version(spark: SparkSession, location: TableLocation, version: int) -> DataFrame:
    """The table as of one Delta version (time travel)."""
    try:
        if location.path is not None:
            return spark.read.format("delta").option("versionAsOf", version).load(location.path)
        return spark.sql(f"SELECT * FROM {location.catalog_name} VERSION AS OF {int(version)}")
    except Exception as e:  # noqa: BLE001 - name the table whatever the reader raised
        raise InputTableError(f"input table {location.name} at {location}, version {version}: {e}") from e


def read_inputs(
    spark: SparkSession, locations: dict[str, TableLocation], as_of: dict[str, int]
) -> InputSnapshot:
    """Read the six input tables; the version is pinned first so the recorded one is the one read.

    Raises SchemaDriftError (every drifting table and column) before anything is written."""
    raw: dict[str, DataFrame] = {}
    versions: dict[str, int] = {}
    for name in INPUT_TABLES:
        location = locations[name]
        versions[name] = as_of[name] if name in as_of else latest_version(spark, location)
        raw[name] = read_version(spark, location, versions[name])
        log.info("input %s: version %d (%s)", name, versions[name], location)
    check_input_schemas({name: frame.schema for name, frame in raw.items()})
    frames = {name: conform(frame, INPUT_TABLES[name]) for name, frame in raw.items()}
    return InputSnapshot(frames, versions)


def conform(frame: DataFrame, schema: StructType) -> DataFrame:
    """The contract's columns, in its order and types (extra columns are allowed and dropped)."""
    return frame.select([F.col(f.name).cast(f.dataType).alias(f.name) for f in schema.fields])


# --------------------------------------------------------------------------------------------- writing


def _run_condition(run_id: str) -> str:
    return f"{PARTITION_COLUMN} = '{run_id}'"  # run ids are checked to hold no quote (jobs.config)


def write_run_rows(frame: DataFrame, location: TableLocation, run_id: str) -> None:
    """One Delta transaction replacing exactly this run's rows (the table is partitioned by run_id)."""
    writer = (
        frame.write.format("delta")
        .mode("overwrite")
        .option("replaceWhere", _run_condition(run_id))
        .partitionBy(PARTITION_COLUMN)
    )
    if location.path is not None:
        writer.save(location.path)
        return
    spark = frame.sparkSession
    if not spark.catalog.tableExists(location.catalog_name):
        # Creating the table with this run's rows is itself one transaction.
        frame.write.format("delta").mode("append").partitionBy(PARTITION_COLUMN).saveAsTable(
            location.catalog_name
        )
        return
    view = f"fleet_assignor_run_rows_{location.name}"
    frame.createOrReplaceTempView(view)
    try:
        spark.sql(
            f"INSERT INTO {location.catalog_name} REPLACE WHERE {_run_condition(run_id)} SELECT * FROM {view}"
        )
    finally:
        spark.catalog.dropTempView(view)


def read_existing(spark: SparkSession, location: TableLocation) -> DataFrame | None:
    table = _delta_table(spark, location)
    return table.toDF() if table is not None else None


def delete_run_rows(spark: SparkSession, location: TableLocation, run_id: str) -> None:
    table = _delta_table(spark, location)
    if table is not None:
        table.delete(F.col(PARTITION_COLUMN) == F.lit(run_id))


def run_filter(run_id: str) -> Column:
    return F.col(PARTITION_COLUMN) == F.lit(run_id)


__all__ = [
    "InputSnapshot",
    "InputTableError",
    "SchemaDriftError",
    "conform",
    "delete_run_rows",
    "latest_version",
    "read_existing",
    "read_inputs",
    "read_version",
    "run_filter",
    "write_run_rows",
]
