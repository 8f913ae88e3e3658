"""The rollout report (assignor/rollout.py, docs/rollout.md).

Single-round figures are checked on a hand-written plan played back by ScriptedAssignor, so every expected
number below is worked out by hand from the scenario; the follow-up rounds on high_availability's warmups
in the two-client scenario of test_explore_simulate (B 1000 records behind on both tasks).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest

from fleet_assignor import explore
from fleet_assignor.assignor import simulation as simulation_module
from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.rollout import (
    Risk,
    RolloutReport,
    RolloutSettings,
    RolloutThresholds,
    rollout_report,
)
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.simulation import StopReason
from fleet_assignor.explore.scripted import plan_config
from tests.fixtures import EXPLORE_NOW, INTERVAL, A, B, two_clients
from tests.scenario_generator import generate_scenarios

C = "00000000-0000-0000-0000-000000000003"
SCRIPTED = "fleet_assignor.explore.scripted:ScriptedAssignor"
RATE = 1_000.0  # records per second in the scripted scenario


def _source(topic: str, partition: int) -> dict:
    return {"topic": topic, "partition": partition, "source": True, "racks": ["r1"]}


def _stateful(task_id: str) -> dict:
    partition = int(task_id.split("_")[1])
    return {"id": task_id, "stores": ["s"], "partitions": [
        _source("in", partition),
        {"topic": "s-changelog", "partition": partition, "changelog": True, "racks": ["r2"]},
    ]}  # fmt: skip


def scripted(assignment: dict) -> dict:
    """A (2 threads, rack r1) ran all five tasks; B (rack r2) and C (rack r1) are new. Changelog end sums
    500, 1000, 2000, 4000 (what B reports); C reports nothing, so it is behind by the whole changelog.
    Source partitions are on r1, changelogs on r2."""
    return {
        "app_id": "scripted",
        "configs": {"assignor": SCRIPTED, "assignor_configs": plan_config(assignment)},
        "tasks": [
            *(_stateful(f"0_{p}") for p in range(4)),
            {"id": "1_0", "partitions": [_source("other", 0)]},
        ],
        "clients": [
            {"process_id": A, "consumers": ["a-1", "a-2"], "rack": "r1",
             "prev_active": ["0_0", "0_1", "0_2", "0_3", "1_0"],
             "lags": {"0_0": -2, "0_1": -2, "0_2": -2, "0_3": -2}},
            {"process_id": B, "consumers": ["b-1"], "rack": "r2",
             "lags": {"0_0": 500, "0_1": 1000, "0_2": 2000, "0_3": 4000}},
            {"process_id": C, "consumers": ["c-1"], "rack": "r1"},
        ],
    }  # fmt: skip


SPREAD_OUT = {
    A: {"active": ["0_0", "0_1"], "standby": ["0_2"]},
    B: {"active": ["0_2", "1_0"], "standby": ["0_0"]},
    C: {"active": ["0_3"]},
}


def report_of(scenario_dict: dict, settings: RolloutSettings | None = None, **kwargs) -> RolloutReport:
    scenario = load_scenario(scenario_dict, now_ms=EXPLORE_NOW)
    return rollout_report(scenario, plan(scenario), settings, **kwargs)


def scripted_report(
    thresholds: RolloutThresholds | None = None, assignment: dict = SPREAD_OUT
) -> RolloutReport:
    settings = RolloutSettings(restore_records_per_second=RATE, thresholds=thresholds or RolloutThresholds())
    return report_of(scripted(assignment), settings)


# --- one round, by hand --------------------------------------------------------------------------------


def test_moves_and_their_fractions():
    report = scripted_report()
    assert (report.tasks, report.stateful_tasks) == (5, 4)
    # 0_2 and 1_0 go to B, 0_3 to C; A keeps 0_0 and 0_1. Only B's standby 0_0 is new to its client (A's
    # standby 0_2 was its active).
    assert (report.active_moves, report.standby_moves, report.warmup_moves) == (3, 1, 0)
    assert report.active_moves_fraction == pytest.approx(3 / 5)
    assert report.standby_moves_fraction == pytest.approx(1 / 5)
    assert report.warmup_moves_fraction == 0.0
    assert (report.total_active_moves, report.total_standby_moves, report.total_warmup_moves) == (3, 1, 0)


def test_restore_records_and_duration():
    report = scripted_report()
    # B restores 0_2 (2000) as active and 0_0 (500) as standby; C restores all of 0_3 (4000); A's tasks are
    # running (0). The slowest is C's 4000 records at 1000/s: 4 s, and there is no follow-up round.
    assert report.restore_records == 2000 + 500 + 4000
    assert report.estimated_duration_ms == 4_000
    assert (report.rounds_simulated, report.probing_rebalances) == (1, 0)
    assert report.converged and not report.truncated and report.stop_reason is StopReason.CONVERGED


def test_balance_before_and_after():
    report = scripted_report()
    # actives before: A 5 on 2 threads (2.5), B 0, C 0; after: A 2 (1.0), B 2 (2.0), C 1 (1.0)
    assert (report.active_balance_per_thread_before, report.active_balance_per_client_before) == (2.5, 5)
    assert (report.active_balance_per_thread_after, report.active_balance_per_client_after) == (1.0, 1)
    # standbys before: none; after: A 1 (0.5), B 1 (1.0), C 0
    assert (report.standby_balance_per_thread_before, report.standby_balance_per_client_before) == (0.0, 0)
    assert (report.standby_balance_per_thread_after, report.standby_balance_per_client_after) == (1.0, 1)


def test_cross_rack_before_and_after():
    report = scripted_report()
    # before: A (r1) reads five r1 sources: 0. After: A's standby 0_2 restores from r2 (1), B (r2) reads
    # the r1 sources of 0_2 and 1_0 (2), B's standby changelog is on r2 and C's source on r1 (0).
    assert (report.cross_rack_before, report.cross_rack_after) == (0, 3)


def test_cross_rack_is_unknown_without_racks():
    scenario = scripted(SPREAD_OUT)
    for client in scenario["clients"]:
        client.pop("rack")
    report = report_of(scenario)
    assert (report.cross_rack_before, report.cross_rack_after) == (None, None)
    assert report.risk(Risk.RACK_TRAFFIC_WORSE) is None


def test_default_thresholds_flag_this_plan_for_moves_standby_balance_and_racks():
    report = scripted_report()
    flags = {flag.risk: (flag.value, flag.threshold) for flag in report.risks}
    assert flags == {
        Risk.MOST_TASKS_MOVE: (pytest.approx(0.6), 0.5),
        Risk.STANDBY_BALANCE_WORSE: (1.0, 0.0),
        Risk.RACK_TRAFFIC_WORSE: (3, 0),
    }


@pytest.mark.parametrize(
    ("risk", "at_value", "just_below"),
    [
        (Risk.MOST_TASKS_MOVE, {"most_tasks_move_fraction": 0.6}, {"most_tasks_move_fraction": 0.59}),
        (Risk.LARGE_RESTORE, {"max_restore_records": 6_500}, {"max_restore_records": 6_499}),
        (Risk.SLOW_ROLLOUT, {"max_rollout_ms": 4_000}, {"max_rollout_ms": 3_999}),
        (Risk.STANDBY_BALANCE_WORSE, {"standby_balance_tolerance": 1.0}, {"standby_balance_tolerance": 0.99}),
        (Risk.RACK_TRAFFIC_WORSE, {"rack_traffic_tolerance": 3}, {"rack_traffic_tolerance": 2}),
    ],
)
def test_a_flag_is_raised_above_its_threshold_not_at_it(risk, at_value, just_below):
    assert scripted_report(RolloutThresholds(**at_value)).risk(risk) is None
    flag = scripted_report(RolloutThresholds(**just_below)).risk(risk)
    assert flag is not None and flag.value > flag.threshold
    assert flag.name == risk.value


def test_active_balance_worse():
    # everything onto B's single thread: 5.0 per thread against A's 2.5 before
    all_on_b = {B: {"active": ["0_0", "0_1", "0_2", "0_3", "1_0"]}}
    flag = scripted_report(assignment=all_on_b).risk(Risk.ACTIVE_BALANCE_WORSE)
    assert (flag.value, flag.threshold) == (5.0, 2.5)
    tolerated = scripted_report(RolloutThresholds(active_balance_tolerance=2.5), all_on_b)
    assert tolerated.risk(Risk.ACTIVE_BALANCE_WORSE) is None


def test_a_plan_without_follow_up_is_not_replanned(monkeypatch):
    def no_replanning(*args, **kwargs):
        raise AssertionError("replanned")

    monkeypatch.setattr(simulation_module, "plan", no_replanning)
    assert scripted_report().rounds_simulated == 1


def test_the_row_has_plain_values():
    row = scripted_report().as_row()
    assert row["stop_reason"] == "CONVERGED"
    assert {"name": "rack_traffic_worse", "value": 3.0, "threshold": 0.0} in row["risks"]
    assert json.loads(json.dumps(row)) == row


# --- follow-up rounds: high_availability's warmup -------------------------------------------------------

# 1 record/s over the 600 s probing interval: B's warmup catches up by 600 records per round, so it is 400
# behind after one round and caught up (<= the acceptable 100) after two; then one task moves to it.
SLOW = RolloutSettings(restore_records_per_second=1.0)


def test_warmup_rounds_until_no_follow_up_remains():
    report = report_of(two_clients(), SLOW)
    assert report.catch_up_per_round == 600
    assert (report.rounds_simulated, report.probing_rebalances, report.converged) == (3, 2, True)
    assert (report.active_moves, report.warmup_moves) == (0, 1)
    # the same warmup carries over to round 2; round 3 moves one active onto B
    assert (report.total_active_moves, report.total_warmup_moves, report.total_standby_moves) == (1, 1, 0)
    # B restores one changelog (600 then 400); everything the last plan places is caught up
    assert report.restore_records == 1_000
    assert report.estimated_duration_ms == 2 * INTERVAL
    # A ran both tasks on its one thread; after, one each
    assert (report.active_balance_per_thread_before, report.active_balance_per_thread_after) == (2.0, 0.0)
    assert report.risks == ()


def test_instant_catch_up_takes_one_follow_up():
    report = report_of(two_clients(), RolloutSettings(restore_records_per_second=10.0))  # 6000 per round
    assert (report.rounds_simulated, report.probing_rebalances, report.total_active_moves) == (2, 1, 1)
    assert report.estimated_duration_ms == INTERVAL


def test_truncated_after_max_rounds():
    report = report_of(two_clients(), replace(SLOW, max_rounds=2))
    assert (report.rounds_simulated, report.converged, report.truncated) == (2, False, True)
    assert report.stop_reason is StopReason.MAX_ROUNDS
    # round 1's warmup restored 600; the last plan still has it 400 behind: 400 s more at 1 record/s
    assert report.restore_records == 1_000
    assert report.estimated_duration_ms == INTERVAL + 400_000
    flag = report.risk(Risk.NOT_CONVERGED)
    assert (flag.value, flag.threshold) == (2, 1)


def test_never_catching_up_is_truncated_with_no_active_moved():
    report = report_of(two_clients(), RolloutSettings(restore_records_per_second=0.001, max_rounds=4))
    assert report.catch_up_per_round == 0
    assert (report.rounds_simulated, report.probing_rebalances, report.total_active_moves) == (4, 4, 0)
    assert report.stop_reason is StopReason.MAX_ROUNDS


def test_truncated_by_the_time_budget():
    ticks = itertools.count()

    def clock() -> float:  # one second per reading
        return float(next(ticks))

    report = report_of(two_clients(), replace(SLOW, time_budget_ms=1_500.0), clock=clock)
    # readings: start 0; before round 2: 1 s (within 1.5 s); before round 3: 2 s (over); at the end 3 s
    assert (report.rounds_simulated, report.stop_reason, report.truncated) == (
        2,
        StopReason.TIME_BUDGET,
        True,
    )
    assert report.simulation_ms == 3_000.0
    assert report.risks == ()  # the report's cost bound, not the plan's risk


def test_truncated_by_the_replan_budget():
    # each replan of the two-task application costs 2: the first brings the replans to 2, the second to 4
    within = report_of(two_clients(), replace(SLOW, max_replanned_tasks=4))
    assert (within.rounds_simulated, within.converged) == (3, True)
    report = report_of(two_clients(), replace(SLOW, max_replanned_tasks=3))
    assert (report.rounds_simulated, report.stop_reason) == (2, StopReason.REPLAN_BUDGET)
    # the last plan still has B's warmup: transient, so not a standby to balance
    assert (report.standby_balance_per_thread_after, report.standby_balance_per_client_after) == (0.0, 0)
    assert report.risks == ()  # the report's cost bound, not the plan's risk
    none_at_all = report_of(two_clients(), replace(SLOW, max_replanned_tasks=0))
    assert (none_at_all.rounds_simulated, none_at_all.probing_rebalances) == (1, 1)


def test_slow_convergence_is_flagged():
    report = report_of(two_clients(), replace(SLOW, thresholds=RolloutThresholds(max_rollout_ms=INTERVAL)))
    flag = report.risk(Risk.SLOW_ROLLOUT)
    assert (flag.value, flag.threshold) == (2 * INTERVAL, INTERVAL)


# --- settings -------------------------------------------------------------------------------------------


def test_settings_from_a_conf_table():
    settings = RolloutSettings.from_mapping(
        {"restore_records_per_second": 2.5, "max_rounds": 4, "thresholds": {"max_restore_records": 10}}
    )
    assert settings.catch_up_per_round(600_000) == 1_500
    assert (settings.max_rounds, settings.thresholds.max_restore_records) == (4, 10)
    assert settings.thresholds.most_tasks_move_fraction == RolloutThresholds().most_tasks_move_fraction
    assert RolloutSettings.from_mapping({}) == RolloutSettings()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"max_round": 3}, r"rollout\.max_round: unknown key"),
        ({"thresholds": {"max_restore": 1}}, r"rollout\.thresholds\.max_restore: unknown key"),
        ({"thresholds": 5}, r"rollout\.thresholds must be a table"),
        ({"max_rounds": 0}, r"max_rounds must be >= 1"),
        ({"max_rounds": 2.5}, r"max_rounds must be an integer"),
        ({"restore_records_per_second": 0}, r"restore_records_per_second must be >= "),
        ({"restore_records_per_second": float("inf")}, r"restore_records_per_second must be a number"),
        ({"time_budget_ms": -1}, r"time_budget_ms must be >= 0"),
        ({"max_replanned_tasks": -1}, r"max_replanned_tasks must be >= 0"),
        ({"thresholds": {"max_rollout_ms": True}}, r"max_rollout_ms must be an integer"),
        ({"thresholds": {"most_tasks_move_fraction": -0.1}}, r"most_tasks_move_fraction must be >= 0"),
    ],
)
def test_bad_settings_name_the_key(raw, message):
    with pytest.raises(ValueError, match=message):
        RolloutSettings.from_mapping(raw)


# --- properties over the example scenarios ----------------------------------------------------------------


def _examples(scenarios_dir):
    return [json.loads(p.read_text()) for p in sorted(scenarios_dir.glob("example-*.json"))]


def check_properties(scenario_dict: dict, settings: RolloutSettings) -> RolloutReport:
    """Invariants of any report, and that explore.simulate (the same simulation) walks the same rounds."""
    scenario = load_scenario(scenario_dict, now_ms=EXPLORE_NOW)
    planned = plan(scenario)
    report = rollout_report(scenario, planned, settings)
    app = scenario_dict["app_id"]
    assert report.total_active_moves >= report.active_moves, app
    assert report.total_standby_moves >= report.standby_moves, app
    assert report.total_warmup_moves >= report.warmup_moves, app
    assert report.warmup_moves <= planned.metrics.warmups, app
    assert report.restore_records >= planned.metrics.restore_lag, app
    assert report.active_moves_fraction == pytest.approx(report.active_moves / max(report.tasks, 1)), app
    # every round but the last asks a follow-up; the last does exactly when the simulation was cut short
    assert report.probing_rebalances == report.rounds_simulated - (1 if report.converged else 0), app
    assert report.converged != report.truncated, app
    assert all(flag.value > flag.threshold for flag in report.risks), app
    sim = explore.simulate(
        scenario_dict,
        now_ms=EXPLORE_NOW,
        catch_up_per_round=report.catch_up_per_round,
        max_rounds=settings.max_rounds,
    )
    assert (len(sim.rounds), sim.converged) == (report.rounds_simulated, report.converged), app
    assert int(sim.summary()["active_moves"].sum()) == report.total_active_moves, app
    assert sim.rounds[-1].probing_rebalance == (not report.converged), app
    # the estimate spans at least the simulated rounds (their restore comes on top)
    assert report.estimated_duration_ms >= sim.rounds[-1].now_ms - sim.rounds[0].now_ms, app
    return report


UNBOUNDED = {"max_rounds": 6, "max_replanned_tasks": None, "time_budget_ms": None}


@pytest.mark.parametrize("rate", [1.0, 100.0, 100_000.0])
def test_properties_over_the_examples(scenarios_dir, rate):
    settings = RolloutSettings(restore_records_per_second=rate, **UNBOUNDED)
    for scenario_dict in _examples(scenarios_dir):
        report = check_properties(scenario_dict, settings)
        # high_availability's follow-ups come a probing interval apart (the examples' assignor)
        interval = load_scenario(scenario_dict).application_state.configs.probing_rebalance_interval_ms
        assert report.estimated_duration_ms >= (report.rounds_simulated - 1) * interval


def test_properties_over_generated_scenarios():
    for scenario_dict in generate_scenarios(range(40)):
        check_properties(scenario_dict, RolloutSettings(restore_records_per_second=50.0, **UNBOUNDED))


def test_some_example_needs_follow_up_rounds(scenarios_dir):
    """The properties above are not vacuous: a slow restore makes some example simulate several rounds."""
    slow = RolloutSettings(restore_records_per_second=1.0, **UNBOUNDED)
    rounds = [report_of(s, slow).rounds_simulated for s in _examples(scenarios_dir)]
    assert max(rounds) > 2
