"""Planning scenario dicts into run frames: the frames agree with the planner's own result objects and
metrics, every transition kind appears as tables.md defines it, unusable input is isolated."""

from __future__ import annotations

import copy
import json

import pytest

from fleet_assignor import explore
from fleet_assignor.explore.scripted import plan_config

NOW = 1_700_000_000_000
A = "00000000-0000-0000-0000-000000000001"
B = "00000000-0000-0000-0000-000000000002"
C = "00000000-0000-0000-0000-000000000003"
STATEFUL = ["0_0", "0_1", "0_2", "0_3", "0_4", "0_5"]


def _task(task_id: str, changelog: bool) -> dict:
    partition = int(task_id.split("_")[1])
    parts = [
        {
            "topic": f"in-{task_id[0]}",
            "partition": partition,
            "source": True,
            "changelog": False,
            "racks": ["r1"],
        }
    ]
    if changelog:
        parts.append(
            {
                "topic": "store-changelog",
                "partition": partition,
                "source": False,
                "changelog": True,
                "racks": ["r2"],
            }
        )
    return {
        "id": task_id,
        "stateful": changelog,
        "stores": ["store"] if changelog else [],
        "partitions": parts,
    }


def transitions_scenario() -> dict:
    """Previous: A runs 0_0-0_2 and stands by 0_3; B runs 0_4 and stands by 0_5; C is new. The scripted
    plan below reaches every transition kind once or more (worked out in the test)."""
    plan = {
        A: {"active": ["0_0", "0_3"], "standby": ["0_1"]},
        B: {"active": ["0_2"], "standby": ["0_0", "0_5"]},
        C: {"active": ["0_1", "0_4", "0_5", "1_0"], "warmup": ["0_3"]},
    }
    full = dict.fromkeys(STATEFUL, 1000)
    return {
        "app_id": "transitions",
        "configs": {
            "assignor": "fleet_assignor.explore.scripted:ScriptedAssignor",
            "assignor_configs": plan_config(plan),
        },
        "tasks": [_task(t, True) for t in STATEFUL] + [_task("1_0", False)],
        "clients": [
            {
                "process_id": A,
                "consumers": ["a-1"],
                "prev_active": ["0_0", "0_1", "0_2"],
                "prev_standby": ["0_3"],
                "lags": {**full, "0_0": -2, "0_1": -2, "0_2": -2, "0_3": 50},
                "rack": "r1",
            },
            {
                "process_id": B,
                "consumers": ["b-1"],
                "prev_active": ["0_4"],
                "prev_standby": ["0_5"],
                "lags": {**full, "0_4": -2, "0_5": 10},
                "rack": "r2",
            },
            {"process_id": C, "consumers": ["c-1"], "lags": {**full, "0_1": -3, "0_4": 200}, "rack": "r1"},
        ],
    }


# (process, task) -> (transition, restore_lag), by tables.md's rules applied to the scenario above.
EXPECTED_TRANSITIONS = {
    (A, "0_0"): ("KEEP_ACTIVE", 0),
    (A, "0_1"): ("DEMOTE_ACTIVE", 0),
    (A, "0_2"): ("CLOSE", 0),
    (A, "0_3"): ("PROMOTE_STANDBY", 50),
    (B, "0_0"): ("CREATE_STANDBY", 1000),
    (B, "0_2"): ("CREATE_ACTIVE", 1000),
    (B, "0_4"): ("CLOSE", 0),
    (B, "0_5"): ("KEEP_STANDBY", 10),
    (C, "0_1"): ("CREATE_ACTIVE", 1000),  # lag -3: the whole changelog
    (C, "0_3"): ("CREATE_WARMUP", 1000),
    (C, "0_4"): ("CREATE_ACTIVE", 200),
    (C, "0_5"): ("CREATE_ACTIVE", 1000),
    (C, "1_0"): ("CREATE_ACTIVE", 0),  # no changelog
}


@pytest.fixture(scope="module")
def examples(scenarios_dir):
    paths = sorted((scenarios_dir).glob("example-*.json"))
    assert paths, "no example scenarios"
    return [json.loads(p.read_text()) for p in paths]


@pytest.fixture(scope="module")
def planned(examples):
    return explore.plan_fleet(examples, now_ms=NOW)


def test_every_transition_kind_with_its_restore_lag():
    plan = explore.plan_one(transitions_scenario(), now_ms=NOW)
    assert plan.results["transitions"]["status"] == "OK", plan.results["transitions"]["error_detail"]
    rows = explore.task_transitions(plan.frames, "transitions")
    got = {(r.process_id, r.task_id): (r.transition, r.restore_lag) for r in rows.itertuples()}
    assert got == EXPECTED_TRANSITIONS
    assert set(rows["transition"]) == set(explore.TRANSITION_KINDS)
    assert list(rows["process_id"]) == [A] * 4 + [B] * 4 + [C] * 5
    counts = explore.transition_counts(plan.frames, "transitions").set_index("process_id")
    assert counts.loc[C, "CREATE_ACTIVE"] == 4 and counts.loc[A, "CLOSE"] == 1


def test_moves_and_restore_lag_of_the_scripted_plan():
    plan = explore.plan_one(transitions_scenario(), now_ms=NOW)
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
    plan = explore.plan_fleet([broken, examples[1]], now_ms=NOW)
    bad = plan.frames.result("broken")
    assert bad["status"] == "INVALID_INPUT"
    assert "clients[0].process_id" in bad["error_detail"]
    assert plan.frames.result(examples[1]["app_id"])["status"] == "OK"
    assert plan.frames.assignments["app_id"].unique().tolist() == [examples[1]["app_id"]]


def test_planning_never_mutates_the_scenarios(examples):
    before = copy.deepcopy(examples)
    explore.plan_fleet(examples, now_ms=NOW)
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
