"""HighAvailabilityTaskAssignorTest's random-input cases under the rack strategies (assignors.md §11.1 #33,
#34), through the real rack optimizer: every client and partition has a rack, so the optimizer runs.

#33 shouldAssignRandomInput: valid with 3 standbys, actives balanced; balance_subtopology also keeps the
per-subtopology skew within 4. #34 shouldRemainOriginalAssignmentWithoutTrafficCostForMinCostStrategy: with
traffic cost 0 and non-overlap cost 10, min_traffic leaves every client's stateful actives and standbys as
strategy `none` places them (moving costs, staying is free); balance_subtopology keeps skew within 4.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter

import pytest

from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.assignor.rack.legacy import RackAwareTaskAssignor
from fleet_assignor.assignor.scenario import load_scenario

RACKS = ("rack-a", "rack-b", "rack-c")
NOW_MS = 1_700_000_000_000
SEEDS = range(8)


def random_input(seed: int, strategy: str, standbys: int, traffic: int, non_overlap: int) -> dict:
    """Kafka's random input: tasks 0..59 x 0..2, a random stateful subset, 50 clients of capacity 1-3 with
    random previous tasks, lag 0 everywhere; racks on every client and partition."""
    rng = random.Random(seed)
    ids = [f"{s}_{p}" for s in range(60) for p in range(3)]
    stateful = set(rng.sample(ids, rng.randint(1, len(ids))))
    tasks = []
    for task in ids:
        sub, part = task.split("_")
        partitions = [
            {"topic": f"source-{sub}", "partition": int(part), "source": True, "changelog": False,
             "racks": sorted(rng.sample(RACKS, rng.randint(1, 2)))}
        ]  # fmt: skip
        if task in stateful:
            partitions.append(
                {"topic": f"store-{sub}-changelog", "partition": int(part), "source": False,
                 "changelog": True, "racks": sorted(rng.sample(RACKS, rng.randint(1, 2)))}
            )  # fmt: skip
        stores = [f"store-{sub}"] if task in stateful else []
        tasks.append({"id": task, "stateful": task in stateful, "stores": stores, "partitions": partitions})
    unowned = ids[:]
    rng.shuffle(unowned)
    clients = []
    for _n in range(50):
        prev_active = [unowned.pop() for _ in range(min(len(unowned), rng.randint(0, 6)))]
        prev_standby = [t for t in rng.sample(sorted(stateful), min(len(stateful), rng.randint(0, 6)))
                        if t not in prev_active]  # fmt: skip
        clients.append(
            {
                "process_id": str(uuid.UUID(int=rng.getrandbits(128))),
                "threads": rng.randint(1, 3),
                "prev_active": prev_active,
                "prev_standby": prev_standby,
                "lags": {t: 0 for t in sorted(stateful)},
                "rack": rng.choice(RACKS),
            }
        )
    configs = {
        "acceptable_recovery_lag": 100, "max_warmup_replicas": 2, "num_standby_replicas": standbys,
        "probing_rebalance_interval_ms": 60_000, "rack_aware_assignment_tags": [],
        "rack_aware_assignment_strategy": strategy, "rack_aware_traffic_cost": traffic,
        "rack_aware_non_overlap_cost": non_overlap,
    }  # fmt: skip
    return {"app_id": f"random-{seed}", "configs": configs, "tasks": tasks, "clients": clients}


def plan(scenario: dict) -> dict:
    result = plan_scenario(scenario, assignor="high_availability", now_ms=NOW_MS)
    assert result["status"] == "OK" and result["error"] == "NONE", result["error_detail"]
    return result


def stateful_ids(scenario: dict) -> set[str]:
    return {t["id"] for t in scenario["tasks"] if t["stateful"]}


def assert_valid(scenario: dict, result: dict, standbys: int) -> None:
    """Every task active exactly once; each stateful task on 1 + standbys clients (a warmup adds one)."""
    stateful = stateful_ids(scenario)
    actives = Counter(t for c in result["assignment"] for t in c["active"])
    assert set(actives) == {t["id"] for t in scenario["tasks"]} and set(actives.values()) == {1}
    replicas = Counter(t for c in result["assignment"] for t in c["standby"] if t not in c["warmup"])
    assert set(replicas) <= stateful
    for task in stateful:
        assert replicas[task] == standbys, (task, replicas[task])
    for c in result["assignment"]:
        assert not set(c["active"]) & set(c["standby"]), c["process_id"]


def assert_actives_balanced(scenario: dict, result: dict) -> None:
    threads = {c["process_id"]: c["threads"] for c in scenario["clients"]}
    loads = [len(c["active"]) / threads[c["process_id"]] for c in result["assignment"]]
    assert max(loads) - min(loads) <= 1.0, loads


def subtopology_skew(result: dict) -> int:
    per_sub: dict[str, Counter] = {}
    for c in result["assignment"]:
        for task in c["active"]:
            per_sub.setdefault(task.split("_")[0], Counter())[c["process_id"]] += 1
    clients = [c["process_id"] for c in result["assignment"]]
    return max(max(c[p] for p in clients) - min(c[p] for p in clients) for c in per_sub.values())


def assert_optimizer_runs(scenario: dict) -> None:
    rack = RackAwareTaskAssignor(load_scenario(scenario, now_ms=NOW_MS).application_state)
    assert rack.can_enable_rack_awareness(), rack.disabled_reason


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_input_with_rack_strategy(strategy, seed):
    scenario = random_input(seed, strategy, standbys=3, traffic=10, non_overlap=1)
    assert_optimizer_runs(scenario)
    result = plan(scenario)
    assert_valid(scenario, result, standbys=3)
    assert_actives_balanced(scenario, result)
    if strategy == "balance_subtopology":
        assert subtopology_skew(result) <= 4


@pytest.mark.parametrize("seed", SEEDS)
def test_min_traffic_without_traffic_cost_keeps_the_original_assignment(seed):
    scenario = random_input(seed, "min_traffic", standbys=1, traffic=0, non_overlap=10)
    assert_optimizer_runs(scenario)
    optimized = plan(scenario)
    unoptimized = {**scenario["configs"], "rack_aware_assignment_strategy": "none"}
    baseline = plan({**scenario, "configs": unoptimized})
    assert_valid(scenario, optimized, standbys=1)
    stateful = stateful_ids(scenario)

    def stateful_sets(result: dict) -> dict[str, tuple[set[str], set[str]]]:
        return {
            c["process_id"]: (set(c["active"]) & stateful, set(c["standby"]) & stateful)
            for c in result["assignment"]
        }

    assert stateful_sets(optimized) == stateful_sets(baseline)


@pytest.mark.parametrize("seed", SEEDS)
def test_balance_subtopology_without_traffic_cost_keeps_skew_bounded(seed):
    scenario = random_input(seed, "balance_subtopology", standbys=1, traffic=0, non_overlap=10)
    assert_optimizer_runs(scenario)
    result = plan(scenario)
    assert_valid(scenario, result, standbys=1)
    assert subtopology_skew(result) <= 4
