"""What-if plans and multi-round simulations equal planning the modified inputs directly."""

from __future__ import annotations

import copy
import json

import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.explore.whatif import new_process_ids

NOW = 1_700_000_000_000


def _comparable(result: dict) -> dict:
    """A result object without its timing (the only field allowed to differ between two plannings)."""
    return {k: v for k, v in result.items() if k != "elapsed_ms"}


@pytest.fixture(scope="module")
def examples(scenarios_dir):
    return {p.stem: json.loads(p.read_text()) for p in sorted((scenarios_dir).glob("example-*.json"))}


def _racked(examples) -> dict:
    """An example whose clients all have a rack, with at least two racks."""
    for scenario in examples.values():
        racks = [c.get("rack") for c in scenario["clients"]]
        if all(racks) and len(set(racks)) >= 2:
            return scenario
    pytest.fail("no example with racks on every client")


def test_adding_clients_equals_planning_the_scenario_with_them(examples):
    scenario = examples["example-003"]
    original = copy.deepcopy(scenario)
    report = explore.what_if(scenario, explore.AddClients(2, threads=2, rack="rack-9"), now_ms=NOW)
    by_hand = copy.deepcopy(scenario)
    for pid in new_process_ids(scenario["app_id"], [c["process_id"] for c in scenario["clients"]], 2):
        by_hand["clients"].append({"process_id": pid, "threads": 2, "rack": "rack-9", "tags": {}})
    app = scenario["app_id"]
    assert _comparable(report.changed.results[app]) == _comparable(plan_scenario(by_hand, now_ms=NOW))
    assert _comparable(report.baseline.results[app]) == _comparable(plan_scenario(original, now_ms=NOW))
    assert scenario == original  # the real input is untouched
    row = report.comparison.set_index("app_id").loc[app]
    assert row["status_a"] == row["status_b"] == "OK"
    # the new clients are in the changed plan only
    assert len(report.changed.results[app]["assignment"]) == len(scenario["clients"]) + 2


def test_new_client_ids_are_stable_and_fresh():
    ids = new_process_ids("app", [], 3)
    assert ids == new_process_ids("app", [], 3)
    assert len(set(ids)) == 3
    assert new_process_ids("app", ids[:1], 1) == [ids[1]]


def test_losing_a_rack_equals_planning_without_its_clients_and_replicas(examples):
    scenario = _racked(examples)
    rack = sorted({c["rack"] for c in scenario["clients"]})[0]
    report = explore.what_if(scenario, explore.LoseRack(rack), now_ms=NOW)
    by_hand = copy.deepcopy(scenario)
    by_hand["clients"] = [c for c in by_hand["clients"] if c["rack"] != rack]
    for task in by_hand["tasks"]:
        for p in task["partitions"]:
            p["racks"] = [r for r in p.get("racks", []) if r != rack]
    app = scenario["app_id"]
    assert _comparable(report.changed.results[app]) == _comparable(plan_scenario(by_hand, now_ms=NOW))
    kept = {c["process_id"] for c in by_hand["clients"]}
    assert {c["process_id"] for c in report.changed.results[app]["assignment"]} == kept
    diff = report.diff(app)
    lost = {c["process_id"] for c in scenario["clients"]} - kept
    # every task whose baseline active sat on a lost client now runs elsewhere, and the diff says so
    for row in diff.itertuples():
        if row.active_a in lost:
            assert row.active_changed and row.active_b not in lost


def test_removing_clients_and_changing_standbys_and_assignor(examples):
    scenario = examples["example-005"]
    gone = scenario["clients"][0]["process_id"]
    changes = [
        explore.RemoveClients((gone,)),
        explore.set_standby_replicas(2),
        explore.set_assignor("sticky"),
    ]
    report = explore.what_if(scenario, changes, now_ms=NOW)
    by_hand = copy.deepcopy(scenario)
    by_hand["clients"] = by_hand["clients"][1:]
    by_hand["configs"]["num_standby_replicas"] = 2
    by_hand["configs"]["assignor"] = "sticky"
    app = scenario["app_id"]
    changed = report.changed.results[app]
    assert _comparable(changed) == _comparable(plan_scenario(by_hand, now_ms=NOW))
    assert changed["assignor"] == "sticky"
    row = report.comparison.set_index("app_id").loc[app]
    assert row["assignor_a"] == "high_availability" and row["assignor_b"] == "sticky"
    assert row["active_moves_delta"] == changed["metrics"]["active_moves"] - row["active_moves_a"]


def test_what_if_on_a_fleet_changes_only_the_selected_apps(examples):
    fleet = [examples["example-003"], examples["example-004"]]
    report = explore.what_if(fleet, explore.set_standby_replicas(1), now_ms=NOW, apps=["example-004"])
    untouched = report.comparison.set_index("app_id").loc["example-003"]
    assert untouched["actives_differ"] == 0 and untouched["standbys_differ"] == 0
    assert _comparable(report.changed.results["example-003"]) == _comparable(
        report.baseline.results["example-003"]
    )
    changed_by_hand = copy.deepcopy(examples["example-004"])
    changed_by_hand["configs"]["num_standby_replicas"] = 1
    assert _comparable(report.changed.results["example-004"]) == _comparable(
        plan_scenario(changed_by_hand, now_ms=NOW)
    )


def test_compare_assignors_on_the_same_inputs(examples):
    scenario = examples["example-006"]
    plan_a, plan_b, comparison = explore.compare_assignors(
        scenario, "high_availability", "sticky", now_ms=NOW
    )
    app = scenario["app_id"]
    assert _comparable(plan_a.results[app]) == _comparable(
        plan_scenario(scenario, assignor="high_availability", now_ms=NOW)
    )
    assert _comparable(plan_b.results[app]) == _comparable(
        plan_scenario(scenario, assignor="sticky", now_ms=NOW)
    )
    row = comparison.set_index("app_id").loc[app]
    actives_a = {t: c["process_id"] for c in plan_a.results[app]["assignment"] for t in c["active"]}
    actives_b = {t: c["process_id"] for c in plan_b.results[app]["assignment"] for t in c["active"]}
    assert row["actives_differ"] == sum(actives_a.get(t) != actives_b.get(t) for t in actives_a | actives_b)
