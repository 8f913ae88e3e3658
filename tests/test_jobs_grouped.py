"""The grouped map (no Spark session needed): every application's rows as one Arrow table in the schema
derived from the contract, one record batch per call, the workers' GC threshold, and an application whose
rows Arrow cannot hold isolated as one INVALID_INPUT row."""

from __future__ import annotations

import gc
import sys
import types

import pyarrow as pa
import pytest

from fleet_assignor.jobs.grouped import (
    CONVERT_BY_KIND_FROM_ROWS,
    KINDS,
    WORKER_GC_THRESHOLD,
    GroupedMapKind,
    arrow_function,
    arrow_schema,
    pandas_function,
    pieces_table,
    rows_table,
)
from fleet_assignor.jobs.plan_rows import (
    COLUMNS,
    PlanSettings,
    RowBlock,
    flat_rows,
    plan_application,
    plan_application_pieces,
)
from fleet_assignor.schemas import contract
from fleet_assignor.schemas.contract import KIND_COLUMNS
from tests.fixtures import JOBS_NOW, FailingAssignor, compact


@pytest.fixture(autouse=True)
def custom_assignors(monkeypatch):
    module = types.ModuleType("fleet_test_assignors")
    module.FailingAssignor = FailingAssignor
    monkeypatch.setitem(sys.modules, "fleet_test_assignors", module)


def test_the_arrow_schema_is_the_contract_s_planned_rows():
    assert arrow_schema() == contract.arrow_schema(contract.PLANNED_ROWS)
    assert arrow_schema().names == list(COLUMNS) == list(contract.PLANNED_ROWS.column_names)
    assert arrow_schema().field("followup_rebalance_deadline_ms").type == pa.int64()


def test_the_grouped_map_kind_is_parsed_from_its_setting():
    assert GroupedMapKind.parse("Arrow") is GroupedMapKind.ARROW
    assert GroupedMapKind.parse(GroupedMapKind.PANDAS) is GroupedMapKind.PANDAS
    with pytest.raises(ValueError, match="grouped map kind must be one of"):
        GroupedMapKind.parse("polars")


def test_arrow_output_holds_every_value_of_every_kind_of_row():
    """The grouped map's Arrow table holds every value of every row, in the rows' order, and nulls where a
    kind fills nothing."""
    rows = plan_application("a", compact(), PlanSettings(now_ms=JOBS_NOW))
    rows += plan_application(
        "b",
        compact(app_id="b"),
        PlanSettings(now_ms=JOBS_NOW, assignor="fleet_test_assignors:FailingAssignor"),
    )
    rows += plan_application("c", compact(clients=[]), PlanSettings(now_ms=JOBS_NOW))
    assert {r["kind"] for r in rows} == {"RESULT", "ASSIGNMENT", "CLIENT", "TRANSITION", "ROLLOUT"}
    assert {r["status"] for r in rows if r["kind"] == "RESULT"} == {"OK", "ASSIGNOR_FAILED", "INVALID_INPUT"}

    # A row holds only columns its kind fills: a key that is no column would be dropped on the way to Arrow.
    for row in rows:
        assert set(row) <= set(KIND_COLUMNS[row["kind"]]), row["kind"]

    full_rows = [{column: row.get(column) for column in COLUMNS} for row in rows]
    assert rows_table(rows).to_pylist() == full_rows


def test_arrow_output_is_one_record_batch_per_call():
    """pyspark writes every record batch a grouped-map call returns as its own Arrow message, at a cost per
    batch that outweighs small applications' planning: the per-kind tables leave as one batch."""
    rows = plan_application("a", compact(), PlanSettings(now_ms=JOBS_NOW))
    assert len({r["kind"] for r in rows}) > 1
    batches = rows_table(rows).to_batches()
    assert len(batches) == 1 and batches[0].num_rows == len(rows)


def many_applications_rows() -> list[dict]:
    """The rows of enough applications for a call to be converted kind by kind (each planned for real)."""
    rows: list[dict] = []
    i = 0
    while len(rows) < CONVERT_BY_KIND_FROM_ROWS:
        app_id = f"app-{i}"
        rows += plan_application(app_id, compact(app_id=app_id), PlanSettings(now_ms=JOBS_NOW))
        i += 1
    return rows


def test_a_call_of_many_rows_holds_every_value_with_each_kind_s_rows_in_their_order():
    """A call of many rows converts its rows kind by kind: every value is still there, nulls where a kind
    fills nothing, in one record batch; the rows come kind by kind, each kind's in their order (the job
    splits them by kind)."""
    rows = many_applications_rows()
    assert {r["kind"] for r in rows} == set(KINDS)
    table = rows_table(rows)
    assert table.schema == arrow_schema()
    assert len(table.to_batches()) == 1
    full_rows = [{column: row.get(column) for column in COLUMNS} for row in rows]
    assert table.to_pylist() == [r for kind in KINDS for r in full_rows if r["kind"] == kind]


def test_a_call_s_blocks_of_columns_give_the_table_their_rows_give_as_dicts():
    """In a big call the assignments and transitions go to Arrow column by column: the table equals the one
    of the same rows as dicts, row for row, over applications of different sizes; each block holds its
    kind's columns."""
    settings = PlanSettings(now_ms=JOBS_NOW)
    pieces: list = []
    i = 0
    while sum(map(len, pieces)) < CONVERT_BY_KIND_FROM_ROWS:
        app_id = f"app-{i}"
        scenario = compact(app_id=app_id, configs={"num_standby_replicas": i % 2})
        pieces += plan_application_pieces(app_id, scenario, settings)
        i += 1
    blocks = [p for p in pieces if isinstance(p, RowBlock)]
    assert {b.kind for b in blocks} == {"ASSIGNMENT", "TRANSITION"}
    assert all(tuple(b.columns) == KIND_COLUMNS[b.kind][2:] for b in blocks)
    assert len({len(b) for b in blocks if b.kind == "ASSIGNMENT"}) == 2  # with and without a standby
    table = pieces_table(pieces)
    assert len(table.to_batches()) == 1
    assert table.equals(rows_table(flat_rows(pieces)))


def test_a_call_of_many_rows_with_a_value_arrow_cannot_hold_isolates_its_application(monkeypatch):
    import fleet_assignor.jobs.grouped as grouped

    real = grouped.plan_application_pieces

    def oversized(app_id, compact_json, settings):
        pieces = real(app_id, compact_json, settings)
        if app_id == "bad":  # in a block of columns, as the call converts them
            next(p for p in pieces if isinstance(p, RowBlock) and p.kind == "ASSIGNMENT").columns[
                "is_warmup"
            ][0] = "yes"
        return pieces

    monkeypatch.setattr(grouped, "plan_application_pieces", oversized)
    per_app = len(plan_application("a", compact(), PlanSettings(JOBS_NOW)))
    pairs = [
        (f"app-{i}", compact(app_id=f"app-{i}")) for i in range(CONVERT_BY_KIND_FROM_ROWS // per_app + 1)
    ]
    pairs.insert(len(pairs) // 2, ("bad", compact(app_id="bad")))
    rows = grouped.planned_table(pairs, PlanSettings(JOBS_NOW)).to_pylist()
    bad = [r for r in rows if r["app_id"] == "bad"]
    assert len(bad) == 1 and bad[0]["status"] == "INVALID_INPUT"
    assert bad[0]["error_detail"].startswith("could not be written: ")
    results = [r["app_id"] for r in rows if r["kind"] == "RESULT"]
    assert results == [app_id for app_id, _ in pairs]
    assert all(r["status"] == "OK" for r in rows if r["kind"] == "RESULT" and r["app_id"] != "bad")


def test_a_grouped_map_call_raises_the_workers_gc_threshold_and_never_lowers_it():
    before = gc.get_threshold()
    table = pa.table({"app_id": ["a"], "scenario": [compact()]})
    try:
        gc.set_threshold(700, 10, 10)  # Python's default
        assert arrow_function(PlanSettings(now_ms=JOBS_NOW))(table).num_rows > 1
        assert gc.get_threshold() == WORKER_GC_THRESHOLD
        gc.set_threshold(700, 10, 10)
        assert len(pandas_function(PlanSettings(now_ms=JOBS_NOW))(table.to_pandas())) > 1
        assert gc.get_threshold() == WORKER_GC_THRESHOLD
        higher = (WORKER_GC_THRESHOLD[0] * 2, 20, 20)
        gc.set_threshold(*higher)
        arrow_function(PlanSettings(now_ms=JOBS_NOW))(table)
        assert gc.get_threshold() == higher
    finally:
        gc.set_threshold(*before)


def test_an_application_whose_rows_arrow_cannot_hold_gets_one_error_row_and_the_others_their_plan(
    monkeypatch,
):
    import fleet_assignor.jobs.grouped as grouped

    real = grouped.plan_application_pieces

    def oversized(app_id, compact_json, settings):
        pieces = real(app_id, compact_json, settings)
        if app_id == "bad":
            pieces[0][0]["num_clients"] = 1 << 40  # an int column of the result row
        return pieces

    monkeypatch.setattr(grouped, "plan_application_pieces", oversized)
    table = grouped.planned_table(
        [("good", compact()), ("bad", compact()), ("good2", compact())], PlanSettings(JOBS_NOW)
    )
    rows = table.to_pylist()
    bad = [r for r in rows if r["app_id"] == "bad"]
    assert len(bad) == 1 and bad[0]["status"] == "INVALID_INPUT"
    assert bad[0]["error_detail"].startswith("could not be written: ")

    def timeless(rows):
        return [{k: v for k, v in r.items() if k not in ("duration_ms", "simulation_ms")} for r in rows]

    good = [r for r in rows if r["app_id"] == "good"]
    assert len(good) > 1
    alone = plan_application("good", compact(), PlanSettings(JOBS_NOW))
    assert timeless(good) == timeless(rows_table(alone).to_pylist())
    assert [r["app_id"] for r in rows if r["kind"] == "RESULT"] == ["good", "bad", "good2"]


def test_an_application_whose_planning_raises_gets_one_error_row_and_the_others_of_its_call_their_plan(
    monkeypatch,
):
    import fleet_assignor.jobs.grouped as grouped

    real = grouped.plan_application_pieces

    def broken(app_id, compact_json, settings):
        if app_id == "bad":
            raise AttributeError("'int' object has no attribute 'get'")
        return real(app_id, compact_json, settings)

    monkeypatch.setattr(grouped, "plan_application_pieces", broken)
    rows = grouped.planned_table(
        [("good", compact()), ("bad", compact()), ("good2", compact())], PlanSettings(JOBS_NOW)
    ).to_pylist()
    bad = [r for r in rows if r["app_id"] == "bad"]
    assert len(bad) == 1 and bad[0]["status"] == "INVALID_INPUT"
    assert bad[0]["error_detail"] == (
        "could not be planned: AttributeError: 'int' object has no attribute 'get'"
    )
    results = {r["app_id"]: r["status"] for r in rows if r["kind"] == "RESULT"}
    assert results == {"good": "OK", "bad": "INVALID_INPUT", "good2": "OK"}


@pytest.mark.parametrize(
    "column, value",
    [("num_clients", 1 << 40), ("restore_lag", 1 << 64), ("status", 5), ("active_tasks", "0_1"),
     ("risks", [{"name": 1}]), ("is_warmup", "yes"), ("duration_ms", "fast"), ("kind", None)],
)  # fmt: skip
def test_rows_arrow_cannot_hold_fail_as_from_pylist_fails(column, value):
    rows = plan_application("app", compact(), PlanSettings(JOBS_NOW))
    rows[-1][column] = value

    def outcome(convert):
        try:
            return convert(rows).to_pylist()
        except Exception as e:
            return type(e), str(e)

    assert outcome(rows_table) == outcome(lambda r: pa.Table.from_pylist(r, schema=arrow_schema()))
