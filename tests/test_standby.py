"""Standby placement on ClientStates (assignors.md §5): Kafka's ClientTagAwareStandbyTaskAssignorTest
(§11.4) ported, the default assignor, the factory, and the POLICY.md fixes and orders."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from fleet_assignor.assignor import AssignmentConfigs, ClientState, ProcessId, TaskId
from fleet_assignor.assignor.standby import (
    ClientStateView,
    ClientTagAwareStandbyTaskAssignor,
    ClientTagStandbyPlacement,
    DefaultStandbyTaskAssignor,
    assign_standby_replicas,
    client_tag_task_order,
    create_standby_task_assignor,
)
from tests.fixtures import (
    PID_1,
    PID_2,
    PID_3,
    PID_4,
    PID_5,
    PID_6,
    PID_7,
    PID_8,
    PID_9,
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_1_0,
    TASK_1_1,
    TASK_1_2,
    client_state,
    clients_map,
)

ZONE, CLUSTER = "zone", "cluster"


def configs(standbys: int, *tags: str) -> AssignmentConfigs:
    """Kafka's test configs: lag 0, 1 warmup, n standbys, 60 s probing, the given tags."""
    return AssignmentConfigs(0, 1, standbys, 60_000, tags)


def tagged(n: int, capacity: int, zone: str | None, cluster: str | None, *active: TaskId) -> ClientState:
    tags = {}
    if zone is not None:
        tags[ZONE] = zone
    if cluster is not None:
        tags[CLUSTER] = cluster
    return client_state(n, capacity, active=active, tags=tags)


def grid(actives: Mapping[int, tuple[TaskId, ...]]) -> dict[ProcessId, ClientState]:
    """P1..P9 = (zone z1..z3) x (cluster c1..c3), P1 = (z1, c1), P2 = (z2, c1), ..., capacity 2."""
    states = []
    for c in range(3):
        for z in range(3):
            n = 3 * c + z + 1
            states.append(tagged(n, 2, f"z{z + 1}", f"c{c + 1}", *actives.get(n, ())))
    return clients_map(*states)


def all_actives(clients: Mapping[ProcessId, ClientState]) -> frozenset[TaskId]:
    """Kafka's tests hand the assignor a HashSet of all actives: an unordered set here."""
    return frozenset(t for c in clients.values() for t in c.active_tasks)


def standby_holders(clients: Mapping[ProcessId, ClientState], task: TaskId) -> set[ProcessId]:
    return {pid for pid, c in clients.items() if c.has_standby(task)}


def total_standbys(clients: Mapping[ProcessId, ClientState]) -> int:
    return sum(c.standby_task_count for c in clients.values())


# --- §11.4 ClientTagAwareStandbyTaskAssignorTest -----------------------------------------------------------
def test_should_not_assign_stateless_tasks_to_any_clients():
    clients = grid({1: (TASK_0_0, TASK_1_0), 4: (TASK_0_1, TASK_1_1), 7: (TASK_0_2, TASK_1_2)})
    stateful = frozenset({TASK_1_0, TASK_1_1, TASK_1_2})
    ClientTagAwareStandbyTaskAssignor().assign(clients, stateful, configs(2, ZONE, CLUSTER))
    for stateless in (TASK_0_0, TASK_0_1, TASK_0_2):
        assert standby_holders(clients, stateless) == set()
    assert all(len(standby_holders(clients, t)) == 2 for t in stateful)


def _three_clients_in_one_zone() -> dict[ProcessId, ClientState]:
    return clients_map(
        tagged(1, 2, "z1", "c1", TASK_0_0),
        tagged(2, 2, "z1", "c2", TASK_0_1),
        tagged(3, 2, "z1", "c3", TASK_0_2),
    )


def _place_each_task_directly(clients, standbys: int) -> ClientTagStandbyPlacement:
    placement = ClientTagStandbyPlacement(ClientStateView(clients), (ZONE, CLUSTER), standbys)
    active_client = {TASK_0_0: PID_1, TASK_0_1: PID_2, TASK_0_2: PID_3}
    for task in (TASK_0_0, TASK_0_1, TASK_0_2):
        placement.remaining[task] = standbys
    for task, client in active_client.items():
        placement.place_for_task(task, client)
    return placement


def test_should_remove_client_to_remaining_standbys_and_not_populate_pending_when_all_were_assigned():
    placement = _place_each_task_directly(_three_clients_in_one_zone(), 2)
    assert placement.remaining == {}
    assert placement.pending == {}


def test_should_update_remaining_standbys_and_pending_when_not_all_were_assigned():
    placement = _place_each_task_directly(_three_clients_in_one_zone(), 3)
    assert placement.remaining == {TASK_0_0: 1, TASK_0_1: 1, TASK_0_2: 1}
    assert placement.pending == {TASK_0_0: PID_1, TASK_0_1: PID_2, TASK_0_2: PID_3}


def test_should_permit_task_movement_when_client_tags_match():
    source = tagged(1, 1, "z1", "c1")
    destination = tagged(2, 2, "z1", "c1")
    assert ClientTagAwareStandbyTaskAssignor().is_allowed_task_movement(source, destination)


def test_should_decline_task_movement_when_client_tags_do_not_match():
    source = tagged(1, 1, "z1", "c1")
    destination = tagged(2, 1, "z2", "c1")
    assert not ClientTagAwareStandbyTaskAssignor().is_allowed_task_movement(source, destination)


def _single_move(destination_zone: str) -> bool:
    source = tagged(1, 1, "z1", "c1")
    destination = tagged(2, 1, destination_zone, "c1")
    third = tagged(3, 1, "z3", "c2")
    third.assign_active(TASK_0_0)
    source.assign_standby(TASK_0_0)
    clients = clients_map(source, destination, third)
    return ClientTagAwareStandbyTaskAssignor().is_allowed_standby_movement(
        source, destination, TASK_0_0, clients
    )


def test_should_permit_single_task_move_when_client_tag_match():
    assert _single_move("z1")


def test_should_permit_single_task_move_when_different_client_tag_count_not_change():
    assert _single_move("z2")


def test_should_decline_single_task_move_when_reduce_client_tag_count():
    # the destination shares the active's zone z3: the task would be covered by one zone fewer
    assert not _single_move("z3")


def _assert_grid_result(clients, without_standbys, expected_sets):
    assert all(c.reached_capacity() for c in clients.values())
    for pid, client in clients.items():
        assert client.standby_task_count == (0 if pid in without_standbys else 2), pid
    assert total_standbys(clients) == 12
    for tasks, options in expected_sets.items():
        for task in tasks:
            assert standby_holders(clients, task) in options, task


def test_should_distribute_standby_tasks_when_active_tasks_are_located_on_same_zone():
    clients = grid({1: (TASK_0_0, TASK_1_0), 4: (TASK_0_1, TASK_1_1), 7: (TASK_0_2, TASK_1_2)})
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(2, ZONE, CLUSTER))
    _assert_grid_result(
        clients,
        {PID_1, PID_4, PID_7},
        {
            (TASK_0_0, TASK_1_0): [{PID_9, PID_5}, {PID_6, PID_8}],
            (TASK_0_1, TASK_1_1): [{PID_2, PID_9}, {PID_3, PID_8}],
            (TASK_0_2, TASK_1_2): [{PID_5, PID_3}, {PID_2, PID_6}],
        },
    )


class _FakeRacks:
    """A rack source answering validly, counting how often the racks are read."""

    def __init__(self, racks: Mapping[ProcessId, str]) -> None:
        self.racks = dict(racks)
        self.reads = 0

    def valid_client_rack(self) -> bool:
        return True

    def racks_for_process(self) -> Mapping[ProcessId, str]:
        self.reads += 1
        return self.racks


def _racks_by_column() -> dict[ProcessId, str]:
    return {ProcessId.of(n): f"rack{(n - 1) % 3 + 1}" for n in range(1, 10)}


def _assert_spread_over_three_racks(clients):
    assert all(c.reached_capacity() for c in clients.values())
    for pid, client in clients.items():
        assert client.standby_task_count == (0 if pid in (PID_1, PID_2, PID_3) else 2), pid
    assert total_standbys(clients) == 12
    allowed = {
        (TASK_0_0, TASK_1_0): {PID_2, PID_3, PID_5, PID_6, PID_8, PID_9},
        (TASK_0_1, TASK_1_1): {PID_1, PID_3, PID_4, PID_6, PID_7, PID_9},
        (TASK_0_2, TASK_1_2): {PID_1, PID_2, PID_4, PID_5, PID_7, PID_8},
    }
    for tasks, holders in allowed.items():
        for task in tasks:
            assert standby_holders(clients, task) <= holders, task


def _rack_column_actives(tags_of) -> dict[ProcessId, ClientState]:
    actives = {1: (TASK_0_0, TASK_1_0), 2: (TASK_0_1, TASK_1_1), 3: (TASK_0_2, TASK_1_2)}
    return clients_map(
        *(client_state(n, 2, active=actives.get(n, ()), tags=tags_of(n)) for n in range(1, 10))
    )


def test_should_distribute_standby_tasks_using_function_and_supplier_tags():
    racks = _FakeRacks(_racks_by_column())
    assignor = create_standby_task_assignor(configs(2), racks)
    assert isinstance(assignor, ClientTagAwareStandbyTaskAssignor)
    assert racks.reads == 1
    clients = _rack_column_actives(lambda n: {})
    assignor.assign(clients, all_actives(clients), configs(2))
    assert racks.reads == 1
    _assert_spread_over_three_racks(clients)

    racks_by_pid = _racks_by_column()
    with_tags = _rack_column_actives(lambda n: {ZONE: racks_by_pid[ProcessId.of(n)]})
    tag_assignor = create_standby_task_assignor(configs(2, ZONE), _FakeRacks(racks_by_pid))
    assert isinstance(tag_assignor, ClientTagAwareStandbyTaskAssignor)
    tag_assignor.assign(with_tags, all_actives(with_tags), configs(2, ZONE))
    _assert_spread_over_three_racks(with_tags)


def test_should_distribute_standby_tasks_when_active_tasks_are_located_on_same_cluster():
    clients = grid({1: (TASK_0_0, TASK_1_0), 2: (TASK_0_1, TASK_1_1), 3: (TASK_0_2, TASK_1_2)})
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(2, ZONE, CLUSTER))
    _assert_grid_result(
        clients,
        {PID_1, PID_2, PID_3},
        {
            (TASK_0_0, TASK_1_0): [{PID_9, PID_5}, {PID_6, PID_8}],
            (TASK_0_1, TASK_1_1): [{PID_4, PID_9}, {PID_6, PID_7}],
            (TASK_0_2, TASK_1_2): [{PID_5, PID_7}, {PID_4, PID_8}],
        },
    )


def test_should_do_the_partial_rack_awareness():
    clients = clients_map(
        tagged(1, 1, "z1", "c1", TASK_0_0),
        tagged(2, 1, "z2", "c1"),
        tagged(3, 1, "z3", "c1"),
        tagged(4, 1, "z1", "c2"),
        tagged(5, 1, "z2", "c2"),
        tagged(6, 1, "z3", "c2", TASK_1_0),
    )
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(2, CLUSTER, ZONE))
    assert clients[PID_2].standby_task_count == 1
    assert clients[PID_5].standby_task_count == 1
    for pid in (PID_1, PID_3, PID_4, PID_6):
        assert clients[pid].standby_task_count in (0, 1)
    assert total_standbys(clients) == 4
    assert standby_holders(clients, TASK_0_0) in ({PID_5, PID_3}, {PID_5, PID_6})
    assert standby_holders(clients, TASK_1_0) in ({PID_2, PID_4}, {PID_2, PID_1})


def test_should_distribute_clients_on_different_zone_tags_even_when_clients_reached_capacity():
    actives = (TASK_0_0, TASK_0_1, TASK_0_2, TASK_1_0, TASK_1_1, TASK_1_2)
    zones = ("z1", "z2", "z3", "z1", "z2", "z3")
    clients = clients_map(*(tagged(n + 1, 1, zones[n], "c1", actives[n]) for n in range(6)))
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(1, ZONE, CLUSTER))
    assert all(c.standby_task_count == 1 for c in clients.values())
    assert total_standbys(clients) == 6
    allowed = {
        (TASK_0_0, TASK_1_0): {PID_2, PID_5, PID_3, PID_6},
        (TASK_0_1, TASK_1_1): {PID_1, PID_4, PID_3, PID_6},
        (TASK_0_2, TASK_1_2): {PID_1, PID_4, PID_2, PID_5},
    }
    for tasks, holders in allowed.items():
        for task in tasks:
            held = standby_holders(clients, task)
            assert len(held) == 1 and held <= holders, task


def test_should_ignore_tags_that_are_not_present_in_rack_awareness():
    clients = clients_map(
        tagged(1, 1, "z1", "c1", TASK_0_0),
        tagged(2, 2, "z2", "c1"),
        tagged(3, 1, "z1", "c2"),
    )
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(1, CLUSTER))
    assert total_standbys(clients) == 1
    assert standby_holders(clients, TASK_0_0) == {PID_3}


def test_should_handle_overlapping_tag_values_between_different_tag_keys():
    clients = clients_map(
        tagged(1, 1, "zone1", "cluster1", TASK_0_0),
        tagged(2, 1, "cluster1", "cluster3"),
    )
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(1, ZONE, CLUSTER))
    assert standby_holders(clients, TASK_0_0) == {PID_2}


def test_should_distribute_standby_tasks_on_least_loaded_clients_when_not_on_different_tag_dimensions():
    clients = clients_map(
        tagged(1, 3, "z1", "c1", TASK_0_0),
        tagged(2, 3, "z1", "c1", TASK_0_1),
        tagged(3, 3, "z1", "c1", TASK_0_2),
        tagged(4, 3, "z1", "c1", TASK_1_0),
    )
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(1, ZONE, CLUSTER))
    assert total_standbys(clients) == 4
    assert all(c.standby_task_count == 1 for c in clients.values())


def test_should_not_assign_standby_tasks_if_there_are_no_enough_clients():
    clients = clients_map(tagged(1, 1, "z1", "c1", TASK_0_0))
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(1, ZONE, CLUSTER))
    assert total_standbys(clients) == 0


# --- POLICY.md §4 fix and §1/§3 orders ---------------------------------------------------------------------
def test_fix_client_tags_with_zero_standby_replicas_places_no_standby():
    """Kafka's do-while places one standby per task even with num_standby_replicas = 0."""
    clients = clients_map(tagged(1, 1, "z1", "c1", TASK_0_0), tagged(2, 1, "z2", "c2", TASK_0_1))
    ClientTagAwareStandbyTaskAssignor().assign(clients, all_actives(clients), configs(0, ZONE))
    assert total_standbys(clients) == 0


def test_client_tag_task_order_is_descending_task_id():
    shuffled = [TASK_1_2, TASK_0_0, TASK_1_0, TASK_0_2, TASK_1_1, TASK_0_1]
    assert client_tag_task_order(shuffled) == [TASK_1_2, TASK_1_1, TASK_1_0, TASK_0_2, TASK_0_1, TASK_0_0]


def test_a_sequence_of_tasks_is_visited_in_the_given_order():
    """The HA assignor passes ascending TaskIds (Kafka's TreeSet), and must get Kafka's answer for that order:
    in the same-zone grid, ascending order gives one client three standbys (assignors.md §11.4 warning), which
    the unordered-set order avoids."""
    actives = {1: (TASK_0_0, TASK_1_0), 4: (TASK_0_1, TASK_1_1), 7: (TASK_0_2, TASK_1_2)}
    in_task_order = grid(actives)
    ClientTagAwareStandbyTaskAssignor().assign(
        in_task_order, sorted(all_actives(in_task_order)), configs(2, ZONE, CLUSTER)
    )
    assert max(c.standby_task_count for c in in_task_order.values()) == 3
    as_set = grid(actives)
    ClientTagAwareStandbyTaskAssignor().assign(as_set, all_actives(as_set), configs(2, ZONE, CLUSTER))
    assert max(c.standby_task_count for c in as_set.values()) == 2


def _only_other_zone_already_holds_both() -> dict[ProcessId, ClientState]:
    """Actives 0_0 and 1_0 in zone z1; the only z2 client already holds both as standbys, so the tags leave
    no candidate and both tasks fall back to least-loaded placement. P2 (load 0) is lighter than P3 (0.5)."""
    clients = clients_map(
        tagged(1, 1, "z1", None, TASK_0_0, TASK_1_0),
        tagged(2, 1, "z1", None),
        tagged(3, 2, "z1", None, TaskId(7, 7)),
        tagged(4, 2, "z2", None),
    )
    clients[PID_4].assign_standby(TASK_0_0)
    clients[PID_4].assign_standby(TASK_1_0)
    return clients


def test_fallback_places_pending_tasks_in_task_id_order():
    """Kafka iterates the pending tasks in HashMap order; we use ascending TaskId (POLICY.md §1), whatever the
    order the tasks came in: 0_0 takes the lightest client first."""
    clients = _only_other_zone_already_holds_both()
    placement = ClientTagAwareStandbyTaskAssignor().placement(clients, configs(1, ZONE))
    placement.run([TASK_1_0, TASK_0_0])
    assert placement.pending == {TASK_0_0: PID_1, TASK_1_0: PID_1}
    assert standby_holders(clients, TASK_0_0) == {PID_2, PID_4}
    assert standby_holders(clients, TASK_1_0) == {PID_3, PID_4}


def test_fallback_serves_lower_task_ids_first_whatever_the_pending_order():
    clients = _only_other_zone_already_holds_both()
    placement = ClientTagStandbyPlacement(ClientStateView(clients), (ZONE,), 1)
    placement.remaining = {TASK_1_0: 1, TASK_0_0: 1}  # inserted highest first
    placement.place_pending_on_least_loaded()
    assert standby_holders(clients, TASK_0_0) == {PID_2, PID_4}
    assert standby_holders(clients, TASK_1_0) == {PID_3, PID_4}
    assert placement.remaining == {TASK_0_0: 0, TASK_1_0: 0}


# --- default assignor and the HA entry point ---------------------------------------------------------------
def test_default_places_min_of_replicas_and_other_clients_on_least_loaded():
    clients = clients_map(
        client_state(1, 1, active=[TASK_0_0]),
        client_state(2, 2, active=[TASK_0_1]),
        client_state(3, 1),
    )
    DefaultStandbyTaskAssignor().assign(clients, [TASK_0_0, TASK_0_1], configs(5))
    # 0_0: P3 (load 0) then P2 (load 0.5): both other clients; 0_1: P1 and P3 (the only ones without it).
    assert standby_holders(clients, TASK_0_0) == {PID_2, PID_3}
    assert standby_holders(clients, TASK_0_1) == {PID_1, PID_3}


def test_default_breaks_load_ties_by_smaller_process_id():
    clients = clients_map(client_state(3, 1), client_state(2, 1), client_state(1, 1, active=[TASK_0_0]))
    DefaultStandbyTaskAssignor().assign(clients, [TASK_0_0], configs(1))
    assert standby_holders(clients, TASK_0_0) == {PID_2}


def test_default_weights_by_load_not_count():
    # P2 holds 2 tasks on 4 threads (load 0.5), P3 holds 1 task on 1 thread (load 1): P2 is lighter.
    clients = clients_map(
        client_state(1, 1, active=[TASK_0_0]),
        client_state(2, 4, active=[TASK_1_0, TASK_1_1]),
        client_state(3, 1, active=[TASK_1_2]),
    )
    DefaultStandbyTaskAssignor().assign(clients, [TASK_0_0], configs(1))
    assert standby_holders(clients, TASK_0_0) == {PID_2}


def test_default_movement_predicates_allow_everything():
    source, destination = tagged(1, 1, "z1", "c1"), tagged(2, 1, "z2", "c2")
    assignor = DefaultStandbyTaskAssignor()
    assert assignor.is_allowed_task_movement(source, destination)
    assert assignor.is_allowed_standby_movement(
        source, destination, TASK_0_0, clients_map(source, destination)
    )


@pytest.mark.parametrize("tags", [(), (ZONE,)])
def test_assign_standby_replicas_with_zero_replicas_places_nothing(tags):
    clients = clients_map(tagged(1, 1, "z1", "c1", TASK_0_0), tagged(2, 1, "z2", "c1", TASK_0_1))
    assign_standby_replicas(clients, [TASK_0_0, TASK_0_1], configs(0, *tags))
    assert total_standbys(clients) == 0


def test_assign_standby_replicas_uses_tags_when_configured():
    clients = clients_map(
        tagged(1, 1, "z1", None, TASK_0_0),
        tagged(2, 1, "z1", None),
        tagged(3, 5, "z2", None, TASK_1_0, TASK_1_1),
    )
    assign_standby_replicas(clients, [TASK_0_0], configs(1, ZONE))
    # least-loaded alone would pick P2 (load 0); the tags send it to the other zone
    assert standby_holders(clients, TASK_0_0) == {PID_3}
    plain = clients_map(
        tagged(1, 1, "z1", None, TASK_0_0),
        tagged(2, 1, "z1", None),
        tagged(3, 5, "z2", None, TASK_1_0, TASK_1_1),
    )
    assign_standby_replicas(plain, [TASK_0_0], configs(1))
    assert standby_holders(plain, TASK_0_0) == {PID_2}


def test_factory_without_tags_or_racks_is_default():
    assert isinstance(create_standby_task_assignor(configs(1)), DefaultStandbyTaskAssignor)


def _least_loaded_reference(
    clients: Mapping[ProcessId, ClientState], tasks: list[TaskId], replicas: int
) -> None:
    """Each replica to the client with the least load, then the smaller ProcessId, among those not holding
    the task, loads read anew for every replica (assignors.md §5.2)."""
    for task in tasks:
        for _ in range(replicas):
            free = [pid for pid, state in clients.items() if not state.has_assigned_task(task)]
            if not free:
                break
            chosen = min(free, key=lambda pid: (clients[pid].assigned_task_load, pid))
            clients[chosen].assign_standby(task)


@pytest.mark.parametrize("seed", range(60))
def test_default_on_two_clients_is_the_least_loaded_rule(seed):
    """Two clients have their own path: a task one of them holds goes to the other, loads read only for a
    task neither holds. Random capacities, actives (some tasks on neither, some standbys already held by
    both) and replica counts against the rule itself."""
    rng = random.Random(seed)
    tasks = [TaskId(s, p) for s in range(3) for p in range(rng.randint(1, 6))]

    def two_clients() -> dict[ProcessId, ClientState]:
        draw = random.Random(seed)
        owners = {t: draw.choice((1, 2, None)) for t in tasks}
        both = {t for t in tasks if owners[t] is None and draw.random() < 0.3}
        return clients_map(
            *(
                client_state(
                    n,
                    draw.randint(1, 3),
                    active=[t for t in tasks if owners[t] == n],
                    standby=sorted(both),
                )
                for n in (draw.choice((1, 7)), draw.choice((2, 3)))
            )
        )

    replicas = rng.randint(1, 3)
    ours, expected = two_clients(), two_clients()
    DefaultStandbyTaskAssignor().assign(ours, frozenset(tasks), configs(replicas))
    _least_loaded_reference(expected, sorted(tasks), replicas)
    assert {p: sorted(c.standby_tasks) for p, c in ours.items()} == {
        p: sorted(c.standby_tasks) for p, c in expected.items()
    }
