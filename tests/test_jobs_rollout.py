"""The `rollout` table and the run's rollout view, end to end on real local Delta tables: the example
scenarios planned by the job; each row checked against the pure rollout report of the same scenario, the
`runs` totals and worst applications recomputed from the rows, and `--fail-on-risk`'s exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.rollout import RolloutSettings, rollout_report
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.jobs.config import JobConfig, load_conf_file
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import RISK_EXIT_CODE, main, run_job
from fleet_assignor.schemas.contract import ROLLOUT, merge_input_rows, scenario_to_input_rows
from tests.fixtures import equivalent_scenario

pytestmark = pytest.mark.spark

PLANNED_AT_MS = 1_767_225_600_123


@pytest.fixture(scope="module")
def run(spark, scenarios_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("rollout")
    examples = [json.loads(p.read_text()) for p in sorted(scenarios_dir.glob("example-*.json"))]
    rows = [scenario_to_input_rows(e) for e in examples]
    # An application the job cannot plan: it has a result row, but no rollout row.
    rows.append({"applications": [{"app_id": "no-clients-app", "num_standby_replicas": 1}]})
    write_input_tables(spark, str(base / "in"), merge_input_rows(*rows))
    config = JobConfig(
        input_path=str(base / "in"), output_path=str(base / "out"), run_id="r1", planned_at_ms=PLANNED_AT_MS
    )
    summary = run_job(spark, config)
    tables = {t: read_complete(spark, str(base / "out"), t).toPandas() for t in ("rollout", "runs")}
    results = read_complete(spark, str(base / "out"), "assignment_results").toPandas()
    return {"base": base, "examples": examples, "summary": summary, "results": results, **tables}


def test_one_rollout_row_per_rolled_out_application(run):
    rolled_out = set(run["results"].query("status in ('OK', 'ASSIGNOR_FAILED')")["app_id"])
    assert "no-clients-app" not in rolled_out
    assert sorted(run["rollout"]["app_id"]) == sorted(rolled_out)
    assert list(run["rollout"].columns) == list(ROLLOUT.column_names)


def test_each_row_is_the_pure_report_of_that_applications_scenario(run):
    settings = RolloutSettings()
    by_app = run["rollout"].set_index("app_id")
    for example in run["examples"]:
        app_id = example["app_id"]
        scenario = load_scenario(equivalent_scenario(example, app_id), now_ms=PLANNED_AT_MS)
        planned = plan(scenario)
        want = rollout_report(scenario, planned, settings).as_row()
        got = by_app.loc[app_id]
        for column, value in want.items():
            if column == "simulation_ms":
                continue
            if column == "risks":
                flags = [(r["name"], r["value"], r["threshold"]) for r in got["risks"]]
                assert flags == [(r["name"], r["value"], r["threshold"]) for r in value], app_id
            elif value is None:
                assert got[column] is None or got[column] != got[column], (app_id, column)  # null or NaN
            else:
                assert got[column] == value, (app_id, column, got[column], value)
        configs = example.get("configs") or {}
        strategy = configs.get("rack_aware_assignment_strategy") or "none"
        assert got["rack_aware"] == (strategy != "none" or bool(configs.get("rack_aware_assignment_tags")))


def test_runs_holds_the_fleet_totals_and_the_worst_application_per_risk(run):
    rollout, (runs,) = run["rollout"], run["runs"].to_dict("records")
    totals = dict(runs["rollout_totals"])
    assert totals["applications"] == len(rollout)
    assert totals["restore_records"] == int(rollout["restore_records"].sum())
    assert totals["total_active_moves"] == int(rollout["total_active_moves"].sum())
    assert totals["applications_flagged"] == int(sum(len(r) > 0 for r in rollout["risks"]))
    flags = [
        (r["name"], r["value"], app)
        for app, risks in zip(rollout["app_id"], rollout["risks"], strict=True)
        for r in risks
    ]
    want_counts: dict[str, int] = {}
    want_worst: dict[str, tuple[float, str]] = {}
    for name, value, app in flags:
        want_counts[name] = want_counts.get(name, 0) + 1
        best = want_worst.get(name)
        if best is None or value > best[0] or (value == best[0] and app < best[1]):
            want_worst[name] = (value, app)
    assert dict(runs["risk_counts"] or {}) == want_counts
    assert dict(runs["worst_applications"] or {}) == {n: app for n, (_, app) in want_worst.items()}
    assert run["summary"].rollout.flagged == totals["applications_flagged"]


def _conf(tmp_path: Path, thresholds: str, rollout: str = "") -> str:
    conf = tmp_path / f"conf-{abs(hash(thresholds))}.toml"
    conf.write_text(f"[rollout]\n{rollout}\n[rollout.thresholds]\n{thresholds}\n")
    return str(conf)


def test_fail_on_risk_exits_3_only_when_an_application_is_flagged(run, spark, tmp_path, capsys):
    base = run["base"]
    strict = _conf(tmp_path, "most_tasks_move_fraction = 0.0")
    assert load_conf_file(strict).rollout.thresholds.most_tasks_move_fraction == 0.0
    args = ["--input-path", str(base / "in"), "--output-path", str(tmp_path / "out"), "--master", "local[2]"]
    assert main([*args, "--conf", strict, "--run-id", "strict", "--fail-on-risk"]) == RISK_EXIT_CODE
    assert "applications' rollouts are flagged" in capsys.readouterr().err
    lenient = _conf(
        tmp_path,
        "most_tasks_move_fraction = 1.0\nmax_restore_records = 9223372036854775807\n"
        "max_rollout_ms = 9223372036854775807\nactive_balance_tolerance = 1000.0\n"
        "standby_balance_tolerance = 1000.0\nrack_traffic_tolerance = 1000000",
        # No replans: a plan still asking follow-ups after max_rounds is flagged whatever the thresholds.
        rollout="max_replanned_tasks = 0",
    )
    assert main([*args, "--conf", lenient, "--run-id", "lenient", "--fail-on-risk"]) == 0
