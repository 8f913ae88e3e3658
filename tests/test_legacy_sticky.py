"""The legacy (pre-3.8) sticky assignor on ClientStates (assignors.md §6.1), orders of POLICY.md §3."""

from __future__ import annotations

import random
import uuid

import pytest

from fleet_assignor.assignor import AssignmentConfigs, ProcessId, TaskAssignmentException, TaskId
from fleet_assignor.assignor.legacy_sticky import LegacyStickyTaskAssignor, TaskPairs
from tests.fixtures import (
    PID_1,
    PID_2,
    PID_3,
    PID_4,
    PID_5,
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_0_3,
    TASK_1_0,
    client_state,
    clients_map,
)


def configs(
    standbys: int = 0, traffic: int | None = None, non_overlap: int | None = None
) -> AssignmentConfigs:
    return AssignmentConfigs(0, 1, standbys, 60_000, (), traffic, non_overlap)


def run(clients, tasks, stateful=(), standbys=0, *, preserve=False, rack=None, cfg=None) -> bool:
    return LegacyStickyTaskAssignor(preserve).assign(
        clients, tasks, stateful, cfg or configs(standbys), rack_optimizer=rack
    )


def actives(clients) -> dict[ProcessId, list[TaskId]]:
    return {pid: c.active_tasks for pid, c in clients.items()}


def test_previous_owners_keep_their_actives_up_to_their_quota():
    clients = clients_map(
        client_state(1, 1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]),
        client_state(2, 1),
    )
    assert run(clients, [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]) is False
    # 4 tasks / 2 threads = 2 per thread: P1 keeps its two lowest; the third moves to the free client.
    assert actives(clients) == {PID_1: [TASK_0_0, TASK_0_1], PID_2: [TASK_0_2, TASK_0_3]}


def test_preserving_mode_keeps_every_previous_active_whatever_the_balance():
    clients = clients_map(
        client_state(1, 1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]),
        client_state(2, 1),
    )
    run(clients, [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3], preserve=True)
    assert actives(clients) == {PID_1: [TASK_0_0, TASK_0_1, TASK_0_2], PID_2: [TASK_0_3]}


def test_previous_standby_owner_with_room_takes_the_task():
    clients = clients_map(
        client_state(1, 1, previous_standby=[TASK_0_1]),
        client_state(2, 2, previous_active=[TASK_0_0], previous_standby=[TASK_0_1]),
        client_state(3, 1),
    )
    run(clients, [TASK_0_0, TASK_0_1])
    # 2 tasks / 4 threads = 0 per thread: quotas are all full, so 0_1 comes from step 3's previous owner
    # preference: the least-loaded previous standby owner among all clients (P1, empty).
    assert actives(clients)[PID_1] == [TASK_0_1]
    assert actives(clients)[PID_2] == [TASK_0_0]


def test_capacity_decides_among_previous_standby_owners():
    # Kafka's shouldAssignBasedOnCapacityWhenMultipleClientHaveStandbyTasks, on the legacy assignor.
    clients = clients_map(
        client_state(1, 1, previous_active=[TASK_0_0], previous_standby=[TASK_0_1]),
        client_state(2, 2, previous_active=[TASK_0_2], previous_standby=[TASK_0_1]),
    )
    run(clients, [TASK_0_0, TASK_0_1, TASK_0_2])
    assert actives(clients) == {PID_1: [TASK_0_0], PID_2: [TASK_0_1, TASK_0_2]}


def test_stickiness_holds_with_more_threads_than_tasks():
    clients = clients_map(
        client_state(1, previous_active=[TASK_0_0]),
        client_state(2, previous_active=[TASK_0_2]),
        client_state(3, previous_active=[TASK_0_1]),
        client_state(4),
        client_state(5),
    )
    run(clients, [TASK_0_0, TASK_0_1, TASK_0_2])
    assert actives(clients) == {PID_1: [TASK_0_0], PID_2: [TASK_0_2], PID_3: [TASK_0_1], PID_4: [], PID_5: []}


def test_two_claimants_the_later_in_signed_process_id_order_keeps_the_task():
    high_bit = ProcessId.of(uuid.UUID("80000000-0000-0000-0000-000000000001"))  # sorts first (signed order)
    clients = clients_map(
        client_state(high_bit, 1, previous_active=[TASK_0_0]),
        client_state(1, 1, previous_active=[TASK_0_0]),
    )
    run(clients, [TASK_0_0], preserve=True)
    assert actives(clients) == {high_bit: [], PID_1: [TASK_0_0]}


def test_new_tasks_go_to_the_least_loaded_client_first_in_process_id_order_on_ties():
    clients = clients_map(client_state(3, 2), client_state(2, 2), client_state(1, 1))
    run(clients, [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3])
    # P1 is empty first, then loads tie-break towards larger capacity, then smaller ProcessId.
    assert actives(clients) == {PID_1: [TASK_0_0], PID_2: [TASK_0_1, TASK_0_3], PID_3: [TASK_0_2]}


def test_standbys_avoid_holders_and_stop_when_no_client_is_left():
    clients = clients_map(
        client_state(1, previous_active=[TASK_0_0]),
        client_state(2, previous_active=[TASK_0_1]),
        client_state(3, previous_active=[TASK_0_2]),
    )
    run(clients, [TASK_0_0, TASK_0_1, TASK_0_2], [TASK_0_0, TASK_0_1, TASK_0_2], standbys=5)
    for pid, own in ((PID_1, TASK_0_0), (PID_2, TASK_0_1), (PID_3, TASK_0_2)):
        assert clients[pid].active_tasks == [own]
        assert set(clients[pid].standby_tasks) == {TASK_0_0, TASK_0_1, TASK_0_2} - {own}


def test_only_stateful_tasks_get_standbys():
    clients = clients_map(client_state(1), client_state(2))
    run(clients, [TASK_0_0, TASK_1_0], [TASK_1_0], standbys=1)
    assert sorted(t for c in clients.values() for t in c.standby_tasks) == [TASK_1_0]


def test_no_two_clients_get_the_same_task_set():
    clients = clients_map(*(client_state(n) for n in range(1, 5)))
    four = [TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3]
    run(clients, four, four, standbys=1)
    sets = [frozenset(c.active_tasks + c.standby_tasks) for c in clients.values()]
    assert len(set(sets)) == 4


def test_reruns_are_identical():
    def once():
        clients = clients_map(
            client_state(1, 2, previous_active=[TASK_0_1], previous_standby=[TASK_0_0]),
            client_state(2, 1, previous_active=[TASK_0_0]),
            client_state(3, 3, previous_standby=[TASK_0_2, TASK_0_3]),
        )
        tasks = [TASK_0_3, TASK_0_0, TASK_1_0, TASK_0_2, TASK_0_1]
        run(clients, tasks, set(tasks) - {TASK_1_0}, standbys=1)
        return [(pid, c.active_tasks, c.standby_tasks) for pid, c in clients.items()]

    assert once() == once()


def test_no_threads_at_all_is_an_assignment_failure():
    with pytest.raises(TaskAssignmentException, match="no client has a thread to run tasks on"):
        run({}, [TASK_0_0])
    assert run({}, []) is False


class _RecordingRack:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.calls: list[tuple] = []

    def can_enable_rack_awareness(self) -> bool:
        return self.enabled

    def optimize_active_tasks(self, tasks, clients, traffic_cost, non_overlap_cost) -> int:
        self.calls.append(("active", list(tasks), traffic_cost, non_overlap_cost))
        return 0

    def optimize_standby_tasks(self, clients, traffic_cost, non_overlap_cost, move_predicate) -> int:
        self.calls.append(("standby", traffic_cost, non_overlap_cost, move_predicate(None, None, None, None)))
        return 0


def test_rack_optimization_uses_the_legacy_default_costs():
    rack = _RecordingRack(enabled=True)
    clients = clients_map(client_state(1), client_state(2))
    run(clients, [TASK_0_0, TASK_1_0], [TASK_0_0], standbys=1, rack=rack)
    assert rack.calls == [
        ("active", [TASK_0_0], 1, 10),
        ("active", [TASK_1_0], 1, 0),
        ("standby", 1, 10, True),
    ]


def test_rack_optimization_uses_configured_costs_and_skips_standbys_without_replicas():
    rack = _RecordingRack(enabled=True)
    clients = clients_map(client_state(1), client_state(2))
    run(clients, [TASK_0_0], [TASK_0_0], rack=rack, cfg=configs(0, traffic=5, non_overlap=7))
    assert rack.calls == [("active", [TASK_0_0], 5, 7), ("active", [], 1, 0)]


def test_rack_optimization_not_run_when_racks_cannot_be_used():
    rack = _RecordingRack(enabled=False)
    run(clients_map(client_state(1)), [TASK_0_0], [TASK_0_0], standbys=1, rack=rack)
    assert rack.calls == []


def test_task_pairs_are_new_until_some_client_held_both_tasks():
    a, b, c = (ProcessId.parse(f"00000000-0000-0000-0000-00000000000{i}") for i in (1, 2, 3))
    pairs = TaskPairs(3)
    assert not pairs.has_new_pair(TASK_0_0, a)  # a holds nothing: no pair to make
    pairs.place(a, TASK_0_1)
    assert pairs.has_new_pair(TASK_0_0, a)
    pairs.place(b, TASK_0_0)
    pairs.place(b, TASK_0_1)  # 0_0 and 0_1 now share b
    assert not pairs.has_new_pair(TASK_0_0, a)
    pairs.place(a, TASK_0_2)
    assert pairs.has_new_pair(TASK_0_0, a)  # 0_2 never shared a client with 0_0
    assert not pairs.has_new_pair(TASK_0_1, c)
    # a client that was given the task (and lost it to the rack optimizer): the task pairs with itself
    assert pairs.has_new_pair(TASK_0_1, a)
    pairs.place(c, TASK_0_2)
    pairs.place(c, TASK_0_0)  # now 0_0-0_1 (b), 0_1-0_2 (a), 0_0-0_2 (c): every pair of the three
    assert not pairs.has_new_pair(TASK_0_1, a)


@pytest.mark.parametrize("seed", range(40))
def test_task_pairs_answer_as_the_set_of_every_pair_placed(seed):
    """The pairs are answered from the clients' task sets: the same as recording each pair as it is placed
    (Kafka's way), on random placements over few clients and tasks (so that many pairs repeat)."""
    rng = random.Random(seed)
    clients = [
        ProcessId.parse(f"00000000-0000-0000-0000-00000000000{i}") for i in range(1, rng.randint(2, 5))
    ]
    tasks = [TaskId(0, p) for p in range(rng.randint(2, 9))]
    pairs, recorded = TaskPairs(len(tasks)), set()
    held: dict[ProcessId, list[TaskId]] = {c: [] for c in clients}
    every_pair = len(tasks) * (len(tasks) - 1) // 2
    for _ in range(rng.randint(1, 25)):
        client, task = rng.choice(clients), rng.choice(tasks)
        for probe in clients:
            # Kafka's rule on recorded pairs; a task never pairs with itself
            expected = len(recorded) < every_pair and any(
                frozenset((task, other)) not in recorded for other in held[probe]
            )
            assert pairs.has_new_pair(task, probe) == expected
        if task not in held[client]:
            recorded.update(frozenset((task, other)) for other in held[client])
            held[client].append(task)
            pairs.place(client, task)
