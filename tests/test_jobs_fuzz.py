"""Property-based fuzzing of the six input tables (hypothesis): random small fleets, some applications broken
at random (extreme numbers, nulls, unicode, duplicates, missing rows, rows of other applications, assignor
names), checked against the job's contract:

* the run completes;
* every planned application has exactly one `assignment_results` row; a broken one whose breakage makes its
  input unusable has status INVALID_INPUT with a detail naming the table;
* every untouched application's rows equal those of a run of the untouched applications alone;
* nothing is imported that the job's configuration did not allow.

Both run in `make soak` only (each example is two Spark runs: about 85 s here): FUZZ_EXAMPLES (default 3,
derandomized, repeatable) and FUZZ_SOAK_EXAMPLES (default 40) with fresh randomness. `make test` covers every
kind of breakage deterministically, one application each, in test_jobs_bad_input's catalogue and
test_jobs_hardening's hostile fleet.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from fleet_assignor.assignor.limits import MAX_INT, MAX_LONG
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.schemas.contract import merge_input_rows
from tests.fixtures import forget_delta_tables, healthy_app

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_000
MARKER_MODULE = "fleet_fuzz_side_effect"
RUN_TABLES = ("assignment_results", "assignments", "client_assignments", "task_transitions")

EXTREME_LONGS = [-(2**63), -(2**31) - 1, -4, -3, -2, -1, 0, 1, 2**31, 2**53 + 1, MAX_LONG - 1, MAX_LONG]
EXTREME_INTS = [-(2**31), -1, 0, 1, 5, MAX_INT]
NASTY_TEXT = ["", " ", "ü-名-\u200b", "a\nb", "'; DROP TABLE x; --", "\u0000", "x" * 300, "🚀"]


@dataclass(frozen=True)
class Breakage:
    """One way to damage an application's rows, and what its result must then be.

    `expect`: "INVALID_INPUT:<table word>", "OK", or "ANY" (valid or not depending on the value drawn)."""

    name: str
    change: Callable[[dict, st.DataObject], None]
    expect: Callable[[dict], str]


def _config(column: str, values: list) -> Breakage:
    lows = {"max_warmup_replicas": 1, "probing_rebalance_interval_ms": 60_000}
    highs = {"acceptable_recovery_lag": MAX_LONG, "probing_rebalance_interval_ms": MAX_LONG}

    def change(rows, data):
        value = data.draw(st.sampled_from(values), label=column)
        rows["applications"][0][column] = value
        rows["_drawn"] = value

    def expect(rows):
        value = rows["_drawn"]
        ok = lows.get(column, 0) <= value <= highs.get(column, MAX_INT)
        return "OK" if ok else "INVALID_INPUT:applications row"

    return Breakage(f"config {column}", change, expect)


def _set(table: str, index: int, column: str, values: list, expect: str) -> Breakage:
    def change(rows, data):
        rows[table][index][column] = data.draw(st.sampled_from(values), label=f"{table}.{column}")

    return Breakage(f"{table}.{column}", change, lambda rows: expect)


def _offset_expect(rows) -> str:
    value = rows["task_offsets"][0]["offset_sum"]
    return "INVALID_INPUT:task_offsets row" if value is not None and (value < -3 or value == -1) else "OK"


def _end_expect(rows) -> str:
    value = rows["changelog_end_offsets"][0]["end_offset"]
    return "INVALID_INPUT:changelog_end_offsets row" if value is not None and value < 0 else "OK"


def _duplicate(table: str, expect: str, conflicting: dict | None = None) -> Breakage:
    def change(rows, data):
        row = copy.deepcopy(rows[table][0])
        row.update(conflicting or {})
        rows[table].append(row)

    return Breakage(
        f"duplicate {table}" + (" (conflicting)" if conflicting else ""), change, lambda r: expect
    )


def _clear(table: str, expect: str) -> Breakage:
    def change(rows, data):
        rows[table].clear()
        if table == "client_subscriptions":
            rows["task_offsets"].clear()

    return Breakage(f"no {table} rows", change, lambda r: expect)


def _other_apps_rows(rows, data):
    """Rows of an application that is not planned (no applications or client_subscriptions row): ignored."""
    ghost = data.draw(st.sampled_from(["ghost", "ü-名", "'; --"]), label="ghost app")
    for table in ("tasks", "task_offsets", "changelog_end_offsets"):
        row = copy.deepcopy(rows[table][0])
        row["app_id"] = ghost
        rows[table].append(row)


def _assignor(rows, data):
    rows["applications"][0]["assignor"] = data.draw(
        st.sampled_from([f"{MARKER_MODULE}:Zen", "os:system", "pandas:DataFrame", "builtins:eval", "nosuch"]),
        label="assignor",
    )


def _unicode_ids(rows, data):
    text = data.draw(st.sampled_from([t for t in NASTY_TEXT if t]), label="consumer id")
    for table in ("client_subscriptions", "task_offsets"):
        for row in rows[table]:
            row["consumer_client_id"] = row["consumer_client_id"] + text


BREAKAGES = [
    _config("acceptable_recovery_lag", EXTREME_LONGS),
    _config("probing_rebalance_interval_ms", EXTREME_LONGS),
    _config("max_warmup_replicas", EXTREME_INTS),
    _config("num_standby_replicas", EXTREME_INTS),
    _config("rack_aware_traffic_cost", EXTREME_INTS),
    _set("task_offsets", 0, "offset_sum", [*EXTREME_LONGS, None], "ANY"),
    _set("changelog_end_offsets", 0, "end_offset", [*EXTREME_LONGS, None], "ANY"),
    _set("client_subscriptions", 0, "process_id", [None], "INVALID_INPUT:client_subscriptions row"),
    _set("client_subscriptions", 1, "consumer_client_id", [None], "INVALID_INPUT:client_subscriptions row"),
    _set(
        "client_subscriptions",
        0,
        "process_id",
        ["not-a-uuid", "ü", "", "{}"],
        "INVALID_INPUT:client_subscriptions",
    ),
    _set("tasks", 0, "task_id", [None], "INVALID_INPUT:tasks row"),
    _set("tasks", 1, "task_id", ["00_1", "x", "", "1_-1", "ü_1"], "INVALID_INPUT:tasks row"),
    _set("task_offsets", 0, "task_id", [None], "INVALID_INPUT:task_offsets row"),
    _set("client_subscriptions", 0, "rack_id", NASTY_TEXT, "OK"),
    _set(
        "applications",
        0,
        "rack_aware_assignment_strategy",
        ["fastest", "", "MIN_TRAFFIC"],
        "INVALID_INPUT:applications row",
    ),
    _duplicate("changelog_end_offsets", "OK"),
    _duplicate("changelog_end_offsets", "INVALID_INPUT:changelog_end_offsets row", {"end_offset": 7}),
    _duplicate("tasks", "INVALID_INPUT:tasks row"),
    _duplicate("applications", "OK"),
    _duplicate("applications", "INVALID_INPUT:applications row", {"num_standby_replicas": 0}),
    _duplicate("client_subscriptions", "INVALID_INPUT:client_subscriptions row"),
    _clear("tasks", "INVALID_INPUT:tasks"),
    _clear("client_subscriptions", "INVALID_INPUT:client_subscriptions"),
    _clear("changelog_end_offsets", "OK"),  # lags unknown: runs as fallback_prior, as Kafka does
    _clear("applications", "OK"),
    Breakage("rows of other applications", _other_apps_rows, lambda r: "OK"),
    Breakage("assignor named by a row", _assignor, lambda r: "INVALID_INPUT:applications row"),
    Breakage("unicode consumer ids", _unicode_ids, lambda r: "OK"),
]
for _b in BREAKAGES:
    if _b.name == "task_offsets.offset_sum":
        object.__setattr__(_b, "expect", _offset_expect)
    if _b.name == "changelog_end_offsets.end_offset":
        object.__setattr__(_b, "expect", _end_expect)


@pytest.fixture(scope="module")
def marker(spark, tmp_path_factory):
    """A module shipped to the Python workers whose import leaves a marker file."""
    base = tmp_path_factory.mktemp("fuzz-module")
    path = base / "imported"
    (base / f"{MARKER_MODULE}.py").write_text(
        f"open({str(path)!r}, 'a').close()\n\nfrom assignor.sticky import StickyTaskAssignor as Zen\n"
    )
    spark.sparkContext.addPyFile(str(base / f"{MARKER_MODULE}.py"))
    return path


def _rows_by_app(spark, out: str, run_id: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for table in RUN_TABLES:
        frame = read_complete(spark, out, table).where(F.col("run_id") == run_id).drop("run_id")
        frame = frame.drop("duration_ms", "simulation_ms")  # the machine's timings
        for r in frame.collect():
            record = r.asDict(recursive=True)
            rows.setdefault(record["app_id"], []).append(
                table + json.dumps(record, default=str, sort_keys=True)
            )
    return {app: sorted(lines) for app, lines in rows.items()}


def _fuzz(spark, tmp_path_factory, marker, data) -> None:
    num_apps = data.draw(st.integers(3, 5), label="applications")
    apps, broken = [], {}
    for index in range(1, num_apps + 1):
        name = f"app-{index}" if index % 2 else f"app-{index}-ü"
        rows = healthy_app(name, index)
        breakage = data.draw(st.one_of(st.none(), st.sampled_from(BREAKAGES)), label=f"{name} breakage")
        if breakage is not None and index > 1:  # app-1 always stays untouched
            breakage.change(rows, data)
            broken[name] = (breakage, breakage.expect(rows))
        rows.pop("_drawn", None)
        apps.append((name, rows))
    base = tmp_path_factory.mktemp("fuzz")
    write_input_tables(spark, str(base / "in"), merge_input_rows(*(rows for _, rows in apps)))
    config = JobConfig(input_path=str(base / "in"), output_path=str(base / "out"), run_id="fuzz",
                       planned_at_ms=PLANNED_AT_MS)  # fmt: skip
    run_job(spark, config)  # the run completes
    results = read_complete(spark, str(base / "out"), "assignment_results").collect()
    by_app: dict[str, list] = {}
    for r in results:
        by_app.setdefault(r["app_id"], []).append(r)
    planned = {name for name, rows in apps if rows["applications"] or rows["client_subscriptions"]}
    assert set(by_app) == planned, (sorted(by_app), sorted(planned))
    for name, rows in by_app.items():
        assert len(rows) == 1, (name, rows)
    for name, (breakage, expect) in broken.items():
        if name not in by_app:
            continue
        row = by_app[name][0]
        status, _, word = expect.partition(":")
        if status == "ANY":
            continue
        assert row["status"] == status, (name, breakage.name, row["error_detail"])
        if word:
            assert word in row["error_detail"], (name, breakage.name, row["error_detail"])
    # Untouched applications: the same rows as in a run of them alone.
    untouched = [(name, rows) for name, rows in apps if name not in broken]
    write_input_tables(spark, str(base / "clean"), merge_input_rows(*(rows for _, rows in untouched)))
    clean = JobConfig(input_path=str(base / "clean"), output_path=str(base / "clean-out"), run_id="fuzz",
                      planned_at_ms=PLANNED_AT_MS)  # fmt: skip
    run_job(spark, clean)
    mixed_rows = _rows_by_app(spark, str(base / "out"), "fuzz")
    clean_rows = _rows_by_app(spark, str(base / "clean-out"), "fuzz")
    for name, _ in untouched:
        assert mixed_rows[name] == clean_rows[name], name
    assert not marker.exists(), "a table row made the job import code"


FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "3"))
FUZZ_SOAK_EXAMPLES = int(os.environ.get("FUZZ_SOAK_EXAMPLES", "40"))
_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


@pytest.mark.soak
@settings(max_examples=FUZZ_EXAMPLES, derandomize=True, **_SETTINGS)
@given(data=st.data())
def test_random_breakages_never_sink_the_fleet(spark, tmp_path_factory, marker, data):
    try:
        _fuzz(spark, tmp_path_factory, marker, data)
    finally:
        forget_delta_tables(spark)  # each example writes four new fleets of tables


@pytest.mark.soak
@settings(max_examples=FUZZ_SOAK_EXAMPLES, **_SETTINGS)
@given(data=st.data())
def test_random_breakages_never_sink_the_fleet_soak(spark, tmp_path_factory, marker, data):
    try:
        _fuzz(spark, tmp_path_factory, marker, data)
    finally:
        forget_delta_tables(spark)
