"""optimize-rack on the example scenarios: never worse than Kafka's own optimizer, and sound on variants."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest

from fleet_assignor.assignor.cli import main
from fleet_assignor.assignor.rack.report import optimize_rack_scenario
from tests.conftest import SCENARIOS_DIR

EXAMPLES = sorted(SCENARIOS_DIR.glob("example-*.json"))
KAFKA_RESULTS = sorted((SCENARIOS_DIR / "kafka").glob("*.optimize_rack_*.json"))


def _kafka_total(rack_cost: dict) -> int:
    return rack_cost["traffic_cost"] * rack_cost["cross_rack_partitions_after"] + (
        rack_cost["non_overlap_cost"] * rack_cost["tasks_moved"]
    )


@pytest.mark.parametrize("kafka_file", KAFKA_RESULTS, ids=lambda p: p.name)
def test_total_cost_never_above_kafkas(kafka_file: Path):
    example, mode = kafka_file.name.split(".")[:2]
    task_type = mode.removeprefix("optimize_rack_")
    scenario = json.loads((SCENARIOS_DIR / f"{example}.json").read_text())
    kafka = json.loads(kafka_file.read_text())["rack_cost"]
    ours = optimize_rack_scenario(scenario, task_type)["rack_cost"]
    assert ours["task_type"] == kafka["task_type"]
    assert (ours["traffic_cost"], ours["non_overlap_cost"]) == (
        kafka["traffic_cost"],
        kafka["non_overlap_cost"],
    )
    assert ours["cross_rack_partitions_before"] == kafka["cross_rack_partitions_before"]
    assert ours["total_cost"] <= _kafka_total(kafka)


def _variant(path: Path, strategy: str, costs: tuple[int, int]) -> dict:
    scenario = copy.deepcopy(json.loads(path.read_text()))
    configs = scenario.setdefault("configs", {})
    configs["rack_aware_assignment_strategy"] = strategy
    configs["rack_aware_traffic_cost"], configs["rack_aware_non_overlap_cost"] = costs
    return scenario


def _roles(result: dict, role: str) -> dict[str, set[str]]:
    return {entry["process_id"]: set(entry[role]) for entry in result["assignment"]}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("task_type", ["active", "standby"])
def test_variants_improve_keep_counts_and_stay_valid(path: Path, strategy: str, task_type: str):
    """Every example with a rack strategy forced on (HA's default costs 10/1): when enabled, the result is
    valid, keeps each client's count of the optimized role, never puts a task twice on one client, and its
    total cost is at most the input's (keeping everything is one feasible answer)."""
    scenario = _variant(path, strategy, (10, 1))
    identity = optimize_rack_scenario(_variant(path, "none", (10, 1)), task_type)
    result = optimize_rack_scenario(scenario, task_type)
    rack = result["rack_cost"]
    assert result["status"] == "OK", result["error_detail"]
    role = "active" if task_type == "active" else "standby"
    before, after = _roles(identity, role), _roles(result, role)
    assert {p: len(t) for p, t in after.items()} == {p: len(t) for p, t in before.items()}
    assert sorted(t for ts in after.values() for t in ts) == sorted(t for ts in before.values() for t in ts)
    actives, standbys = _roles(result, "active"), _roles(result, "standby")
    assert all(not (actives[p] & standbys[p]) for p in actives)
    if rack["enabled"]:
        assert rack["total_cost"] <= 10 * rack["cross_rack_partitions_before"]
        moved = sum(len(after[p] - before[p]) for p in after)
        assert moved == rack["tasks_moved"]
    assert _without_time(optimize_rack_scenario(scenario, task_type)) == _without_time(
        result
    )  # deterministic


def _without_time(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "elapsed_ms"}


def test_cli_prints_rack_cost(tmp_path):
    scenario_path = tmp_path / "scenario.json"
    scenario_path.write_text(json.dumps(_variant(SCENARIOS_DIR / "example-006.json", "min_traffic", (10, 1))))
    out = io.StringIO()
    code = main(["optimize-rack", str(scenario_path), "--type", "standby"], stdout=out)
    assert code == 0
    result = json.loads(out.getvalue())
    assert result["assignor"] == "optimize_rack_standby"
    assert set(result["rack_cost"]) >= {
        "cross_rack_partitions_before",
        "total_cost",
        "enabled",
        "disabled_reason",
    }


def test_disabled_reason_when_strategy_none():
    result = optimize_rack_scenario(_variant(SCENARIOS_DIR / "example-002.json", "none", (10, 1)), "active")
    assert result["rack_cost"]["enabled"] is False
    assert result["rack_cost"]["disabled_reason"] == "rack_aware_assignment_strategy is none"
