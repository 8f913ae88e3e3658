"""Multi-round simulation: each round is the plan of the previous plan carried out, exactly as if that
next scenario had been written by hand and planned directly."""

from __future__ import annotations

import json

import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan_scenario
from tests.fixtures import EXPLORE_NOW, INTERVAL, A, B, two_clients


def _comparable(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "elapsed_ms"}


def _client(result: dict, pid: str) -> dict:
    return next(c for c in result["assignment"] if c["process_id"] == pid)


def test_warmup_catches_up_then_the_task_moves_and_the_plan_converges():
    sim = explore.simulate(two_clients(), now_ms=EXPLORE_NOW, catch_up_per_round=600, max_rounds=10)
    # B is 1000 behind: 400 after one round, caught up (0 <= 100) after two; then one task moves to B.
    assert sim.converged
    assert len(sim.rounds) == 3
    assert sim.probing_rebalances == 2
    summary = sim.summary()
    assert list(summary["active_moves"]) == [0, 0, 1]
    assert list(summary["warmups"]) == [1, 1, 0]
    assert list(summary["probing_rebalance"]) == [True, True, False]
    assert list(summary["now_ms"]) == [EXPLORE_NOW, EXPLORE_NOW + INTERVAL, EXPLORE_NOW + 2 * INTERVAL]
    final = sim.rounds[-1].result
    assert sorted(len(c["active"]) for c in final["assignment"]) == [1, 1]


def test_the_second_round_equals_planning_the_carried_out_scenario_by_hand():
    sim = explore.simulate(two_clients(), now_ms=EXPLORE_NOW, catch_up_per_round=600, max_rounds=2)
    first = sim.rounds[0].result
    warmed = _client(first, B)["warmup"]
    assert len(warmed) == 1
    w = warmed[0]
    other = "0_1" if w == "0_0" else "0_0"
    a_consumer = _client(first, A)["consumers"]["a-1"]
    by_hand = two_clients()
    by_hand["clients"] = [
        {"process_id": A,
         "consumers": [{"id": "a-1", "prev_active": a_consumer["active"], "prev_standby": []}],
         "lags": {"0_0": -2, "0_1": -2}},
        {"process_id": B, "consumers": [{"id": "b-1", "prev_active": [], "prev_standby": [w]}],
         "lags": {w: 400, other: 1000}},
    ]  # fmt: skip
    second = sim.rounds[1]
    assert second.now_ms == EXPLORE_NOW + INTERVAL
    assert _comparable(second.result) == _comparable(plan_scenario(by_hand, now_ms=EXPLORE_NOW + INTERVAL))


def test_instant_catch_up_converges_in_two_rounds():
    sim = explore.simulate(two_clients(), now_ms=EXPLORE_NOW, catch_up_per_round=None)
    assert sim.converged and sim.probing_rebalances == 1
    assert list(sim.summary()["active_moves"]) == [0, 1]


def test_no_catch_up_never_converges_within_the_rounds():
    sim = explore.simulate(two_clients(), now_ms=EXPLORE_NOW, catch_up_per_round=0, max_rounds=4)
    assert not sim.converged
    assert sim.probing_rebalances == 4
    assert list(sim.summary()["active_moves"]) == [0, 0, 0, 0]


def test_simulation_leaves_the_input_alone_and_checks_its_arguments():
    scenario = two_clients()
    snapshot = json.dumps(scenario, sort_keys=True)
    explore.simulate(scenario, now_ms=EXPLORE_NOW, catch_up_per_round=600)
    assert json.dumps(scenario, sort_keys=True) == snapshot
    with pytest.raises(ValueError, match="max_rounds"):
        explore.simulate(scenario, now_ms=EXPLORE_NOW, max_rounds=0)
    with pytest.raises(ValueError, match="catch_up_per_round"):
        explore.simulate(scenario, now_ms=EXPLORE_NOW, catch_up_per_round=-1)


def test_every_round_of_a_larger_example_replans_identically(scenarios_dir):
    scenario = json.loads((scenarios_dir / "example-006.json").read_text())
    sim = explore.simulate(scenario, now_ms=EXPLORE_NOW, catch_up_per_round=50_000, max_rounds=4)
    for round_ in sim.rounds:
        assert _comparable(round_.result) == _comparable(plan_scenario(round_.scenario, now_ms=round_.now_ms))
    # the next round's previous assignment is exactly the plan of the round before
    for before, after in zip(sim.rounds, sim.rounds[1:], strict=False):
        for client in before.result["assignment"]:
            carried = next(c for c in after.scenario["clients"] if c["process_id"] == client["process_id"])
            prev_active = sorted(t for c in carried["consumers"] for t in c["prev_active"])
            assert prev_active == sorted(client["active"])
