"""The result metrics (scenario.md "Metrics"), hand-computed on tiny scenarios."""

from __future__ import annotations

import random

import pytest

from fleet_assignor.assignor import ProcessId, TaskId
from fleet_assignor.assignor.metrics import ClientTasks, compute_metrics
from fleet_assignor.assignor.scenario import MAX_LONG, load_scenario

A, B, C = (f"00000000-0000-0000-0000-00000000000{n}" for n in (1, 2, 3))


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def _task(task_id: str, source_racks, changelog_racks=None) -> dict:
    partitions = [{"topic": "in", "partition": int(task_id[-1]), "source": True, "racks": source_racks}]
    if changelog_racks is not None:
        partitions.append(
            {"topic": "cl", "partition": int(task_id[-1]), "changelog": True, "racks": changelog_racks}
        )
    return {"id": task_id, "stores": ["s"] if changelog_racks is not None else [], "partitions": partitions}


def scenario_dict() -> dict:
    return {
        "configs": {"acceptable_recovery_lag": 10},
        "tasks": [
            _task("0_0", ["r1"], ["r2"]),
            _task("0_1", ["r2"], ["r1", "r2"]),
            _task("0_2", ["r1"], ["r1"]),
            _task("1_0", ["r1"]),
        ],
        "clients": [
            {
                "process_id": A,
                "consumers": ["a1", "a2"],
                "prev_active": ["0_0"],
                "prev_standby": ["0_1"],
                "lags": {"0_0": -2, "0_1": 50, "0_2": 1000},
                "rack": "r1",
            },
            {
                "process_id": B,
                "threads": 1,
                "prev_active": ["0_1", "1_0"],
                "lags": {"0_1": -2, "0_2": -3},
                "rack": "r2",
            },
            {
                "process_id": C,
                "threads": 1,
                "prev_standby": ["0_2"],
                "lags": {"0_0": 500, "0_2": 200},
                "rack": "r1",
            },
        ],
    }


def tasks(active=(), standby=(), warmup=()) -> ClientTasks:
    warm = {t(x) for x in warmup}
    return ClientTasks(
        frozenset(t(x) for x in active), frozenset(t(x) for x in standby) | warm, frozenset(warm)
    )


def the_result() -> dict[ProcessId, ClientTasks]:
    return {
        ProcessId.parse(A): tasks(active=["0_0"], standby=["0_1"]),
        ProcessId.parse(B): tasks(active=["0_2", "1_0"], warmup=["0_0"]),
        ProcessId.parse(C): tasks(active=["0_1"], standby=["0_0", "0_2"]),
    }


def test_metrics_of_a_hand_computed_result():
    scenario = load_scenario(scenario_dict())
    metrics = compute_metrics(scenario, the_result())
    assert metrics.as_dict() == {
        # 0_1 left B for C; 0_0 stayed on A, 1_0 on B
        "active_moves": 1,
        # C's standby 0_0 is new there; A kept 0_1 and C kept 0_2 as standbys; B's 0_0 is a warmup
        "standby_moves": 1,
        "warmups": 1,
        # B's actives 0_2 and 1_0 read r1 sources from r2; C's active 0_1 reads an r2 source and its
        # standby 0_0 an r2 changelog from r1; everything else is local
        "cross_rack_cost": 4,
        # B's 0_2 has an unknown offset (-3): the whole changelog (1000, the largest lag reported);
        # C's 0_1: its lag is 0_1's end sum (50) > 10; A's 0_0 runs there (-2)
        "restore_lag": 1050,
        "max_tasks_per_thread": 2.0,  # B: 2 actives, 1 thread
        "min_tasks_per_thread": 0.5,  # A: 1 active, 2 threads
        "num_clients": 3,
        "num_threads": 4,
        "num_tasks": 4,
        "num_stateful_tasks": 3,
    }
    assert list(metrics.as_dict()) == [
        "active_moves", "standby_moves", "warmups", "cross_rack_cost", "restore_lag", "max_tasks_per_thread",
        "min_tasks_per_thread", "num_clients", "num_threads", "num_tasks", "num_stateful_tasks",
    ]  # fmt: skip


def test_a_caught_up_client_within_the_acceptable_lag_adds_no_restore_lag():
    obj = scenario_dict()
    obj["configs"]["acceptable_recovery_lag"] = 50
    metrics = compute_metrics(load_scenario(obj), the_result())
    assert metrics.restore_lag == 1000  # C's 50 is now acceptable


def test_a_previous_active_left_unassigned_is_a_move_and_clients_missing_from_the_result_hold_nothing():
    scenario = load_scenario(scenario_dict())
    metrics = compute_metrics(scenario, {ProcessId.parse(A): tasks(active=["0_0", "0_1"])})
    assert metrics.active_moves == 2  # 0_1 moved to A, 1_0 runs nowhere
    assert metrics.min_tasks_per_thread == 0.0
    assert metrics.max_tasks_per_thread == 1.0


def test_a_task_previously_active_on_two_clients_stays_if_one_of_them_keeps_it():
    obj = scenario_dict()
    obj["clients"][2]["prev_active"] = ["0_0"]
    scenario = load_scenario(obj)
    assert (
        compute_metrics(scenario, {ProcessId.parse(C): tasks(active=["0_0"])}).active_moves == 2
    )  # 0_1, 1_0
    moved = compute_metrics(scenario, {ProcessId.parse(B): tasks(active=["0_0", "0_1", "1_0"])})
    assert moved.active_moves == 1


def test_a_task_active_on_its_previous_owner_and_on_another_client_too_is_a_move():
    scenario = load_scenario(scenario_dict())
    result = {
        ProcessId.parse(A): tasks(active=["0_0"]),
        ProcessId.parse(B): tasks(active=["0_0", "0_1", "1_0"]),  # an invalid result: 0_0 twice
    }
    assert compute_metrics(scenario, result).active_moves == 1  # 0_0 also runs where it did not
    del result[ProcessId.parse(B)]
    assert compute_metrics(scenario, result).active_moves == 2  # 0_1 and 1_0 run nowhere


def test_a_standby_on_a_client_that_ran_the_task_is_not_a_move():
    scenario = load_scenario(scenario_dict())
    metrics = compute_metrics(scenario, {ProcessId.parse(B): tasks(standby=["0_1"])})
    assert metrics.standby_moves == 0


def test_cross_rack_cost_is_null_when_a_client_has_no_rack():
    obj = scenario_dict()
    obj["clients"][2]["rack"] = None
    assert compute_metrics(load_scenario(obj), the_result()).cross_rack_cost is None


def test_cross_rack_cost_is_null_when_a_counted_partition_has_no_racks():
    obj = scenario_dict()
    obj["tasks"][3]["partitions"][0]["racks"] = []  # 1_0's source, counted: B runs it
    assert compute_metrics(load_scenario(obj), the_result()).cross_rack_cost is None


def test_partitions_that_are_not_counted_may_lack_racks():
    obj = scenario_dict()
    obj["tasks"][2]["partitions"][0]["racks"] = []  # 0_2's source: counted only for an active
    result = the_result()
    result[ProcessId.parse(B)] = tasks(active=["1_0"], warmup=["0_0"])
    result[ProcessId.parse(A)] = tasks(active=["0_0"], standby=["0_1", "0_2"])  # 0_2 only as a standby
    metrics = compute_metrics(load_scenario(obj), result)
    # B: 1_0 source (r1 from r2) = 1; C: 0_1 source = 1, 0_0 changelog = 1; A's 0_2 changelog is on r1
    assert metrics.cross_rack_cost == 3


def test_restore_lag_saturates():
    obj = {
        "tasks": [_task("0_0", ["r"], ["r"]), _task("0_1", ["r"], ["r"])],
        "clients": [
            {"process_id": A, "threads": 1, "lags": {"0_0": MAX_LONG, "0_1": MAX_LONG}},
            {"process_id": B, "threads": 1, "lags": {}},
        ],
    }
    scenario = load_scenario(obj)
    result = {ProcessId.parse(A): tasks(active=["0_0"]), ProcessId.parse(B): tasks(active=["0_1"])}
    assert compute_metrics(scenario, result).restore_lag == MAX_LONG


def test_lags_not_computed_count_the_end_offset_sum():
    obj = scenario_dict()
    obj["lags_computed"] = False
    metrics = compute_metrics(load_scenario(obj), the_result())
    # every lag is unknown except the running actives: B's 0_2 -> 1000, C's 0_1 -> 50
    assert metrics.restore_lag == 1050


@pytest.mark.parametrize("seed", range(8))
def test_standby_moves_count_the_standbys_new_to_their_client(seed):
    """Standby moves as defined (standbys less warmups less what the client held before), on the plans of
    generated scenarios' second rounds, where clients held tasks before and warmups occur."""
    from fleet_assignor.assignor.planner import plan, plan_scenario
    from tests.scenario_generator import generate_scenario, next_round

    first = generate_scenario(seed)
    for assignor in ("high_availability", "streams_sticky"):
        scenario = load_scenario(
            next_round(first, plan_scenario(first, assignor=assignor, now_ms=0)), now_ms=0
        )
        result = plan(scenario, assignor=assignor)
        clients = scenario.application_state.clients
        expected = 0
        for row in result.clients:
            client = clients.get(row.process_id)
            before = client.previous_active_tasks | client.previous_standby_tasks if client else frozenset()
            expected += len(row.tasks.standby - row.tasks.warmup - before)
        assert result.metrics.standby_moves == expected


@pytest.mark.parametrize("seed", range(20))
def test_restore_lag_is_the_sum_of_the_lags_of_actives_not_caught_up(seed):
    # scenario.md "Metrics": a running active (-2), a task without a changelog and a lag within the
    # acceptable one add nothing; an unknown lag (-3) adds the task's whole changelog (the largest lag
    # reported for it). Random lags at and around those bounds, clients whose actives are all caught up
    # and clients with one that is not.
    rng = random.Random(seed)
    acceptable = rng.choice([0, 10, 10_000])
    ids = [f"{sub}_{p}" for sub in range(3) for p in range(rng.randint(1, 8))]
    stateful = {i for i in ids if i[0] != "2"}  # subtopology 2 has no store: no lags
    values = [-3, -2, 0, 1, acceptable, acceptable + 1, 5 * acceptable + 7]
    clients = []
    for n in range(rng.randint(1, 4)):
        caught_up = rng.random() < 0.4
        lags = {i: rng.choice([-2, 0, acceptable] if caught_up else values) for i in sorted(stateful)}
        clients.append({"process_id": f"00000000-0000-0000-0000-{n:012d}", "threads": 1, "lags": lags})
    scenario = load_scenario({
        "configs": {"acceptable_recovery_lag": acceptable},
        "tasks": [_task(i, ["r"], ["r"] if i in stateful else None) for i in ids],
        "clients": clients,
    })  # fmt: skip
    shuffled = rng.sample(ids, len(ids))
    result = {
        ProcessId.parse(c["process_id"]): tasks(active=shuffled[n :: len(clients)])
        for n, c in enumerate(clients)
    }
    largest = {i: max([0, *(c["lags"][i] for c in clients)]) for i in stateful}
    expected = 0
    for n, client in enumerate(clients):
        for task in shuffled[n :: len(clients)]:
            lag = client["lags"].get(task, -2)
            if lag == -3:
                expected += largest[task]
            elif lag > acceptable:
                expected += lag
    assert compute_metrics(scenario, result).restore_lag == expected
