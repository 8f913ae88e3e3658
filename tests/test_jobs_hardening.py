"""Hostile rows and hostile settings, as an operator running the job unattended meets them: extreme
numbers, table rows naming code, other spellings of ids, job settings that cannot plan, readers before the
first run, and two runs writing at once. No row sinks the fleet; no table chooses code to run."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import pytest
from pyspark.sql import functions as F

from fleet_assignor.assignor.limits import MAX_INSTANT_MS, MAX_LONG
from fleet_assignor.jobs.config import ConfigError, JobConfig
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import main, run_job
from fleet_assignor.jobs.run_synthetic import DEFAULT_APPS, DEFAULT_SEED
from fleet_assignor.jobs.synthetic import write_synthetic_fleet
from fleet_assignor.schemas.contract import merge_input_rows
from tests.fixtures import healthy_app

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_000
SIDE_EFFECT_MODULE = "fleet_hardening_side_effect"


@pytest.fixture(scope="module")
def side_effect_module(spark, tmp_path_factory):
    """A module, shipped to the Python workers, whose import leaves a marker file: proof of an import."""
    base = tmp_path_factory.mktemp("side-effect")
    marker = base / "imported"
    module = base / f"{SIDE_EFFECT_MODULE}.py"
    module.write_text(
        f"open({str(marker)!r}, 'a').close()\n\n"
        "from fleet_assignor.assignor.sticky import StickyTaskAssignor\n\n\n"
        "class Zen(StickyTaskAssignor):\n    pass\n"
    )
    spark.sparkContext.addPyFile(str(module))
    return marker


def _upper_hex(process_id: str) -> str:
    """The same UUID in upper case, with hex letters (the fixtures' ids are all digits)."""
    return "ABCDEF00" + process_id[8:].upper()


def _hostile_fleet() -> tuple[dict, dict[str, str]]:
    """Healthy applications, and one application per hostile change: app -> what its result must say."""
    fleets, expect = [], {}

    def app(name: str, index: int, change=None, expected: str = "OK"):
        rows = healthy_app(name, index)
        if change is not None:
            change(rows)
        fleets.append(rows)
        expect[name] = expected

    def configs(**values):
        return lambda rows: rows["applications"][0].update(values)

    app("healthy-1", 1)
    app("healthy-2", 2)
    # Deadlines saturate at the last instant instead of overflowing (tables.md "Valid ranges").
    app("probing-max-long", 3, configs(probing_rebalance_interval_ms=MAX_LONG, assignor="fallback_prior"))
    app("probing-1e16", 4, configs(probing_rebalance_interval_ms=10**16, assignor="fallback_prior"))
    app("recovery-lag-max", 5, configs(acceptable_recovery_lag=MAX_LONG))
    app("warmups-max-int", 6, configs(max_warmup_replicas=2**31 - 1, num_standby_replicas=2**31 - 1))

    def end_offset(value):
        return lambda rows: rows["changelog_end_offsets"][0].update(end_offset=value)

    app("end-offset-negative", 7, end_offset(-5), "INVALID_INPUT:changelog_end_offsets row")
    app("end-offset-max", 8, end_offset(MAX_LONG))

    def offset_sum(value):
        return lambda rows: rows["task_offsets"][0].update(offset_sum=value)

    app("offset-sum-max", 9, offset_sum(MAX_LONG))
    app("offset-sum-min", 10, offset_sum(-(2**63)), "INVALID_INPUT:task_offsets row")
    app("probing-negative", 11, configs(probing_rebalance_interval_ms=-(2**63)),
        "INVALID_INPUT:column probing_rebalance_interval_ms")  # fmt: skip
    app(
        "costs-negative",
        12,
        configs(rack_aware_traffic_cost=-(2**31)),
        "INVALID_INPUT:column rack_aware_traffic",
    )
    # Table data naming code: never imported.
    app(
        "assignor-side-effect", 13, configs(assignor=f"{SIDE_EFFECT_MODULE}:Zen"), "INVALID_INPUT:not allowed"
    )
    app("assignor-pandas", 14, configs(assignor="pandas:DataFrame"), "INVALID_INPUT:not allowed")
    app("assignor-os", 15, configs(assignor="os:system"), "INVALID_INPUT:not allowed")
    # Other spellings of UUIDs come out as they went in.
    for index, spell in ((16, lambda p: "{" + p + "}"), (17, lambda p: p.replace("-", "")), (18, _upper_hex)):

        def respell(rows, spell=spell):
            for table in ("client_subscriptions", "task_offsets"):
                for row in rows[table]:
                    row["process_id"] = spell(row["process_id"])

        app(f"spelling-{index}", index, respell)

    def two_spellings(rows):
        again = "{" + rows["client_subscriptions"][0]["process_id"] + "}"
        rows["client_subscriptions"][1]["process_id"] = again
        rows["task_offsets"][0]["process_id"] = again

    app(
        "spelling-twice",
        19,
        two_spellings,
        "INVALID_INPUT:the same UUID as process id 00000000-0000-0000-0019-",
    )
    return merge_input_rows(*fleets), expect


@pytest.fixture(scope="module")
def hostile(spark, tmp_path_factory, side_effect_module):
    base = tmp_path_factory.mktemp("hostile")
    rows, expect = _hostile_fleet()
    write_input_tables(spark, str(base / "in"), rows)
    config = JobConfig(
        input_path=str(base / "in"),
        output_path=str(base / "out"),
        run_id="hostile",
        planned_at_ms=PLANNED_AT_MS,
    )
    summary = run_job(spark, config)
    results = {
        r["app_id"]: r.asDict()
        for r in read_complete(spark, str(base / "out"), "assignment_results").collect()
    }
    return {"base": base, "rows": rows, "expect": expect, "summary": summary, "results": results,
            "marker": side_effect_module}  # fmt: skip


def test_every_hostile_application_gets_its_one_expected_row(hostile):
    results = hostile["results"]
    assert set(results) == set(hostile["expect"])
    for app, expected in hostile["expect"].items():
        status, _, words = expected.partition(":")
        row = results[app]
        assert row["status"] == status, (app, row["error_detail"])
        if words:
            assert words in row["error_detail"], (app, row["error_detail"])
            assert re.search(r"\(\w+=", row["error_detail"]), row["error_detail"]  # a row key


def test_no_table_row_imported_code(hostile):
    assert not hostile["marker"].exists()


def test_the_allowlist_lets_the_same_row_import_its_assignor(spark, hostile, tmp_path):
    """The marker mechanism can see an import: allowed by the job's configuration, the module runs."""
    config = JobConfig(
        input_path=str(hostile["base"] / "in"),
        output_path=str(tmp_path / "out"),
        run_id="allowed",
        planned_at_ms=PLANNED_AT_MS,
        allowed_assignors=frozenset({f"{SIDE_EFFECT_MODULE}:Zen"}),
    )
    run_job(spark, config)
    rows = read_complete(spark, str(tmp_path / "out"), "assignment_results").where(
        F.col("app_id") == "assignor-side-effect"
    )
    assert [(r["status"], r["assignor"]) for r in rows.collect()] == [("OK", f"{SIDE_EFFECT_MODULE}:Zen")]
    assert hostile["marker"].exists()


def test_saturated_deadlines_are_the_last_instant(spark, hostile):
    clients = read_complete(spark, str(hostile["base"] / "out"), "client_assignments")
    deadlines = {
        r["app_id"]: r["ms"]
        for r in clients.where(F.col("followup_rebalance_deadline").isNotNull())
        .select("app_id", F.unix_millis("followup_rebalance_deadline").alias("ms"))
        .collect()
    }
    assert deadlines["probing-max-long"] == MAX_INSTANT_MS
    assert deadlines["probing-1e16"] == MAX_INSTANT_MS


def test_output_process_ids_are_the_input_text_byte_for_byte(spark, hostile):
    base = str(hostile["base"])
    for app in ("spelling-16", "spelling-17", "spelling-18"):
        given = {r["process_id"] for r in hostile["rows"]["client_subscriptions"] if r["app_id"] == app}
        assert all(p != p.lower() or "{" in p or "-" not in p for p in given)  # really another spelling
        for table in ("assignments", "client_assignments", "task_transitions"):
            out = {
                r["process_id"]
                for r in read_complete(spark, base + "/out", table).where(F.col("app_id") == app).collect()
            }
            assert out and out <= given, (app, table, out, given)


def test_an_unknown_job_assignor_fails_before_anything_is_written(spark, hostile, tmp_path):
    config = JobConfig(
        input_path=str(hostile["base"] / "in"), output_path=str(tmp_path / "out"), assignor="nosuch"
    )
    with pytest.raises(ConfigError, match="--assignor: unknown assignor 'nosuch'"):
        run_job(spark, config)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--assignor", "nosuch"], "error: --assignor: unknown assignor 'nosuch'"),
        (
            ["--planned-at", "9223372036854774807"],
            "error: --planned-at '9223372036854774807': must be within",
        ),
        (["--conf", "/nonexistent/conf.toml"], "error: conf file /nonexistent/conf.toml: no such file"),
    ],
)
def test_the_command_line_exits_2_with_one_line_and_writes_nothing(hostile, tmp_path, capsys, args, message):
    code = main(["--input-path", str(hostile["base"] / "in"), "--output-path", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(message), err
    assert not (tmp_path / "out").exists()


def test_a_failure_outside_the_applications_is_one_line_and_exit_2(tmp_path, capsys):
    """An input path with no tables at all: named, no traceback."""
    code = main(["--input-path", str(tmp_path / "none"), "--output-path", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: input table applications: no Delta table at ")


def test_readers_see_no_rows_before_the_first_complete_run(spark, tmp_path):
    from fleet_assignor.explore import list_runs

    assert read_complete(spark, str(tmp_path / "out"), "runs").count() == 0
    assert read_complete(spark, str(tmp_path / "out"), "assignments").count() == 0
    assert list_runs(tmp_path / "out").empty


# ------------------------------------------------------------------------------------- concurrent writers


def _run_in_threads(spark, configs):
    outcomes: list[object] = [None] * len(configs)
    barrier = threading.Barrier(len(configs))

    def go(i):
        barrier.wait()
        try:
            outcomes[i] = run_job(spark, configs[i])
        except Exception as e:
            outcomes[i] = e

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(configs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


@pytest.fixture(scope="module")
def small_inputs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("concurrent")
    write_input_tables(
        spark, str(base / "in"), merge_input_rows(*(healthy_app(f"c-{i}", i) for i in range(1, 4)))
    )
    return base / "in"


def test_two_first_runs_into_a_new_output_path_both_complete(spark, small_inputs, tmp_path):
    out = str(tmp_path / "out")
    configs = [
        JobConfig(
            input_path=str(small_inputs), output_path=out, run_id=f"first-{i}", planned_at_ms=PLANNED_AT_MS
        )
        for i in (1, 2)
    ]
    outcomes = _run_in_threads(spark, configs)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    runs = sorted(r["run_id"] for r in read_complete(spark, out, "runs").collect())
    assert runs == ["first-1", "first-2"]
    results = read_complete(spark, out, "assignment_results")
    assert sorted(
        (r["run_id"], r["n"]) for r in results.groupBy("run_id").agg(F.count("*").alias("n")).collect()
    ) == [
        ("first-1", 3),
        ("first-2", 3),
    ]


def test_the_same_run_id_twice_at_once_never_completes_a_mixed_run(spark, small_inputs, tmp_path):
    out = str(tmp_path / "out")
    config = JobConfig(input_path=str(small_inputs), output_path=out, run_id="twice")
    # Different planning instants: a run mixing the two attempts' tables would show two instants.
    configs = [replace(config, planned_at_ms=PLANNED_AT_MS), replace(config, planned_at_ms=PLANNED_AT_MS + 1)]
    outcomes = _run_in_threads(spark, configs)
    failures = [o for o in outcomes if isinstance(o, Exception)]
    for failure in failures:
        assert "another attempt" in str(failure), failure
    if len(failures) == 2:  # both saw the other's commits: nothing complete, a rerun completes it
        assert read_complete(spark, out, "runs").count() == 0
        run_job(spark, replace(config, planned_at_ms=PLANNED_AT_MS))
    instants = {
        r["ms"]
        for table in ("assignment_results", "runs")
        for r in read_complete(spark, out, table).select(F.unix_millis("planned_at").alias("ms")).collect()
    }
    deadlines_table = read_complete(spark, out, "client_assignments").count()
    assert len(instants) == 1 and deadlines_table > 0
    assert read_complete(spark, out, "runs").count() == 1


def test_conflicts_are_retried_then_named(spark, tmp_path, monkeypatch):
    """A write that keeps losing to other commits is retried WRITE_ATTEMPTS times, then one clear error."""
    import delta.exceptions.captured as captured

    from fleet_assignor.jobs import delta_io
    from fleet_assignor.jobs.config import TableLocation

    monkeypatch.setattr(delta_io, "FIRST_PAUSE_S", 0.0)
    calls = []

    def always_conflicting():
        calls.append(1)
        raise captured.ConcurrentAppendException(desc="synthetic conflict", stackTrace="")

    writer = delta_io.Writer("r", "a1")
    location = TableLocation("assignments", path=str(tmp_path / "assignments"))
    with pytest.raises(delta_io.ConcurrentWriteError, match="6 attempts lost to concurrent commits"):
        delta_io.retrying_conflicts(always_conflicting, spark, location, writer)
    assert len(calls) == delta_io.WRITE_ATTEMPTS
    outcome = iter([captured.ProtocolChangedException(desc="x", stackTrace=""), None])

    def once_conflicting():
        error = next(outcome)
        if error is not None:
            raise error
        return "written"

    assert delta_io.retrying_conflicts(once_conflicting, spark, location, writer) == "written"


# --------------------------------------------------------------------------------------- ids join back


def test_every_output_id_joins_back_to_its_input_rows_on_the_make_run_fleet(spark, tmp_path):
    inputs, out = str(tmp_path / "in"), str(tmp_path / "out")
    write_synthetic_fleet(spark, inputs, DEFAULT_APPS, DEFAULT_SEED)
    run_job(spark, JobConfig(input_path=inputs, output_path=out, run_id="ids", planned_at_ms=PLANNED_AT_MS))

    def table(name):
        return spark.read.format("delta").load(f"{inputs}/{name}")

    apps = table("applications").select("app_id").union(table("client_subscriptions").select("app_id"))
    subs = table("client_subscriptions")
    tasks = table("tasks").select("app_id", "task_id")
    consumer = ["app_id", "process_id", "consumer_client_id"]
    client = ["app_id", "process_id"]
    task = ["app_id", "task_id"]
    keys = {
        "assignment_results": [(apps, ["app_id"])],
        "assignments": [(subs.select(*consumer), consumer), (tasks, task)],
        "client_assignments": [(subs.select(*client), client)],
        "task_transitions": [(subs.select(*client), client), (tasks, task)],
    }
    for name, joins in keys.items():
        rows = read_complete(spark, out, name)
        assert rows.count() > 0, name
        for source, columns in joins:
            orphans = rows.select(*columns).join(source.distinct(), columns, "left_anti")
            assert orphans.count() == 0, (name, columns, orphans.limit(5).collect())
    for name, column in (("client_assignments", "active_tasks"), ("client_assignments", "standby_tasks"),
                         ("assignment_results", "unassigned_tasks")):  # fmt: skip
        listed = read_complete(spark, out, name).select("app_id", F.explode(column).alias("task_id"))
        assert listed.join(tasks, ["app_id", "task_id"], "left_anti").count() == 0, (name, column)
