"""`streams_sticky_in_bulk`: the sticky steps member by member must leave exactly what Kafka's task-by-task
steps leave (those are checked against Kafka itself in test_differential_kafka.py), and must refuse where the
order Kafka visits the tasks in could change the outcome."""

from __future__ import annotations

import random

import pytest

from fleet_assignor.assignor import streams_sticky
from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.streams_sticky import _Quotas
from fleet_assignor.assignor.streams_sticky_in_bulk import (
    _quotas_after,
    keep_previous_actives,
    place_sticky_standbys,
)
from tests.scenario_generator import Knobs, generate_scenario, next_round, scale_scenario

# --- the quota rule: `_quotas_after` answers only where Kafka's order gives its answer --------------------


def _in_order(quotas: _Quotas, start: list[int], order: list[int], active: bool):
    """Kafka's rule task by task: members take tasks in `order` (member indexes), each only while under the
    quota of its kind; returns the counts reached and the quotas left."""
    counts = list(start)
    for member in order:
        if counts[member] + 1 > (quotas.active_per_member if active else quotas.all_per_member):
            continue
        counts[member] += 1
        if active:
            quotas.count_active(counts[member])
        else:
            quotas.after_any(counts[member])
    return tuple(counts), (
        quotas.active_tasks,
        quotas.all_tasks,
        quotas.members_for_active,
        quotas.members_for_all,
    )


def _orders(places: list[list[int]], active: bool, rng: random.Random) -> list[list[int]]:
    """The orders Kafka's step could take: actives by ascending place (one member per task), standbys by
    descending place, members sharing a place (replicas of one task) in any order among themselves."""
    placements = [(place if active else -place, member) for member, own in enumerate(places) for place in own]
    orders = []
    for _ in range(6):
        rng.shuffle(placements)
        orders.append([member for _, member in sorted(placements, key=lambda p: p[0])])
    return orders


def _quota_case(rng: random.Random, active: bool):
    members = rng.randint(1, 5)
    takes = [rng.randint(0, 7) for _ in range(members)]
    # Standbys come after the actives: members start with some tasks, counted in the totals.
    start = [0] * members if active else [rng.randint(0, 3) for _ in range(members)]
    # Each member's tasks' places in the step's order; standby holders may share a task (a place).
    spread = sum(takes) if active else max(takes, default=0) + rng.randint(0, 8)
    pool = list(range(max(spread, 1) * 3))
    rng.shuffle(pool)
    if active:
        places = [sorted(pool[sum(takes[:i]) : sum(takes[: i + 1])]) for i in range(members)]
    else:
        places = [sorted(rng.sample(pool[: max(spread, 1)], min(t, max(spread, 1)))) for t in takes]
        takes = [len(own) for own in places]
    active_tasks = sum(takes) + rng.randint(0, 6) if active else sum(start) + rng.randint(0, 6)
    quotas = _Quotas(
        active_tasks=active_tasks,
        all_tasks=active_tasks + rng.randint(0, 12) + (0 if active else sum(takes)),
        members_for_active=members + rng.randint(0, 2),
        members_for_all=members + rng.randint(0, 2),
    )
    return quotas, start, takes, places


@pytest.mark.parametrize("active", [True, False])
def test_quotas_after_is_given_only_where_kafkas_order_gives_that_outcome(active):
    rng = random.Random(924)
    given = refused = 0
    for _ in range(4000):
        quotas, start, takes, places = _quota_case(rng, active)
        quota = quotas.active_per_member if active else quotas.all_per_member
        outcomes = {_in_order(_copy(quotas), start, order, active) for order in _orders(places, active, rng)}
        # As the callers do: the members taking tasks in the step, with their counts after it, and where
        # their tasks come in the step's order.
        taking = [i for i, t in enumerate(takes) if t]
        finals = [start[i] + takes[i] for i in taking]

        def place(j: int, k: int, places=places, taking=taking) -> int:
            own = places[taking[j]]
            return own[k - 1] if active else -own[0]

        after = None if quota <= 0 else _quotas_after(_copy(quotas), finals, quota, active, place)
        if after is not None and (active or max(finals, default=0) <= quota):
            given += 1
            expected = tuple(
                start[i] + (min(takes[i], quota) if active else takes[i]) for i in range(len(takes))
            )
            left = (after.active_tasks, after.all_tasks, after.members_for_active, after.members_for_all)
            assert outcomes == {(expected, left)}, (quotas, start, takes, places)
        else:
            refused += 1
    # Both answers occur, so the check above is not vacuous.
    assert given > 500 and refused > 100


def test_quotas_after_counts_a_member_at_the_lowered_quota_only_if_its_last_task_comes_after_the_drop():
    # 7 tasks over 2 members: an active quota of 4. The member with 4 reaching it leaves 3 tasks for the
    # other: the quota drops to 3, which the other member, with 3, reaches again if it takes its last task
    # after that (and then leaves the division too), or not.
    quotas = _Quotas(active_tasks=7, all_tasks=14, members_for_active=2, members_for_all=2)
    lefts = []
    for places in ([[0, 1, 2, 3], [4, 5, 6]], [[3, 4, 5, 6], [0, 1, 2]]):
        got = _quotas_after(_copy(quotas), [4, 3], 4, True, lambda i, k, p=places: p[i][k - 1])
        assert got is not None
        order = [member for _, member in sorted((p, m) for m, own in enumerate(places) for p in own)]
        counts, left = _in_order(_copy(quotas), [0, 0], order, True)
        assert counts == (4, 3)
        assert (got.active_tasks, got.all_tasks, got.members_for_active, got.members_for_all) == left
        lefts.append(left)
    assert lefts[0] != lefts[1]
    # With no standbys the total quota drops with it: refused.
    no_standbys = _Quotas(active_tasks=7, all_tasks=7, members_for_active=2, members_for_all=2)
    assert (
        _quotas_after(no_standbys, [4, 3], 4, True, lambda i, k: [[0, 1, 2, 3], [4, 5, 6]][i][k - 1]) is None
    )


def _copy(quotas: _Quotas) -> _Quotas:
    return _Quotas(quotas.active_tasks, quotas.all_tasks, quotas.members_for_active, quotas.members_for_all)


# --- whole assignments: in bulk or task by task, the same ------------------------------------------------


def _both_ways(scenario: dict, monkeypatch) -> tuple[dict, dict]:
    ours = plan_scenario(scenario, assignor="streams_sticky", now_ms=0)
    with monkeypatch.context() as patch:
        patch.setattr(streams_sticky, "_IN_BULK", False)
        task_by_task = plan_scenario(scenario, assignor="streams_sticky", now_ms=0)
    return ours, task_by_task


def _assignment(result: dict) -> list:
    return [(c["process_id"], c["consumers"]) for c in result["assignment"]]


class _Taken:
    """How often each step in bulk gave an answer (it must, often, for the comparison to test it)."""

    def __init__(self, monkeypatch) -> None:
        self.actives = self.standbys = 0
        actives, standbys = streams_sticky.keep_previous_actives, streams_sticky.place_sticky_standbys

        def keep(state):
            left = actives(state)
            self.actives += left is not None
            return left

        def place(state):
            remaining = standbys(state)
            self.standbys += remaining is not None
            return remaining

        monkeypatch.setattr(streams_sticky, "keep_previous_actives", keep)
        monkeypatch.setattr(streams_sticky, "place_sticky_standbys", place)


@pytest.mark.parametrize(
    "knobs",
    [Knobs(), Knobs(consumer_history_share=0.9), Knobs(history=("stable",), num_standby_replicas=(1, 3))],
    ids=["default", "member-history", "stable"],
)
def test_in_bulk_equals_task_by_task_on_random_groups_and_their_next_rounds(knobs, monkeypatch):
    taken = _Taken(monkeypatch)
    for seed in range(150):
        scenario = generate_scenario(seed, knobs)
        ours, task_by_task = _both_ways(scenario, monkeypatch)
        assert _assignment(ours) == _assignment(task_by_task), seed
        if ours["status"] != "OK":
            continue
        # The group after this plan was rolled out: the usual steady state, where the bulk steps apply.
        again, again_task_by_task = _both_ways(next_round(scenario, ours), monkeypatch)
        assert _assignment(again) == _assignment(again_task_by_task), seed
    assert taken.actives > 100 and taken.standbys > 50


@pytest.mark.parametrize("shape", [(600, 2, 1, 1), (200, 40, 1, 3), (100, 5, 30, 1), (300, 7, 3, 2)], ids=str)
def test_in_bulk_equals_task_by_task_on_scale_shapes_and_their_next_rounds(shape, monkeypatch):
    tasks, clients, threads, standbys = shape
    scenario = scale_scenario(tasks, clients, threads=threads, standbys=standbys)
    taken = _Taken(monkeypatch)
    for _ in range(3):
        ours, task_by_task = _both_ways(scenario, monkeypatch)
        assert _assignment(ours) == _assignment(task_by_task)
        scenario = next_round(scenario, ours)
    assert taken.actives >= 2


def test_in_bulk_equals_task_by_task_when_members_come_and_go(monkeypatch):
    rng = random.Random(1071)
    taken = _Taken(monkeypatch)
    for round_ in range(40):
        scenario = scale_scenario(rng.randint(20, 200), rng.randint(2, 12), threads=rng.randint(1, 4),
                                  standbys=rng.randint(0, 2))  # fmt: skip
        ours, _ = _both_ways(scenario, monkeypatch)
        following = next_round(scenario, ours)
        # A client leaves or one joins: owners and holders are missing or new, quotas change.
        clients = following["clients"]
        if rng.random() < 0.5 and len(clients) > 1:
            clients = clients[:-1]
        else:
            clients = [*clients, {"process_id": f"00000000-0000-4000-8000-{round_:012d}", "threads": 2}]
        ours, task_by_task = _both_ways({**following, "clients": clients}, monkeypatch)
        assert _assignment(ours) == _assignment(task_by_task), round_
    assert taken.actives > 20


# --- each step's whole state: in bulk or task by task, the same -------------------------------------------


def _process_states(state) -> dict:
    return {
        pid: (
            sorted(p.tasks),
            p.task_count,
            p.load,
            dict(p.member_counts),
            {m: sorted(t) for m, t in p.active_by_member.items()},
            {m: sorted(t) for m, t in p.standby_by_member.items()},
        )
        for pid, p in state.processes.items()
    }


def _groups(rng: random.Random):
    """Random groups and the rounds after them, uneven shapes among them (quotas that drop at the end)."""
    for seed in range(120):
        scenario = generate_scenario(seed, Knobs(consumer_history_share=0.9))
        yield scenario
        ours = plan_scenario(scenario, assignor="streams_sticky", now_ms=0)
        if ours["status"] == "OK":
            yield next_round(scenario, ours)
    for _ in range(60):
        scenario = scale_scenario(rng.randint(5, 120), rng.randint(1, 9), threads=rng.randint(1, 3),
                                  standbys=rng.randint(0, 2))  # fmt: skip
        yield scenario  # a first round: the least-loaded steps alone
        for _ in range(2):
            scenario = next_round(scenario, plan_scenario(scenario, assignor="streams_sticky", now_ms=0))
            clients = scenario["clients"]
            if rng.random() < 0.3:  # new tasks the members never had: left for the later steps
                extra = [dict(t, id=f"9_{i}") for i, t in enumerate(scenario["tasks"][: rng.randint(1, 4)])]
                yield {**scenario, "tasks": scenario["tasks"] + extra}
            yield {**scenario, "clients": clients[rng.randint(0, 1) if len(clients) > 1 else 0 :]}


def _task_by_task(step, state) -> None:
    bulk = streams_sticky._IN_BULK
    streams_sticky._IN_BULK = False
    try:
        step(state)
    finally:
        streams_sticky._IN_BULK = bulk


def test_each_step_in_bulk_leaves_the_state_task_by_task_leaves():
    rng = random.Random(4_4_0)
    actives = standbys = 0
    for scenario in _groups(rng):
        state = load_scenario(scenario, now_ms=0).application_state
        numbered = streams_sticky._broker_input(state).numbered
        # The two passes both ways (the least-loaded steps without their queue too). The quotas are read
        # up to the standbys' sticky step, so compared after the actives; the least-loaded standby pass
        # leaves them as it goes (nothing reads them after it).
        bulk, by_task = streams_sticky._initial_state(numbered), streams_sticky._initial_state(numbered)
        streams_sticky._assign_actives(bulk)
        _task_by_task(streams_sticky._assign_actives, by_task)
        assert bulk.quotas == by_task.quotas
        assert _process_states(bulk) == _process_states(by_task)
        if numbered.group.num_standby_replicas:
            streams_sticky._assign_standbys(bulk)
            _task_by_task(streams_sticky._assign_standbys, by_task)
            assert _process_states(bulk) == _process_states(by_task)
        if not numbered.has_history:
            continue
        # Each sticky step alone, from the same state.
        bulk, by_task = streams_sticky._initial_state(numbered), streams_sticky._initial_state(numbered)
        left = keep_previous_actives(bulk)
        if left is not None:
            actives += 1
            order = sorted(range(len(numbered.partition_major)), key=numbered.partition_major.__getitem__)
            expected = streams_sticky._back_to_owners(by_task, order)
            assert sorted(left, key=numbered.partition_major.__getitem__) == expected
            assert bulk.quotas == by_task.quotas
            assert _process_states(bulk) == _process_states(by_task)
        if numbered.group.num_standby_replicas == 0:
            continue
        bulk, by_task = streams_sticky._initial_state(numbered), streams_sticky._initial_state(numbered)
        streams_sticky._assign_actives(bulk)
        streams_sticky._assign_actives(by_task)
        remaining = place_sticky_standbys(bulk)
        if remaining is not None:
            standbys += 1
            expected_remaining = streams_sticky._sticky_standbys_in_order(by_task)
            assert sorted(remaining) == sorted(expected_remaining)
            assert bulk.quotas == by_task.quotas
            assert _process_states(bulk) == _process_states(by_task)
    assert actives > 150 and standbys > 60


@pytest.mark.parametrize("shape", [(500, 2, 1, 1), (90, 3, 2, 2), (40, 4, 3, 3), (7, 2, 4, 2)], ids=str)
def test_each_process_lacking_a_task_takes_a_replica_when_the_replicas_cover_them(shape, monkeypatch):
    # With at least (processes - 1) replicas, Kafka's least-loaded pass puts one on every process without
    # the task, whatever the loads: done without its queue, first rounds and next rounds alike, one-thread
    # and many-thread clients (whose members take them in their own queue's order).
    tasks, clients, threads, standbys = shape
    scenario = scale_scenario(tasks, clients, threads=threads, standbys=standbys)
    taken = []
    shortcut = streams_sticky._each_lacking_process_takes_one

    def counted(state, remaining):
        taken.append(shortcut(state, remaining))
        return taken[-1]

    monkeypatch.setattr(streams_sticky, "_each_lacking_process_takes_one", counted)
    for _ in range(2):
        ours, task_by_task = _both_ways(scenario, monkeypatch)
        assert _assignment(ours) == _assignment(task_by_task)
        scenario = next_round({**scenario, "tasks": scenario["tasks"][:-1]}, ours)
    assert any(taken)
