"""From the compact JSON of jobs.prepare to the scenario dict: problems found on the rows, the end sums
anchored where the lags do not imply them, and scenario paths mapped back to table rows."""

from __future__ import annotations

import json

from fleet_assignor.assignor import ProcessId
from fleet_assignor.jobs.scenario_shape import invalid_input_detail, shape_application
from fleet_assignor.schemas.contract import describe_path, inferred_end_sum
from tests.fixtures import P1, P2, compact


def test_describe_path_maps_back_to_rows():
    scenario = shape_application("a", compact()).scenario
    assert describe_path(scenario, "clients[1].threads") == f"client_subscriptions rows of (process_id={P2})"
    assert describe_path(scenario, "clients[0].consumers[0].prev_active[0]") == (
        f"client_subscriptions row (process_id={P1}, consumer_client_id=c1), column prev_active_tasks"
    )
    assert describe_path(scenario, "clients[0].consumers[0].prev_standby[2]") == (
        f"client_subscriptions row (process_id={P1}, consumer_client_id=c1), column prev_standby_tasks"
    )
    assert describe_path(scenario, "clients[0].consumers[0]") == (
        f"client_subscriptions row (process_id={P1}, consumer_client_id=c1)"
    )
    assert describe_path(scenario, "clients[0].tags") == (
        f"client_subscriptions rows of (process_id={P1}), column client_tags"
    )
    assert describe_path(scenario, "clients[1].lags.0_0") == f"task_offsets rows of (process_id={P2})"
    assert describe_path(scenario, "tasks[1].id") == "tasks row (task_id=0_1)"
    assert describe_path(scenario, "configs.assignor") == "applications row (app_id=a), column assignor"
    assert describe_path(scenario, "$") == "application (app_id=a)"


def test_describe_path_reads_a_missing_or_foreign_entry_as_none():
    app = {"app_id": "a", "tasks": [7], "clients": [{"process_id": "p", "consumers": [5]}, 3]}
    assert describe_path(app, "tasks[0].id") == "tasks row (task_id=None)"
    assert describe_path(app, "tasks[9]") == "tasks row (task_id=None)"
    assert describe_path(app, "clients[0].consumers[0].id") == (
        "client_subscriptions row (process_id=p, consumer_client_id=None)"
    )
    assert describe_path(app, "clients[1].rack") == (
        "client_subscriptions rows of (process_id=None), column rack_id"
    )
    assert describe_path({"clients": {"x": 1}}, "clients[0].lags") == "task_offsets rows of (process_id=None)"


def test_clients_without_state_get_the_real_end_sum_when_no_lag_implies_it():
    # Only -2 and a partial lag are reported: the largest lag (60) is not the end sum (100).
    scenario = shape_application("a", compact()).scenario
    lags = {c["process_id"]: c["lags"] for c in scenario["clients"]}
    assert lags[P1] == {"0_0": -2} and lags[P2] == {"0_0": 60}
    third = json.loads(compact())
    third["clients"].append(
        {
            "process_id": str(ProcessId.of(3)),
            "consumers": [{"id": "c3"}],
            "rack": None,
            "tags": {},
            "lags": {},
        }
    )
    shaped = shape_application("a", json.dumps(third)).scenario
    assert shaped["clients"][2]["lags"] == {"0_0": 100}
    assert shaped["clients"][1]["lags"] == {"0_0": 60}


def test_no_clients_and_no_tasks_are_problems():
    assert "no clients" in shape_application("a", compact(clients=[])).problems[0]
    assert "no topology rows" in shape_application("a", compact(tasks=[])).problems[0]


def test_problem_detail_is_capped():
    detail = invalid_input_detail(tuple(f"p{i:02d}" for i in range(25)))
    assert detail.startswith("p00; p01") and detail.endswith("... and 5 more")


def test_clients_without_state_get_no_entry_when_the_largest_lag_is_the_end_sum():
    # P2 reports the whole changelog (100 = the end sum): the scenario implies it, nothing is written out.
    obj = json.loads(compact())
    obj["clients"][1]["lags"] = {"0_0": 100}
    obj["clients"].append(
        {
            "process_id": str(ProcessId.of(3)),
            "consumers": [{"id": "c3"}],
            "rack": None,
            "tags": {},
            "lags": {},
        }
    )
    shaped = shape_application("a", json.dumps(obj)).scenario
    assert [c["lags"] for c in shaped["clients"]] == [{"0_0": -2}, {"0_0": 100}, {}]


def test_end_sums_are_anchored_as_the_scenario_infers_them_on_random_lags():
    """Against scenario.md's rule read task by task (`contract.inferred_end_sum` over every client's lag):
    a task whose lags already imply its end sum gets no entries, any other gets the end sum written for
    each client without a lag, whatever the lags (sentinels, zeros, a lag equal to the end sum)."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        obj = json.loads(compact())
        tasks = [f"0_{k}" for k in range(rng.randint(1, 5))]
        obj["tasks"] = [
            {"id": t, "stores": ["s"], "end_sum": rng.choice([0, 5, 100]), "partitions": [
                {"topic": "cl", "partition": k, "source": False, "changelog": True, "racks": []}]}
            for k, t in enumerate(tasks)
        ]  # fmt: skip
        for client in obj["clients"]:
            client["lags"] = {t: rng.choice([-3, -2, 0, 5, 60, 100]) for t in tasks if rng.random() < 0.5}
        before = {c["process_id"]: dict(c["lags"]) for c in obj["clients"]}
        shaped = shape_application("a", json.dumps(obj)).scenario
        for task in obj["tasks"]:
            t, end_sum = task["id"], task["end_sum"]
            implied = inferred_end_sum(lags.get(t) for lags in before.values()) == end_sum
            for client in shaped["clients"]:
                reported = before[client["process_id"]].get(t)
                expected = reported if reported is not None or implied else end_sum
                assert client["lags"].get(t) == expected, (t, end_sum, before)
            room = any(t not in lags for lags in before.values())  # a client to write the end sum for
            if room and inferred_end_sum(lags.get(t) for lags in before.values()) <= end_sum:
                assert inferred_end_sum(c["lags"].get(t) for c in shaped["clients"]) == end_sum
