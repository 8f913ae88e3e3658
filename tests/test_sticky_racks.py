"""assignor.sticky.racks: when the rack optimizers run, the sticky default costs, and the give-back swaps
after them (a previous active back to its owner, never at a higher weighted traffic cost)."""

from __future__ import annotations

import pytest

from fleet_assignor.assignor import AssignmentConfigs
from fleet_assignor.assignor.rack import OptimizedTaskType, RackOptimizationResult
from fleet_assignor.assignor.sticky import racks
from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, app_state, stateful_task, stateless_task, streams_state


def _state(task_infos, clients, *, strategy="min_traffic", traffic=None, standbys=0) -> StickyState:
    configs = AssignmentConfigs(0, 1, standbys, 60_000, (), traffic, None, strategy)
    return StickyState(app_state(task_infos, clients, configs))


def _crossed(task_infos, rack_a="r1", rack_b="r1", **kwargs) -> StickyState:
    """Client A owned 0_0 and runs 0_1; client B runs 0_0."""
    clients = [streams_state(1, rack=rack_a, previous_active=[TASK_0_0]), streams_state(2, rack=rack_b)]
    state = _state(task_infos, clients, **kwargs)
    state.place(0, 1, ACTIVE)
    state.place(1, 0, ACTIVE)
    return state


def test_the_sticky_default_costs():
    assert (racks.STATEFUL_TRAFFIC_COST, racks.STATEFUL_NON_OVERLAP_COST) == (1, 10)
    assert (racks.STATELESS_TRAFFIC_COST, racks.STATELESS_NON_OVERLAP_COST) == (1, 0)


def test_a_free_swap_gives_the_previous_active_back():
    state = _crossed([stateless_task(TASK_0_0, ["r1"]), stateless_task(TASK_0_1, ["r1"])])
    racks.give_back_previous_actives(state)
    assert state.active_owner == [0, 1]
    assert state.active_count == [1, 1]


def test_no_swap_that_raises_the_traffic_cost():
    """On different racks, both tasks local where they are: the swap would make both remote."""
    state = _crossed([stateless_task(TASK_0_0, ["r2"]), stateless_task(TASK_0_1, ["r1"])], rack_b="r2")
    racks.give_back_previous_actives(state)
    assert state.active_owner == [1, 0]


def test_the_swap_weighs_stateful_partitions_by_the_stateful_traffic_cost():
    """0_0 (stateful) would become remote and 0_1 (stateless) local: one partition each way, but the
    stateful one weighs 10 against 1, so the swap would raise the cost."""
    infos = [stateful_task(TASK_0_0, ["r2"]), stateless_task(TASK_0_1, ["r2"])]
    weighted = _crossed(infos, rack_b="r2", traffic=10)
    racks.give_back_previous_actives(weighted)
    assert weighted.active_owner == [1, 0]
    unweighted = _crossed(infos, rack_b="r2", traffic=1)
    racks.give_back_previous_actives(unweighted)
    assert unweighted.active_owner == [0, 1]


def _refuse(*args):
    raise AssertionError("the optimizer must not be called")


def test_strategy_none_skips_both_optimizers(monkeypatch):
    monkeypatch.setattr(racks, "optimize_rack_aware_active_tasks", _refuse)
    monkeypatch.setattr(racks, "optimize_rack_aware_standby_tasks", _refuse)
    state = _crossed([stateless_task(TASK_0_0), stateless_task(TASK_0_1)], strategy="none", standbys=1)
    racks.optimize_actives_for_racks(state)
    racks.optimize_standbys_for_racks(state)
    assert state.active_owner == [1, 0]


def test_no_standbys_configured_skips_the_standby_optimizer(monkeypatch):
    monkeypatch.setattr(racks, "optimize_rack_aware_standby_tasks", _refuse)
    state = _crossed([stateless_task(TASK_0_0), stateless_task(TASK_0_1)])
    racks.optimize_standbys_for_racks(state)
    assert state.active_owner == [1, 0]


@pytest.mark.parametrize(("enabled", "given_back"), [(True, [0, 1]), (False, [1, 0])])
def test_give_back_follows_only_an_enabled_optimizer(monkeypatch, enabled, given_back):
    def result(params, assignments) -> RackOptimizationResult:
        return RackOptimizationResult(OptimizedTaskType.ACTIVE, enabled, None, 1, 0)

    monkeypatch.setattr(racks, "optimize_rack_aware_active_tasks", result)
    state = _crossed([stateless_task(TASK_0_0, ["r1"]), stateless_task(TASK_0_1, ["r1"])])
    racks.optimize_actives_for_racks(state)
    assert state.active_owner == given_back
