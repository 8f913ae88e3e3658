"""`streams_sticky`: Kafka 4.4.0's broker-side StickyTaskAssignor (KIP-1071) and its mapping from scenarios.

Kafka's own answers on the example scenarios (`kafka/example-NNN.streams_sticky.json`, from the oracle) must
be reproduced exactly, per member; the random differential run is in test_differential_kafka.py. The other
tests pin the behaviour one rule at a time on small hand-made groups.
"""

from __future__ import annotations

import json
import random

import pytest

from fleet_assignor.assignor import AssignmentConfigs, streams_sticky
from fleet_assignor.assignor.java_order import JavaHashOrder, JavaPriorityQueue, hash_map_put_order
from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.streams_sticky import (
    StreamsStickyTaskAssignor,
    assign_broker_group,
    broker_group,
    offset_sum_for,
)
from tests.conftest import SCENARIOS_DIR
from tests.fixtures import TASK_0_0, app_state, stateful_task, streams_state
from tests.scenario_generator import Knobs, generate_scenario, next_round, scale_scenario

EXAMPLES = sorted(p.name.split(".")[0] for p in (SCENARIOS_DIR / "kafka").glob("*.streams_sticky.json"))


def pid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def task(text: str, stateful: bool = True) -> dict:
    sub, partition = text.split("_")
    partitions = [{"topic": f"in-{sub}", "partition": int(partition), "source": True}]
    if stateful:
        partitions.append({"topic": f"app-s{sub}-changelog", "partition": int(partition), "changelog": True})
    return {"id": text, "stores": [f"s{sub}"] if stateful else [], "partitions": partitions}


def scenario(tasks: list[dict], clients: list[dict], standbys: int = 0) -> dict:
    return {"configs": {"num_standby_replicas": standbys}, "tasks": tasks, "clients": clients}


def plan(s: dict) -> dict:
    return plan_scenario(s, assignor="streams_sticky", now_ms=0)


def consumers_of(result: dict) -> dict[str, dict[str, list[str]]]:
    return {c: tasks for client in result["assignment"] for c, tasks in client["consumers"].items()}


def actives(result: dict) -> dict[str, list[str]]:
    return {c: tasks["active"] for c, tasks in consumers_of(result).items()}


# --- Kafka's answers on the examples ------------------------------------------------------------------------


def test_every_example_has_kafkas_answer():
    assert sorted(p.stem for p in SCENARIOS_DIR.glob("example-*.json")) == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_match_kafka_exactly_per_member(name):
    kafka = json.loads((SCENARIOS_DIR / "kafka" / f"{name}.streams_sticky.json").read_text())
    ours = plan(json.loads((SCENARIOS_DIR / f"{name}.json").read_text()))
    assert (ours["status"], ours["error"], ours["probing_rebalance"]) == (
        "OK",
        kafka["validation_error"],
        False,
    )
    expected = {c["process_id"]: (c["active"], c["standby"], c["consumers"]) for c in kafka["assignment"]}
    got = {c["process_id"]: (c["active"], c["standby"], c["consumers"]) for c in ours["assignment"]}
    assert got == expected


# --- the rules, one at a time -------------------------------------------------------------------------------


def test_a_fresh_group_gets_the_same_number_of_actives_on_every_member():
    tasks = [task(f"{s}_{p}", stateful=False) for s in range(3) for p in range(4)]
    clients = [{"process_id": pid(n), "threads": n} for n in (1, 2, 3)]
    result = plan(scenario(tasks, clients))
    assert sorted(len(a) for a in actives(result).values()) == [2] * 6
    assert sorted(t for a in actives(result).values() for t in a) == sorted(t["id"] for t in tasks)


def test_previous_actives_stay_on_the_member_that_ran_them():
    history = {
        "a-1": ["0_0", "1_1"],
        "a-2": ["0_1", "1_0"],
        "b-1": ["0_2", "1_3"],
        "b-2": ["0_3", "1_2"],
    }
    clients = [
        {"process_id": pid(1), "consumers": [{"id": c, "prev_active": history[c]} for c in ("a-1", "a-2")]},
        {"process_id": pid(2), "consumers": [{"id": c, "prev_active": history[c]} for c in ("b-1", "b-2")]},
    ]
    tasks = [task(f"{s}_{p}") for s in range(2) for p in range(4)]
    assert actives(plan(scenario(tasks, clients))) == {c: sorted(t) for c, t in history.items()}


def test_an_owner_over_its_quota_keeps_its_lowest_partitions_first():
    # The owner may keep 2 of its 4 tasks; previous owners are visited in (partition, subtopology) order, so
    # it keeps partition 0 of both subtopologies (a plain TaskId order would keep 0_0 and 0_1).
    clients = [
        {"process_id": pid(1), "consumers": [{"id": "old", "prev_active": ["0_0", "0_1", "1_0", "1_1"]}]},
        {"process_id": pid(2), "consumers": ["new"]},
    ]
    tasks = [task(t) for t in ("0_0", "0_1", "1_0", "1_1")]
    assert actives(plan(scenario(tasks, clients))) == {"old": ["0_0", "1_0"], "new": ["0_1", "1_1"]}


def test_a_task_whose_owner_left_goes_to_its_previous_standby_holder():
    clients = [
        {"process_id": pid(1), "consumers": [{"id": "b", "prev_standby": ["0_0"]}]},
        {"process_id": pid(2), "consumers": [{"id": "c", "prev_active": ["0_2"], "prev_standby": ["0_1"]}]},
    ]
    tasks = [task(f"0_{p}") for p in range(4)]
    # 0_2 stays; 0_0 and 0_1 go to their standby holders; 0_3 has no holder and goes to the lighter process.
    assert actives(plan(scenario(tasks, clients))) == {"b": ["0_0", "0_3"], "c": ["0_1", "0_2"]}


def test_among_standby_holders_the_most_caught_up_takes_the_task():
    def client(n: int, consumer: str, lag: int) -> dict:
        return {
            "process_id": pid(n),
            "consumers": [{"id": consumer, "prev_standby": ["0_0"]}],
            "lags": {"0_0": lag},
        }

    for behind, ahead in ((("b", 1), ("c", 2)), (("c", 2), ("b", 1))):
        clients = [client(behind[1], behind[0], 500), client(ahead[1], ahead[0], 10)]
        assert actives(plan(scenario([task("0_0")], clients)))[ahead[0]] == ["0_0"]


def test_subtopology_ids_are_ordered_as_text():
    # With no history, tasks go out in (subtopology id, partition) order as text: "10" before "2". The
    # members' queue starts in the order of the process's member map, so its first member takes 10_0.
    client = {"process_id": pid(1), "consumers": ["m-1", "m-2"]}
    result = plan(scenario([task("2_0", stateful=False), task("10_0", stateful=False)], [client]))
    members = JavaHashOrder()
    for member in ("m-1", "m-2"):
        members.put(member)
    first, second = members.keys()
    assert actives(result) == {first: ["10_0"], second: ["2_0"]}


@pytest.mark.parametrize("seed", range(40))
def test_standbys_go_to_other_processes_up_to_the_replica_count(seed):
    generated = generate_scenario(seed, Knobs(num_standby_replicas=(1, 3)))
    result = plan(generated)
    assert result["status"] == "OK", result["error_detail"]
    processes = len(generated["clients"])
    wanted = min(generated["configs"]["num_standby_replicas"], processes - 1)
    holders: dict[str, list[str]] = {}
    for client in result["assignment"]:
        for t in client["active"] + client["standby"]:
            holders.setdefault(t, []).append(client["process_id"])
    changelogged = {t["id"] for t in generated["tasks"] if any(p.get("changelog") for p in t["partitions"])}
    for t, owners in holders.items():
        assert len(owners) == len(set(owners)), t
        assert len(owners) == (1 + wanted if t in changelogged else 1), t


def test_racks_client_tags_and_warmup_settings_play_no_part():
    base = json.loads((SCENARIOS_DIR / "example-006.json").read_text())
    changed = json.loads(json.dumps(base))
    changed["configs"].update(
        {
            "max_warmup_replicas": 7,
            "acceptable_recovery_lag": 0,
            "rack_aware_assignment_strategy": "min_traffic",
        }
    )
    for client in changed["clients"]:
        client["rack"] = "elsewhere"
    assert plan(changed)["assignment"] == plan(base)["assignment"]


def test_the_broker_never_asks_for_a_follow_up_rebalance():
    result = plan(json.loads((SCENARIOS_DIR / "example-001.json").read_text()))
    assert result["probing_rebalance"] is False
    assert all(c["followup_rebalance_deadline_ms"] is None for c in result["assignment"])


def test_result_consumers_are_the_brokers_members():
    loaded = load_scenario(json.loads((SCENARIOS_DIR / "example-003.json").read_text()))
    per_member = assign_broker_group(broker_group(loaded.application_state))
    result = plan(json.loads((SCENARIOS_DIR / "example-003.json").read_text()))
    reported = {c: (sorted(t["active"]), sorted(t["standby"])) for c, t in consumers_of(result).items()}
    expected = {
        m: (sorted(f"{s}_{p}" for s, p in a), sorted(f"{s}_{p}" for s, p in b))
        for m, (a, b) in per_member.items()
    }
    assert reported == expected


# --- the mapping onto the broker's input --------------------------------------------------------------------


def test_a_client_without_consumer_history_gives_its_tasks_to_its_first_consumer():
    clients = [{"process_id": pid(1), "threads": 3, "prev_active": ["0_0"], "prev_standby": ["0_1"]}]
    loaded = load_scenario(scenario([task("0_0"), task("0_1")], clients, standbys=1))
    members = {m.member_id: m for m in broker_group(loaded.application_state).members}
    first = f"{pid(1)}-1"
    assert (members[first].prev_active, members[first].prev_standby) == ({("0", 0)}, {("0", 1)})
    assert all(not m.prev_active and not m.prev_standby for k, m in members.items() if k != first)


def test_members_report_offset_sums_ranked_like_their_lags():
    assert [offset_sum_for(lag, 100) for lag in (-2, -3, 0, 40, 100)] == [-2, -3, 100, 60, 0]
    clients = [
        {"process_id": pid(1), "consumers": [{"id": "a", "prev_active": ["0_0"], "prev_standby": ["0_1"]}],
         "lags": {"0_1": 30}},
        {"process_id": pid(2), "consumers": ["b"], "lags": {"0_0": 80}},
    ]  # fmt: skip
    loaded = load_scenario(scenario([task("0_0"), task("0_1")], clients))
    members = {m.member_id: m for m in broker_group(loaded.application_state).members}
    # a runs 0_0 (-2) and is 30 behind on 0_1, whose changelog is 30 long (the largest lag): offset 0.
    assert dict(members["a"].task_offsets) == {("0", 0): -2, ("0", 1): 0}
    assert dict(members["b"].task_offsets) == {}  # no history: no local state


def test_members_keep_the_process_id_as_kafka_writes_it():
    clients = [{"process_id": "{AAAAAAAA-0000-4000-8000-000000000001}", "threads": 1}]
    loaded = load_scenario(scenario([task("0_0")], clients))
    (member,) = broker_group(loaded.application_state).members
    assert member.process_id == "aaaaaaaa-0000-4000-8000-000000000001"


def test_named_topologies_are_refused_as_an_assignor_failure():
    named = scenario([task("0_0") | {"id": "orders__0_0"}], [{"process_id": pid(1), "threads": 1}])
    result = plan(named)
    assert result["status"] == "ASSIGNOR_FAILED"
    assert "no named topologies" in result["error_detail"]


def test_consumer_ids_shared_by_two_clients_are_refused():
    state = app_state(
        [stateful_task(TASK_0_0)],
        [streams_state(1), streams_state(2)],
        AssignmentConfigs(num_standby_replicas=0),
    )
    with pytest.raises(ValueError, match="consumer ids must be unique"):
        StreamsStickyTaskAssignor().assign(state)


def test_explore_compares_it_with_high_availability_on_the_brokers_members():
    from fleet_assignor import explore

    example = json.loads((SCENARIOS_DIR / "example-004.json").read_text())
    _, sticky_plan, comparison = explore.compare_assignors(
        [example], "high_availability", "streams_sticky", now_ms=0
    )
    rows = sticky_plan.frames.assignments
    placed = {(r.consumer_client_id, r.task_id, r.task_type) for r in rows.itertuples()}
    expected = {
        (consumer, t, kind.upper())
        for consumer, tasks in consumers_of(plan(example)).items()
        for kind in ("active", "standby")
        for t in tasks[kind]
    }
    assert placed == expected
    assert comparison["active_moves_b"].iloc[0] < comparison["active_moves_a"].iloc[0]


@pytest.mark.parametrize("seed", range(12))
def test_the_load_floor_only_saves_time(monkeypatch, seed):
    """Ending the previous-holder search at a least-loaded process gives the answer of the full search."""
    import fleet_assignor.assignor.streams_sticky as streams_sticky

    first = scale_scenario(60 + seed * 10, 6 + seed, standbys=1 + seed % 5)
    second = next_round(first, plan(first))
    answers = []
    for threshold in (0, 10**9):  # the floor always kept, never kept
        monkeypatch.setattr(streams_sticky, "_FLOOR_MIN_HOLDERS", threshold)
        answers.append(plan(second)["assignment"])
    assert answers[0] == answers[1]


def test_the_fleet_jobs_rows_carry_the_brokers_members():
    """The job's per-application call (the grouped map's Python half) writes one `assignments` row per
    task and member, as the broker assigns them."""
    from fleet_assignor.jobs.plan_rows import PlanSettings, plan_application
    from fleet_assignor.jobs.scenario_shape import shape_application
    from fleet_assignor.schemas.contract import ROW_ASSIGNMENT, ROW_RESULT

    compact = (SCENARIOS_DIR / "example-002.json").read_text()
    rows = plan_application("example-002", compact, PlanSettings(now_ms=0, assignor="streams_sticky"))
    (result,) = [r for r in rows if r["kind"] == ROW_RESULT]
    assert (result["assignor"], result["status"]) == ("streams_sticky", "OK")
    placed = {
        (r["consumer_client_id"], r["task_id"], r["task_type"]) for r in rows if r["kind"] == ROW_ASSIGNMENT
    }
    expected = {
        (consumer, t, kind.upper())
        for consumer, tasks in consumers_of(plan(shape_application("example-002", compact).scenario)).items()
        for kind in ("active", "standby")
        for t in tasks[kind]
    }
    assert placed == expected


def test_quotas_round_up_in_javas_int_arithmetic():
    from fleet_assignor.assignor.streams_sticky import _tasks_per_member

    # ceil for positive counts; Java's truncating division below zero (the running totals never get there
    # on valid input, but the arithmetic must be Java's if they do); no members, no quota.
    assert [_tasks_per_member(t, m) for t, m in ((7, 2), (6, 2), (0, 3), (-7, 2), (5, 0))] == [4, 3, 0, -3, 0]


def _broker_answers(seed):
    """The broker assignor's answers to generated scenarios (the default draw, and clients of 16-40 threads,
    whose ids by role are read from the members' sets) and to their next rounds (inputs the broker refuses,
    named topologies or shared consumer ids, give none)."""
    from fleet_assignor.assignor.streams_sticky import StreamsStickyTaskAssignor

    firsts = [generate_scenario(seed), generate_scenario(seed, Knobs(threads=(16, 40), clients=(1, 4)))]
    for scenario_dict in [s for first in firsts for s in (first, next_round(first, plan(first)))]:
        state = load_scenario(scenario_dict, now_ms=0).application_state
        try:
            answer = StreamsStickyTaskAssignor().assign(state)
        except ValueError:
            continue
        yield answer


@pytest.mark.parametrize("seed", range(6))
def test_the_clients_sets_given_to_the_planner_are_their_tasks(seed):
    """Each client's task ids by role, built from the broker's processes for the planner, are the ones its
    task dict gives; a task changed afterwards drops them."""
    from fleet_assignor.assignor import AssignedTask
    from fleet_assignor.assignor.assignment import AssignedTaskType

    def from_task_dict(assignment) -> tuple:
        tasks = assignment.tasks().values()
        return (
            frozenset(a.id for a in tasks if a.type is AssignedTaskType.ACTIVE),
            frozenset(a.id for a in tasks if a.type is AssignedTaskType.STANDBY),
            frozenset(a.id for a in tasks if a.is_warmup),
        )

    for answer in _broker_answers(seed):
        for assignment in answer:
            assert assignment.task_ids_by_role() == from_task_dict(assignment)
        changed = next(iter(answer))
        changed.assign_task(AssignedTask.active(TASK_0_0))
        assert changed.task_ids_by_role() == from_task_dict(changed)


@pytest.mark.parametrize("seed", range(6))
def test_the_task_dict_built_on_first_use_lists_the_split(seed):
    """A client's task dict, built when first read, holds each consumer's actives then its standbys, consumer
    by consumer, in the roles the split gives them; changing it changes what the assignment holds."""
    from fleet_assignor.assignor import AssignedTask

    for answer in _broker_answers(seed):
        for assignment in answer:
            expected = [
                (task, AssignedTask.active(task) if role == "active" else AssignedTask.standby(task))
                for share in assignment.consumer_tasks().values()
                for role, tasks in (("active", share.active), ("standby", share.standby))
                for task in tasks
            ]
            assert list(assignment.tasks().items()) == expected
            assert [t.type for _, t in expected] == [assignment.tasks()[t].type for t, _ in expected]
        changed = next(iter(answer))
        held = len(changed.tasks())
        changed.remove_task(TASK_0_0)
        changed.assign_task(AssignedTask.standby(TASK_0_0))
        assert changed.role_of(TASK_0_0) is AssignedTask.standby(TASK_0_0).type
        assert len(changed.tasks()) in (held, held + 1)


@pytest.mark.parametrize("seed", range(40))
def test_member_levels_give_the_queue_answer(seed, monkeypatch):
    # A process whose members all have one task count reads the next member from the cached level, and
    # one whose counts are two neighbouring ones from a two-level queue, instead of sifting Kafka's queue
    # offered member by member: the same answers as that queue itself, first round and second.
    first = generate_scenario(seed, Knobs(threads=(1, 40), num_standby_replicas=(0, 3)))
    scenarios = [first, next_round(first, plan(first))]

    def answers() -> list[dict]:
        return [{**plan(scenario), "elapsed_ms": None} for scenario in scenarios]

    by_levels = answers()

    def queue_only(process):
        queue = streams_sticky.JavaPriorityQueue(key=process.member_counts.__getitem__)
        for member in streams_sticky.hash_map_put_order(list(process.member_counts)):
            queue.offer(member)
        return queue

    monkeypatch.setattr(streams_sticky._Process, "_members_queue", queue_only)
    assert answers() == by_levels


@pytest.mark.parametrize("seed", range(60))
def test_a_process_gives_least_loaded_tasks_to_its_queues_head(seed):
    # Tasks given by member id (sticky ones) and to the least-loaded member, interleaved, at counts one
    # level apart, two, or spread: each least-loaded task goes to the head of Kafka's queue of the members
    # by count, offered member by member in its HashMap's order and made again after a task given by id,
    # whichever shortcut (a level, two levels, the two-key offers) the process takes.
    rng = random.Random(seed)
    members = [f"consumer-{seed}-{n}" for n in range(rng.choice([2, 3, 5, 16, 40, 200]))]
    process = streams_sticky._Process("process", members)
    counts = dict.fromkeys(members, 0)
    queue: JavaPriorityQueue[str] | None = None
    spread = rng.choice([1, 1, 2, 3])  # tasks given by id: at most this many above the lowest count
    if seed % 3 == 0:  # counts two apart, none between
        for member in rng.sample(members, rng.randint(1, len(members) - 1)):
            for number in range(2):
                process.add_task(member, (member, number), active=False)
                counts[member] += 1
    for number in range(rng.randint(1, 6 * len(members))):
        task = ("0", number)
        if rng.random() < 0.2:
            low = min(counts.values())
            member = rng.choice([m for m in members if counts[m] < low + spread])
            process.add_task(member, task, active=True)
            counts[member] += 1
            queue = None
            continue
        if queue is None:
            queue = JavaPriorityQueue(key=counts.__getitem__)
            for queued in hash_map_put_order(members):
                queue.offer(queued)
        head = queue.poll()
        assert process.add_task_to_least_loaded_member(task, active=True) == counts[head] + 1
        assert task in process.active_by_member[head]
        counts[head] += 1
        queue.offer(head)
    assert process.member_counts == counts


@pytest.mark.parametrize("seed", range(80))
def test_process_levels_give_the_queue_answer(seed, monkeypatch):
    # Processes all at one load and capacity take the least-loaded tasks and replicas in the cached
    # level's order instead of through Kafka's queue (standbys until a process holds its replica's task):
    # the same answers as the queue itself, first round and second.
    if seed % 2:  # no history: levels from the start, standbys of many tasks reaching their holders
        rng = random.Random(seed)
        clients = rng.randint(2, 60)  # the actives leave all at one load when the tasks divide evenly
        first = scale_scenario(clients * rng.randint(1, 6), clients, standbys=rng.randint(1, 8))
    else:
        first = generate_scenario(seed, Knobs(clients=(2, 40), threads=(1, 3), num_standby_replicas=(0, 4)))
    _assert_same_answers_without(monkeypatch, first, "_is_level")


def _assert_same_answers_without(monkeypatch, first: dict, shortcut: str) -> None:
    """The plans of `first` and of its next round are the same when `streams_sticky.<shortcut>` (a test
    of whether a queue may take a shortcut) always says no: Kafka's queue itself then answers."""
    scenarios = [first, next_round(first, plan(first))]

    def answers() -> list[dict]:
        return [{**plan(scenario), "elapsed_ms": None} for scenario in scenarios]

    with_shortcut = answers()
    monkeypatch.setattr(streams_sticky, shortcut, lambda queue: False)
    assert answers() == with_shortcut


def _two_level_scenario(seed: int) -> dict:
    """Scenarios whose least-loaded replicas go through the two-level queue: many replicas of few tasks
    (holders met often, levels moving on between holders, every process holding a task), members of one
    thread count or several, with and without history."""
    rng = random.Random(seed)
    if seed % 2:
        clients = rng.randint(3, 40)
        standbys = rng.randint(1, clients)  # up to more replicas than processes without the task
        threads = rng.choice([1, 1, 2, 3])
        return scale_scenario(clients * rng.randint(1, 5), clients, threads=threads, standbys=standbys)
    return generate_scenario(seed, Knobs(clients=(3, 40), threads=(1, 3), num_standby_replicas=(1, 8)))


@pytest.mark.parametrize("seed", range(80))
def test_two_level_standbys_give_the_queue_answer(seed, monkeypatch):
    # The least-loaded replicas placed through `TwoLevelQueue` (processes of one capacity within one task
    # of each other) equal those placed through Kafka's queue itself, first round and second.
    _assert_same_answers_without(monkeypatch, _two_level_scenario(seed), "_in_two_levels")
