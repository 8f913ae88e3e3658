"""Within-client distribution (assignors.md §9, POLICY.md §3): balance per call, stickiness, determinism."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fleet_assignor.assignor import KafkaStreamsState, ProcessId, TaskId
from fleet_assignor.assignor.distribution import assign_tasks_to_threads, distribute_client_tasks


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def ts(*texts: str) -> list[TaskId]:
    return [t(x) for x in texts]


def no_history(consumer: str) -> list[TaskId]:
    return []


def history(owned: dict[str, list[TaskId]]):
    return lambda consumer: owned.get(consumer, [])


def test_without_history_tasks_go_round_and_leftovers_to_the_first_queued_consumers():
    load: dict[str, int] = {}
    got = assign_tasks_to_threads(ts("0_2", "0_0", "0_1"), True, ["b", "a"], no_history, load)
    # min = 1: a gets 0_0, b gets 0_1; the leftover 0_2 goes to the first consumer at the minimum
    assert got == {"a": ts("0_0", "0_2"), "b": ts("0_1")}
    assert load == {"a": 2, "b": 1}


def test_a_stateful_task_stays_on_the_consumer_that_has_its_state():
    got = assign_tasks_to_threads(ts("0_0", "0_1"), True, ["a", "b"], history({"b": ts("0_0")}), {})
    assert got == {"a": ts("0_1"), "b": ts("0_0")}


def test_the_lowest_lag_task_is_taken_back_first():
    # b owns both but its quota is one: the by-lag order puts 0_1 (caught up) before 0_0
    got = assign_tasks_to_threads(ts("0_0", "0_1"), True, ["a", "b"], history({"b": ts("0_1", "0_0")}), {})
    assert got == {"a": ts("0_0"), "b": ts("0_1")}


def test_a_leftover_goes_back_to_the_queued_consumer_that_owned_it():
    # b owns 0_1 and 0_2 but has room for one; a fills up with 0_0; the leftover 0_2 returns to b,
    # though a comes first in the queue.
    got = assign_tasks_to_threads(
        ts("0_0", "0_1", "0_2"), True, ["a", "b"], history({"b": ts("0_1", "0_2")}), {}
    )
    assert got == {"a": ts("0_0"), "b": ts("0_1", "0_2")}


def test_with_more_consumers_than_tasks_owners_take_theirs_back_and_the_rest_go_to_the_first_idle_ones():
    # min = 0: nobody is filled; d gets back 0_1 (its state), 0_0 and 0_2 go to the first consumers that
    # hold nothing yet, in consumer order (b already holds a task from an earlier call).
    load = {"b": 1}
    got = assign_tasks_to_threads(
        ts("0_2", "0_0", "0_1"), True, ["e", "d", "c", "b", "a"], history({"d": ts("0_1")}), load
    )
    assert got == {"a": ts("0_0"), "b": [], "c": ts("0_2"), "d": ts("0_1"), "e": []}
    assert load == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 0}


def test_stateless_tasks_ignore_history():
    got = assign_tasks_to_threads(ts("0_0", "0_1"), False, ["a", "b"], history({"b": ts("0_0")}), {})
    assert got == {"a": ts("0_0"), "b": ts("0_1")}


def test_earlier_calls_count_toward_the_balance():
    load = {"a": 2, "b": 1, "c": 1}
    got = assign_tasks_to_threads(ts("1_0", "1_1"), False, ["a", "b", "c"], no_history, load)
    # total 6, min 2: b and c are below the minimum and get one each, a gets nothing
    assert got == {"a": [], "b": ts("1_0"), "c": ts("1_1")}
    assert load == {"a": 2, "b": 2, "c": 2}


def _client(consumers, owned=None, lags=None) -> KafkaStreamsState:
    return KafkaStreamsState(
        process_id=ProcessId.of(1),
        num_processing_threads=len(consumers),
        consumer_client_ids=tuple(consumers),
        consumer_previous_stateful_tasks={c: frozenset(owned.get(c, ())) for c in consumers} if owned else {},
        task_lags=lags or {},
    )


def test_client_distribution_orders_calls_stateful_active_standby_stateless():
    lags = {t("0_0"): -2, t("0_1"): 0, t("0_2"): 0}
    client = _client(["c1", "c2"], owned={"c2": ts("0_0")}, lags=lags)
    got = distribute_client_tasks(client, active=ts("0_0", "0_2", "1_0", "1_1"), standby=ts("0_1"))
    # 1. stateful actives (min 1): 0_0 sticks to c2, c1 fills up with 0_2;
    # 2. the standby 0_1 (3 tasks so far, min 1): both at the minimum, the first queued one (c1) takes it;
    # 3. stateless (5 so far, min 2): c2 is below and takes 1_0; the leftover 1_1 goes to c1, first in the
    #    queue of consumers at the minimum.
    assert [str(x) for x in got["c1"].active] == ["0_2", "1_1"]
    assert [str(x) for x in got["c1"].standby] == ["0_1"]
    assert [str(x) for x in got["c2"].active] == ["0_0", "1_0"]
    assert got["c2"].standby == ()
    assert list(got) == ["c1", "c2"]


def test_a_client_with_nothing_gets_empty_consumers():
    got = distribute_client_tasks(_client(["b", "a"]), active=[], standby=[])
    assert list(got) == ["a", "b"]
    assert all(c.active == () and c.standby == () for c in got.values())


@st.composite
def calls(draw):
    consumers = [f"c{i}" for i in range(draw(st.integers(1, 5)))]
    tasks = [TaskId(s, p) for s in range(3) for p in range(draw(st.integers(0, 6)))]
    rng = random.Random(draw(st.integers(0, 10**6)))
    rng.shuffle(tasks)
    cut1, cut2 = sorted(rng.randint(0, len(tasks)) for _ in range(2))
    groups = [tasks[:cut1], tasks[cut1:cut2], tasks[cut2:]]
    owned = {c: [x for x in tasks if rng.random() < 0.3] for c in consumers}
    return consumers, groups, owned


@settings(max_examples=150, deadline=None)
@given(calls())
def test_every_call_leaves_each_consumer_at_min_or_min_plus_one_and_places_each_task_once(case):
    consumers, groups, owned = case
    load: dict[str, int] = {}
    placed: list[TaskId] = []
    total = 0
    for group, stateful in zip(groups, (True, True, False), strict=False):
        got = assign_tasks_to_threads(group, stateful, consumers, history(owned), load)
        placed += [x for tasks in got.values() for x in tasks]
        total += len(group)
        minimum = total // len(consumers)
        assert all(load[c] in (minimum, minimum + 1) for c in consumers), (load, minimum)
        assert sum(load.values()) == total
    assert sorted(placed) == sorted(x for g in groups for x in g)


@settings(max_examples=100, deadline=None)
@given(calls())
def test_stateful_tasks_stick_when_the_quota_allows(case):
    consumers, groups, owned = case
    # one owner per task, so "the consumer that reported its state" is unambiguous
    owner: dict[TaskId, str] = {}
    for c in consumers:
        for x in owned[c]:
            owner.setdefault(x, c)
    unique = {c: [x for x in owned[c] if owner[x] == c] for c in consumers}
    tasks = groups[0]
    got = assign_tasks_to_threads(tasks, True, consumers, history(unique), {})
    minimum = len(tasks) // len(consumers)
    for c in consumers:
        mine = [x for x in tasks if owner.get(x) == c]
        kept = [x for x in got[c] if owner.get(x) == c]
        # a consumer keeps at least min(its own tasks, the minimum quota) of the tasks it has state for
        assert len(kept) >= min(len(mine), minimum)


@settings(max_examples=60, deadline=None)
@given(calls(), st.randoms(use_true_random=False))
def test_the_result_does_not_depend_on_input_order(case, rng):
    consumers, groups, owned = case
    first = assign_tasks_to_threads(groups[0], True, consumers, history(owned), {})
    shuffled_tasks, shuffled_consumers = list(groups[0]), list(consumers)
    rng.shuffle(shuffled_tasks)
    rng.shuffle(shuffled_consumers)
    again = assign_tasks_to_threads(shuffled_tasks, True, shuffled_consumers, history(owned), {})
    assert again == first


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), consumers=st.integers(1, 40))
def test_a_client_is_distributed_as_the_three_documented_calls(seed, consumers):
    """`distribute_client_tasks` skips consumers without history and clients with one consumer: its split
    equals the three `assign_tasks_to_threads` calls of assignors.md §9.1 (stateful actives, standbys,
    stateless actives) sharing one thread load, on random clients (many threads and few tasks included)."""
    rng = random.Random(seed)
    names = [f"c{i:02d}" for i in rng.sample(range(100), consumers)]
    tasks = [TaskId(sub, p) for sub in range(3) for p in range(rng.randint(0, 12))]
    lags = {task: rng.choice((-2, 0, 5, 100)) for task in tasks if task.subtopology != 2}
    owned = {
        c: rng.sample(list(lags), min(len(lags), rng.randint(0, 3))) for c in names if rng.random() < 0.5
    }
    active = [task for task in tasks if rng.random() < 0.6]
    standby = [task for task in lags if task not in active and rng.random() < 0.5]
    client = _client(names, owned=owned, lags=lags)

    load: dict[str, int] = {}
    by_lag = client.prev_tasks_by_lag
    stateful = assign_tasks_to_threads([x for x in active if x in lags], True, names, by_lag, load)
    standbys = assign_tasks_to_threads(standby, True, names, by_lag, load)
    stateless = assign_tasks_to_threads([x for x in active if x not in lags], False, names, by_lag, load)

    got = distribute_client_tasks(client, active, standby)
    assert list(got) == sorted(names)
    for c in names:
        assert list(got[c].active) == sorted(stateful[c] + stateless[c])
        assert list(got[c].standby) == sorted(standbys[c])
