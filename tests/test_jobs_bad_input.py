"""Bad input never sinks the fleet: a catalogue of broken applications (one named INVALID_INPUT row each),
tolerated oddities (OK with a warning), a broken schema that stops the run before any write, and a run
that fails between its writes (invisible to readers, completed by a rerun without duplicates)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
from pyspark.sql import functions as F

from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.schemas.contract import merge_input_rows
from fleet_assignor.schemas.spark_schemas import SchemaDriftError
from tests.fixtures import healthy_app as healthy
from tests.fixtures import process_id as pid

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_000
RUN_ID = "catalogue"


def _sub(rows, **changes):
    row = copy.deepcopy(rows["client_subscriptions"][0])
    row.update(changes)
    rows["client_subscriptions"].append(row)


def _offset(app, index, consumer, task, value):
    return {"app_id": app, "process_id": pid(index, 1), "consumer_client_id": consumer, "task_id": task,
            "offset_sum": value}  # fmt: skip


def _set(rows, table, i, **changes):
    rows[table][i].update(changes)


# (name, how the healthy app is broken, words error_detail must contain: table, row key, problem)
BROKEN = [
    ("null-process-id", lambda r, a, i: _sub(r, process_id=None, consumer_client_id=f"{a}-c9"),
     ["client_subscriptions", "consumer_client_id={a}-c9", "process_id is null"]),
    ("null-consumer-id", lambda r, a, i: _sub(r, consumer_client_id=None),
     ["client_subscriptions", "process_id={p1}", "consumer_client_id is null"]),
    ("null-task-id", lambda r, a, i: r["tasks"].append({"app_id": a, "task_id": None, "state_stores": ["x"]}),
     ["tasks row", "task_id is null"]),
    ("orphan-offset", lambda r, a, i: r["task_offsets"].append(
        _offset(a, i, "ghost", "0_0", 5)),
     ["task_offsets row", "consumer_client_id=ghost", "no client_subscriptions row"]),
    ("offset-minus-one", lambda r, a, i: _set(r, "task_offsets", 0, offset_sum=-1),
     ["task_offsets row", "task_id=0_0", "offset_sum -1"]),
    ("offset-below-minus-three", lambda r, a, i: _set(r, "task_offsets", 0, offset_sum=-7),
     ["task_offsets row", "offset_sum -7"]),
    ("null-offset-task-id", lambda r, a, i: _set(r, "task_offsets", 0, task_id=None),
     ["task_offsets row", "task_id is null"]),
    ("conflicting-end-offsets", lambda r, a, i: r["changelog_end_offsets"].append(
        dict(r["changelog_end_offsets"][0], end_offset=200)),
     ["changelog_end_offsets row", "partition=0", "conflicting end_offset values 100, 200"]),
    ("conflicting-racks", lambda r, a, i: (
        _set(r, "applications", 0, cluster_id=f"{a}-cluster"),
        r["partition_racks"].extend([
            {"cluster_id": f"{a}-cluster", "topic": f"{a}-in", "partition": 0, "replica_racks": ["r1"]},
            {"cluster_id": f"{a}-cluster", "topic": f"{a}-in", "partition": 0, "replica_racks": ["r2"]},
        ])),
     ["partition_racks row", "topic={a}-in", "conflicting replica_racks"]),
    ("client-rows-disagree-rack", lambda r, a, i: _sub(r, consumer_client_id=f"{a}-c3", rack_id="r9"),
     ["client_subscriptions rows of", "process_id={p1}", "disagree on rack_id"]),
    ("client-rows-disagree-tags",
     lambda r, a, i: _sub(r, consumer_client_id=f"{a}-c3", client_tags={"zone": "z"}),
     ["client_subscriptions rows of", "disagree on client_tags"]),
    ("duplicate-consumer-id",
     lambda r, a, i: _set(r, "client_subscriptions", 1, consumer_client_id=f"{a}-c1"),
     ["client_subscriptions row", "consumer_client_id={a}-c1", "2 rows"]),
    ("no-clients", lambda r, a, i: (r["client_subscriptions"].clear(), r["task_offsets"].clear()),
     ["client_subscriptions", "no clients"]),
    ("no-topology", lambda r, a, i: r["tasks"].clear(),
     ["tasks", "no topology rows"]),
    ("process-id-not-uuid", lambda r, a, i: (
        _set(r, "client_subscriptions", 0, process_id="not-a-uuid"), r["task_offsets"].clear()),
     ["client_subscriptions rows of", "process_id=not-a-uuid"]),
    ("task-id-not-canonical", lambda r, a, i: r["tasks"].append(
        {"app_id": a, "task_id": "00_2", "state_stores": []}),
     ["tasks row", "task_id=00_2"]),
    ("config-out-of-range", lambda r, a, i: _set(r, "applications", 0, max_warmup_replicas=0),
     ["applications row", "app_id={a}", "column max_warmup_replicas"]),
    ("unknown-assignor", lambda r, a, i: _set(r, "applications", 0, assignor="no_such_assignor"),
     ["applications row", "column assignor", "no_such_assignor"]),
    ("duplicate-task-id", lambda r, a, i: r["tasks"].append(dict(r["tasks"][1], state_stores=["other"])),
     ["tasks row", "task_id=0_1", "2 rows for one task"]),
    ("conflicting-applications-rows", lambda r, a, i: r["applications"].append(
        dict(r["applications"][0], num_standby_replicas=0)),
     ["applications row", "app_id={a}", "2 conflicting rows"]),
    ("tag-missing-on-client", lambda r, a, i: _set(r, "applications", 0, rack_aware_assignment_tags=["rack"]),
     ["client_subscriptions rows of", "column client_tags", "'rack'"]),
]  # fmt: skip

# (name, change, what error_detail must mention, or None when nothing is worth a warning): the warning's
# table, row key and task.
TOLERATED = [
    ("unknown-task-in-prev-list",
     lambda r, a, i: _set(r, "client_subscriptions", 0, prev_active_tasks=["0_0", "9_9"]),
     "client_subscriptions row (process_id={p}, consumer_client_id={a}-c1), column prev_active_tasks: "
     "unknown task 9_9 dropped"),
    ("unknown-task-in-offsets", lambda r, a, i: r["task_offsets"].append(
        _offset(a, i, f"{a}-c1", "7_7", 3)),
     "task_offsets rows of (process_id={p}): unknown task 7_7 dropped"),
    ("task-in-both-prev-lists",
     lambda r, a, i: _set(r, "client_subscriptions", 1, prev_standby_tasks=["0_1"]),
     "client_subscriptions rows of (process_id={p2}): task 0_1 is in both"),
    ("identical-duplicate-end-offsets", lambda r, a, i: r["changelog_end_offsets"].append(
        dict(r["changelog_end_offsets"][0])), None),
    ("identical-duplicate-racks", lambda r, a, i: r["partition_racks"].extend(
        [{"cluster_id": None, "topic": f"{a}-in", "partition": 0, "replica_racks": ["r1", "r2"]}] * 2), None),
    ("empty-rack-equals-null", lambda r, a, i: (
        _set(r, "client_subscriptions", 0, rack_id=""),
        _sub(r, consumer_client_id=f"{a}-c3", rack_id=None)), None),
    ("offset-of-stateless-task", lambda r, a, i: r["task_offsets"].append(
        _offset(a, i, f"{a}-c1", "0_1", 3)),
     None),
    ("no-applications-row", lambda r, a, i: r["applications"].clear(), None),
    ("identical-duplicate-applications-rows", lambda r, a, i: r["applications"].append(
        dict(r["applications"][0])), None),
]  # fmt: skip


def _fleet() -> tuple[dict, dict, dict]:
    fleets, broken, tolerated = [], {}, {}
    for index, (name, breaks, words) in enumerate(BROKEN, start=1):
        app = f"broken-{name}"
        rows = healthy(app, index)
        breaks(rows, app, index)
        fleets.append(rows)
        broken[app] = [w.format(a=app, p1=pid(index, 1)) for w in words]
    for index, (name, change, word) in enumerate(TOLERATED, start=100):
        app = f"tolerated-{name}"
        rows = healthy(app, index)
        change(rows, app, index)
        fleets.append(rows)
        tolerated[app] = None if word is None else word.format(a=app, p=pid(index, 1), p2=pid(index, 2))
    for index in range(200, 203):
        fleets.append(healthy(f"healthy-{index}", index))
    # Rows of an application that is not planned (no applications row, no clients): ignored and counted.
    fleets.append({"tasks": [{"app_id": "unplanned", "task_id": "0_0", "state_stores": []}]})
    return merge_input_rows(*fleets), broken, tolerated


class Boom(RuntimeError):
    pass


@pytest.fixture(scope="module")
def catalogue(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("catalogue")
    rows, broken, tolerated = _fleet()
    write_input_tables(spark, str(base / "in"), rows)
    config = JobConfig(input_path=str(base / "in"), output_path=str(base / "out"), run_id=RUN_ID)

    def fail_after_assignments(table: str) -> None:
        if table == "assignments":
            raise Boom("injected failure after the assignments write")

    with pytest.raises(Boom, match="injected failure after the assignments write"):
        run_job(spark, replace(config, planned_at_ms=PLANNED_AT_MS), after_write=fail_after_assignments)
    out = str(base / "out")
    after_failure = {
        "raw_results": spark.read.format("delta").load(f"{out}/assignment_results").count(),
        "complete_results": read_complete(spark, out, "assignment_results").count()
        if (base / "out" / "runs").exists()
        else 0,
        "runs_exists": (base / "out" / "runs").exists(),
    }
    # The rerun gives no planning instant: it must take the failed attempt's.
    summary = run_job(spark, config)
    counts = {
        t: _count(spark, out, t) for t in ("assignment_results", "assignments", "task_transitions", "runs")
    }
    first_rows = _plan_rows(spark, out)
    again = run_job(spark, config)
    second_rows = _plan_rows(spark, out)
    return {
        "out": out,
        "broken": broken,
        "tolerated": tolerated,
        "after_failure": after_failure,
        "summary": summary,
        "again": again,
        "counts": counts,
        "rows_of_two_runs": (first_rows, second_rows),
    }


def _plan_rows(spark, out):
    """Every output row of the run but the timing column, sorted: what two runs must agree on."""
    rows = {}
    for table in ("assignment_results", "assignments", "client_assignments", "task_transitions"):
        frame = spark.read.format("delta").load(f"{out}/{table}").where(F.col("run_id") == RUN_ID)
        frame = frame.drop("duration_ms")
        rows[table] = sorted(
            json.dumps(r.asDict(recursive=True), default=str, sort_keys=True) for r in frame.collect()
        )
    return rows


def _count(spark, out, table):
    return spark.read.format("delta").load(f"{out}/{table}").where(F.col("run_id") == RUN_ID).count()


def _results(spark, out):
    frame = read_complete(spark, out, "assignment_results").where(F.col("run_id") == RUN_ID)
    return [r.asDict() for r in frame.collect()]


def test_catalogue_has_enough_distinct_breakages():
    assert len(BROKEN) >= 8
    assert len({name for name, _, _ in BROKEN}) == len(BROKEN)


def test_each_broken_app_gets_exactly_one_named_invalid_input_row(spark, catalogue):
    results = _results(spark, catalogue["out"])
    by_app: dict[str, list[dict]] = {}
    for row in results:
        by_app.setdefault(row["app_id"], []).append(row)
    for app, words in catalogue["broken"].items():
        rows = by_app.get(app, [])
        assert len(rows) == 1, app
        row = rows[0]
        assert row["status"] == "INVALID_INPUT", (app, row["error_detail"])
        for word in words:
            assert word in row["error_detail"], (app, word, row["error_detail"])
        assert row["num_tasks"] is None and row["restore_lag"] is None and row["duration_ms"] is None


def test_broken_apps_get_no_plan_rows(spark, catalogue):
    for table in ("assignments", "client_assignments", "task_transitions"):
        apps = {
            r["app_id"]
            for r in read_complete(spark, catalogue["out"], table)
            .where(F.col("run_id") == RUN_ID)
            .select("app_id")
            .distinct()
            .collect()
        }
        assert not apps & set(catalogue["broken"]), table
        assert set(catalogue["tolerated"]) <= apps, table


def test_every_other_app_is_planned_ok_with_its_warning(spark, catalogue):
    results = {r["app_id"]: r for r in _results(spark, catalogue["out"])}
    others = [app for app in results if app not in catalogue["broken"]]
    assert len(others) == len(catalogue["tolerated"]) + 3
    for app in others:
        assert results[app]["status"] == "OK", (app, results[app]["error_detail"])
        assert results[app]["num_tasks"] == 2
    for app, word in catalogue["tolerated"].items():
        if word is not None:
            assert word in (results[app]["error_detail"] or ""), app
    assert "unplanned" not in results


def test_summary_counts_statuses_and_ignored_rows(catalogue):
    summary = catalogue["summary"]
    assert summary.statuses == {
        "INVALID_INPUT": len(catalogue["broken"]),
        "OK": len(catalogue["tolerated"]) + 3,
    }
    assert summary.ignored_rows == {"tasks (application not planned)": 1}


def test_failed_run_is_invisible_and_rerun_completes_it(spark, catalogue):
    failure = catalogue["after_failure"]
    assert failure["raw_results"] > 0  # the first write happened...
    assert failure["complete_results"] == 0  # ...but readers do not see the run
    assert not failure["runs_exists"]
    runs = read_complete(spark, catalogue["out"], "runs").collect()
    assert [r["run_id"] for r in runs] == [RUN_ID]
    assert catalogue["summary"].planned_at_ms == PLANNED_AT_MS  # taken from the failed attempt


def test_two_runs_give_identical_rows(catalogue):
    first, second = catalogue["rows_of_two_runs"]
    assert first["assignments"] and first["task_transitions"]
    assert first == second


def test_rerunning_the_run_id_keeps_row_counts(spark, catalogue):
    out = catalogue["out"]
    for table, count in catalogue["counts"].items():
        assert _count(spark, out, table) == count, table
    assert (
        catalogue["counts"]["assignment_results"]
        == len(catalogue["broken"]) + len(catalogue["tolerated"]) + 3
    )
    assert catalogue["again"].planned_at_ms == PLANNED_AT_MS


def test_schema_drift_stops_the_run_before_any_write(spark, tmp_path):
    rows, _, _ = _fleet()
    write_input_tables(spark, str(tmp_path / "in"), rows)
    # Another writer's tables: a column dropped and a column of another type.
    subs = spark.read.format("delta").load(str(tmp_path / "in" / "client_subscriptions")).drop("host_info")
    subs.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
        str(tmp_path / "in" / "client_subscriptions")
    )
    offsets = spark.read.format("delta").load(str(tmp_path / "in" / "task_offsets"))
    offsets.withColumn("offset_sum", F.col("offset_sum").cast("string")).write.format("delta").mode(
        "overwrite"
    ).option("overwriteSchema", "true").save(str(tmp_path / "in" / "task_offsets"))
    config = JobConfig(input_path=str(tmp_path / "in"), output_path=str(tmp_path / "out"), run_id="drift")
    with pytest.raises(SchemaDriftError, match="client_subscriptions, column host_info: missing") as raised:
        run_job(spark, config)
    message = str(raised.value)
    assert "table client_subscriptions, column host_info: missing" in message
    assert "table task_offsets, column offset_sum: type string, expected bigint" in message
    assert not (tmp_path / "out").exists()
