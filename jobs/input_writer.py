"""Writing input tables from Python rows (tests, `make run`, benchmarks): rows as the contract's Arrow and
Spark types, written as Delta tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from fleet_assignor.schemas import contract
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES


def arrow_table(table: str, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows (dicts; missing keys are null) of an input table as Arrow, with the contract's types."""
    schema = contract.arrow_schema(contract.INPUT_TABLES[table])
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
