"""The exploration API on a small real run of the fleet job (local Spark + Delta), read without Spark.

One job run per module: the transitions scenario of tests/fixtures.py (every transition kind), three
shared examples, and one application without topology rows (INVALID_INPUT). Input tables are written with
delta-rs (the job accepts any Delta writer), which keeps this module's Spark time to the job itself.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from fleet_assignor import explore
from fleet_assignor.explore.input_scenarios import scenario_rows
from tests.fixtures import EXPECTED_TRANSITIONS, EXPLORE_NOW, code_blocks, transitions_scenario

pytestmark = pytest.mark.spark

RUN_ID = "run-explore-1"
EXAMPLES = ("example-000", "example-003", "example-006")


def _write_inputs(base, tables: dict) -> None:
    from fleet_assignor.jobs.input_writer import arrow_table

    for name, rows in tables.items():
        write_deltalake(str(base / name), arrow_table(name, rows), mode="overwrite")


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory, scenarios_dir):
    from fleet_assignor.jobs.plan_assignments import parse_args, run_job

    base = tmp_path_factory.mktemp("explore-fleet")
    scenarios = [transitions_scenario()]
    scenarios += [json.loads((scenarios_dir / f"{name}.json").read_text()) for name in EXAMPLES]
    no_topology = {**transitions_scenario(), "app_id": "no-topology", "tasks": []}
    for client in no_topology["clients"]:
        client.update(prev_active=[], prev_standby=[], lags={})
    no_topology["configs"] = {}
    _write_inputs(base / "input", scenario_rows([*scenarios, no_topology]))
    config, _ = parse_args(
        ["--input-path", str(base / "input"), "--output-path", str(base / "output"), "--run-id", RUN_ID,
         "--planned-at", str(EXPLORE_NOW)]
    )  # fmt: skip
    # The transitions scenario names a custom assignor: the job's configuration must allow it.
    config = replace(
        config, allowed_assignors=frozenset({"fleet_assignor.explore.scripted:ScriptedAssignor"})
    )
    run_job(spark, config)
    return {"base": base, "input": base / "input", "output": base / "output", "scenarios": scenarios}


@pytest.fixture(scope="module")
def run(fleet):
    return explore.load_run(fleet["output"], input_dir=fleet["input"])


def test_the_run_is_found_with_its_statuses(run):
    assert run.run_id == RUN_ID
    assert run.planned_at_ms == EXPLORE_NOW
    statuses = dict(zip(run.results["app_id"], run.results["status"], strict=False))
    assert statuses == {"transitions": "OK", **dict.fromkeys(EXAMPLES, "OK"), "no-topology": "INVALID_INPUT"}
    errors = explore.errors_by_type(run)
    assert errors.set_index("status").loc["INVALID_INPUT", "applications"] == 1
    assert "no-topology" not in set(run.assignments["app_id"])


def test_every_transition_kind_as_the_job_wrote_it(run):
    rows = explore.task_transitions(run, "transitions")
    got = {(r.process_id, r.task_id): (r.transition, r.restore_lag) for r in rows.itertuples()}
    assert got == EXPECTED_TRANSITIONS
    assert set(explore.fleet_transition_totals(run).loc[lambda s: s > 0].index) == set(
        explore.TRANSITION_KINDS
    )


def test_analyses_of_the_job_run_equal_those_of_the_planner_on_the_same_inputs(fleet, run):
    # The scenarios rebuilt from the run's input tables, planned directly: same plans, same analyses.
    scenarios = explore.load_scenarios(fleet["input"], versions=run.run["input_versions"])
    planned = explore.plan_fleet([s for s in scenarios if s["app_id"] != "no-topology"], now_ms=EXPLORE_NOW)
    comparison = explore.compare_runs(run, planned.frames).set_index("app_id")
    for app_id in ("transitions", *EXAMPLES):
        row = comparison.loc[app_id]
        assert row["actives_differ"] == 0 and row["standbys_differ"] == 0, app_id
        for metric in ("active_moves", "standby_moves", "warmups", "restore_lag"):
            assert row[f"{metric}_delta"] == 0, (app_id, metric)
        for analysis in (
            explore.client_load, explore.thread_load, explore.moves, explore.standby_spread,
            explore.rack_traffic, explore.restore_lag_per_client, explore.transition_counts,
        ):  # fmt: skip
            pd.testing.assert_frame_equal(
                analysis(run, app_id),
                analysis(planned.frames, app_id),
                check_dtype=False,
                obj=analysis.__name__,
            )
        assert explore.move_counts(run, app_id) == {
            "ACTIVE": run.result(app_id)["active_moves"],
            "STANDBY": run.result(app_id)["standby_moves"],
            "WARMUP": run.result(app_id)["warmups"],
        }
        cost = run.result(app_id)["cross_rack_cost"]
        after = explore.rack_traffic_totals(run, app_id)[1]
        assert (after is None and pd.isna(cost)) or after == cost, app_id


def test_the_original_scenarios_plan_to_the_same_client_assignments(fleet, run):
    planned = explore.plan_fleet(fleet["scenarios"], now_ms=EXPLORE_NOW)
    comparison = explore.compare_runs(run, planned.frames).set_index("app_id")
    for app_id in ("transitions", *EXAMPLES):
        assert comparison.loc[app_id, "actives_differ"] == 0, app_id
        assert comparison.loc[app_id, "standbys_differ"] == 0, app_id


def test_a_run_without_its_runs_row_is_invisible(fleet, tmp_path):
    output = tmp_path / "output"
    shutil.copytree(fleet["output"], output)
    results = DeltaTable(str(output / "assignment_results")).to_pyarrow_table()
    partial = results.set_column(
        results.schema.get_field_index("run_id"), "run_id", pa.array(["run-partial"] * results.num_rows)
    )
    write_deltalake(str(output / "assignment_results"), partial, mode="append", partition_by=["run_id"])
    assert list(explore.list_runs(output)["run_id"]) == [RUN_ID]
    assert explore.load_run(output).run_id == RUN_ID
    with pytest.raises(explore.RunNotFoundError, match="run-partial"):
        explore.load_run(output, "run-partial")


def test_inputs_are_read_at_the_versions_the_run_read(fleet, run, tmp_path):
    inputs = tmp_path / "input"
    shutil.copytree(fleet["input"], inputs)
    subscriptions = DeltaTable(str(inputs / "client_subscriptions")).to_pandas()
    subscriptions["rack_id"] = "moved"
    from fleet_assignor.jobs.input_writer import arrow_table

    write_deltalake(
        str(inputs / "client_subscriptions"),
        arrow_table("client_subscriptions", subscriptions.to_dict("records")),
        mode="overwrite",
    )
    later = explore.load_run(fleet["output"], input_dir=inputs)
    pd.testing.assert_frame_equal(later.clients, run.clients)
    latest_clients, _ = explore.load_inputs(inputs)
    assert set(latest_clients["rack_id"]) == {"moved"}


def test_spark_reader_gives_the_same_frames(spark, fleet, run):
    through_spark = explore.load_run(fleet["output"], input_dir=fleet["input"], spark=spark)
    for name in ("results", "assignments", "client_assignments", "transitions", "clients", "task_partitions"):
        pd.testing.assert_frame_equal(
            getattr(through_spark, name), getattr(run, name), check_dtype=False, obj=name
        )


def test_the_notebook_runs_headless_and_writes_its_plots(fleet, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    from tests.conftest import REPO_ROOT

    # Run as a user would in a checkout: the package comes from the install (no PYTHONPATH), and the
    # figures go beside the fleet (FLEET_DIR/plots), never into the repository.
    plots = tmp_path / "fleet" / "plots"
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("FLEET_DIR", str(tmp_path / "fleet"))
    monkeypatch.setenv("FLEET_OUTPUT", str(fleet["output"]))
    monkeypatch.setenv("FLEET_INPUT", str(fleet["input"]))
    monkeypatch.delenv("PLOTS_DIR", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    notebook = nbformat.read(REPO_ROOT / "notebooks" / "explore_fleet.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    written = sorted(p.name for p in plots.glob("*.png"))
    assert written == sorted(
        ["rollout.png", "fleet_overview.png", "moves_per_app.png", "rack_traffic.png", "client_load.png",
         "transitions.png", "simulation.png"]
    )  # fmt: skip
    assert all((plots / name).stat().st_size > 5_000 for name in written)
    assert not (REPO_ROOT / "notebooks" / "plots").exists()


def test_plots_command_writes_the_fleet_figures(fleet, tmp_path, capsys):
    from fleet_assignor.explore.__main__ import main

    target = tmp_path / "figures"
    assert (
        main(["plots", "--output", str(fleet["output"]), "--input", str(fleet["input"]), "--to", str(target)])
        == 0
    )
    names = sorted(p.name for p in target.glob("*.png"))
    assert names == ["fleet_overview.png", "moves_per_app.png", "rack_traffic.png", "rollout.png"]
    assert capsys.readouterr().out.count(".png") == 4


def test_the_readme_exploring_example_runs_on_this_run(fleet, tmp_path, monkeypatch):
    """README's "Exploring a run" block, as written, on this module's run (paths pointed at it)."""
    block = next(text for heading, text in code_blocks("python") if heading == "Exploring a run")
    source = block.replace('"fleet-output/outputs"', repr(str(fleet["output"])))
    source = source.replace('"fleet-output/inputs"', repr(str(fleet["input"])))
    assert source != block
    monkeypatch.chdir(tmp_path)  # the example saves fleet.png in the working directory
    namespace: dict = {}
    exec(compile(source, "README.md", "exec"), namespace)
    assert (tmp_path / "fleet.png").stat().st_size > 0
    sim = namespace["sim"]
    assert namespace["report"].comparison is not None
    assert sim.probing_rebalances == int(sim.summary()["probing_rebalance"].sum())
