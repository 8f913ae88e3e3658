"""The seeded scenario generator: deterministic, always usable input, and as varied as issue 9 asks."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from fleet_assignor.assignor.scenario import load_scenario
from tests.scenario_generator import STRATEGIES, Knobs, generate_scenario

SEEDS = range(300)


@pytest.fixture(scope="module")
def drawn():
    return [generate_scenario(seed) for seed in SEEDS]


def _changelog_tasks(scenario):
    return {t["id"] for t in scenario["tasks"] if any(p["changelog"] for p in t["partitions"])}


def _previous(client, role):
    """A client's previous tasks in `role` ("prev_active"/"prev_standby"), per-consumer history included."""
    consumers = [x for x in client.get("consumers", []) if isinstance(x, dict)]
    return set(client.get(role, [])).union(*(x[role] for x in consumers))


def test_same_seed_same_scenario_and_seeds_differ():
    assert json.dumps(generate_scenario(7)) == json.dumps(generate_scenario(7))
    assert json.dumps(generate_scenario(7)) != json.dumps(generate_scenario(8))


def test_every_scenario_is_usable_input(drawn):
    for seed, scenario in zip(SEEDS, drawn, strict=False):
        loaded = load_scenario(scenario, source=f"seed {seed}")
        assert len(loaded.application_state.kafka_streams_states(False)) == len(scenario["clients"])


def test_sizes_cover_the_issue_ranges(drawn):
    threads = {c["threads"] for s in drawn for c in s["clients"]}
    subtopologies = {len({t["id"].split("_")[0] for t in s["tasks"]}) for s in drawn}
    assert threads == set(range(1, 9))
    assert subtopologies == set(range(1, 9))
    assert {s["configs"]["num_standby_replicas"] for s in drawn} == {0, 1, 2, 3}


def test_task_kinds_and_lag_kinds_are_mixed(drawn):
    kinds = Counter()
    for s in drawn:
        for t in s["tasks"]:
            changelog = any(p["changelog"] for p in t["partitions"])
            source_changelog = any(p["changelog"] and p["source"] for p in t["partitions"])
            kinds["stateless" if not t["stateful"] else "unlogged" if not changelog else "logged"] += 1
            kinds["source_changelog"] += source_changelog
        for c in s["clients"]:
            for lag in c["lags"].values():
                acceptable = s["configs"]["acceptable_recovery_lag"]
                kinds[
                    "lag_running"
                    if lag == -2
                    else "lag_unknown"
                    if lag == -3
                    else "lag_caught_up"
                    if lag <= acceptable
                    else "lag_behind"
                ] += 1
    for kind in (
        "stateless",
        "unlogged",
        "logged",
        "source_changelog",
        "lag_running",
        "lag_unknown",
        "lag_caught_up",
        "lag_behind",
    ):
        assert kinds[kind] > 0, kind


def test_histories_include_stale_and_conflicting_ones(drawn):
    seen = Counter()
    for s in drawn:
        known = {t["id"] for t in s["tasks"]}
        owners = Counter()
        for c in s["clients"]:
            consumers = [x for x in c.get("consumers", []) if isinstance(x, dict)]
            active, standby = _previous(c, "prev_active"), _previous(c, "prev_standby")
            owners.update(active & known)
            seen["stale"] += bool((active | standby) - known)
            seen["both_roles"] += bool(active & standby)
            seen["per_consumer_history"] += bool(consumers)
            seen["threads_only"] += c.get("consumers") == []
        seen["conflict"] += any(n > 1 for n in owners.values())
        seen["fresh"] += not owners
        seen["no_end_offsets"] += s.get("lags_computed") is False
    for kind in (
        "stale",
        "both_roles",
        "per_consumer_history",
        "threads_only",
        "conflict",
        "fresh",
        "no_end_offsets",
    ):
        assert seen[kind] > 0, kind


def test_racks_tags_strategies_and_costs_all_occur(drawn):
    seen = Counter()
    for s in drawn:
        configs = s["configs"]
        seen[configs["rack_aware_assignment_strategy"]] += 1
        costs = (configs["rack_aware_traffic_cost"] is None, configs["rack_aware_non_overlap_cost"] is None)
        seen[f"costs_unset={costs}"] += 1
        racks = [c["rack"] for c in s["clients"]] + [p["racks"] for t in s["tasks"] for p in t["partitions"]]
        present = [bool(r) for r in racks]
        seen["racks_full" if all(present) else "racks_none" if not any(present) else "racks_partial"] += 1
        seen["tags"] += bool(configs["rack_aware_assignment_tags"])
    for kind in (*STRATEGIES, "racks_full", "racks_none", "racks_partial", "tags"):
        assert seen[kind] > 0, kind
    assert sum(1 for k in seen if k.startswith("costs_unset")) == 4


def test_tag_keys_are_on_every_client_and_at_most_five(drawn):
    for s in drawn:
        for c in s["clients"]:
            assert set(s["configs"]["rack_aware_assignment_tags"]) <= set(c["tags"])
            assert len(c["tags"]) <= 5


def test_knobs_constrain_the_draw():
    knobs = Knobs(
        clients=(3, 3),
        threads=(2, 2),
        racks=False,
        tags=False,
        history=("fresh",),
        num_standby_replicas=(2, 2),
        strategies=("min_traffic",),
    )
    for seed in range(50):
        s = generate_scenario(seed, knobs)
        assert len(s["clients"]) == 3
        assert all(c["threads"] == 2 and c["rack"] is None and c["tags"] == {} for c in s["clients"])
        assert all(not p["racks"] for t in s["tasks"] for p in t["partitions"])
        assert s["configs"]["num_standby_replicas"] == 2
        assert s["configs"]["rack_aware_assignment_strategy"] == "min_traffic"
        assert s["configs"]["rack_aware_assignment_tags"] == []
        known = {t["id"] for t in s["tasks"]}
        # A fresh history has no previous task of the topology (only stale ids may remain).
        assert all(
            not (_previous(c, role) & known) for c in s["clients"] for role in ("prev_active", "prev_standby")
        )


def test_racks_forced_on_put_a_rack_everywhere_without_partial_share():
    knobs = Knobs(racks=True, partial_racks_share=0.0)
    for seed in range(50):
        s = generate_scenario(seed, knobs)
        assert all(c["rack"] for c in s["clients"])
        assert all(p["racks"] for t in s["tasks"] for p in t["partitions"])
        assert _changelog_tasks(s) >= {t for c in s["clients"] for t in c["lags"]}
