"""A small fleet end to end on real local Delta tables: the shared example scenarios loaded into the input
tables, planned by the job with both grouped-map kinds, compared application by application with what the
one-application planner says about the same scenario."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.transitions import task_transitions
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete, read_inputs
from fleet_assignor.jobs.grouped import (
    APPLICATIONS_PER_CALL,
    GroupedMapKind,
    PlanSettings,
    call_groups,
    plan_in_grouped_map,
)
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.jobs.prepare import prepare_fleet
from fleet_assignor.schemas.contract import merge_input_rows, scenario_to_input_rows
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES
from tests.fixtures import equivalent_scenario, thread_rows

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z


@pytest.fixture(scope="module")
def fleet(spark, scenarios_dir, tmp_path_factory):
    """Nine example applications, one of them also without its applications row (defaults), and an
    application with no clients; planned twice (arrow, pandas) and the arrow run once more."""
    base = tmp_path_factory.mktemp("e2e")
    examples = sorted((scenarios_dir).glob("example-*.json"))
    assert len(examples) >= 5
    expected: dict[str, dict] = {}
    table_rows = []
    for path in examples:
        example = json.loads(Path(path).read_text())
        app_id = example["app_id"]
        table_rows.append(scenario_to_input_rows(example))
        expected[app_id] = equivalent_scenario(example, app_id)
    defaults_source = json.loads(examples[1].read_text())
    defaults_rows = scenario_to_input_rows({**defaults_source, "app_id": "defaults-app"})
    defaults_rows["applications"] = []
    for rack_row in defaults_rows["partition_racks"]:
        rack_row["cluster_id"] = None  # no applications row: the application's cluster is null
    table_rows.append(defaults_rows)
    expected["defaults-app"] = equivalent_scenario(defaults_source, "defaults-app", drop_configs=True)
    table_rows.append({"applications": [{"app_id": "no-clients-app", "num_standby_replicas": 1}]})
    write_input_tables(spark, str(base / "in"), merge_input_rows(*table_rows))

    config = JobConfig(
        input_path=str(base / "in"), output_path=str(base / "out"), planned_at_ms=PLANNED_AT_MS
    )
    summary = run_job(spark, replace(config, run_id="e2e-arrow", grouped_map=GroupedMapKind.ARROW))
    return {"in": str(base / "in"), "out": str(base / "out"), "expected": expected, "summary": summary}


def _count(spark, out, table, run_id):
    return spark.read.format("delta").load(f"{out}/{table}").where(F.col("run_id") == run_id).count()


def _rows(spark, out, table, run_id):
    frame = read_complete(spark, out, table).where(F.col("run_id") == run_id)
    return [r.asDict(recursive=True) for r in frame.collect()]


def test_every_example_app_equals_the_one_app_planner(spark, fleet):
    out = fleet["out"]
    results = {r["app_id"]: r for r in _rows(spark, out, "assignment_results", "e2e-arrow")}
    clients = _rows(spark, out, "client_assignments", "e2e-arrow")
    assignments = _rows(spark, out, "assignments", "e2e-arrow")
    transitions = _rows(spark, out, "task_transitions", "e2e-arrow")
    for app_id, scenario in fleet["expected"].items():
        want = plan_scenario(scenario, now_ms=PLANNED_AT_MS)
        got = results[app_id]
        assert got["status"] == want["status"] == "OK", (app_id, got["error_detail"])
        assert got["assignor"] == want["assignor"]
        assert (got["error"], got["error_detail"]) == (want["error"], want["error_detail"])
        assert got["probing_rebalance"] == want["probing_rebalance"]
        assert got["unassigned_tasks"] == want["unassigned"]
        for name, value in want["metrics"].items():
            assert got[name] == value, (app_id, name)

        got_clients = {
            r["process_id"]: (r["active_tasks"], r["standby_tasks"], _ms(r["followup_rebalance_deadline"]))
            for r in clients
            if r["app_id"] == app_id
        }
        want_clients = {
            e["process_id"]: (e["active"], e["standby"], e["followup_rebalance_deadline_ms"])
            for e in want["assignment"]
        }
        assert got_clients == want_clients, app_id

        got_threads = sorted(
            (r["process_id"], r["consumer_client_id"], r["task_id"], r["task_type"], r["is_warmup"])
            for r in assignments
            if r["app_id"] == app_id
        )
        assert got_threads == thread_rows(want), app_id

        state = load_scenario(scenario, now_ms=PLANNED_AT_MS)
        want_transitions = sorted(tuple(t.as_row().values()) for t in task_transitions(state, want))
        got_transitions = sorted(
            (r["process_id"], r["task_id"], r["transition"], r["restore_lag"])
            for r in transitions
            if r["app_id"] == app_id
        )
        assert got_transitions == want_transitions, app_id


def _ms(value):
    if value is None:
        return None
    return int(value.replace(tzinfo=timezone.utc).timestamp() * 1000)


def test_no_clients_app_is_invalid_input_and_isolated(spark, fleet):
    results = {r["app_id"]: r for r in _rows(spark, fleet["out"], "assignment_results", "e2e-arrow")}
    bad = results["no-clients-app"]
    assert bad["status"] == "INVALID_INPUT"
    assert "client_subscriptions" in bad["error_detail"] and "no clients" in bad["error_detail"]
    assert bad["num_tasks"] is None and bad["active_moves"] is None
    assert sum(r["status"] == "OK" for r in results.values()) == len(fleet["expected"])
    for table in ("assignments", "client_assignments", "task_transitions"):
        assert not [
            r for r in _rows(spark, fleet["out"], table, "e2e-arrow") if r["app_id"] == "no-clients-app"
        ]


def test_pandas_and_arrow_grouped_maps_give_identical_rows(spark, fleet):
    snapshot = read_inputs(
        spark, {t: JobConfig(input_path=fleet["in"]).input_location(t) for t in INPUT_TABLES}, {}
    )
    prepared = prepare_fleet(snapshot.frames)
    apps = prepared.apps.localCheckpoint(eager=True)
    prepared.release()
    settings = PlanSettings(now_ms=PLANNED_AT_MS)
    # The two timing columns are the machine's, not the plan's.
    timings = ("duration_ms", "simulation_ms")
    planned = [plan_in_grouped_map(apps, settings, kind).drop(*timings) for kind in GroupedMapKind]
    assert planned[0].count() > len(fleet["expected"])
    assert_df_equality(planned[0], planned[1], ignore_row_order=True, ignore_nullable=True)


@pytest.mark.parametrize("kind", list(GroupedMapKind))
def test_applications_planned_in_groups_give_the_rows_of_one_call_each(spark, fleet, kind):
    snapshot = read_inputs(
        spark, {t: JobConfig(input_path=fleet["in"]).input_location(t) for t in INPUT_TABLES}, {}
    )
    prepared = prepare_fleet(snapshot.frames)
    apps = prepared.apps.localCheckpoint(eager=True)
    prepared.release()
    count = apps.count()
    settings = PlanSettings(now_ms=PLANNED_AT_MS)
    timings = ("duration_ms", "simulation_ms")
    alone = plan_in_grouped_map(apps, settings, kind).drop(*timings)
    # All in one call (the broken application among the good ones), and one more call than applications
    # (hashing leaves most of them alone in theirs).
    for applications in (count, (count + 1) * APPLICATIONS_PER_CALL):
        assert call_groups(applications) == (1 if applications == count else count + 1)
        grouped = plan_in_grouped_map(apps, settings, kind, applications=applications).drop(*timings)
        assert_df_equality(alone, grouped, ignore_row_order=True, ignore_nullable=True)


def test_run_rows_and_runs_row(spark, fleet):
    out = fleet["out"]
    runs = _rows(spark, out, "runs", "e2e-arrow")
    assert len(runs) == 1
    run = runs[0]
    assert run["status"] == "COMPLETE"
    assert run["planned_at"].replace(tzinfo=timezone.utc) == datetime.fromtimestamp(
        PLANNED_AT_MS / 1000, tz=timezone.utc
    )
    assert run["num_applications"] == len(fleet["expected"]) + 1
    assert (run["num_ok"], run["num_invalid_input"]) == (len(fleet["expected"]), 1)
    assert run["input_versions"] == dict.fromkeys(INPUT_TABLES, 0)
    keys = read_complete(spark, out, "assignments").where(F.col("run_id") == "e2e-arrow")
    assert keys.count() == keys.select("app_id", "process_id", "task_id", "task_type").distinct().count()
    results = _rows(spark, out, "assignment_results", "e2e-arrow")
    assert all(r["planned_at"] == run["planned_at"] for r in results)


def test_summary_counts(fleet):
    summary = fleet["summary"]
    assert summary.statuses == {"OK": len(fleet["expected"]), "INVALID_INPUT": 1}
    expected_tasks = sum(len(s["tasks"]) for s in fleet["expected"].values())
    assert summary.num_tasks == expected_tasks
    assert "COMPLETE" in summary.text() and "invalid input" in summary.text()
