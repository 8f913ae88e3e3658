"""assignor.rack.report: ``optimize-rack`` on a scenario's previous assignment, its ``rack_cost`` object,
the optimizer's own refusals as ``disabled_reason``, and the subcommand's arguments."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from fleet_assignor.assignor.rack.enablement import OptimizedTaskType
from fleet_assignor.assignor.rack.report import (
    add_optimize_rack_arguments,
    optimize_rack,
    optimize_rack_scenario,
    run_optimize_rack,
)
from fleet_assignor.assignor.scenario import ScenarioError, load_scenario

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"


def _crossed(prev_1=("0_0",), prev_2=("0_1",), strategy="min_traffic") -> dict:
    """Two clients on r1 and r2; 0_0 reads a partition on r2 and 0_1 one on r1, each run by the client on
    the other rack."""

    def task(task_id: str, rack: str) -> dict:
        return {"id": task_id, "partitions": [{"topic": f"in-{task_id}", "partition": 0, "source": True,
                                               "racks": [rack]}]}  # fmt: skip

    return {
        "configs": {
            "rack_aware_assignment_strategy": strategy,
            "rack_aware_traffic_cost": 10,
            "rack_aware_non_overlap_cost": 1,
        },
        "tasks": [task("0_0", "r2"), task("0_1", "r1")],
        "clients": [
            {"process_id": P1, "threads": 1, "rack": "r1", "prev_active": list(prev_1)},
            {"process_id": P2, "threads": 1, "rack": "r2", "prev_active": list(prev_2)},
        ],
    }


def _actives(result: dict) -> dict[str, list[str]]:
    return {entry["process_id"]: entry["active"] for entry in result["assignment"]}


def test_the_active_optimizer_swaps_crossed_tasks_and_reports_the_cost():
    result = optimize_rack_scenario(_crossed(), "active")
    assert result["assignor"] == "optimize_rack_active"
    assert result["status"] == "OK"
    assert _actives(result) == {P1: ["0_1"], P2: ["0_0"]}
    assert result["rack_cost"] == {
        "task_type": "ACTIVE", "traffic_cost": 10, "non_overlap_cost": 1, "cross_rack_partitions_before": 2,
        "cross_rack_partitions_after": 0, "tasks_moved": 2, "total_cost": 2, "enabled": True,
        "disabled_reason": None,
    }  # fmt: skip
    assert list(result)[-2:] == ["elapsed_ms", "rack_cost"]


def test_the_task_type_may_be_given_as_text_in_any_case_or_as_the_enum():
    by_text = optimize_rack_scenario(_crossed(), "Standby")
    by_enum = optimize_rack(load_scenario(_crossed()), OptimizedTaskType.STANDBY)
    assert by_text["assignor"] == by_enum["assignor"] == "optimize_rack_standby"
    assert by_text["rack_cost"] == by_enum["rack_cost"]


def test_when_disabled_the_previous_assignment_is_kept_and_its_cost_counted():
    result = optimize_rack_scenario(_crossed(strategy="none"), "active")
    assert _actives(result) == {P1: ["0_0"], P2: ["0_1"]}
    rack = result["rack_cost"]
    assert (rack["enabled"], rack["disabled_reason"]) == (False, "rack_aware_assignment_strategy is none")
    assert rack["cross_rack_partitions_before"] == rack["cross_rack_partitions_after"] == 2


def test_an_active_claimed_by_two_clients_is_the_optimizers_refusal_not_a_crash():
    result = optimize_rack_scenario(_crossed(prev_1=("0_0", "0_1"), prev_2=("0_1",)), "active")
    rack = result["rack_cost"]
    assert rack["enabled"] is False
    assert rack["disabled_reason"] == f"Task 0_1 assigned to multiple clients {P2}, {P1}"
    assert _actives(result) == {P1: ["0_0", "0_1"], P2: ["0_1"]}  # the input, untouched
    assert result["status"] == "INVALID_ASSIGNMENT"


def test_unusable_input_is_a_scenario_error():
    with pytest.raises(ScenarioError, match=r"^clients: no clients$"):
        optimize_rack_scenario({"tasks": [], "clients": []}, "active")


def test_the_subcommand_defaults_to_actives_and_writes_the_result(tmp_path):
    parser = argparse.ArgumentParser()
    add_optimize_rack_arguments(parser)
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(_crossed()))
    args = parser.parse_args([str(scenario)])
    assert (args.task_type, args.out) == ("active", None)
    out = io.StringIO()
    assert run_optimize_rack(args, out) == 0
    assert json.loads(out.getvalue())["rack_cost"]["task_type"] == "ACTIVE"
    with pytest.raises(SystemExit, match=r"^2$"):
        parser.parse_args([str(scenario), "--type", "warmup"])
