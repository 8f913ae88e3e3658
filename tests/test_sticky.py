"""KIP-924 StickyTaskAssignor: Kafka's CustomStickyTaskAssignorTest (assignors.md §11.6) under our sorted
orders (POLICY.md §3), the must-preserve mode, the re-pick that keeps the most previous actives (checked
against an independent optimum), and determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from fleet_assignor.assignor import (
    AssignedTaskType,
    AssignmentConfigs,
    AssignmentError,
    ConfigException,
    KafkaStreamsAssignment,
    ProcessId,
    TaskId,
)
from fleet_assignor.assignor.rack import OptimizedTaskType, RackOptimizationResult
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.sticky import StickyTaskAssignor
from fleet_assignor.assignor.validation import validate_task_assignment
from tests.fixtures import (
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_0_3,
    TASK_1_0,
    TASK_1_1,
    TASK_1_2,
    app_state,
    pid,
    stateful_task,
    stateless_task,
    streams_state,
)
from tests.scenario_generator import Knobs, generate_scenario

STRATEGIES = ["none", "min_traffic", "balance_subtopology"]


def configs(standbys: int = 0, strategy: str = "none") -> AssignmentConfigs:
    """The test's configs: lag 0, 1 warmup, n standbys, no tags, costs empty."""
    return AssignmentConfigs(0, 1, standbys, 60_000, (), rack_aware_assignment_strategy=strategy)


def assign(
    task_infos, states, *, standbys=0, strategy="none", preserve=False
) -> dict[ProcessId, KafkaStreamsAssignment]:
    state = app_state(task_infos, states, configs(standbys, strategy))
    result = StickyTaskAssignor(preserve).assign(state)
    assert validate_task_assignment(state, result).error is AssignmentError.NONE
    return result.by_process_id()


def stateless(*ids: TaskId):
    return [stateless_task(t) for t in ids]


def stateful(*ids: TaskId):
    return [stateful_task(t) for t in ids]


def ids(assignment: KafkaStreamsAssignment) -> set[TaskId]:
    return set(assignment.tasks())


@pytest.fixture(params=STRATEGIES)
def strategy(request) -> str:
    return request.param


def test_one_active_task_per_process_when_task_count_same_as_process_count(strategy):
    result = assign(
        stateless(TASK_0_0, TASK_0_1, TASK_0_2), [streams_state(i) for i in (1, 2, 3)], strategy=strategy
    )
    assert [len(a.tasks()) for a in result.values()] == [1, 1, 1]


@pytest.mark.parametrize("standbys", [0, 1])
def test_topic_group_ids_evenly_across_clients(strategy, standbys):
    tasks = stateless(TASK_1_0, TASK_1_1, TASK_1_2, TaskId(2, 0), TaskId(2, 1), TaskId(2, 2))
    result = assign(tasks, [streams_state(i, 2) for i in (1, 2, 3)], standbys=standbys, strategy=strategy)
    for a in result.values():
        assert sorted({t.subtopology for t in a.active_tasks()}) == [1, 2]
        assert a.standby_tasks() == []


def test_no_migration_of_active_task_to_other_process(strategy):
    tasks = stateless(TASK_0_0, TASK_0_1, TASK_0_2)
    result = assign(
        tasks,
        [streams_state(1, previous_active=[TASK_0_0]), streams_state(2, previous_active=[TASK_0_1])],
        strategy=strategy,
    )
    assert TASK_0_0 in result[pid(1)].active_tasks() and TASK_0_1 in result[pid(2)].active_tasks()
    result = assign(
        tasks,
        [streams_state(1, previous_active=[TASK_0_1]), streams_state(2, previous_active=[TASK_0_0])],
        strategy=strategy,
    )
    assert TASK_0_1 in result[pid(1)].active_tasks() and TASK_0_0 in result[pid(2)].active_tasks()


def test_migrate_to_new_process_without_changing_all_assignments(strategy):
    tasks = stateless(TASK_0_0, TASK_0_1, TASK_0_2)
    result = assign(
        tasks,
        [
            streams_state(1, previous_active=[TASK_0_0, TASK_0_2]),
            streams_state(2, previous_active=[TASK_0_1]),
            streams_state(3),
        ],
        strategy=strategy,
    )
    assert [len(a.tasks()) for a in result.values()] == [1, 1, 1]
    assert result[pid(2)].active_tasks() == [TASK_0_1]


def test_assign_based_on_capacity(strategy):
    result = assign(
        stateless(TASK_0_0, TASK_0_1, TASK_0_2), [streams_state(1, 1), streams_state(2, 2)], strategy=strategy
    )
    assert [len(result[pid(1)].tasks()), len(result[pid(2)].tasks())] == [1, 2]


def test_evenly_with_unequal_topic_group_sizes(strategy):
    all_ids = [TASK_1_0] + [TaskId(0, p) for p in range(6)]
    result = assign(
        stateless(*all_ids), [streams_state(1, previous_active=all_ids), streams_state(2)], strategy=strategy
    )
    one, two = ids(result[pid(1)]), ids(result[pid(2)])
    assert sorted([len(one), len(two)]) == [3, 4]
    assert two == set(all_ids) - one


def test_active_stickiness_when_more_clients_than_active_tasks(strategy):
    tasks = stateless(TASK_0_0, TASK_0_1, TASK_0_2)
    result = assign(
        tasks,
        [
            streams_state(1, previous_active=[TASK_0_0]),
            streams_state(2, previous_active=[TASK_0_2]),
            streams_state(3, previous_active=[TASK_0_1]),
            streams_state(4),
            streams_state(5),
        ],
        strategy=strategy,
    )
    assert [ids(result[pid(n)]) for n in range(1, 6)] == [{TASK_0_0}, {TASK_0_2}, {TASK_0_1}, set(), set()]
    result = assign(
        tasks,
        [
            streams_state(1),
            streams_state(2),
            streams_state(3, previous_active=[TASK_0_1]),
            streams_state(4, previous_active=[TASK_0_0]),
            streams_state(5, previous_active=[TASK_0_2]),
        ],
        strategy=strategy,
    )
    assert [ids(result[pid(n)]) for n in range(1, 6)] == [set(), set(), {TASK_0_1}, {TASK_0_0}, {TASK_0_2}]


def test_assign_to_client_with_previous_standby_tasks(strategy):
    tasks = stateful(TASK_0_0, TASK_0_1, TASK_0_2)
    result = assign(
        tasks,
        [
            streams_state(1, previous_standby=[TASK_0_2]),
            streams_state(2, previous_standby=[TASK_0_1]),
            streams_state(3, previous_standby=[TASK_0_0]),
        ],
        strategy=strategy,
    )
    assert [result[pid(n)].active_tasks() for n in (1, 2, 3)] == [[TASK_0_2], [TASK_0_1], [TASK_0_0]]


def test_based_on_capacity_when_multiple_clients_have_standby_tasks(strategy):
    tasks = stateful(TASK_0_0, TASK_0_1, TASK_0_2)
    result = assign(
        tasks,
        [
            streams_state(1, 1, previous_active=[TASK_0_0], previous_standby=[TASK_0_1]),
            streams_state(2, 2, previous_active=[TASK_0_2], previous_standby=[TASK_0_1]),
        ],
        strategy=strategy,
    )
    assert ids(result[pid(1)]) == {TASK_0_0}
    assert ids(result[pid(2)]) == {TASK_0_1, TASK_0_2}


def test_standbys_on_other_clients_than_their_active(strategy):
    four = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]
    states = [streams_state(i + 1, previous_active=[t]) for i, t in enumerate(four)]
    result = assign(stateful(*four), states, standbys=1, strategy=strategy)
    with_standbys = 0
    union: set[TaskId] = set()
    for i, t in enumerate(four):
        a = result[pid(i + 1)]
        assert a.active_tasks() == [t]
        assert len(a.standby_tasks()) <= 2 and t not in a.standby_tasks()
        with_standbys += bool(a.standby_tasks())
        union |= set(a.standby_tasks())
    assert with_standbys >= 3 and union == set(four)


def test_multiple_replicas_of_standby_task(strategy):
    three = [TASK_0_0, TASK_0_1, TASK_0_2]
    states = [streams_state(i + 1, previous_active=[t]) for i, t in enumerate(three)]
    result = assign(stateful(*three), states, standbys=2, strategy=strategy)
    for i, t in enumerate(three):
        assert result[pid(i + 1)].active_tasks() == [t]
        assert set(result[pid(i + 1)].standby_tasks()) == set(three) - {t}


def test_no_standby_replicas_without_a_client_lacking_the_task(strategy):
    result = assign(stateful(TASK_0_0), [streams_state(1)], standbys=2, strategy=strategy)
    assert result[pid(1)].active_tasks() == [TASK_0_0] and result[pid(1)].standby_tasks() == []


def test_active_and_standby_tasks(strategy):
    three = [TASK_0_0, TASK_0_1, TASK_0_2]
    result = assign(stateful(*three), [streams_state(i) for i in (1, 2, 3)], standbys=1, strategy=strategy)
    actives = [t for a in result.values() for t in a.active_tasks()]
    standbys = [t for a in result.values() for t in a.standby_tasks()]
    assert sorted(actives) == three and sorted(standbys) == three


def test_at_least_one_task_per_client_if_possible(strategy):
    result = assign(
        stateless(TASK_0_0, TASK_0_1, TASK_0_2),
        [streams_state(1, 3), streams_state(2), streams_state(3)],
        strategy=strategy,
    )
    assert [len(a.active_tasks()) for a in result.values()] == [1, 1, 1]


def test_each_active_task_to_one_client_when_more_clients_than_tasks(strategy):
    result = assign(
        stateless(TASK_0_0, TASK_0_1, TASK_0_2), [streams_state(i) for i in range(1, 7)], strategy=strategy
    )
    actives = sorted(t for a in result.values() for t in a.active_tasks())
    assert actives == [TASK_0_0, TASK_0_1, TASK_0_2]
    assert all(a.standby_tasks() == [] for a in result.values())
    assert sum(1 for a in result.values() if a.tasks()) >= 3


def test_balance_active_and_standby_tasks_across_available_clients(strategy):
    result = assign(
        stateful(TASK_0_0, TASK_0_1, TASK_0_2),
        [streams_state(i) for i in range(1, 7)],
        standbys=1,
        strategy=strategy,
    )
    assert all(a.tasks() for a in result.values())


def test_more_tasks_to_client_with_more_capacity(strategy):
    twelve = [TaskId(s, p) for s in range(4) for p in range(3)]
    result = assign(stateless(*twelve), [streams_state(1, 1), streams_state(2, 2)], strategy=strategy)
    assert [len(result[pid(1)].tasks()), len(result[pid(2)].tasks())] == [4, 8]


def _no_two_hosts_equal(result) -> None:
    sets = [frozenset(a.tasks()) for a in result.values()]
    for a, b in itertools.combinations(sets, 2):
        assert a != b


def test_no_same_assignment_on_any_two_hosts(strategy):
    four = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]
    _no_two_hosts_equal(
        assign(stateful(*four), [streams_state(i) for i in range(1, 5)], standbys=1, strategy=strategy)
    )


def test_no_same_assignment_on_any_two_hosts_with_previous_active_tasks(strategy):
    four = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]
    states = [
        streams_state(1, previous_active=[TASK_0_1, TASK_0_2]),
        streams_state(2, previous_active=[TASK_0_3]),
        streams_state(3, previous_active=[TASK_0_0]),
        streams_state(4),
    ]
    _no_two_hosts_equal(assign(stateful(*four), states, standbys=1, strategy=strategy))


def test_multiple_standbys(strategy):
    tasks = stateful(TASK_0_0) + stateless(TASK_0_1, TASK_0_2)
    result = assign(tasks, [streams_state(i) for i in range(1, 5)], standbys=3, strategy=strategy)
    assert result[pid(1)].standby_tasks() == []
    assert [result[pid(n)].standby_tasks() for n in (2, 3, 4)] == [[TASK_0_0]] * 3


def test_large_assignment_terminates_with_every_replica(strategy):
    tasks = [
        stateful_task(TaskId(i, j), racks=[f"rack-{(i * j) % 31}"]) for i in range(10) for j in range(30)
    ]
    states = [streams_state(i, 50, rack=f"rack-{i % 31}") for i in range(1, 21)]
    cfg = AssignmentConfigs(0, 1, 2, 60_000, (), 1, 2, strategy)
    state = app_state(tasks, states, cfg)
    result = StickyTaskAssignor().assign(state)
    assert validate_task_assignment(state, result).error is AssignmentError.NONE
    assert sum(len(a.active_tasks()) for a in result) == 300
    assert sum(len(a.standby_tasks()) for a in result) == 600


# --- must_preserve_active_task_assignment (assignors.md §7.7) ----------------------------------------------


def test_must_preserve_keeps_every_previous_active_and_asks_the_first_client_to_follow_up():
    three = [TASK_0_0, TASK_0_1, TASK_0_2]
    states = [streams_state(2, previous_active=three), streams_state(1)]
    result = assign(stateful(*three), states, preserve=True)
    assert result[pid(2)].active_tasks() == three  # balance ignored
    assert result[pid(1)].active_tasks() == []
    assert result[pid(1)].followup_rebalance_deadline() == 0
    assert result[pid(2)].followup_rebalance_deadline() is None


def test_without_must_preserve_the_balance_wins_and_no_follow_up():
    three = [TASK_0_0, TASK_0_1, TASK_0_2]
    result = assign(stateful(*three), [streams_state(2, previous_active=three), streams_state(1)])
    assert len(result[pid(1)].active_tasks()) >= 1
    assert all(a.followup_rebalance_deadline() is None for a in result.values())


# --- POLICY.md §3: the re-pick keeps the most previous actives ------------------------------------------


def _max_kept(state, counts: dict[ProcessId, int]) -> int:
    """The optimum of "keep the most previous actives under these active counts", by the Hungarian
    method on tasks x client slots (independent of the assignor's own matching)."""
    owners = {t: {p for p, s in state.clients.items() if t in s.previous_active_tasks} for t in state.tasks}
    slots = [p for p, n in counts.items() for _ in range(n)]
    tasks = list(state.tasks)
    if not tasks or not slots:
        return 0
    gain = np.array([[1 if p in owners[t] else 0 for p in slots] for t in tasks])
    rows, cols = linear_sum_assignment(gain, maximize=True)
    return int(gain[rows, cols].sum())


@pytest.mark.parametrize("seed", range(40))
def test_repick_keeps_as_many_previous_actives_as_possible(seed):
    scenario = generate_scenario(seed, Knobs(strategies=("none",), max_tasks=60, clients=(2, 8)))
    state = load_scenario(scenario).application_state
    result = StickyTaskAssignor().assign(state)
    counts = {a.process_id(): len(a.active_tasks()) for a in result}
    kept = sum(
        1
        for a in result
        for t in a.active_tasks()
        if t in state.clients[a.process_id()].previous_active_tasks
    )
    assert kept == _max_kept(state, counts)


def test_over_quota_owner_keeps_its_tasks_when_the_extra_slot_is_its_own():
    """Sorted order alone makes an over-quota owner keep its lowest ids and places its others first; the
    tie-break and re-pick still end with every previous owner keeping as many tasks as the counts allow."""
    tasks = [TaskId(0, p) for p in range(7)]
    states = [
        streams_state(1, previous_active=tasks[:4]),
        streams_state(2, previous_active=tasks[4:]),
        streams_state(3),
    ]
    result = assign(stateless(*tasks), states)
    counts = sorted(len(a.active_tasks()) for a in result.values())
    assert counts == [2, 2, 3]
    kept = sum(
        1
        for n, a in result.items()
        for t in a.active_tasks()
        if t in (tasks[:4] if n == pid(1) else tasks[4:] if n == pid(2) else ())
    )
    assert kept == 5


def test_deterministic_twice_identical():
    scenario = generate_scenario(11, Knobs(strategies=("none",)))
    first = StickyTaskAssignor().assign(load_scenario(scenario).application_state)
    second = StickyTaskAssignor().assign(load_scenario(scenario).application_state)
    assert list(first) == list(second)


def test_no_clients_leaves_every_task_unassigned():
    result = StickyTaskAssignor().assign(app_state(stateful(TASK_0_0, TASK_1_1, TASK_1_2), []))
    assert len(result) == 0


def test_task_claimed_by_two_previous_owners_goes_to_the_one_that_narrows_the_spread():
    """0_2 was active on both clients (conflicting history). Kafka's greedy leaves it on the later client,
    B (2 threads, load 1.0 against A's 0.25); moving it to A keeps it with a previous owner and evens the
    load: A {0_0, 0_2} (0.5), B {0_1} (0.5)."""
    states = [
        streams_state(1, 4, previous_active=[TASK_0_0, TASK_0_2]),
        streams_state(2, 2, previous_active=[TASK_0_1, TASK_0_2]),
    ]
    result = assign(stateless(TASK_0_0, TASK_0_1, TASK_0_2), states)
    assert result[pid(1)].active_tasks() == [TASK_0_0, TASK_0_2]
    assert result[pid(2)].active_tasks() == [TASK_0_1]


def test_free_task_moves_to_narrow_the_spread_but_kept_ones_stay():
    """Both clients keep their own previous actives even though B (1 thread) ends more loaded; the only
    task nobody owned goes to A so the spread is as narrow as keeping them allows."""
    states = [
        streams_state(1, 4, previous_active=[TASK_0_0]),
        streams_state(2, 1, previous_active=[TASK_0_1]),
    ]
    result = assign(stateless(TASK_0_0, TASK_0_1, TASK_0_2), states)
    assert result[pid(1)].active_tasks() == [TASK_0_0, TASK_0_2]
    assert result[pid(2)].active_tasks() == [TASK_0_1]


# --- rack optimization calls (assignors.md §7.4, §7.6; POLICY.md §4: the sticky defaults apply) ----------


class _RecordingOptimizers:
    def __init__(self) -> None:
        self.active: list[tuple[tuple | None, int | None, int | None]] = []
        self.standby: list[tuple[int | None, int | None]] = []

    def optimize_active(self, params, assignments) -> RackOptimizationResult:
        self.active.append(
            (params.tasks_to_optimize, params.traffic_cost_override, params.non_overlap_cost_override)
        )
        return RackOptimizationResult(OptimizedTaskType.ACTIVE, False, "recorded only", None, None)

    def optimize_standby(self, params, assignments) -> RackOptimizationResult:
        self.standby.append((params.traffic_cost_override, params.non_overlap_cost_override))
        return RackOptimizationResult(OptimizedTaskType.STANDBY, False, "recorded only", None, None)


def _with_recorder(monkeypatch) -> _RecordingOptimizers:
    from fleet_assignor.assignor.sticky import racks

    recorder = _RecordingOptimizers()
    monkeypatch.setattr(racks, "optimize_rack_aware_active_tasks", recorder.optimize_active)
    monkeypatch.setattr(racks, "optimize_rack_aware_standby_tasks", recorder.optimize_standby)
    return recorder


def test_rack_optimizers_get_the_sticky_default_costs_when_configs_leave_them_unset(monkeypatch):
    recorder = _with_recorder(monkeypatch)
    tasks = stateful(TASK_0_0, TASK_0_1) + stateless(TASK_1_0)
    assign(tasks, [streams_state(1), streams_state(2)], standbys=1, strategy="min_traffic")
    assert recorder.active == [((TASK_0_0, TASK_0_1), 1, 10), ((TASK_1_0,), 1, 0)]
    assert recorder.standby == [(1, 10)]


def test_rack_optimizers_get_the_configured_costs(monkeypatch):
    recorder = _with_recorder(monkeypatch)
    state = app_state(
        stateful(TASK_0_0),
        [streams_state(1), streams_state(2)],
        AssignmentConfigs(0, 1, 1, 60_000, (), 5, 7, "balance_subtopology"),
    )
    StickyTaskAssignor().assign(state)
    assert recorder.active == [((TASK_0_0,), 5, 7), ((), 1, 0)]
    assert recorder.standby == [(5, 7)]


def test_no_rack_optimization_in_must_preserve_mode(monkeypatch):
    recorder = _with_recorder(monkeypatch)
    assign(stateful(TASK_0_0), [streams_state(1), streams_state(2)], standbys=1, preserve=True)
    assert recorder.active == [] and recorder.standby == []


def test_planning_the_same_scenario_twice_gives_identical_json():
    import json

    from fleet_assignor.assignor.planner import plan_scenario

    for seed in range(5):
        scenario = generate_scenario(seed, Knobs())
        runs = []
        for _ in range(2):
            result = dict(plan_scenario(scenario, assignor="sticky", now_ms=1_700_000_000_000))
            result.pop("elapsed_ms", None)
            runs.append(json.dumps(result, sort_keys=True))
        assert runs[0] == runs[1]


def test_configure_turns_must_preserve_on_and_off():
    assignor = StickyTaskAssignor()
    assignor.configure({"must_preserve_active_task_assignment": "TRUE", "other": "x"})
    assert assignor.must_preserve_active_task_assignment is True
    assignor.configure({"must_preserve_active_task_assignment": "false"})
    assert assignor.must_preserve_active_task_assignment is False
    with pytest.raises(ConfigException, match="must_preserve_active_task_assignment"):
        assignor.configure({"must_preserve_active_task_assignment": "yes"})


def _active_traffic_cost(state, assignment) -> int:
    """Cross-rack partitions of the actives (all their partitions), each weighted by the traffic cost of the
    optimizer pass that places it: the configured (else default) stateful cost, the stateless cost."""
    from fleet_assignor.assignor.rack.costs import PartitionScope, RemoteCounts
    from fleet_assignor.assignor.sticky import STATEFUL_TRAFFIC_COST, STATELESS_TRAFFIC_COST

    configured = state.assignment_configs().rack_aware_traffic_cost
    stateful_cost = STATEFUL_TRAFFIC_COST if configured is None else configured
    weights = {True: stateful_cost, False: STATELESS_TRAFFIC_COST}
    infos = state.all_tasks()
    streams = state.kafka_streams_states(False)
    remote = RemoteCounts(infos, PartitionScope.ALL)
    total = 0
    for client in assignment.assignment():
        rack = streams[client.process_id()].rack_id
        for task in client.tasks().values():
            if task.type is AssignedTaskType.ACTIVE:
                total += weights[infos[task.id].is_stateful] * remote.count(task.id, rack)
    return total


def test_giving_back_previous_actives_never_raises_the_traffic_cost(monkeypatch):
    """After the rack optimizers, sticky swaps actives to give previous actives back to their owners. The
    stateful and stateless actives are optimized in two passes with their own traffic costs: the swaps may
    never raise the two passes' traffic cost together (a stateful-for-stateless trade that keeps the count of
    cross-rack partitions can still raise it when the stateful cost is higher)."""
    from fleet_assignor.assignor.sticky import racks

    changed = 0
    for seed in range(400):
        knobs = Knobs(strategies=("min_traffic", "balance_subtopology"), racks=True, partial_racks_share=0.0,
                      tags=False, max_tasks=80)  # fmt: skip
        scenario = generate_scenario(seed, knobs)
        state = load_scenario(scenario, now_ms=0).application_state
        with_give_back = StickyTaskAssignor().assign(state)
        with monkeypatch.context() as patched:
            patched.setattr(racks, "give_back_previous_actives", lambda state: None)
            optimizers_only = StickyTaskAssignor().assign(state)
        after = _active_traffic_cost(state, with_give_back)
        before = _active_traffic_cost(state, optimizers_only)
        changed += with_give_back != optimizers_only
        assert after <= before, (seed, before, after)
    assert changed > 0, "no seed exercised the give-back pass"
