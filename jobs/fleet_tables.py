"""Writing input tables from Python rows (tests, `make run`, benchmarks) and reading complete runs.

Readers of the outputs, the exploration API included, must see only runs marked COMPLETE in `runs`:
`read_complete` is that filter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from fleet_assignor.schemas.tables import INPUT_TABLES, OUTPUT_TABLES

COMPLETE = "COMPLETE"


def arrow_table(table: str, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows (dicts; missing keys are null) of an input table as Arrow, with the contract's types."""
    schema = to_arrow_schema(INPUT_TABLES[table])
    return pa.Table.from_pylist([dict(r) for r in rows], schema=schema)


def input_frame(spark: SparkSession, table: str, rows: Iterable[Mapping[str, Any]] | pa.Table) -> DataFrame:
    data = rows if isinstance(rows, pa.Table) else arrow_table(table, rows)
    return spark.createDataFrame(data, schema=INPUT_TABLES[table])


def write_input_tables(
    spark: SparkSession,
    base_path: str,
    tables: Mapping[str, Iterable[Mapping[str, Any]] | pa.Table],
    *,
    mode: str = "overwrite",
) -> None:
    """Write the given tables as Delta tables `base_path/<table>`; tables not given are written empty
    (only when they do not exist yet, so a partial update keeps the others)."""
    for table in INPUT_TABLES:
        path = f"{base_path.rstrip('/')}/{table}"
        if table in tables:
            input_frame(spark, table, tables[table]).write.format("delta").mode(mode).save(path)
        else:
            input_frame(spark, table, []).write.format("delta").mode("ignore").save(path)


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


# ---------------------------------------------------------------------- a scenario file as table rows


def scenario_table_rows(scenario: Mapping[str, Any], app_id: str | None = None) -> dict[str, list[dict]]:
    """The input-table rows of one application given as a scenario dict (scenario.md), the inverse of
    what the job builds: for reproducing one application in the fleet tables.

    Lags become offset sums against end offsets: a task's end-offset sum is the largest non-negative lag
    reported for it (scenario.md), held by its first changelog partition (the others get 0). Client-level
    previous lists without per-consumer history go to the client's first consumer."""
    app = app_id or scenario["app_id"]
    configs = dict(scenario.get("configs") or {})
    rows: dict[str, list[dict]] = {t: [] for t in INPUT_TABLES}
    rows["applications"].append({"app_id": app, **configs})
    end_sums: dict[str, int] = {}
    for task in scenario.get("tasks") or []:
        partitions = task.get("partitions") or []
        changelogs = [p for p in partitions if p.get("changelog")]
        rows["tasks"].append(
            {
                "app_id": app,
                "task_id": task["id"],
                "state_stores": list(task.get("stores") or []),
                "source_partitions": [_tp(p) for p in partitions if p.get("source")],
                "changelog_partitions": [_tp(p) for p in changelogs],
            }
        )
        for p in partitions:
            rows["partition_racks"].append(
                {"cluster_id": None, **_tp(p), "replica_racks": list(p.get("racks") or [])}
            )
        if changelogs:
            reported = [c.get("lags", {}).get(task["id"]) for c in scenario.get("clients") or []]
            end_sum = max((lag for lag in reported if lag is not None and lag >= 0), default=0)
            end_sums[task["id"]] = end_sum
            for i, p in enumerate(changelogs):
                rows["changelog_end_offsets"].append(
                    {"app_id": app, **_tp(p), "end_offset": end_sum if i == 0 else 0}
                )
    for client in scenario.get("clients") or []:
        pid = client["process_id"]
        consumers = client.get("consumers") or [f"{pid}-{n}" for n in range(1, client.get("threads", 0) + 1)]
        for i, consumer in enumerate(consumers):
            if isinstance(consumer, str):
                consumer = {
                    "id": consumer,
                    "prev_active": client.get("prev_active", []) if i == 0 else [],
                    "prev_standby": client.get("prev_standby", []) if i == 0 else [],
                }
            rows["client_subscriptions"].append(
                {
                    "app_id": app,
                    "process_id": pid,
                    "consumer_client_id": consumer["id"],
                    "rack_id": client.get("rack"),
                    "client_tags": dict(client.get("tags") or {}),
                    "host_info": client.get("host_info"),
                    "prev_active_tasks": list(consumer.get("prev_active") or []),
                    "prev_standby_tasks": list(consumer.get("prev_standby") or []),
                }
            )
        first = consumers[0] if isinstance(consumers[0], str) else consumers[0]["id"]
        for task_id, lag in (client.get("lags") or {}).items():
            end_sum = end_sums.get(task_id, 0)
            offset = lag if lag < 0 else end_sum - lag
            rows["task_offsets"].append(
                {
                    "app_id": app,
                    "process_id": pid,
                    "consumer_client_id": first,
                    "task_id": task_id,
                    "offset_sum": offset,
                }
            )
    rows["partition_racks"] = _unique(rows["partition_racks"])
    return rows


def _tp(partition: Mapping[str, Any]) -> dict[str, Any]:
    return {"topic": partition["topic"], "partition": partition["partition"]}


def _unique(rows: list[dict]) -> list[dict]:
    seen, result = set(), []
    for row in rows:
        key = (row["cluster_id"], row["topic"], row["partition"], tuple(sorted(row["replica_racks"])))
        if key not in seen:
            seen.add(key)
            result.append(row)
    return result


def merge_table_rows(*fleets: Mapping[str, list[dict]]) -> dict[str, list[dict]]:
    """Concatenate the rows of several applications, table by table."""
    merged: dict[str, list[dict]] = {t: [] for t in INPUT_TABLES}
    for fleet in fleets:
        for table, rows in fleet.items():
            merged[table].extend(rows)
    return merged
