"""The typed rollout simulation (assignor/simulation.py): the next round's Scenario is what loading the
carried-out scenario, written by hand, gives; its bounds; and the dict view explore keeps on it."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.simulation import (
    SimulationLimits,
    StopReason,
    current_lags,
    next_rebalance_ms,
    next_round_scenario,
    simulate_rollout,
)
from fleet_assignor.assignor.task_id import TaskId
from tests.fixtures import EXPLORE_NOW, INTERVAL, A, B, two_clients


def _client_view(scenario):
    """What an assignor and the distribution read of each client, comparable across two loads."""
    return {
        str(pid): (
            client.previous_active_tasks,
            client.previous_standby_tasks,
            dict(client.consumer_previous_stateful_tasks),
            dict(client.task_lags),
            client.consumer_client_ids,
        )
        for pid, client in scenario.application_state.clients.items()
    }


def test_the_next_round_is_the_carried_out_scenario_loaded():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    first = plan(scenario)
    b = next(c for c in first.clients if str(c.process_id) == B)
    (warmup,) = b.tasks.warmup
    other = TaskId.parse("0_1") if warmup == TaskId.parse("0_0") else TaskId.parse("0_0")
    a_owned = next(c for c in first.clients if str(c.process_id) == A).consumers["a-1"]

    nxt = next_round_scenario(
        scenario,
        first.clients,
        end_sums=scenario.end_offset_sums,
        catch_up_per_round=600,
        now_ms=EXPLORE_NOW + 1,
    )

    # A runs what it was given; B warmed up `warmup` by 600 of 1000 records and has nothing of `other`
    by_hand = two_clients()
    by_hand["clients"] = [
        {"process_id": A, "lags": {"0_0": -2, "0_1": -2},
         "consumers": [{"id": "a-1", "prev_active": [str(t) for t in a_owned.active], "prev_standby": []}]},
        {"process_id": B, "lags": {str(warmup): 400, str(other): 1000},
         "consumers": [{"id": "b-1", "prev_active": [], "prev_standby": [str(warmup)]}]},
    ]  # fmt: skip
    expected = load_scenario(by_hand, now_ms=EXPLORE_NOW + 1)
    assert _client_view(nxt) == _client_view(expected)
    assert nxt.now_ms == EXPLORE_NOW + 1
    assert nxt.warnings == ()


def test_the_changelogs_stay_those_of_the_first_round():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    first = plan(scenario)
    nxt = next_round_scenario(
        scenario,
        first.clients,
        end_sums=scenario.end_offset_sums,
        catch_up_per_round=None,
        now_ms=EXPLORE_NOW,
    )
    (warmup,) = next(c for c in first.clients if str(c.process_id) == B).tasks.warmup
    # A runs `warmup` (-2) and B caught up on it (0): no lag shows its 1000 records any more
    assert sorted(c.task_lags[warmup] for c in nxt.application_state.clients.values()) == [-2, 0]
    assert dict(nxt.end_offset_sums) == {TaskId.parse("0_0"): 1000, TaskId.parse("0_1"): 1000}


def test_explore_next_scenario_is_the_same_step_on_dicts():
    scenario = two_clients()
    result = plan(load_scenario(scenario, now_ms=EXPLORE_NOW)).as_dict()
    as_dict = explore.next_scenario(
        scenario, result, end_sums={"0_0": 1000, "0_1": 1000}, catch_up_per_round=600
    )
    loaded = load_scenario(scenario, now_ms=EXPLORE_NOW)
    typed = next_round_scenario(
        loaded,
        plan(loaded).clients,
        end_sums=loaded.end_offset_sums,
        catch_up_per_round=600,
        now_ms=EXPLORE_NOW,
    )
    assert _client_view(load_scenario(as_dict, now_ms=EXPLORE_NOW)) == _client_view(typed)


def test_a_client_the_plan_leaves_out_loses_everything():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    nxt = next_round_scenario(
        scenario, [], end_sums=scenario.end_offset_sums, catch_up_per_round=None, now_ms=EXPLORE_NOW
    )
    a = next(c for c in nxt.application_state.clients.values() if str(c.process_id) == A)
    assert (a.previous_active_tasks, a.previous_standby_tasks) == (frozenset(), frozenset())
    assert set(a.task_lags.values()) == {1000}


def test_the_next_rebalance_is_at_the_earliest_deadline():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    first = plan(scenario)
    assert next_rebalance_ms(first, EXPLORE_NOW) == EXPLORE_NOW + INTERVAL
    assert (
        next_rebalance_ms(first, EXPLORE_NOW + 2 * INTERVAL) == EXPLORE_NOW + 2 * INTERVAL
    )  # overdue: at once


def test_the_first_plan_given_is_round_one():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    first = plan(scenario)
    simulation = simulate_rollout(scenario, first, catch_up_per_round=None)
    assert simulation.first.result is first
    assert (len(simulation.rounds), simulation.stop_reason) == (2, StopReason.CONVERGED)
    assert simulation.last.now_ms == EXPLORE_NOW + INTERVAL


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be at least 1"),
        ({"max_replanned_tasks": -1}, "max_replanned_tasks must be >= 0"),
        ({"time_budget_ms": -0.5}, "time_budget_ms must be >= 0"),
    ],
)
def test_limits_are_checked(limits, message):
    with pytest.raises(ValueError, match=message):
        SimulationLimits(**limits)


def test_a_negative_catch_up_is_refused():
    scenario = load_scenario(two_clients(), now_ms=EXPLORE_NOW)
    with pytest.raises(ValueError, match="catch_up_per_round must be >= 0"):
        simulate_rollout(scenario, catch_up_per_round=-1)


def test_current_lags_read_each_kind_of_reported_lag():
    """Records behind per changelog task: a running task (-2) and a task run before with no lag given owe
    nothing; an unknown offset (-3), a task without state and an unknown client owe the whole changelog; a
    task without a changelog is left out."""
    t = [TaskId.parse(f"0_{i}") for i in range(6)]
    client = next(iter(load_scenario(two_clients(), now_ms=EXPLORE_NOW).application_state.clients.values()))
    client = replace(
        client,
        previous_active_tasks=frozenset({t[1], t[2]}),
        task_lags=MappingProxyType({t[0]: -2, t[2]: 17, t[3]: -3}),
    )
    end_sums = {t[0]: 100, t[1]: 200, t[2]: 300, t[3]: 400, t[4]: 500}

    assert current_lags(client, t, end_sums) == {t[0]: 0, t[1]: 0, t[2]: 17, t[3]: 400, t[4]: 500}
    assert current_lags(None, t, end_sums) == end_sums
    assert current_lags(replace(client, task_lags=None), [t[4], t[1]], end_sums) == {t[4]: 500, t[1]: 0}
