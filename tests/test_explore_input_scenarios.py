"""Scenario dicts <-> input table rows (pandas, no Spark): tables.md's lag, client and rack rules by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.explore.input_scenarios import scenario_rows, scenarios_from_tables
from tests.fixtures import EXPLORE_NOW, transitions_scenario

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"


def _tables() -> dict[str, pd.DataFrame]:
    """App `a`: task 0_0 with two changelog partitions (end offsets 300 + 700 = 1000), 0_1 stateless.
    Client P1 has two consumers; P2 one."""
    sub = lambda pid, cid, rack, active, standby: {  # noqa: E731
        "app_id": "a", "process_id": pid, "consumer_client_id": cid, "rack_id": rack,
        "client_tags": {"zone": "z"}, "host_info": None, "prev_active_tasks": active,
        "prev_standby_tasks": standby,
    }  # fmt: skip
    return {
        "applications": pd.DataFrame(
            [
                {
                    "app_id": "a",
                    "cluster_id": None,
                    "assignor": None,
                    "acceptable_recovery_lag": 5,
                    "max_warmup_replicas": None,
                    "num_standby_replicas": 1,
                    "probing_rebalance_interval_ms": None,
                    "rack_aware_assignment_strategy": None,
                    "rack_aware_traffic_cost": None,
                    "rack_aware_non_overlap_cost": None,
                    "rack_aware_assignment_tags": [],
                    "assignor_configs": None,
                }
            ]
        ),
        "tasks": pd.DataFrame(
            [
                {
                    "app_id": "a",
                    "task_id": "0_0",
                    "state_stores": ["s"],
                    "source_partitions": [{"topic": "in", "partition": 0}],
                    "changelog_partitions": [
                        {"topic": "cl", "partition": 0},
                        {"topic": "cl", "partition": 1},
                    ],
                },
                {
                    "app_id": "a",
                    "task_id": "0_1",
                    "state_stores": [],
                    "source_partitions": [{"topic": "in", "partition": 1}],
                    "changelog_partitions": [],
                },
            ]
        ),
        "client_subscriptions": pd.DataFrame(
            [
                sub(P1, "p1-b", "r1", ["0_1"], []),
                sub(P1, "p1-a", "r1", [], ["0_0"]),
                sub(P2, "p2-a", "", [], []),
            ]
        ),
        "task_offsets": pd.DataFrame(
            [
                {
                    "app_id": "a",
                    "process_id": P1,
                    "consumer_client_id": "p1-a",
                    "task_id": "0_0",
                    "offset_sum": 900,
                },
                {
                    "app_id": "a",
                    "process_id": P1,
                    "consumer_client_id": "p1-b",
                    "task_id": "0_0",
                    "offset_sum": 400,
                },
                {
                    "app_id": "a",
                    "process_id": P2,
                    "consumer_client_id": "p2-a",
                    "task_id": "0_0",
                    "offset_sum": 5000,
                },
                {
                    "app_id": "a",
                    "process_id": P2,
                    "consumer_client_id": "p2-a",
                    "task_id": "0_1",
                    "offset_sum": 7,
                },
            ]
        ),
        "changelog_end_offsets": pd.DataFrame(
            [
                {"app_id": "a", "topic": "cl", "partition": 0, "end_offset": 300},
                {"app_id": "a", "topic": "cl", "partition": 1, "end_offset": 700},
            ]
        ),
        "partition_racks": pd.DataFrame(
            [
                {"cluster_id": None, "topic": "in", "partition": 0, "replica_racks": ["r1"]},
                {"cluster_id": "other", "topic": "in", "partition": 1, "replica_racks": ["r2"]},
            ]
        ),
    }


def test_scenario_from_tables_follows_the_table_rules():
    [scenario] = scenarios_from_tables(_tables())
    assert scenario["app_id"] == "a"
    assert scenario["configs"] == {"acceptable_recovery_lag": 5, "num_standby_replicas": 1,
                                   "rack_aware_assignment_tags": []}  # fmt: skip
    p1, p2 = scenario["clients"]
    assert p1["process_id"] == P1 and p2["process_id"] == P2
    # consumers in id order, each with its own history
    assert p1["consumers"] == [
        {"id": "p1-a", "prev_active": [], "prev_standby": ["0_0"]},
        {"id": "p1-b", "prev_active": ["0_1"], "prev_standby": []},
    ]
    # largest offset of the client's consumers (900) against the end sum 1000; 0_1 has no changelog
    assert p1["lags"] == {"0_0": 100}
    # an offset above the end sum is corrupted state: the whole changelog; empty rack id = none
    assert p2["lags"] == {"0_0": 1000}
    assert p2["rack"] is None and p1["rack"] == "r1" and p1["tags"] == {"zone": "z"}
    task_0_0, task_0_1 = scenario["tasks"]
    assert task_0_0["stateful"] and not task_0_1["stateful"]
    # null cluster id joins only null-cluster rack rows: in/0 has racks, in/1 (cluster "other") has none
    assert [p["racks"] for p in task_0_0["partitions"] if p["source"]] == [["r1"]]
    assert [p["racks"] for p in task_0_1["partitions"]] == [[]]
    assert "lags_computed" not in scenario


def test_running_active_unknown_offsets_and_missing_end_offsets():
    tables = _tables()
    tables["task_offsets"].loc[1, "offset_sum"] = -2  # one consumer of P1 runs it: -2 wins over 900
    tables["task_offsets"].loc[2, "offset_sum"] = -3
    [scenario] = scenarios_from_tables(tables)
    assert scenario["clients"][0]["lags"] == {"0_0": -2}
    assert scenario["clients"][1]["lags"] == {"0_0": -3}
    tables["changelog_end_offsets"] = tables["changelog_end_offsets"].iloc[:1]
    tables["task_offsets"] = tables["task_offsets"].iloc[0:0]
    subscriptions = tables["client_subscriptions"]
    subscriptions["prev_active_tasks"] = [[], ["0_0"], []]  # P1's consumer p1-a ran 0_0
    subscriptions["prev_standby_tasks"] = [[], [], []]
    [scenario] = scenarios_from_tables(tables)
    assert scenario["lags_computed"] is False
    # a previous active without an offset row is running (-2); everything else is unknown
    assert scenario["clients"][0]["lags"] == {"0_0": -2}
    assert scenario["clients"][1]["lags"] == {"0_0": -3}


def test_rows_of_scenarios_read_back_into_scenarios_that_plan_the_same(scenarios_dir):
    scenarios = [transitions_scenario()]
    scenarios += [json.loads(p.read_text()) for p in sorted((scenarios_dir).glob("example-*.json"))]
    rows = scenario_rows(scenarios)
    rebuilt = scenarios_from_tables({name: pd.DataFrame(r) for name, r in rows.items()})
    assert [s["app_id"] for s in rebuilt] == sorted(s["app_id"] for s in scenarios)
    by_app = {s["app_id"]: s for s in rebuilt}
    for original in scenarios:
        a = plan_scenario(original, now_ms=EXPLORE_NOW)
        b = plan_scenario(by_app[original["app_id"]], now_ms=EXPLORE_NOW)
        for key in ("status", "probing_rebalance", "unassigned", "metrics"):
            assert a[key] == b[key], (original["app_id"], key)
        clients_a = {c["process_id"]: (c["active"], c["standby"], c["warmup"]) for c in a["assignment"]}
        clients_b = {c["process_id"]: (c["active"], c["standby"], c["warmup"]) for c in b["assignment"]}
        assert clients_a == clients_b, original["app_id"]


def test_a_scenario_without_lags_computed_writes_no_end_offsets():
    scenario = {**transitions_scenario(), "lags_computed": False}
    assert scenario_rows(scenario)["changelog_end_offsets"] == []
    assert len(scenario_rows(transitions_scenario())["changelog_end_offsets"]) == 6


def test_offsets_say_what_the_lags_say():
    rows = scenario_rows(transitions_scenario())["task_offsets"]
    c = "00000000-0000-0000-0000-000000000003"
    got = {(r["process_id"], r["task_id"]): r["offset_sum"] for r in rows if r["process_id"] == c}
    # C: 0_1 unknown (-3), 0_4 lag 200 of 1000 -> offset 800; the rest have no state (no row)
    assert got == {(c, "0_1"): -3, (c, "0_4"): 800}


@pytest.mark.parametrize("missing", ["applications", "partition_racks", "task_offsets"])
def test_optional_tables_may_be_absent(missing):
    tables = _tables()
    del tables[missing]
    [scenario] = scenarios_from_tables(tables)
    assert scenario["app_id"] == "a"
    assert explore.plan_fleet([scenario], now_ms=EXPLORE_NOW).results["a"]["status"] == "OK"
