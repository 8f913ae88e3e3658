"""The job's Delta reads and writes: the input tables (latest or a given Delta version, schema-checked), the
outputs (one Delta transaction per table replacing exactly one run's rows; `runs` last), and the outputs
of complete runs only.

Readers of the outputs, the exploration API included, must see only runs marked COMPLETE in `runs`:
`read_complete` is that filter.
"""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import delta.exceptions as delta_errors

# Imported for its side effect too: Delta's commit conflicts reach Python as these classes.
import delta.exceptions.captured  # noqa: F401
from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from fleet_assignor.jobs.config import TableLocation
from fleet_assignor.schemas.contract import COMPLETE, PARTITION_COLUMN
from fleet_assignor.schemas.spark_schemas import (
    INPUT_TABLES,
    OUTPUT_TABLES,
    SchemaDriftError,
    check_input_schemas,
)

log = logging.getLogger("fleet_assignor.tables")


class InputTableError(RuntimeError):
    """An input table that cannot be read at all (missing, not Delta, no such version)."""


class ConcurrentWriteError(RuntimeError):
    """Another writer kept changing an output table (retries exhausted), or another attempt of the same
    run wrote its rows meanwhile: the run is not marked complete; rerun it."""


# Delta's commit conflicts. Every write of the job replaces one run's partition (or deletes one run's
# rows), so repeating it is safe: each is retried, a bounded number of times with growing pauses.
# `delta.exceptions` exports exactly those classes.
COMMIT_CONFLICTS: tuple[type[BaseException], ...] = tuple(
    getattr(delta_errors, name) for name in delta_errors.__all__
)
WRITE_ATTEMPTS = 6
FIRST_PAUSE_S = 0.5  # then 1, 2, 4, 8 s: about 15 s in all before giving up
HISTORY_LOOKBACK = 100  # commits of a table searched for the other writers of a run

T = TypeVar("T")


@dataclass(frozen=True)
class Writer:
    """Who commits: the run and this attempt of it, written into each commit's userMetadata so that a
    conflict can name the other writer and an attempt can tell its own commits from another's."""

    run_id: str
    attempt: str

    @classmethod
    def new(cls, run_id: str) -> Writer:
        return cls(run_id, uuid.uuid4().hex[:12])

    def metadata(self) -> str:
        return json.dumps({"fleet_assignor_run": self.run_id, "attempt": self.attempt}, sort_keys=True)


def _commit_writer(user_metadata: str | None) -> Writer | None:
    try:
        data = json.loads(user_metadata or "")
        return Writer(str(data["fleet_assignor_run"]), str(data["attempt"]))
    except (ValueError, KeyError, TypeError):
        return None


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
    except Exception as e:
        raise InputTableError(f"input table {location.name} at {location}, version {version}: {e}") from e


def read_inputs(
    spark: SparkSession, locations: dict[str, TableLocation], as_of: dict[str, int]
) -> InputSnapshot:
    """Read the six input tables; the version is pinned first so the recorded one is the one read.

    Raises SchemaDriftError (every drifting table and column) before anything is written."""

    def pinned(name: str) -> tuple[int, DataFrame, int]:
        location = locations[name]
        version = as_of[name] if name in as_of else latest_version(spark, location)
        frame = read_version(spark, location, version)
        return version, frame, frame.count()

    # Each table's reads are short driver jobs (its log, its row count): side by side, not one by one.
    with ThreadPoolExecutor(max_workers=len(INPUT_TABLES)) as pool:
        read = dict(zip(INPUT_TABLES, pool.map(pinned, INPUT_TABLES), strict=True))
    raw: dict[str, DataFrame] = {}
    versions: dict[str, int] = {}
    for name, (version, frame, rows) in read.items():
        versions[name], raw[name] = version, frame
        log.info("input %s: version %d, %d rows (%s)", name, version, rows, locations[name])
    check_input_schemas({name: frame.schema for name, frame in raw.items()})
    frames = {name: conform(frame, INPUT_TABLES[name]) for name, frame in raw.items()}
    return InputSnapshot(frames, versions)


def conform(frame: DataFrame, schema: StructType) -> DataFrame:
    """The contract's columns, in its order and types (extra columns are allowed and dropped)."""
    return frame.select([F.col(f.name).cast(f.dataType).alias(f.name) for f in schema.fields])


def read_complete(spark: SparkSession, output_path: str, table: str) -> DataFrame:
    """An output table's rows of complete runs only (runs listed in `runs` as COMPLETE); no rows, with the
    table's columns, while no run is complete yet (a first run that failed, or none)."""
    if table not in OUTPUT_TABLES:
        raise ValueError(f"unknown output table {table!r}")
    base = output_path.rstrip("/")
    schema = OUTPUT_TABLES[table]
    if not DeltaTable.isDeltaTable(spark, f"{base}/runs"):
        return spark.createDataFrame([], schema)
    runs = spark.read.format("delta").load(f"{base}/runs").where(F.col("status") == COMPLETE)
    if table == "runs":
        return runs
    if not DeltaTable.isDeltaTable(spark, f"{base}/{table}"):
        return spark.createDataFrame([], schema)
    rows = spark.read.format("delta").load(f"{base}/{table}")
    return rows.join(runs.select("run_id"), "run_id", "left_semi")


# --------------------------------------------------------------------------------------------- writing


def _run_condition(run_id: str) -> str:
    return f"{PARTITION_COLUMN} = '{run_id}'"  # run ids are checked to hold no quote (jobs.config)


def retrying_conflicts(
    action: Callable[[], T], spark: SparkSession, location: TableLocation, writer: Writer
) -> T:
    """`action()` (an idempotent write of this run's rows), repeated on Delta commit conflicts with growing
    pauses; ConcurrentWriteError naming the other writer once the attempts are used up."""
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            return action()
        except COMMIT_CONFLICTS as e:
            if attempt == WRITE_ATTEMPTS:
                other = _other_writers(spark, location, writer)
                raise ConcurrentWriteError(
                    f"output table {location.name} at {location}: {WRITE_ATTEMPTS} attempts lost to "
                    f"concurrent commits (last by {other}): {type(e).__name__}"
                ) from None
            pause = FIRST_PAUSE_S * 2 ** (attempt - 1) * (1 + random.random() / 2)
            log.info(
                "output table %s: commit conflict (%s), attempt %d of %d again in %.1f s",
                location.name, type(e).__name__, attempt + 1, WRITE_ATTEMPTS, pause,
            )  # fmt: skip
            time.sleep(pause)
    raise AssertionError("unreachable")


def _history(spark: SparkSession, location: TableLocation) -> list[tuple[int, Writer | None]]:
    """(version, writer) of the table's latest commits, newest first."""
    table = _delta_table(spark, location)
    if table is None:
        return []
    rows = table.history(HISTORY_LOOKBACK).select("version", "userMetadata").collect()
    return [(int(r["version"]), _commit_writer(r["userMetadata"])) for r in rows]


def _other_writers(spark: SparkSession, location: TableLocation, writer: Writer) -> str:
    try:
        others = [w for _, w in _history(spark, location) if w is not None and w != writer]
    except Exception:
        others = []
    if not others:
        return "a writer that is not a fleet-assignor run"
    other = others[0]
    same = " (another attempt of this run)" if other.run_id == writer.run_id else ""
    return f"run {other.run_id}, attempt {other.attempt}{same}"


def check_sole_writer(spark: SparkSession, location: TableLocation, writer: Writer) -> None:
    """Raise ConcurrentWriteError when the last commit of this run's rows is another attempt's: two
    attempts of one run id at once would otherwise leave a run whose tables come from different attempts."""
    for _, committed in _history(spark, location):
        if committed is not None and committed.run_id == writer.run_id:
            if committed != writer:
                raise ConcurrentWriteError(
                    f"output table {location.name} at {location}: run {writer.run_id} was written meanwhile "
                    f"by another attempt ({committed.attempt}; this one is {writer.attempt}); the run is not "
                    "marked complete: rerun it once the other attempt has finished"
                )
            return


def write_run_rows(frame: DataFrame, location: TableLocation, writer: Writer) -> None:
    """One Delta transaction replacing exactly this run's rows (the table is partitioned by run_id), retried
    on commit conflicts (it is idempotent)."""
    retrying_conflicts(lambda: _write_once(frame, location, writer), frame.sparkSession, location, writer)


def _write_once(frame: DataFrame, location: TableLocation, writer: Writer) -> None:
    condition = _run_condition(writer.run_id)
    spark = frame.sparkSession
    if location.path is not None:
        (
            frame.write.format("delta")
            .mode("overwrite")
            .option("replaceWhere", condition)
            # A table written by an older release lacks the columns added since: they are added, and its
            # earlier runs read null there.
            .option("mergeSchema", "true")
            .option("userMetadata", writer.metadata())
            .partitionBy(PARTITION_COLUMN)
            .save(location.path)
        )
        return
    if not spark.catalog.tableExists(location.catalog_name):
        # Creating the table with this run's rows is itself one transaction.
        frame.write.format("delta").mode("append").option("userMetadata", writer.metadata()).partitionBy(
            PARTITION_COLUMN
        ).saveAsTable(location.catalog_name)
        return
    columns = _add_missing_columns(spark, location.catalog_name, frame.schema)
    view = f"fleet_assignor_run_rows_{location.name}_{writer.attempt}"
    frame.createOrReplaceTempView(view)
    try:
        # By the table's column order: columns added to an older table come last there.
        spark.sql(
            f"INSERT INTO {location.catalog_name} REPLACE WHERE {condition} "
            f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {view}"
        )
    finally:
        spark.catalog.dropTempView(view)


def _add_missing_columns(spark: SparkSession, name: str, schema: StructType) -> list[str]:
    """The catalog table's column names, after adding the frame's columns it lacks (a table written by an
    older release; its earlier runs read null there). A concurrent attempt adding them too is fine."""
    existing = spark.table(name).columns
    missing = [field for field in schema.fields if field.name not in existing]
    if not missing:
        return existing
    log.info("output table %s: adding columns %s", name, ", ".join(f.name for f in missing))
    added = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in missing)
    try:
        spark.sql(f"ALTER TABLE {name} ADD COLUMNS ({added})")
    except Exception:
        if any(f.name not in spark.table(name).columns for f in missing):
            raise  # not another attempt adding them meanwhile
    return spark.table(name).columns


def read_existing(spark: SparkSession, location: TableLocation) -> DataFrame | None:
    table = _delta_table(spark, location)
    return table.toDF() if table is not None else None


def delete_run_rows(spark: SparkSession, location: TableLocation, writer: Writer) -> None:
    """Remove this run's rows (idempotent, retried on commit conflicts)."""

    def delete() -> None:
        table = _delta_table(spark, location)
        if table is not None:
            table.delete(F.col(PARTITION_COLUMN) == F.lit(writer.run_id))

    retrying_conflicts(delete, spark, location, writer)


def run_filter(run_id: str) -> Column:
    return F.col(PARTITION_COLUMN) == F.lit(run_id)


__all__ = [
    "ConcurrentWriteError",
    "InputSnapshot",
    "InputTableError",
    "SchemaDriftError",
    "Writer",
    "check_sole_writer",
    "conform",
    "delete_run_rows",
    "latest_version",
    "read_existing",
    "read_inputs",
    "read_version",
    "run_filter",
    "write_run_rows",
]
