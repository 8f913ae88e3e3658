"""Lags computed in Spark against hand-computed values, on input tables written by delta-rs (another Delta
writer: every column nullable), read at the latest and at an older version (time travel)."""

from __future__ import annotations

import pytest
from deltalake import write_deltalake
from pyspark.sql import functions as F

from fleet_assignor.assignor import ProcessId, TaskId
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete, read_inputs
from fleet_assignor.jobs.input_writer import arrow_table
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.jobs.prepare import prepare_fleet
from fleet_assignor.jobs.scenario_shape import shape_application
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES

pytestmark = pytest.mark.spark

MAX_LONG = 2**63 - 1
CL = "lags-store-changelog"


def P(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def _task(app, task_id, changelogs, stores=("s",)):
    return {
        "app_id": app, "task_id": task_id, "state_stores": list(stores) if changelogs else [],
        "source_partitions": [{"topic": f"{app}-in", "partition": int(task_id[-1])}],
        "changelog_partitions": [{"topic": t, "partition": p} for t, p in changelogs],
    }  # fmt: skip


def _sub(app, pid, consumer, prev_active=()):
    return {"app_id": app, "process_id": pid, "consumer_client_id": consumer,
            "prev_active_tasks": list(prev_active), "prev_standby_tasks": []}  # fmt: skip


def _off(app, pid, consumer, task, value):
    return {
        "app_id": app,
        "process_id": pid,
        "consumer_client_id": consumer,
        "task_id": task,
        "offset_sum": value,
    }


TASKS_V0 = [
    _task("lags", "0_0", [(CL, 0), (CL, 1)]),  # end sum 100 + 50
    _task("lags", "0_1", [(CL, 2), (CL, 3)]),  # end sum saturates: (2^63-1) + 5
    _task("lags", "0_2", []),  # stateless
    _task("nolags", "0_0", [("nolags-changelog", 0)]),  # no end offset row: lags not computable
]
ROWS = {
    "applications": [{"app_id": "lags", "num_standby_replicas": 1}, {"app_id": "nolags"}],
    "client_subscriptions": [
        _sub("lags", P(1), "c1a"), _sub("lags", P(1), "c1b"), _sub("lags", P(2), "c2"),
        _sub("lags", P(3), "c3"), _sub("lags", P(4), "c4", ["0_0"]), _sub("lags", P(5), "c5"),
        _sub("lags", P(6), "c6"), _sub("lags", P(7), "c7a"), _sub("lags", P(7), "c7b"),
        _sub("nolags", P(11), "q1", ["0_0"]), _sub("nolags", P(12), "q2"), _sub("nolags", P(13), "q3"),
    ],
    "task_offsets": [
        _off("lags", P(1), "c1a", "0_0", -2), _off("lags", P(1), "c1b", "0_0", 30),  # any -2 wins
        _off("lags", P(1), "c1a", "0_1", 0),
        _off("lags", P(2), "c2", "0_0", 100),
        _off("lags", P(2), "c2", "0_2", 7),  # a task without changelog: ignored
        _off("lags", P(3), "c3", "0_0", 200),  # above the end sum: corrupted state
        _off("lags", P(6), "c6", "0_0", -3),
        _off("lags", P(7), "c7a", "0_0", 20), _off("lags", P(7), "c7b", "0_0", 70),  # the largest counts
        _off("nolags", P(12), "q2", "0_0", 10), _off("nolags", P(13), "q3", "0_0", -2),
    ],
    "changelog_end_offsets": [
        {"app_id": "lags", "topic": CL, "partition": 0, "end_offset": 100},
        {"app_id": "lags", "topic": CL, "partition": 1, "end_offset": 50},
        {"app_id": "lags", "topic": CL, "partition": 2, "end_offset": MAX_LONG},
        {"app_id": "lags", "topic": CL, "partition": 3, "end_offset": 5},
    ],
    "partition_racks": [],
}  # fmt: skip

EXPECTED_LAGS = {  # (client, task) -> lag, computed by hand from tables.md's rules
    ("lags", 1, "0_0"): -2,
    ("lags", 1, "0_1"): MAX_LONG,
    ("lags", 2, "0_0"): 50,
    ("lags", 3, "0_0"): 150,
    ("lags", 4, "0_0"): -2,
    ("lags", 5, "0_0"): 150,  # no state: the whole changelog
    ("lags", 5, "0_1"): MAX_LONG,
    ("lags", 6, "0_0"): -3,
    ("lags", 7, "0_0"): 80,
    ("nolags", 11, "0_0"): -2,
    ("nolags", 12, "0_0"): -3,
    ("nolags", 13, "0_0"): -2,
}


@pytest.fixture(scope="module")
def delta_rs_inputs(tmp_path_factory):
    base = tmp_path_factory.mktemp("delta-rs") / "in"
    for table in INPUT_TABLES:
        rows = TASKS_V0 if table == "tasks" else ROWS[table]
        write_deltalake(str(base / table), arrow_table(table, rows), mode="overwrite")
    # Version 1 of `tasks`: the topology gained a task.
    write_deltalake(str(base / "tasks"), arrow_table("tasks", [_task("lags", "0_3", [])]), mode="append")
    return base


def _scenarios(spark, base, as_of):
    config = JobConfig(input_path=str(base))
    snapshot = read_inputs(spark, {t: config.input_location(t) for t in INPUT_TABLES}, as_of)
    prepared = prepare_fleet(snapshot.frames)
    apps = prepared.apps.collect()
    prepared.release()
    return snapshot, {r["app_id"]: shape_application(r["app_id"], r["scenario"]) for r in apps}


def test_lags_match_hand_computed_values(spark, delta_rs_inputs):
    _, shaped = _scenarios(spark, delta_rs_inputs, {"tasks": 0})
    assert not shaped["lags"].problems and not shaped["nolags"].problems
    assert shaped["nolags"].scenario.get("lags_computed") is False
    assert "lags_computed" not in shaped["lags"].scenario
    states = {app: load_scenario(app_input.scenario) for app, app_input in shaped.items()}
    for (app, client, task), lag in EXPECTED_LAGS.items():
        state = states[app].application_state.clients[ProcessId.parse(P(client))]
        assert state.lag_for(TaskId.parse(task)) == lag, (app, client, task)
    lags = states["lags"]
    assert lags.end_offset_sums[TaskId.parse("0_0")] == 150
    assert lags.end_offset_sums[TaskId.parse("0_1")] == MAX_LONG
    assert TaskId.parse("0_2") not in lags.application_state.clients[ProcessId.parse(P(2))].task_lags


def test_time_travel_reads_the_older_version(spark, delta_rs_inputs):
    old, old_shaped = _scenarios(spark, delta_rs_inputs, {"tasks": 0})
    new, new_shaped = _scenarios(spark, delta_rs_inputs, {})
    assert (old.versions["tasks"], new.versions["tasks"]) == (0, 1)
    assert [t["id"] for t in old_shaped["lags"].scenario["tasks"]] == ["0_0", "0_1", "0_2"]
    assert [t["id"] for t in new_shaped["lags"].scenario["tasks"]] == ["0_0", "0_1", "0_2", "0_3"]


def test_job_plans_delta_rs_tables_at_a_version(spark, delta_rs_inputs, tmp_path):
    out = str(tmp_path / "out")
    config = JobConfig(
        input_path=str(delta_rs_inputs), output_path=out, run_id="delta-rs", as_of_versions={"tasks": 0},
        planned_at_ms=1_767_225_600_000,
    )  # fmt: skip
    summary = run_job(spark, config)
    assert summary.statuses == {"OK": 2}
    run = read_complete(spark, out, "runs").first()
    assert run["input_versions"]["tasks"] == 0
    results = {r["app_id"]: r for r in read_complete(spark, out, "assignment_results").collect()}
    assert results["lags"]["num_tasks"] == 3 and results["lags"]["assignor"] == "high_availability"
    assert results["nolags"]["assignor"] == "fallback_prior"
    assert "lags_computed is false" in results["nolags"]["error_detail"]
    # restore_lag of a transition is the lag clamped at 0: a -3 counts the end sum, unknown here (0).
    transitions = read_complete(spark, out, "task_transitions").where(F.col("app_id") == "lags").collect()
    by_key = {(r["process_id"], r["task_id"]): r for r in transitions}
    for (pid, task), row in by_key.items():
        if row["transition"] == "CLOSE":
            assert row["restore_lag"] == 0
        lag = EXPECTED_LAGS.get(("lags", int(pid[-2:]), task))
        if lag is not None and row["transition"] != "CLOSE":
            want = 0 if lag == -2 else (150 if lag == -3 else lag)
            assert row["restore_lag"] == want, (pid, task)
