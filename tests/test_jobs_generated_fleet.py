"""A fleet of random scenarios end to end: every shape the scenario generator draws (stale ids, conflicting
owners, sentinel lags, lags not computed, consumers with their own history, partial racks, client tags, and
the unusual shapes) written into the input tables with the explorer's `scenario_rows`, planned by the job on
real local Delta, and compared application by application with the one-application planner on the
scenario those rows say (`input_rows_to_scenarios`, tables.md read without Spark). The examples' fleet
(test_jobs_end_to_end) has none of these inputs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pyspark.sql import functions as F

from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.explore.input_scenarios import scenario_rows
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.schemas.contract import input_rows_to_scenarios, warnings_naming_rows
from tests.fixtures import thread_rows
from tests.scenario_generator import DEFAULT_KNOBS, UNUSUAL_SHAPES, Knobs, generate_scenario

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_000
KNOBS = {
    "default": DEFAULT_KNOBS,
    "racks": Knobs(racks=True, tags=True, strategies=("min_traffic", "balance_subtopology")),
    "members": Knobs(consumer_history_share=0.9, lags_unavailable_share=0.3),
    **{name: replace(DEFAULT_KNOBS, **overrides) for name, (overrides, _) in UNUSUAL_SHAPES.items()},
}
SEEDS = range(5)


@pytest.fixture(scope="module")
def generated_fleet(spark, tmp_path_factory):
    scenarios = []
    for name, knobs in KNOBS.items():
        for seed in SEEDS:
            scenarios.append({**generate_scenario(seed, knobs), "app_id": f"{name}-{seed}"})
    rows = scenario_rows(scenarios)
    base = tmp_path_factory.mktemp("generated-fleet")
    write_input_tables(spark, str(base / "in"), rows)
    config = JobConfig(
        input_path=str(base / "in"), output_path=str(base / "out"), planned_at_ms=PLANNED_AT_MS
    )
    summary = run_job(spark, replace(config, run_id="generated"))
    read = {s["app_id"]: s for s in input_rows_to_scenarios(rows)}
    return {"out": str(base / "out"), "scenarios": read, "summary": summary}


def _rows(spark, out, table):
    frame = read_complete(spark, out, table).where(F.col("run_id") == "generated")
    return [r.asDict(recursive=True) for r in frame.collect()]


def test_the_fleet_covers_the_inputs_it_is_for(spark, generated_fleet):
    scenarios = list(generated_fleet["scenarios"].values())
    results = {r["app_id"]: r for r in _rows(spark, generated_fleet["out"], "assignment_results")}
    assert len(scenarios) == len(KNOBS) * len(SEEDS)
    assert any(not s.get("lags_computed", True) for s in scenarios)
    assert any(c.get("rack") for s in scenarios for c in s["clients"])
    assert any(c.get("tags") for s in scenarios for c in s["clients"])
    assert sum(len(c["consumers"]) >= 8 for s in scenarios for c in s["clients"]) >= 10
    assert sum("unknown task" in (r["error_detail"] or "") for r in results.values()) >= 10


def test_every_generated_app_equals_the_one_app_planner(spark, generated_fleet):
    out = generated_fleet["out"]
    results = {r["app_id"]: r for r in _rows(spark, out, "assignment_results")}
    clients: dict[str, dict] = {}
    for r in _rows(spark, out, "client_assignments"):
        clients.setdefault(r["app_id"], {})[r["process_id"]] = (r["active_tasks"], r["standby_tasks"])
    threads: dict[str, list] = {}
    for r in _rows(spark, out, "assignments"):
        threads.setdefault(r["app_id"], []).append(
            (r["process_id"], r["consumer_client_id"], r["task_id"], r["task_type"], r["is_warmup"])
        )
    assert set(results) == set(generated_fleet["scenarios"])
    for app_id, scenario in generated_fleet["scenarios"].items():
        # The job's warnings name the rows they are about (tables.md), the planner's the scenario's paths.
        want = plan(warnings_naming_rows(load_scenario(scenario, now_ms=PLANNED_AT_MS), scenario)).as_dict()
        got = results[app_id]
        assert (got["status"], got["assignor"], got["error"]) == (
            want["status"], want["assignor"], want["error"],
        ), (app_id, got["error_detail"], want["error_detail"])  # fmt: skip
        assert got["error_detail"] == want["error_detail"], app_id
        assert got["probing_rebalance"] == want["probing_rebalance"], app_id
        for name, value in want["metrics"].items():
            assert got[name] == value, (app_id, name)
        want_clients = {e["process_id"]: (e["active"], e["standby"]) for e in want["assignment"]}
        assert clients.get(app_id, {}) == want_clients, app_id
        assert sorted(threads.get(app_id, [])) == thread_rows(want), app_id
