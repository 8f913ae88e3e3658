"""HighAvailabilityTaskAssignor: Kafka's HighAvailabilityTaskAssignorTest (assignors.md §11.1, the strategy
`none` variant; #33 and #34 under the rack strategies are in test_high_availability_rack_random.py), the
worked example of §4.9, the KIP-924 wrapper (warmups, follow-up deadline) and determinism.

Kafka's AssignmentTestUtils (§11.0) are in tests/fixtures.py; the convergence test uses them too.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    AssignmentConfigs,
    ClientState,
    KafkaStreamsAssignment,
    ProcessId,
    TaskId,
)
from fleet_assignor.assignor.distribution import ConsumerTasks, distribute_client_tasks
from fleet_assignor.assignor.high_availability import (
    HighAvailabilityTaskAssignor,
    OneConsumerAssignment,
    assign_high_availability,
    to_task_assignment,
)
from fleet_assignor.assignor.scenario import load_scenario
from tests.fixtures import (
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_0_3,
    TASK_1_0,
    TASK_1_1,
    TASK_1_2,
    TASK_1_3,
    TASK_2_0,
    app_state,
    assert_balanced_active_assignment,
    assert_balanced_stateful_assignment,
    assert_balanced_tasks,
    assert_valid_assignment,
    client_state,
    clients_map,
    pid,
    stateful_task,
    stateless_task,
    streams_state,
    subtopology_skew,
    verify_task_placement,
)
from tests.scenario_generator import generate_scenario

LONG_MAX = (1 << 63) - 1
NINE_TASKS = [TaskId(s, p) for s in range(3) for p in range(3)]
FOUR_TASKS = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]


def configs(lag: int = 100, warmups: int = 2, standbys: int = 0) -> AssignmentConfigs:
    """Kafka's test configs: (acceptable lag, warmups, standbys, 60 s probing, no tags)."""
    return AssignmentConfigs(lag, warmups, standbys, 60_000)


WITHOUT_STANDBYS = configs()
WITH_STANDBYS = configs(standbys=1)


def lags(tasks: Iterable[TaskId], value: int) -> dict[TaskId, int]:
    return {t: value for t in tasks}


def caught_up_client(n: int, caught: Sequence[TaskId], stateful: Sequence[TaskId]) -> ClientState:
    """Kafka's getMockClientWithPreviousCaughtUpTasks: capacity 1, previously active on (and lag 0 for) the
    caught-up tasks, lag Long.MAX on the other stateful tasks."""
    task_lags = {t: (0 if t in caught else LONG_MAX) for t in stateful}
    return client_state(n, 1, previous_active=caught, lags=task_lags)


def run(clients: Mapping[ProcessId, ClientState], all_tasks, stateful, cfg: AssignmentConfigs) -> bool:
    probing = assign_high_availability(clients, all_tasks, stateful, cfg)
    verify_task_placement(clients, all_tasks)
    return probing


# --- §11.1 -------------------------------------------------------------------------------------------


def test_sticky_for_active_and_standby_tasks_while_warming_up():
    c1 = client_state(1, previous_active=NINE_TASKS, lags=lags(NINE_TASKS, 0))
    c2 = client_state(2, previous_standby=NINE_TASKS, lags=lags(NINE_TASKS, 10))
    c3 = client_state(3, lags=lags(NINE_TASKS, LONG_MAX))
    clients = clients_map(c1, c2, c3)
    assert run(clients, NINE_TASKS, NINE_TASKS, configs(lag=11, warmups=2, standbys=1)) is True
    assert [c1.assigned_task_count, c2.assigned_task_count, c3.assigned_task_count] == [9, 9, 2]


def test_worked_example_phase_by_phase():
    """assignors.md §4.9: c3's actives leave by swaps (no budget); its first two moved standbys, 0_1 and
    0_2, stay as warmups; the other four go."""
    c1 = client_state(1, previous_active=NINE_TASKS, lags=lags(NINE_TASKS, 0))
    c2 = client_state(2, previous_standby=NINE_TASKS, lags=lags(NINE_TASKS, 10))
    c3 = client_state(3, lags=lags(NINE_TASKS, LONG_MAX))
    clients = clients_map(c1, c2, c3)
    assert run(clients, NINE_TASKS, NINE_TASKS, configs(lag=11, warmups=2, standbys=1)) is True
    assert c3.active_tasks == []
    assert c3.standby_tasks == [TASK_0_1, TASK_0_2]
    assert c3.warmup_tasks == [TASK_0_1, TASK_0_2]
    assert c1.warmup_tasks == [] and c2.warmup_tasks == []
    # Round-robin gave c1 {0_0,1_0,2_0} and c2 {0_1,1_1,2_1}; they keep them, and c3's three actives moved
    # to the caught-up standby holders.
    assert {TASK_0_0, TASK_1_0, TASK_2_0} <= set(c1.active_tasks)
    assert {TaskId(0, 1), TaskId(1, 1), TaskId(2, 1)} <= set(c2.active_tasks)
    assert len(c1.active_tasks) + len(c2.active_tasks) == 9
    for t in NINE_TASKS:
        assert c1.has_assigned_task(t) and c2.has_assigned_task(t)


def test_skip_warmups_when_acceptable_lag_is_max():
    c1 = client_state(1, previous_active=NINE_TASKS, lags=lags(NINE_TASKS, 0))
    c2 = client_state(2, lags=lags(NINE_TASKS, LONG_MAX))
    c3 = client_state(3, lags=lags(NINE_TASKS, LONG_MAX))
    clients = clients_map(c1, c2, c3)
    assert run(clients, NINE_TASKS, NINE_TASKS, configs(lag=LONG_MAX, warmups=1, standbys=1)) is False
    assert [c.assigned_task_count for c in (c1, c2, c3)] == [6, 6, 6]
    assert all(c.warmup_tasks == [] for c in (c1, c2, c3))


def _evenly(capacities: Sequence[int], tasks: Sequence[TaskId], subtopology_threshold: int | None = 1):
    clients = clients_map(
        *(client_state(i + 1, cap, lags=lags(tasks, 10)) for i, cap in enumerate(capacities))
    )
    assert run(clients, tasks, tasks, configs(lag=0, warmups=1, standbys=0)) is False
    assert_valid_assignment(0, tasks, [], clients)
    assert_balanced_active_assignment(clients)
    assert_balanced_stateful_assignment(tasks, clients)
    if subtopology_threshold is not None:
        assert_balanced_tasks(clients, subtopology_threshold)
    return clients


def test_evenly_over_clients_where_number_of_clients_integral_divisor_of_number_of_tasks():
    _evenly([1, 1, 1], NINE_TASKS)


def test_evenly_over_clients_where_number_of_threads_integral_divisor_of_number_of_tasks():
    _evenly([3, 3, 3], NINE_TASKS)


def test_evenly_over_clients_where_number_of_clients_not_integral_divisor_of_number_of_tasks():
    _evenly([1, 1], NINE_TASKS)


def test_active_stateful_tasks_evenly_over_unevenly_distributed_stream_threads():
    six = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_1_0, TASK_1_1, TASK_1_2]
    clients = _evenly([1, 2, 3], six, subtopology_threshold=None)
    assert [c.active_task_count for c in clients.values()] == [1, 2, 3]
    assert subtopology_skew(clients) > 1  # the per-subtopology report must show skew


def test_evenly_with_more_clients_than_tasks():
    _evenly([1, 1, 1], [TASK_0_0, TASK_0_1], subtopology_threshold=None)


def test_evenly_with_equal_stream_threads_per_client_as_tasks():
    _evenly([9, 9, 9], NINE_TASKS)


def test_warmups_if_stateful_actives_balanced_over_threads_but_not_over_clients():
    tasks = [TASK_0_0, TASK_0_1, TASK_1_0, TASK_1_1]
    c1 = client_state(1, 5, previous_active=tasks, lags=lags(tasks, 0))
    c2 = client_state(2, 5, lags=lags(tasks, LONG_MAX))
    c3 = client_state(3, 5, lags=lags(tasks, LONG_MAX))
    clients = clients_map(c1, c2, c3)
    assert run(clients, tasks, tasks, configs(lag=0, warmups=2, standbys=0)) is True
    assert c2.standby_task_count >= 1 and c3.standby_task_count >= 1
    assert_valid_assignment(0, tasks, [], clients, max_warmups=2)


def test_evenly_assign_if_clients_are_warmed_up_to_balance_over_clients():
    tasks = [TASK_0_0, TASK_0_1, TASK_1_0, TASK_1_1]
    c1 = client_state(1, 5, previous_active=tasks, lags=lags(tasks, 0))
    c2 = client_state(2, 5, previous_standby=[TASK_0_1], lags={**lags(tasks, LONG_MAX), TASK_0_1: 0})
    c3 = client_state(3, 5, previous_standby=[TASK_1_0], lags={**lags(tasks, LONG_MAX), TASK_1_0: 0})
    clients = clients_map(c1, c2, c3)
    assert run(clients, tasks, tasks, AssignmentConfigs(0, 2, 0, 60_000, ())) is False
    assert_valid_assignment(0, tasks, [], clients)
    assert_balanced_active_assignment(clients)
    assert_balanced_stateful_assignment(tasks, clients)
    assert_balanced_tasks(clients, 1)


def test_evenly_over_stream_threads_but_best_effort_over_clients():
    clients = _evenly([6, 3], NINE_TASKS, subtopology_threshold=None)
    assert [c.active_task_count for c in clients.values()] == [6, 3]


def test_new_assignment_if_there_are_unassigned_active_tasks():
    c1 = client_state(1, previous_active=[TASK_0_0], lags={TASK_0_0: 0})
    clients = clients_map(c1)
    assert run(clients, [TASK_0_0, TASK_0_1], [TASK_0_0], WITHOUT_STANDBYS) is False
    assert c1.active_tasks == [TASK_0_0, TASK_0_1] and c1.standby_tasks == []
    assert_valid_assignment(0, [TASK_0_0], [TASK_0_1], clients)
    assert_balanced_active_assignment(clients)


def test_new_assignment_if_there_are_unassigned_standby_tasks():
    c1 = client_state(1, previous_active=[TASK_0_0], lags={TASK_0_0: 0})
    c2 = client_state(2, lags={TASK_0_0: 0})
    clients = clients_map(c1, c2)
    assert run(clients, [TASK_0_0], [TASK_0_0], WITH_STANDBYS) is False
    assert c2.standby_tasks == [TASK_0_0]
    assert_valid_assignment(1, [TASK_0_0], [], clients)
    assert_balanced_active_assignment(clients)


def test_new_assignment_if_active_task_was_not_on_caught_up_client():
    c1 = client_state(1, previous_active=[TASK_0_0], lags={TASK_0_0: 500})
    c2 = client_state(2, previous_active=[TASK_0_1], lags={TASK_0_0: 0})
    clients = clients_map(c1, c2)
    assert run(clients, [TASK_0_0, TASK_0_1], [TASK_0_0], WITHOUT_STANDBYS) is True
    assert c1.active_tasks == [TASK_0_1]
    assert c2.active_tasks == [TASK_0_0]
    assert_valid_assignment(0, [TASK_0_0], [TASK_0_1], clients, max_warmups=1)


def test_most_caught_up_if_active_task_was_not_on_caught_up_client():
    c1 = client_state(1, lags={TASK_0_0: LONG_MAX})
    c2 = client_state(2, lags={TASK_0_0: 1000})
    c3 = client_state(3, lags={TASK_0_0: 500})
    clients = clients_map(c1, c2, c3)
    assert run(clients, [TASK_0_0], [TASK_0_0], WITH_STANDBYS) is True
    assert c3.active_tasks == [TASK_0_0]
    assert c1.standby_tasks == [TASK_0_0] and c1.warmup_tasks == [TASK_0_0]
    assert c2.standby_tasks == [TASK_0_0] and c2.warmup_tasks == []
    assert_valid_assignment(1, [TASK_0_0], [], clients, max_warmups=1)


def test_standbys_for_stateful_tasks():
    stateful = [TASK_0_0, TASK_0_1]
    c1 = caught_up_client(1, [TASK_0_0], stateful)
    c2 = caught_up_client(2, [TASK_0_1], stateful)
    clients = clients_map(c1, c2)
    assert run(clients, stateful, stateful, WITH_STANDBYS) is False
    assert (c1.active_tasks, c1.standby_tasks) == ([TASK_0_0], [TASK_0_1])
    assert (c2.active_tasks, c2.standby_tasks) == ([TASK_0_1], [TASK_0_0])


def test_no_standbys_for_stateless_tasks():
    c1, c2 = client_state(1), client_state(2)
    clients = clients_map(c1, c2)
    assert run(clients, [TASK_0_0, TASK_0_1], [], WITH_STANDBYS) is False
    assert c1.active_task_count == 1 and c2.active_task_count == 1
    assert c1.standby_tasks == [] and c2.standby_tasks == []


def test_warmups_even_if_no_standbys_configured():
    stateful = [TASK_0_0, TASK_0_1]
    c1 = caught_up_client(1, stateful, stateful)
    c2 = caught_up_client(2, [], stateful)
    clients = clients_map(c1, c2)
    assert run(clients, stateful, stateful, WITHOUT_STANDBYS) is True
    assert c1.active_tasks == stateful and c1.standby_tasks == []
    assert c2.active_tasks == [] and c2.standby_task_count == 1


def test_no_more_than_max_warmup_replicas():
    c1 = caught_up_client(1, FOUR_TASKS, FOUR_TASKS)
    c2 = caught_up_client(2, [], FOUR_TASKS)
    clients = clients_map(c1, c2)
    assert run(clients, FOUR_TASKS, FOUR_TASKS, configs(warmups=1, standbys=0)) is True
    assert c1.active_tasks == FOUR_TASKS
    assert c2.active_tasks == [] and c2.standby_task_count == 1


def test_no_warmup_and_standby_on_the_same_client():
    c1 = caught_up_client(1, FOUR_TASKS, FOUR_TASKS)
    c2 = caught_up_client(2, [], FOUR_TASKS)
    clients = clients_map(c1, c2)
    assert run(clients, FOUR_TASKS, FOUR_TASKS, configs(warmups=1, standbys=1)) is True
    assert c1.active_tasks == FOUR_TASKS and c1.standby_tasks == []
    assert c2.standby_tasks == FOUR_TASKS


def test_no_standbys_with_insufficient_capacity():
    stateful = [TASK_0_0, TASK_0_1]
    c1 = caught_up_client(1, stateful, stateful)
    clients = clients_map(c1)
    assert run(clients, stateful, stateful, WITH_STANDBYS) is False
    assert c1.active_tasks == stateful and c1.standby_tasks == []


def test_actives_to_not_caught_up_client_if_none_exist():
    stateful = [TASK_0_0, TASK_0_1]
    c1 = client_state(1, lags=lags(stateful, LONG_MAX))
    clients = clients_map(c1)
    assert run(clients, stateful, stateful, WITH_STANDBYS) is False
    assert c1.active_tasks == stateful and c1.standby_tasks == []


def test_no_more_than_max_warmup_replicas_with_standbys():
    c1 = caught_up_client(1, FOUR_TASKS, FOUR_TASKS)
    c2 = caught_up_client(2, [], FOUR_TASKS)
    c3 = caught_up_client(3, [], FOUR_TASKS)
    clients = clients_map(c1, c2, c3)
    assert run(clients, FOUR_TASKS, FOUR_TASKS, configs(warmups=2, standbys=1)) is True
    assert_valid_assignment(1, FOUR_TASKS, [], clients, max_warmups=2)


def test_stateless_tasks_balance_total_task_load():
    stateless = [TASK_1_0, TASK_1_1, TASK_1_2]
    c1 = caught_up_client(1, FOUR_TASKS, FOUR_TASKS)
    c2 = caught_up_client(2, [], FOUR_TASKS)
    clients = clients_map(c1, c2)
    assert run(clients, FOUR_TASKS + stateless, FOUR_TASKS, WITH_STANDBYS) is True
    assert_valid_assignment(1, FOUR_TASKS, stateless, clients, max_warmups=2)
    assert_balanced_active_assignment(clients)
    assert_balanced_stateful_assignment(FOUR_TASKS, clients)
    assert subtopology_skew(clients) > 1  # c2 takes every stateless task
    assert set(c2.active_tasks) == set(stateless)


def test_stateful_active_tasks_to_all_clients():
    stateful = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, TASK_1_0, TASK_1_1, TASK_1_2, TASK_1_3, TASK_2_0]
    c1 = client_state(1, 100, lags=lags(stateful, 0))
    c2 = client_state(2, 50, lags=lags(stateful, 0))
    c3 = client_state(3, 1, lags=lags(stateful, 0))
    clients = clients_map(c1, c2, c3)
    assert run(clients, stateful, stateful, WITHOUT_STANDBYS) is False
    assert all(c.active_task_count >= 1 for c in (c1, c2, c3))


def test_false_if_previous_assignment_is_reused():
    c1 = caught_up_client(1, [TASK_0_0, TASK_0_2], FOUR_TASKS)
    c2 = caught_up_client(2, [TASK_0_1, TASK_0_3], FOUR_TASKS)
    clients = clients_map(c1, c2)
    assert run(clients, FOUR_TASKS, FOUR_TASKS, WITHOUT_STANDBYS) is False
    assert c1.active_tasks == [TASK_0_0, TASK_0_2]
    assert c2.active_tasks == [TASK_0_1, TASK_0_3]


def test_false_if_no_warmup_tasks_are_assigned():
    c1, c2 = client_state(1), client_state(2)
    clients = clients_map(c1, c2)
    assert run(clients, FOUR_TASKS, [], WITHOUT_STANDBYS) is False
    assert c1.standby_tasks == [] and c2.standby_tasks == []


def test_true_if_warmup_tasks_are_assigned():
    stateful = [TASK_0_0, TASK_0_1]
    c1 = caught_up_client(1, stateful, stateful)
    c2 = caught_up_client(2, [], stateful)
    clients = clients_map(c1, c2)
    assert run(clients, stateful, stateful, WITHOUT_STANDBYS) is True
    assert c2.standby_task_count == 1


SEVEN_STATELESS = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, TASK_1_0, TASK_1_1, TASK_1_2]


def _stateless_only(capacities: Sequence[int], previous_active_c1: Sequence[TaskId] = ()):
    states = [client_state(1, capacities[0], previous_active=previous_active_c1)]
    states += [client_state(i + 1, cap) for i, cap in enumerate(capacities) if i > 0]
    clients = clients_map(*states)
    assert run(clients, SEVEN_STATELESS, [], WITHOUT_STANDBYS) is False
    assert_valid_assignment(0, [], SEVEN_STATELESS, clients)
    assert_balanced_active_assignment(clients)


def test_stateless_evenly_with_equal_threads_per_client_as_tasks():
    _stateless_only([7, 7, 7])


def test_stateless_evenly_with_less_threads_per_client_than_tasks():
    _stateless_only([2, 2, 2])


def test_stateless_evenly_with_unevenly_distributed_threads():
    _stateless_only([1, 2, 3])


def test_stateless_evenly_with_previous_assignment():
    _stateless_only([3, 3, 3], previous_active_c1=SEVEN_STATELESS)


def test_random_input():
    rng = random.Random(20241025)
    all_tasks = [TaskId(s, p) for s in range(60) for p in range(3)]
    stateful = sorted(rng.sample(all_tasks, rng.randint(1, len(all_tasks))))
    stateless = [t for t in all_tasks if t not in set(stateful)]
    states = []
    for n in range(1, 51):
        prev_active = rng.sample(all_tasks, rng.randint(0, 6))
        prev_standby = [
            t for t in rng.sample(stateful, min(len(stateful), rng.randint(0, 6))) if t not in prev_active
        ]
        states.append(
            client_state(
                n,
                rng.randint(1, 3),
                previous_active=prev_active,
                previous_standby=prev_standby,
                lags=lags(stateful, 0),
            )
        )
    clients = clients_map(*states)
    run(clients, all_tasks, stateful, configs(standbys=3))
    assert_valid_assignment(3, stateful, stateless, clients)
    assert_balanced_active_assignment(clients)


# --- sentinels and orders the Kafka tests do not reach (assignors.md §11.0 last bullets) ---------------


def test_unknown_lag_is_never_caught_up_and_sorts_before_real_lags():
    """-3 is not caught up (so a move is scheduled off it), and as the smallest lag it is the most
    caught-up client: the active goes to the -3 client, not to the one with lag 50."""
    c1 = client_state(1, lags={TASK_0_0: 5000})
    c2 = client_state(2, lags={TASK_0_0: -3})
    c3 = client_state(3, lags={TASK_0_0: 50})
    clients = clients_map(c1, c2, c3)
    assert run(clients, [TASK_0_0], [TASK_0_0], configs(lag=10)) is True
    assert c2.active_tasks == [TASK_0_0]
    assert c1.warmup_tasks == [TASK_0_0]


def test_running_active_is_caught_up_whatever_the_acceptable_lag():
    c1 = client_state(1, lags={TASK_0_0: 7})
    c2 = client_state(2, lags={TASK_0_0: -2})
    clients = clients_map(c1, c2)
    assert run(clients, [TASK_0_0], [TASK_0_0], configs(lag=0)) is True
    assert c2.active_tasks == [TASK_0_0]


def test_clients_in_signed_process_id_order():
    """Round-robin starts at the smallest *signed* ProcessId: an id starting with 'f' comes first."""
    high = ProcessId.parse("f0000000-0000-0000-0000-000000000001")
    low = ProcessId.parse("00000000-0000-0000-0000-000000000002")
    a, b = client_state(low, lags={TASK_0_0: 0}), client_state(high, lags={TASK_0_0: 0})
    clients = clients_map(a, b)
    assert list(clients) == [high, low]
    assert run(clients, [TASK_0_0], [TASK_0_0], WITHOUT_STANDBYS) is False
    assert b.active_tasks == [TASK_0_0]


# --- the KIP-924 wrapper ----------------------------------------------------------------------------


def _kip924_state(now_ms: int = 1_000_000):
    stateful = [TASK_0_0, TASK_0_1]
    infos = [stateful_task(t) for t in stateful] + [stateless_task(TASK_1_0)]
    states = [
        streams_state(pid(2), previous_active=stateful, lags=lags(stateful, -2)),
        streams_state(pid(1), lags=lags(stateful, 50_000)),
    ]
    return app_state(infos, states, configs(warmups=2, standbys=0), now_ms)


def test_kip924_assign_flags_warmups_and_sets_the_deadline_on_the_smallest_process_id():
    result = HighAvailabilityTaskAssignor().assign(_kip924_state())
    by_pid = result.by_process_id()
    assert [a.process_id() for a in result] == [pid(1), pid(2)]
    # Round-robin put 0_0 on PID_1, which is not caught up: it moves to PID_2 and PID_1 warms up.
    assert by_pid[pid(2)].active_tasks() == [TASK_0_0, TASK_0_1]
    assert by_pid[pid(1)].warmup_tasks() == [TASK_0_0]
    assert by_pid[pid(1)].active_tasks() == [TASK_1_0]
    assert by_pid[pid(1)].followup_rebalance_deadline() == 1_000_000 + 60_000
    assert by_pid[pid(2)].followup_rebalance_deadline() is None


def test_kip924_no_deadline_without_probing():
    stateful = [TASK_0_0]
    state = app_state([stateful_task(TASK_0_0)], [streams_state(pid(1), lags=lags(stateful, -2))], configs())
    result = HighAvailabilityTaskAssignor().assign(state)
    assert [a.followup_rebalance_deadline() for a in result] == [None]
    assert result.assignments[0].active_tasks() == [TASK_0_0]


def test_deterministic_twice_identical():
    first = HighAvailabilityTaskAssignor().assign(_kip924_state())
    second = HighAvailabilityTaskAssignor().assign(_kip924_state())
    assert list(first) == list(second)
    assert [sorted((str(t), a.is_warmup) for t, a in x.tasks().items()) for x in first] == [
        sorted((str(t), a.is_warmup) for t, a in x.tasks().items()) for x in second
    ]


# --- where the rack optimizer is called (assignors.md §4.1, §4.3, §4.7, §11.0 placement verification) ---


class RecordingRackAssignor:
    """Stands in for assignor.rack.RackAwareTaskAssignor and records what HA asks of it."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.enable_checks = 0
        self.active_calls: list[tuple[list[TaskId], int, int]] = []
        self.standby_calls: list[tuple[int, int]] = []

    def can_enable_rack_awareness(self) -> bool:
        self.enable_checks += 1
        return self.enabled

    def optimize_active_tasks(self, tasks, clients, traffic_cost, non_overlap_cost) -> int:
        self.active_calls.append((list(tasks), traffic_cost, non_overlap_cost))
        return 0

    def optimize_standby_tasks(self, clients, traffic_cost, non_overlap_cost, move_predicate) -> int:
        assert isinstance(move_predicate(*list(clients.values())[:2], TASK_0_0, clients), bool)
        self.standby_calls.append((traffic_cost, non_overlap_cost))
        return 0


def _rack_run(rack, cfg: AssignmentConfigs, stateless: Sequence[TaskId] = (TASK_1_0,)):
    stateful = [TASK_0_1, TASK_0_0]
    clients = clients_map(*(client_state(n, lags=lags(stateful, 0)) for n in (1, 2, 3)))
    assign_high_availability(clients, [*stateful, *stateless], stateful, cfg, rack_assignor=rack)
    verify_task_placement(clients, [*stateful, *stateless])


def test_rack_optimizer_called_where_kafka_calls_it_with_ha_default_costs():
    rack = RecordingRackAssignor(enabled=True)
    _rack_run(rack, configs(standbys=1))
    assert rack.active_calls == [([TASK_0_0, TASK_0_1], 10, 1), ([TASK_1_0], 1, 0)]
    assert rack.standby_calls == [(10, 1)]
    assert rack.enable_checks == 1  # evaluated once per assignment


def test_rack_optimizer_uses_configured_costs_and_runs_even_without_stateless_tasks():
    rack = RecordingRackAssignor(enabled=True)
    cfg = AssignmentConfigs(100, 2, 0, 60_000, (), 7, 3, "min_traffic")
    _rack_run(rack, cfg, stateless=())
    assert rack.active_calls == [([TASK_0_0, TASK_0_1], 7, 3), ([], 1, 0)]
    assert rack.standby_calls == []  # no standbys configured


def test_rack_optimizer_never_called_when_it_cannot_be_enabled():
    rack = RecordingRackAssignor(enabled=False)
    _rack_run(rack, configs(standbys=1))
    assert rack.active_calls == [] and rack.standby_calls == []


def test_planning_the_same_scenario_twice_gives_identical_json():
    """The whole result (assignment, consumers, deadlines, metrics) is byte-identical but for elapsed_ms."""
    import json

    from fleet_assignor.assignor.planner import plan_scenario
    from tests.scenario_generator import Knobs, generate_scenario

    for seed in range(5):
        scenario = generate_scenario(seed, Knobs(strategies=("none",)))
        runs = []
        for _ in range(2):
            result = dict(plan_scenario(scenario, assignor="high_availability", now_ms=1_700_000_000_000))
            result.pop("elapsed_ms", None)
            runs.append(json.dumps(result, sort_keys=True))
        assert runs[0] == runs[1]


def _roles_of_the_task_dict(assignment: KafkaStreamsAssignment):
    return KafkaStreamsAssignment(assignment.process_id(), dict(assignment.tasks())).task_ids_by_role()


@pytest.mark.parametrize("seed", range(40))
def test_the_roles_an_assignment_carries_are_those_of_its_tasks(seed):
    # The planner reads each client's task ids by role from the sets the assignor kept (no pass over its
    # task dict): they must be what the dict says, warmups included, on random applications.
    state = load_scenario(generate_scenario(seed), now_ms=0).application_state
    answer = HighAvailabilityTaskAssignor().assign(state)
    assert [a.task_ids_by_role() for a in answer] == [_roles_of_the_task_dict(a) for a in answer]


def test_a_task_in_both_roles_on_one_client_is_counted_as_the_task_dict_keeps_it():
    # ClientState refuses a task in two roles; forced here, the dict keeps it once, as a standby, and the
    # roles read from the assignment say so too.
    client = ClientState(ProcessId.of(1), 1)
    client.assign_active(TaskId(0, 0))
    client._standby.add(TaskId(0, 0))
    (assignment,) = to_task_assignment({client.process_id: client}, None)
    assert assignment.task_ids_by_role() == (frozenset(), frozenset({TaskId(0, 0)}), frozenset())
    assert assignment.task_ids_by_role() == _roles_of_the_task_dict(assignment)


def test_a_lone_consumers_share_is_the_one_the_planner_would_split():
    # A one-consumer client's assignment offers its consumer's share (every task, each role in TaskId order,
    # warmups among the standbys): the planner takes it instead of splitting the tasks itself, so it must be
    # what `distribute_client_tasks` gives, on random applications.
    offered = 0
    for seed in range(40):
        state = load_scenario(generate_scenario(seed), now_ms=0).application_state
        for assignment in HighAvailabilityTaskAssignor().assign(state):
            share = assignment.consumer_tasks() if isinstance(assignment, OneConsumerAssignment) else None
            if share is None:
                continue
            offered += 1
            active, standby, _ = _roles_of_the_task_dict(assignment)
            assert share == distribute_client_tasks(state.clients[assignment.process_id()], active, standby)
    assert offered > 20


@pytest.mark.parametrize("change", ["assign", "remove", "follow-up copy"])
def test_a_lone_consumers_share_is_withdrawn_once_a_task_can_change(change):
    client = ClientState(ProcessId.of(1), 1, consumers=["c1"])
    client.assign_active(TaskId(0, 0))
    (assignment,) = to_task_assignment({client.process_id: client}, None)
    assert isinstance(assignment, OneConsumerAssignment)
    assert assignment.consumer_tasks() == {"c1": ConsumerTasks((TaskId(0, 0),), ())}
    if change == "assign":
        assignment.assign_task(AssignedTask.standby(TaskId(0, 1)))
    elif change == "remove":
        assignment.remove_task(TaskId(0, 0))
    else:
        assignment.with_followup_rebalance(5).assign_task(AssignedTask.standby(TaskId(0, 1)))
    assert assignment.consumer_tasks() is None


def test_a_one_consumer_assignment_made_without_its_share_offers_none():
    assert OneConsumerAssignment(ProcessId.of(1)).consumer_tasks() is None
