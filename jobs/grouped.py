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

from jobs.plan_rows import COLUMNS, PlanSettings, plan_application
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


def _plan_all(pairs: Iterable[tuple[str, str]], settings: PlanSettings) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for app_id, scenario in pairs:
        rows.extend(plan_application(app_id, scenario, settings))
    return rows


def pandas_function(settings: PlanSettings) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def plan_group(frame: pd.DataFrame) -> pd.DataFrame:
        rows = _plan_all(zip(frame["app_id"], frame["scenario"]), settings)
        # Through Arrow so that nullable ints and string lists keep their types.
        return pa.Table.from_pylist(rows, schema=arrow_schema()).to_pandas()

    return plan_group


def arrow_function(settings: PlanSettings) -> Callable[[pa.Table], pa.Table]:
    def plan_group(table: pa.Table) -> pa.Table:
        pairs = zip(table.column("app_id").to_pylist(), table.column("scenario").to_pylist())
        return pa.Table.from_pylist(_plan_all(pairs, settings), schema=arrow_schema())

    return plan_group


def plan_fleet(apps: DataFrame, settings: PlanSettings, kind: GroupedMapKind | str) -> DataFrame:
    """apps: app_id, scenario (one row per application) -> PLANNED_ROWS."""
    grouped = apps.groupBy("app_id")
    if GroupedMapKind.parse(kind) is GroupedMapKind.PANDAS:
        return grouped.applyInPandas(pandas_function(settings), schema=PLANNED_ROWS)
    return grouped.applyInArrow(arrow_function(settings), schema=PLANNED_ROWS)


__all__ = ["COLUMNS", "GroupedMapKind", "PlanSettings", "arrow_function", "pandas_function", "plan_fleet"]
