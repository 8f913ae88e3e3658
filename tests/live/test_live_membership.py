"""Membership change on a live classic-protocol application: stop one instance, collect again, and compare
what Kafka's assignor did live with what we planned from the snapshot before (the differences are printed:
Kafka planned with the lags the clients reported at that rebalance, which the earlier snapshot cannot
hold). The plan on the new snapshot is the Spark job's (`plan_assignments.run_job` on the collected
tables)."""

from __future__ import annotations

import pandas as pd
import pytest

from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.explore.input_scenarios import load_scenarios, scenarios_from_tables
from fleet_assignor.jobs.collect import collect
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.live_cluster import DemoApp
from fleet_assignor.jobs.plan_assignments import run_job
from tests.live.conftest import APP_RACKS, wait_stable

pytestmark = [pytest.mark.kafka_live, pytest.mark.spark]

APP = "live-churn"
NOW_MS = 1_800_000_000_000


def _scenario(rows) -> dict:
    (scenario,) = scenarios_from_tables({k: pd.DataFrame(v) for k, v in rows.tables.items()}, apps=[APP])
    return scenario


def _live(scenario: dict) -> dict[str, tuple[list[str], list[str]]]:
    out = {}
    for client in scenario["clients"]:
        consumers = client["consumers"]
        active = sorted({t for c in consumers for t in c["prev_active"]})
        standby = sorted({t for c in consumers for t in c["prev_standby"]})
        out[client["process_id"]] = (active, standby)
    return out


def _planned(result: dict) -> dict[str, tuple[list[str], list[str]]]:
    return {a["process_id"]: (sorted(a["active"]), sorted(a["standby"])) for a in result["assignment"]}


def _job_planned(spark, plan_out: str) -> dict[str, tuple[list[str], list[str]]]:
    rows = spark.read.format("delta").load(f"{plan_out}/client_assignments").where(f"app_id = '{APP}'")
    return {r["process_id"]: (sorted(r["active_tasks"]), sorted(r["standby_tasks"])) for r in rows.collect()}


def _differences(live: dict, planned: dict) -> list[str]:
    lines = []
    for pid in sorted(set(live) | set(planned)):
        la, ls = live.get(pid, ([], []))
        pa, ps = planned.get(pid, ([], []))
        if (la, ls) != (pa, ps):
            lines.append(f"  {pid}: live active {la} standby {ls} | planned active {pa} standby {ps}")
    return lines


def test_stop_one_instance_then_collect_shows_the_new_membership(spark, kafka_cluster, tmp_path_factory):
    app = DemoApp(
        APP,
        kafka_cluster.bootstrap,
        tmp_path_factory.mktemp(APP),
        instances=3,
        standbys=1,
        produce=2000,
        racks=APP_RACKS,
    )
    try:
        app.wait_running(range(3))
        _, before = wait_stable(kafka_cluster.bootstrap, APP, 3)
        scenario_before = _scenario(before)
        views = app.threads()
        stopped = views[2]["threads"][0]["consumer_client_id"]
        stopped_pid = next(
            r["process_id"]
            for r in before.tables["client_subscriptions"]
            if r["consumer_client_id"] == stopped
        )

        # What we would plan for the two that stay, from the snapshot taken before the stop.
        predicted_scenario = dict(scenario_before)
        predicted_scenario["clients"] = [
            c for c in scenario_before["clients"] if c["process_id"] != stopped_pid
        ]
        predicted = plan_scenario(predicted_scenario, now_ms=NOW_MS)

        app.stop_instance(2)
        wait_stable(kafka_cluster.bootstrap, APP, 2)
        out = str(tmp_path_factory.mktemp("churn"))
        result = collect(kafka_cluster.bootstrap, out, groups=APP, spark=spark, timeout_ms=15_000)
        (after,) = load_scenarios(out, versions=result.versions)
        pids_after = {c["process_id"] for c in after["clients"]}
        assert pids_after == {c["process_id"] for c in scenario_before["clients"]} - {stopped_pid}
        live_after = _live(after)
        all_tasks = sorted(t["id"] for t in after["tasks"])
        assert sorted(t for a, _ in live_after.values() for t in a) == all_tasks  # each task active once

        diff = _differences(live_after, _planned(predicted))
        print(f"\n{APP}: Kafka's live rebalance after the stop vs our plan from the snapshot before it:")
        print("\n".join(diff) or "  identical")

        # The Spark job's plan on the collected tables, then the next settled snapshot's live assignment
        # compared with it.
        plan_out = str(tmp_path_factory.mktemp("churn-plan"))
        config = JobConfig(
            input_path=out,
            output_path=plan_out,
            run_id="churn-1",
            planned_at_ms=NOW_MS,
            as_of_versions=dict(result.versions),
        )
        run_job(spark, config)
        (job_row,) = (
            spark.read.format("delta")
            .load(f"{plan_out}/assignment_results")
            .where(f"app_id = '{APP}'")
            .collect()
        )
        assert job_row["status"] == "OK", job_row["error_detail"]
        plan_after = _job_planned(spark, plan_out)
        assert set(plan_after) == pids_after
        assert sorted(t for a, _ in plan_after.values() for t in a) == all_tasks
        _, settled = wait_stable(kafka_cluster.bootstrap, APP, 2)
        diff = _differences(_live(_scenario(settled)), plan_after)
        print(f"{APP}: next settled snapshot vs the Spark job's plan made before it:")
        print("\n".join(diff) or "  identical")
        print(f"{APP}: the job's plan on the new snapshot moves {job_row['active_moves']} actives")
    finally:
        app.stop()
