"""Planning scenario dicts into run frames: the frames agree with the planner's own result objects and
metrics, every transition kind appears as tables.md defines it, unusable input is isolated."""

from __future__ import annotations

import copy
import json

import pytest

from fleet_assignor import explore
from tests.fixtures import EXPECTED_TRANSITIONS, EXPLORE_NOW, A, B, C, transitions_scenario


@pytest.fixture(scope="module")
def examples(scenarios_dir):
    paths = sorted((scenarios_dir).glob("example-*.json"))
    assert paths, "no example scenarios"
    return [json.loads(p.read_text()) for p in paths]


@pytest.fixture(scope="module")
def planned(examples):
    return explore.plan_fleet(examples, now_ms=EXPLORE_NOW)


def test_every_transition_kind_with_its_restore_lag():
    plan = explore.plan_one(transitions_scenario(), now_ms=EXPLORE_NOW)
    assert plan.results["transitions"]["status"] == "OK", plan.results["transitions"]["error_detail"]
    rows = explore.task_transitions(plan.frames, "transitions")
    got = {(r.process_id, r.task_id): (r.transition, r.restore_lag) for r in rows.itertuples()}
    assert got == EXPECTED_TRANSITIONS
    assert set(rows["transition"]) == set(explore.TRANSITION_KINDS)
    assert list(rows["process_id"]) == [A] * 4 + [B] * 4 + [C] * 5
    counts = explore.transition_counts(plan.frames, "transitions").set_index("process_id")
    assert counts.loc[C, "CREATE_ACTIVE"] == 4 and counts.loc[A, "CLOSE"] == 1


def test_moves_and_restore_lag_of_the_scripted_plan():
    plan = explore.plan_one(transitions_scenario(), now_ms=EXPLORE_NOW)
    moves = explore.moves(plan.frames, "transitions")
    active = moves[moves["role"] == "ACTIVE"][["task_id", "from_process_id", "to_process_id"]].values.tolist()
    # 0_1 left A for C, 0_2 left A for B, 0_4 left B for C; 0_0 stayed on A.
    assert active == [["0_1", A, C], ["0_2", A, B], ["0_4", B, C]]
    assert explore.move_counts(plan.frames, "transitions") == {"ACTIVE": 3, "STANDBY": 1, "WARMUP": 1}
    lag = explore.restore_lag_per_client(plan.frames, "transitions").set_index("process_id")
    assert lag.loc[C, "restore_lag"] == 1000 + 200 + 1000
    assert lag.loc[B, "restore_lag"] == 1000


def test_frames_agree_with_the_planner_metrics_on_every_example(planned):
    frames = planned.frames
    assert frames.app_ids == sorted(planned.results)
    for app_id, result in planned.results.items():
        metrics = result["metrics"]
        counts = explore.move_counts(frames, app_id)
        assert counts == {
            "ACTIVE": metrics["active_moves"],
            "STANDBY": metrics["standby_moves"],
            "WARMUP": metrics["warmups"],
        }, app_id
        assert explore.rack_traffic_totals(frames, app_id)[1] == metrics["cross_rack_cost"], app_id
        load = explore.client_load(frames, app_id)
        assert int(load["active"].sum()) == metrics["num_tasks"] - len(result["unassigned"]), app_id
        assert load["active_per_thread"].max() == pytest.approx(metrics["max_tasks_per_thread"]), app_id
        assert load["num_threads"].sum() == metrics["num_threads"], app_id
        threads = explore.thread_load(frames, app_id)
        assert int(threads["active"].sum()) == int(load["active"].sum()), app_id


def test_standby_spread_counts_match_the_plan(planned):
    for app_id, scenario in planned.scenarios.items():
        wanted = scenario["configs"].get("num_standby_replicas", 0)
        spread = explore.standby_spread(planned.frames, app_id)
        stateful = [t["id"] for t in scenario["tasks"] if any(p["changelog"] for p in t["partitions"])]
        assert list(spread["task_id"]) == explore.ordering.sorted_tasks(stateful), app_id
        assert (spread["num_standbys"] <= wanted).all(), app_id


def test_unusable_scenario_is_one_invalid_input_row_and_the_others_are_planned(examples):
    broken = copy.deepcopy(examples[0])
    broken["app_id"] = "broken"
    broken["clients"][0]["process_id"] = "not-a-uuid"
    plan = explore.plan_fleet([broken, examples[1]], now_ms=EXPLORE_NOW)
    bad = plan.frames.result("broken")
    assert bad["status"] == "INVALID_INPUT"
    assert "clients[0].process_id" in bad["error_detail"]
    assert plan.frames.result(examples[1]["app_id"])["status"] == "OK"
    assert plan.frames.assignments["app_id"].unique().tolist() == [examples[1]["app_id"]]


def test_planning_never_mutates_the_scenarios(examples):
    before = copy.deepcopy(examples)
    explore.plan_fleet(examples, now_ms=EXPLORE_NOW)
    assert examples == before


def test_result_rows_carry_the_planner_result(planned):
    for app_id, result in planned.results.items():
        row = planned.frames.result(app_id)
        assert row["status"] == result["status"]
        assert row["probing_rebalance"] == result["probing_rebalance"]
        assert row["unassigned_tasks"] == result["unassigned"]
        clients = planned.frames.of_app(planned.frames.client_assignments, app_id)
        assert list(clients["active_tasks"]) == [
            c["active"]
            for c in sorted(result["assignment"], key=lambda c: explore.ordering.process_key(c["process_id"]))
        ]
