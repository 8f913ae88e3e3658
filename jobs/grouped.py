"""The grouped map: one call per application, through `applyInPandas` or `applyInArrow` (one setting).

Both kinds run the same `jobs.plan_rows.plan_application` on the one compact row of each application and
return `schemas.tables.PLANNED_ROWS`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame

from jobs.plan_rows import COLUMNS, KIND_COLUMNS, PlanSettings, plan_application
from schemas.tables import PLANNED_ROWS


class GroupedMapKind(enum.Enum):
    PANDAS = "pandas"  # groupBy(...).applyInPandas
    ARROW = "arrow"  # groupBy(...).applyInArrow (Spark 4)

    @classmethod
    def parse(cls, text: str | GroupedMapKind) -> GroupedMapKind:
        if isinstance(text, GroupedMapKind):
            return text
        try:
            return cls(text.lower())
        except ValueError:
            raise ValueError(
                f"grouped map kind must be one of {[k.value for k in cls]}, got {text!r}"
            ) from None


_ARROW_SCHEMA: pa.Schema | None = None


def arrow_schema() -> pa.Schema:
    """PLANNED_ROWS as an Arrow schema (built once per Python worker)."""
    global _ARROW_SCHEMA
    if _ARROW_SCHEMA is None:
        from pyspark.sql.pandas.types import to_arrow_schema

        _ARROW_SCHEMA = to_arrow_schema(PLANNED_ROWS)
    return _ARROW_SCHEMA


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of PLANNED_ROWS as one Arrow table, grouped by kind (in KIND_COLUMNS order).

    A row holds the columns its kind fills (a missing one is null), never others. Column by column and
    kind by kind: only the columns a kind fills are read from its rows, the others are null arrays, which
    spares making and converting the many nulls of a wide, sparse row one by one."""
    schema = arrow_schema()
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KIND_COLUMNS}
    for row in rows:
        by_kind[row["kind"]].append(row)
    tables = []
    for kind, kind_rows in by_kind.items():
        if not kind_rows:
            continue
        filled = KIND_COLUMNS[kind]
        arrays = [
            pa.array([r.get(f.name) for r in kind_rows], f.type)
            if f.name in filled
            else pa.nulls(len(kind_rows), f.type)
            for f in schema
        ]
        tables.append(pa.Table.from_arrays(arrays, schema=schema))
    # One record batch: pyspark sends each batch a call returns as its own Arrow message (measured in
    # `make bench`: about 0.7 ms per application saved against one batch per kind).
    return pa.concat_tables(tables).combine_chunks() if tables else schema.empty_table()


def _plan_all(pairs: Iterable[tuple[str, str]], settings: PlanSettings) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for app_id, scenario in pairs:
        rows.extend(plan_application(app_id, scenario, settings))
    return rows


def pandas_function(settings: PlanSettings) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def plan_group(frame: pd.DataFrame) -> pd.DataFrame:
        rows = _plan_all(zip(frame["app_id"], frame["scenario"]), settings)
        # Through Arrow so that nullable ints and string lists keep their types.
        return rows_table(rows).to_pandas()

    return plan_group


def arrow_function(settings: PlanSettings) -> Callable[[pa.Table], pa.Table]:
    def plan_group(table: pa.Table) -> pa.Table:
        pairs = zip(table.column("app_id").to_pylist(), table.column("scenario").to_pylist())
        return rows_table(_plan_all(pairs, settings))

    return plan_group


def plan_fleet(apps: DataFrame, settings: PlanSettings, kind: GroupedMapKind | str) -> DataFrame:
    """apps: app_id, scenario (one row per application) -> PLANNED_ROWS."""
    grouped = apps.groupBy("app_id")
    if GroupedMapKind.parse(kind) is GroupedMapKind.PANDAS:
        return grouped.applyInPandas(pandas_function(settings), schema=PLANNED_ROWS)
    return grouped.applyInArrow(arrow_function(settings), schema=PLANNED_ROWS)


__all__ = [
    "COLUMNS",
    "GroupedMapKind",
    "PlanSettings",
    "arrow_function",
    "pandas_function",
    "plan_fleet",
    "rows_table",
]
