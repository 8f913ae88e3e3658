"""The grouped map: applications planned through `applyInPandas` or `applyInArrow` (one setting).

Both kinds run the same `jobs.plan_rows.plan_application` (in pieces: `plan_application_pieces`) on the one
compact row of each application and return the contract's `PLANNED_ROWS` (its Spark schema from
`schemas.spark_schemas`, its Arrow schema from `schemas.contract`). Each application is planned on its own;
a call of the grouped map plans a group of about `APPLICATIONS_PER_CALL` of them (`call_groups`).
"""

from __future__ import annotations

import enum
import gc
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.accumulators import Accumulator
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleet_assignor.jobs.plan_rows import (
    COLUMNS,
    Pieces,
    PlanSettings,
    RowBlock,
    failed_row,
    flat_rows,
    plan_application_pieces,
)
from fleet_assignor.schemas import contract
from fleet_assignor.schemas.spark_schemas import PLANNED_ROWS


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
_EMPTY_TABLE: pa.Table | None = None
_ROW_TYPE: pa.StructType | None = None
_KIND_TYPES: dict[str, pa.StructType] = {}


def arrow_schema() -> pa.Schema:
    """PLANNED_ROWS as an Arrow schema (built once per Python worker)."""
    global _ARROW_SCHEMA
    if _ARROW_SCHEMA is None:
        _ARROW_SCHEMA = contract.arrow_schema(contract.PLANNED_ROWS)
    return _ARROW_SCHEMA


def empty_table() -> pa.Table:
    """PLANNED_ROWS without rows (built once per worker: 59 empty columns cost ~0.35 ms to make)."""
    global _EMPTY_TABLE
    if _EMPTY_TABLE is None:
        _EMPTY_TABLE = arrow_schema().empty_table()
    return _EMPTY_TABLE


def row_type() -> pa.StructType:
    """One row of PLANNED_ROWS as an Arrow struct: its fields are the schema's (built once per worker)."""
    global _ROW_TYPE
    if _ROW_TYPE is None:
        _ROW_TYPE = pa.struct(list(arrow_schema()))
    return _ROW_TYPE


def kind_row_type(kind: str) -> pa.StructType:
    """A row of one kind as an Arrow struct of the columns that kind fills (contract.KIND_COLUMNS)."""
    found = _KIND_TYPES.get(kind)
    if found is None:
        whole = row_type()
        found = _KIND_TYPES[kind] = pa.struct([whole.field(c) for c in contract.KIND_COLUMNS[kind]])
    return found


# A row of a kind fills a few of the 59 columns (an ASSIGNMENT row 7, a TRANSITION row 6: most rows of a
# call), and Arrow looks every column up in every row's dict; converted kind by kind, as structs of their
# kind's columns, a call's rows cost 0.4x as much (the job's calls of ~64 applications, ~5,700 rows: 1.78
# -> 0.70 M instructions per application). Putting the parts together costs about as much as converting
# ~300 rows, so a call of fewer rows than this is converted whole.
KINDS = tuple(contract.KIND_COLUMNS)
CONVERT_BY_KIND_FROM_ROWS = 1000


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of PLANNED_ROWS as one Arrow table of one record batch. The rows of each kind keep their order;
    under CONVERT_BY_KIND_FROM_ROWS rows all rows do, and from there the rows come kind by kind, in the
    order of KINDS (the job splits the rows by kind, so each output table's rows come in the same order
    either way).

    A row holds the columns its kind fills (contract.KIND_COLUMNS); a missing one is null. One record
    batch, as pyspark sends each batch a call returns as its own Arrow message (about 0.7 ms per
    application). A value a column cannot hold fails with the same error as `Table.from_pylist`'s when
    the rows are converted whole; `planned_table` converts them whole to find the application."""
    return pieces_table([rows])


def pieces_table(pieces: Pieces) -> pa.Table:
    """`rows_table` of the pieces' rows (`plan_rows.flat_rows`), the same table, without a dict per row of
    a block in a call of CONVERT_BY_KIND_FROM_ROWS rows or more: its columns go to Arrow as they are. A
    kind's rows are either all in blocks or all dicts (as `plan_application_pieces` makes them), so they
    keep their order."""
    if sum(map(len, pieces)) < CONVERT_BY_KIND_FROM_ROWS:
        return converted_whole(flat_rows(pieces))
    others: list[dict[str, Any]] = []  # of no known kind: converted whole, to fail as whole rows fail
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    blocks: dict[str, list[RowBlock]] = {kind: [] for kind in KINDS}
    for piece in pieces:
        if isinstance(piece, RowBlock):
            blocks[piece.kind].append(piece)
            continue
        for row in piece:
            by_kind.get(row.get("kind"), others).append(row)
    # The empty whole table gives every column its type; a part's missing columns come out null.
    parts = [converted_whole(others) if others else empty_table()]
    for kind in KINDS:
        if by_kind[kind]:
            batch = pa.RecordBatch.from_struct_array(pa.array(by_kind[kind], type=kind_row_type(kind)))
            parts.append(pa.Table.from_batches([batch]))
        if blocks[kind]:
            parts.append(blocks_table(kind, blocks[kind]))
    together = pa.concat_tables(parts, promote_options="default")
    return together.select(arrow_schema().names).combine_chunks()


def blocks_table(kind: str, blocks: list[RowBlock]) -> pa.Table:
    """The blocks' rows, in order, as a table of the kind's columns: each column one list for Arrow, the
    kind and each row's application repeated by Arrow itself."""
    fields = list(kind_row_type(kind))
    lengths = [len(block) for block in blocks]
    arrays = []
    for field in fields:
        if field.name == "kind":
            arrays.append(pa.repeat(pa.scalar(kind, field.type), sum(lengths)))
        elif field.name == "app_id":
            owners = pa.array(np.repeat(np.arange(len(blocks)), lengths))
            arrays.append(pa.array([block.app_id for block in blocks], type=field.type).take(owners))
        else:
            values: list[Any] = []
            for block in blocks:
                values += block.columns[field.name]
            arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))])


def converted_whole(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of PLANNED_ROWS, in the order given, converted in one call: as one struct array, which Arrow
    converts in one pass over the dicts (`Table.from_pylist` converts column by column, and its fixed cost
    per column, about 5 us for 59 columns, was most of a small application's conversion)."""
    batch = pa.RecordBatch.from_struct_array(pa.array(rows, type=row_type()))
    return pa.Table.from_batches([batch])


# A grouped-map call makes many short-lived objects and next to no reference cycles. At Python's default
# threshold (700 allocations) the cyclic collector ran every few tasks and took about 7% of a call (measured
# one application at a time on `make bench`'s 10,000 applications); at this one, as little as with the
# collector off. Set for good in each Python worker, which plans applications and nothing else; the plans
# themselves run with the collector paused (assignor.gc_pause), this covers the rest of a call.
WORKER_GC_THRESHOLD = (10_000, 10, 10)


def tune_worker_gc() -> None:
    """Raise the young-generation threshold of this process to WORKER_GC_THRESHOLD (never lower it)."""
    if gc.get_threshold()[0] < WORKER_GC_THRESHOLD[0]:
        gc.set_threshold(*WORKER_GC_THRESHOLD)


def _application_pieces(app_id: str, scenario: str, settings: PlanSettings) -> Pieces:
    """`plan_application_pieces`. It promises not to raise; should it break that promise, the one
    application still gets its INVALID_INPUT row, and the others of its call their plans."""
    try:
        return plan_application_pieces(app_id, scenario, settings)
    except Exception as e:
        return [[failed_row(app_id, f"could not be planned: {type(e).__name__}: {e}", settings)]]


def planned_table(pairs: Iterable[tuple[str, str]], settings: PlanSettings) -> pa.Table:
    """The rows of every application given, as one Arrow table.

    A value Arrow cannot hold in its column (a number past the column's range, which the planner's checks
    should already have kept out) must not sink the others: then each application is converted alone, and
    one that still fails gets its one INVALID_INPUT row instead of its plan."""
    per_app = [(app_id, _application_pieces(app_id, scenario, settings)) for app_id, scenario in pairs]
    try:
        return pieces_table([piece for _, pieces in per_app for piece in pieces])
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        pass
    tables = []
    for app_id, pieces in per_app:
        try:
            tables.append(converted_whole(flat_rows(pieces)))
        except (pa.ArrowException, OverflowError, TypeError, ValueError) as e:
            detail = f"could not be written: {type(e).__name__}: {e}"
            tables.append(converted_whole([failed_row(app_id, detail, settings)]))
    return pa.concat_tables(tables).combine_chunks()


def pandas_function(
    settings: PlanSettings, progress: Accumulator[int] | None = None
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def plan_group(frame: pd.DataFrame) -> pd.DataFrame:
        tune_worker_gc()
        # Through Arrow so that nullable ints and string lists keep their types.
        planned = planned_table(zip(frame["app_id"], frame["scenario"], strict=False), settings).to_pandas()
        if progress is not None:
            progress.add(len(frame))
        return planned

    return plan_group


def arrow_function(
    settings: PlanSettings, progress: Accumulator[int] | None = None
) -> Callable[[pa.Table], pa.Table]:
    def plan_group(table: pa.Table) -> pa.Table:
        tune_worker_gc()
        pairs = zip(table.column("app_id").to_pylist(), table.column("scenario").to_pylist(), strict=False)
        planned = planned_table(pairs, settings)
        if progress is not None:
            progress.add(table.num_rows)
        return planned

    return plan_group


# pyspark's own work per call of a grouped map (an Arrow stream in and one out, on both sides) measured
# ~0.8 ms, as much as planning a small application: paid once per group of applications instead of once per
# application. Small enough groups that a call's input and output stay a few megabytes.
APPLICATIONS_PER_CALL = 64


def call_groups(applications: int) -> int:
    """How many calls plan `applications` applications (about APPLICATIONS_PER_CALL each)."""
    return max(1, math.ceil(applications / APPLICATIONS_PER_CALL))


def call_group(app_id: Column, groups: int) -> Column:
    """The call an application is planned in: a hash of its id, so the same fleet gives the same groups."""
    return F.pmod(F.xxhash64(app_id), F.lit(groups))


def plan_in_grouped_map(
    apps: DataFrame,
    settings: PlanSettings,
    kind: GroupedMapKind | str,
    progress: Accumulator[int] | None = None,
    *,
    applications: int | None = None,
) -> DataFrame:
    """apps: app_id, scenario (one row per application) -> PLANNED_ROWS. `progress` (an int accumulator)
    counts the applications planned; Spark merges a task's counts when the task ends.

    With `applications` (how many rows `apps` has), the calls plan `call_groups(applications)` groups of
    applications; without it, one call per application."""
    if applications is None:
        grouped = apps.groupBy("app_id")
    else:
        grouped = apps.groupBy(call_group(F.col("app_id"), call_groups(applications)).alias("call_group"))
    if GroupedMapKind.parse(kind) is GroupedMapKind.PANDAS:
        return grouped.applyInPandas(pandas_function(settings, progress), schema=PLANNED_ROWS)
    return grouped.applyInArrow(arrow_function(settings, progress), schema=PLANNED_ROWS)


__all__ = [
    "APPLICATIONS_PER_CALL",
    "COLUMNS",
    "KINDS",
    "GroupedMapKind",
    "PlanSettings",
    "arrow_function",
    "blocks_table",
    "call_groups",
    "converted_whole",
    "kind_row_type",
    "pandas_function",
    "pieces_table",
    "plan_in_grouped_map",
    "rows_table",
]
