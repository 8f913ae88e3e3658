"""RackAwareTaskAssignorTest's optimization cases (rack.md §10) on the legacy path."""

from __future__ import annotations

import pytest

from fleet_assignor.assignor.rack import RackAssignmentError, RackAwareTaskAssignor
from tests.fixtures import (
    SIX_TASKS,
    STANDBY_LAYOUT_ACTIVE,
    STANDBY_LAYOUT_STANDBY,
    pid,
    rack_actives,
    rack_app_state,
    rack_client,
    rack_client_states,
    rack_standbys,
    rack_task,
    tid,
)

STRATEGIES = ["min_traffic", "balance_subtopology"]
# (s/l): stateful tasks with tc 10 / nc 1, stateless with 1 / 0.
COSTS = {"stateful": (10, 1), "stateless": (1, 0)}
FOUR_TASKS = ["0_0", "0_1", "1_0", "1_1"]


def _assignor(strategy: str, clients=(1, 2, 3), tasks=FOUR_TASKS, kind="stateful", **configs):
    app = rack_app_state(
        [rack_task(t, stateful=kind == "stateful") for t in tasks],
        [rack_client(n) for n in clients],
        rack_aware_assignment_strategy=strategy,
        **configs,
    )
    return app, RackAwareTaskAssignor(app)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
def test_should_optimize_empty_active_tasks(strategy, kind):
    app, rack = _assignor(strategy, kind=kind)
    states = rack_client_states(app, {1: ["0_1", "1_1"], 2: ["1_0"], 3: ["0_0"]})
    assert rack.optimize_active_tasks([], states, *COSTS[kind]) == 0
    assert rack_actives(states) == {1: {"0_1", "1_1"}, 2: {"1_0"}, 3: {"0_0"}}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
def test_should_optimize_active_tasks(strategy, kind):
    app, rack = _assignor(strategy, kind=kind)
    assert rack.can_enable_rack_awareness()
    states = rack_client_states(app, {1: ["0_1", "1_1"], 2: ["1_0"], 3: ["0_0"]})
    tc, nc = COSTS[kind]
    cost = rack.optimize_active_tasks([tid(t) for t in FOUR_TASKS], states, tc, nc)
    assert rack.last_active_cost_before == 4 * tc  # every task reads one remote partition
    assert cost == 4 * nc  # no remote partition left; four moves
    assert rack_actives(states) == {1: {"0_0", "1_0"}, 2: {"1_1"}, 3: {"0_1"}}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
def test_should_optimize_active_tasks_with_more_clients(strategy, kind):
    app, rack = _assignor(strategy, tasks=["0_0", "1_0"], kind=kind)
    states = rack_client_states(app, {2: ["1_0"], 3: ["0_0"]})
    tc, nc = COSTS[kind]
    cost = rack.optimize_active_tasks([tid("0_0"), tid("1_0")], states, tc, nc)
    assert rack.last_active_cost_before == 2 * tc
    assert cost == 2 * nc
    assert rack_actives(states) == {1: set(), 2: {"0_0"}, 3: {"1_0"}}  # P1 had none and keeps none


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
def test_should_optimize_active_tasks_with_more_clients_with_more_than_one_task(strategy, kind):
    app, rack = _assignor(strategy, tasks=["0_0", "0_1", "1_0"], kind=kind)
    states = rack_client_states(app, {2: ["0_1", "1_0"], 3: ["0_0"]})
    tc, nc = COSTS[kind]
    cost = rack.optimize_active_tasks([tid(t) for t in ("0_0", "0_1", "1_0")], states, tc, nc)
    assert rack.last_active_cost_before == 2 * tc
    assert cost == 2 * nc
    assert rack_actives(states) == {1: set(), 2: {"0_0", "0_1"}, 3: {"1_0"}}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", COSTS)
def test_should_balance_assignment_with_more_cost_keeps_input_on_ties(strategy, kind):
    """Cost 1 x tc before and after; among the equal-cost optima the input is kept (POLICY.md §6), where
    Kafka's max-flow start picks P2{0_0,0_1}, P5{1_1} for stateless balance_subtopology."""
    app, rack = _assignor(strategy, clients=(2, 5), tasks=["0_0", "0_1", "1_1"], kind=kind)
    states = rack_client_states(app, {2: ["0_0", "1_1"], 5: ["0_1"]})
    tc, nc = COSTS[kind]
    cost = rack.optimize_active_tasks([tid(t) for t in ("0_0", "0_1", "1_1")], states, tc, nc)
    assert rack.last_active_cost_before == tc  # 0_1 on r4 reads one remote partition; r4 is local to nothing
    assert cost == tc
    assert rack_actives(states) == {2: {"0_0", "1_1"}, 5: {"0_1"}}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_throw_if_task_in_multiple_clients(strategy):
    app, rack = _assignor(strategy, clients=(2, 5))
    states = rack_client_states(app, {2: ["0_0", "1_1"], 5: ["0_1", "1_0"]})
    states[pid(5)]._active.add(tid("1_1"))  # a broken input: 1_1 active twice
    with pytest.raises(RackAssignmentError, match="Task 1_1 assigned to multiple clients"):
        rack.optimize_active_tasks([tid(t) for t in FOUR_TASKS], states, 10, 1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_throw_if_task_missing_in_clients(strategy):
    app, rack = _assignor(strategy, clients=(2, 5))
    states = rack_client_states(app, {2: ["0_0", "1_1"], 5: ["0_1"]})
    with pytest.raises(RackAssignmentError, match="Task 1_0 not assigned to any client"):
        rack.optimize_active_tasks([tid(t) for t in FOUR_TASKS], states, 10, 1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_disable_assignor_from_config_none(strategy):
    _, rack = _assignor("none")
    assert not rack.can_enable_rack_awareness()
    assert rack.disabled_reason == "rack_aware_assignment_strategy is none"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_not_crash_for_empty_standby(strategy):
    app, rack = _assignor(strategy, num_standby_replicas=1)
    states = rack_client_states(app, {1: ["0_1", "1_1"], 2: ["1_0"], 3: ["0_0"]})
    assert rack.optimize_standby_tasks(states, 10, 1, lambda *args: True) == 0
    assert rack.last_standby_cost_before == 0


def _standby_fixture(strategy, tags=False):
    clients = [
        rack_client(n, tags={"rack": rack_client(n).rack_id} if tags else None) for n in (1, 2, 3, 4, 6, 7)
    ]
    configs = {"rack_aware_assignment_tags": ("rack",)} if tags else {}
    app = rack_app_state(
        [rack_task(t) for t in SIX_TASKS],
        clients,
        rack_aware_assignment_strategy=strategy,
        num_standby_replicas=2,
        **configs,
    )
    return (
        app,
        RackAwareTaskAssignor(app),
        rack_client_states(app, STANDBY_LAYOUT_ACTIVE, STANDBY_LAYOUT_STANDBY),
    )


def _distinct_tag_count_kept(source, destination, task, clients):
    """assignors.md §5.3.4: the distinct (key, value) tag entries covering the task must not drop."""
    others = set()
    for state in clients.values():
        if state is not source and state is not destination and state.has_assigned_task(task):
            others |= set(state.client_tags.items())
    return len(others | set(destination.client_tags.items())) >= len(others | set(source.client_tags.items()))


def _check_standby_invariants(states):
    counts = {n: len(ts) for n, ts in rack_standbys(states).items()}
    assert counts == {n: len(ts) for n, ts in STANDBY_LAYOUT_STANDBY.items()}
    for state in states.values():
        assert not (state.active_set() & state.standby_set())
    assert sorted(t for s in states.values() for t in map(str, s.standby_tasks)) == sorted(
        t for ts in STANDBY_LAYOUT_STANDBY.values() for t in ts
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_optimize_standby_tasks_when_tasks_all_movable(strategy):
    _, rack, states = _standby_fixture(strategy)
    after = rack.optimize_standby_tasks(states, 10, 1, lambda *args: True)
    assert rack.last_standby_cost_before == 60
    assert after == 20
    _check_standby_invariants(states)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_should_optimize_standby_tasks_with_moving_constraint(strategy):
    _, rack, states = _standby_fixture(strategy, tags=True)
    after = rack.optimize_standby_tasks(states, 10, 1, _distinct_tag_count_kept)
    assert rack.last_standby_cost_before == 60
    assert after == 50
    _check_standby_invariants(states)
    for task in SIX_TASKS:  # the replicas of every task stay on distinct racks
        holders = [s.rack_id for s in states.values() if s.has_assigned_task(tid(task))]
        assert len(holders) == len(set(holders))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_policy_fix_legacy_active_never_moves_onto_its_own_standby(strategy):
    """0_1 reads r1/r2 and sits on P1 (r0); 1_0 reads r0/r2 and sits on P2 (r1): swapping them removes all
    traffic, but P2 holds 0_1's standby, so Kafka's swap would stack active and standby of 0_1 on P2.
    Ours leaves that edge out; without the standby the swap happens."""
    app, rack = _assignor(strategy, clients=(1, 2), tasks=["0_1", "1_0"], num_standby_replicas=1)
    states = rack_client_states(app, {1: ["0_1"], 2: ["1_0"]}, {2: ["0_1"]})
    rack.optimize_active_tasks([tid("0_1"), tid("1_0")], states, 10, 1)
    assert rack_actives(states) == {1: {"0_1"}, 2: {"1_0"}}
    assert rack_standbys(states) == {1: set(), 2: {"0_1"}}
    free = rack_client_states(app, {1: ["0_1"], 2: ["1_0"]})
    rack.optimize_active_tasks([tid("0_1"), tid("1_0")], free, 10, 1)
    assert rack_actives(free) == {1: {"1_0"}, 2: {"0_1"}}


def test_optimizing_while_disabled_raises_with_the_reason():
    """Kafka throws "TopicPartition … has no rack information. Maybe forgot to call canEnable…"; ours names
    the reason enablement failed."""
    app = rack_app_state(
        [rack_task("0_0")],
        [rack_client(1), rack_client(2, None)],
        rack_aware_assignment_strategy="min_traffic",
    )
    rack = RackAwareTaskAssignor(app)
    states = rack_client_states(app, {1: ["0_0"]})
    with pytest.raises(RuntimeError, match="client 00000000-0000-0000-0000-000000000002 has no rack"):
        rack.optimize_active_tasks([tid("0_0")], states, 10, 1)
