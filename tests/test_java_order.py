"""Java's HashMap and PriorityQueue orders (assignor/java_order.py) against answers recorded from Java 17.

Every expected value below was printed by a small Java 17 program (`String#hashCode`, `HashMap#keySet()`
after `put` or `computeIfAbsent`, `PriorityQueue#poll` with a comparator on an int); 5,000 such random cases
were checked when the module was written. The broker-side assignor's exactness rests on these orders.
"""

from __future__ import annotations

import heapq
import itertools
import random

import pytest

from fleet_assignor.assignor.java_order import (
    JavaHashOrder,
    JavaPriorityQueue,
    TwoLevelQueue,
    hash_map_put_order,
    java_heap_offer,
    java_string_hash,
    requeue_level,
    table_size_for,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("Aa", 2112),
        ("BB", 2112),
        ("polygenelubricants", -2147483648),
        ("consumer-1-0", -842085571),
        ("263fc98e-0375-4d39-9d64-a89d1eafe6a1", 1432262082),
        ("\u00e9t\u00e9", 227742),
        ("\U0001f600", 1772899),  # one code point, two UTF-16 code units
    ],
)
def test_string_hash_is_javas(text, expected):
    assert java_string_hash(text) == expected


def test_table_size_is_the_next_power_of_two():
    assert [table_size_for(n) for n in (0, 1, 2, 3, 12, 16, 17)] == [1, 1, 2, 4, 16, 16, 32]


def _keys(text: str) -> list[str]:
    return text.split()


# (initial capacity or None, keys in insertion order, keySet() order Java printed)
PUT_CASES = [
    (
        None,
        "consumer-3-0 consumer-1-1 consumer-8-2 consumer-8-3 consumer-3-4 consumer-6-5 consumer-3-6 "
        "consumer-5-7 consumer-0-8",
        "consumer-1-1 consumer-3-0 consumer-5-7 consumer-8-2 consumer-8-3 consumer-6-5 consumer-0-8 "
        "consumer-3-6 consumer-3-4",
    ),
    (
        24,
        "consumer-4-0 consumer-8-1 consumer-1-2 consumer-9-3 consumer-6-4 consumer-7-5 consumer-4-6 "
        "consumer-4-7 consumer-1-8 consumer-9-9 consumer-6-10 consumer-2-11",
        "consumer-9-9 consumer-6-10 consumer-9-3 consumer-7-5 consumer-6-4 consumer-4-6 consumer-4-7 "
        "consumer-8-1 consumer-1-8 consumer-4-0 consumer-1-2 consumer-2-11",
    ),
]


@pytest.mark.parametrize(("capacity", "keys", "expected"), PUT_CASES, ids=["default", "cap-24"])
def test_put_order_is_javas(capacity, keys, expected):
    assert hash_map_put_order(_keys(keys), capacity) == _keys(expected)


def test_put_order_with_a_one_bucket_start_grows_like_java():
    keys = (
        "667fde3b-85d9-7bb3-e1f9-cea03e1a52cb 0ce68810-71a0-3af4-521f-b7e02601456a "
        "8de52bc0-3aaf-c962-bb04-1495ae29257e 18cefa2a-86ac-7b91-b6e5-c82381a3bd63 "
        "51b1a6f6-b03f-cc1b-620e-5cd5155510ba 6f07edcb-a333-e873-0226-bc8dc672e322 "
        "7fc86cd8-d604-b3ef-8705-f358b23ace43 732c70b0-9654-ffed-b8a5-abee086426d6 "
        "2ddfd62c-29ce-d6aa-78c1-86b7442c254e"
    )
    expected = (
        "732c70b0-9654-ffed-b8a5-abee086426d6 2ddfd62c-29ce-d6aa-78c1-86b7442c254e "
        "18cefa2a-86ac-7b91-b6e5-c82381a3bd63 8de52bc0-3aaf-c962-bb04-1495ae29257e "
        "0ce68810-71a0-3af4-521f-b7e02601456a 6f07edcb-a333-e873-0226-bc8dc672e322 "
        "51b1a6f6-b03f-cc1b-620e-5cd5155510ba 7fc86cd8-d604-b3ef-8705-f358b23ace43 "
        "667fde3b-85d9-7bb3-e1f9-cea03e1a52cb"
    )
    assert hash_map_put_order(_keys(keys), 1) == _keys(expected)


@pytest.mark.parametrize(
    ("capacity", "keys", "expected"),
    [
        # Colliding keys ("Aa" and "BB" hash alike): computeIfAbsent puts a new key at its bucket's head.
        (
            None,
            "AaBB2Aa AaAa0BB BBBB0Aa BBBB2BB BBBB1BB Aa2Aa BBBB0BB BBBB2BB BBBB1Aa AaAa1Aa AaAa2Aa "
            "BBAa0BB Aa1Aa",
            "Aa1Aa Aa2Aa AaAa2Aa BBBB2BB AaBB2Aa AaAa1Aa BBBB1Aa BBBB1BB BBAa0BB BBBB0BB BBBB0Aa AaAa0BB",
        ),
        # A table of one bucket grows only when the *next* call finds the size past the threshold.
        (
            1,
            "consumer-8-0 consumer-1-1 consumer-0-2 consumer-5-3 consumer-4-4 consumer-4-5 consumer-4-6",
            "consumer-4-6 consumer-0-2 consumer-1-1 consumer-4-4 consumer-5-3 consumer-8-0 consumer-4-5",
        ),
        (
            12,
            "6487cfa1-57f9-ead7-0350-7568ce11e164 15c8ae97-be8b-1cc7-6eb9-064dbea5696a "
            "dd86d938-979b-8ce0-3964-be52b1235b0d 5bec23a6-a419-c6b7-bef9-48960dc6149e "
            "ee9da1d8-a3d3-a812-1b1e-4c13bc1649ce c3736634-1c4f-20c6-e780-25d47690c01e",
            "15c8ae97-be8b-1cc7-6eb9-064dbea5696a 5bec23a6-a419-c6b7-bef9-48960dc6149e "
            "dd86d938-979b-8ce0-3964-be52b1235b0d ee9da1d8-a3d3-a812-1b1e-4c13bc1649ce "
            "6487cfa1-57f9-ead7-0350-7568ce11e164 c3736634-1c4f-20c6-e780-25d47690c01e",
        ),
    ],
    ids=["collisions", "cap-1", "cap-12"],
)
def test_compute_if_absent_order_is_javas(capacity, keys, expected):
    order = JavaHashOrder(capacity)
    for key in _keys(keys):
        order.compute_if_absent(key)
    assert order.keys() == _keys(expected)
    assert not order.treeified


def test_put_and_compute_if_absent_differ_on_colliding_keys():
    put, computed = JavaHashOrder(), JavaHashOrder()
    for key in ("Aa", "BB"):
        put.put(key)
        computed.compute_if_absent(key)
    assert (put.keys(), computed.keys()) == (["Aa", "BB"], ["BB", "Aa"])


def test_a_repeated_key_changes_nothing():
    order = JavaHashOrder()
    for key in ("Aa", "BB", "Aa"):
        order.put(key)
    assert (order.keys(), len(order), "Aa" in order) == (["Aa", "BB"], 2, True)


def _java_queue_run(ops: str) -> list[int]:
    """Offers of an int key (numbered in order) and polls ('p'); then drains: the numbers in poll order."""
    queue: JavaPriorityQueue[tuple[int, int]] = JavaPriorityQueue(key=lambda item: item[0])
    out, number = [], 0
    for op in ops.split():
        if op == "p":
            out.append(queue.poll()[1])  # type: ignore[index]
        else:
            queue.offer((int(op), number))
            number += 1
    while len(queue):
        out.append(queue.poll()[1])  # type: ignore[index]
    return out


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        (
            "4 3 p 5 4 1 p 3 p p p 2 0 0 2 p p 1 p 2 p p p 4 3 3 p p p 5 5 p",
            "1 4 5 0 3 7 8 10 9 11 6 13 14 12 2 16 15",
        ),
        (
            "1 p 2 1 0 3 0 p p 3 3 p 5 1 p p 1 1 0 5 p 3 p 5 p 4 4 2 p 2 p 3 5 p 5 p p 2 p 5 p 1",
            "0 3 5 2 9 1 12 10 11 18 19 14 6 7 23 20 25 4 16 17 13 8 21 22 24 15",
        ),
    ],
)
def test_priority_queue_polls_equal_keys_in_javas_order(ops, expected):
    assert _java_queue_run(ops) == [int(n) for n in expected.split()]


def test_heapq_would_break_ties_differently():
    # Why the module has its own heap: Python's heapq sifts differently, so equal keys leave in another
    # order (shown on the first recorded case).
    ops = "4 3 p 5 4 1 p 3 p p p 2 0 0 2 p p 1 p 2 p p p 4 3 3 p p p 5 5 p"
    heap: list[tuple[int, int]] = []
    out, number = [], 0
    for op in ops.split():
        if op == "p":
            out.append(heapq.heappop(heap)[1])
        else:
            heapq.heappush(heap, (int(op), number))
            number += 1
    assert out != _java_queue_run(ops)[: len(out)]


def test_polling_an_empty_queue_gives_none():
    assert JavaPriorityQueue(key=float).poll() is None


@pytest.mark.parametrize("seed", range(20))
def test_requeue_head_is_poll_then_offer(seed):
    # The assignors' hot loops update the head in place and requeue it: the queue must then hold the same
    # array as after Java's poll and offer (checked by draining both), with many equal keys.
    rng = random.Random(seed)

    def filled() -> JavaPriorityQueue[list[int]]:
        queue: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
        for number in range(rng.randint(1, 40)):
            queue.offer([rng.randint(0, 3), number])
        return queue

    state = rng.getstate()
    by_requeue = filled()
    rng.setstate(state)
    by_poll_offer = filled()
    for _ in range(200):
        grow = rng.randint(0, 2)
        head = by_requeue.peek()
        assert head is not None
        head[0] += grow
        by_requeue.requeue_head()
        polled = by_poll_offer.poll()
        assert polled is not None
        polled[0] += grow
        by_poll_offer.offer(polled)
    assert [by_requeue.poll() for _ in range(len(by_requeue))] == [
        by_poll_offer.poll() for _ in range(len(by_poll_offer))
    ]


@pytest.mark.parametrize("seed", range(30))
def test_offer_all_is_offer_one_by_one(seed):
    # Keys in ascending order into an empty queue are appended as they come: the same array as offering
    # each (also when not sorted, or into a queue holding elements already).
    rng = random.Random(seed)
    keys = [rng.randint(0, 3) for _ in range(rng.randint(0, 60))]
    if seed % 3 == 0:
        keys.sort()
    start = [[rng.randint(0, 3), -1 - n] for n in range(rng.randint(0, 5) if seed % 2 else 0)]
    by_all: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
    one_by_one: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
    for item in start:
        by_all.offer(item)
        one_by_one.offer(item)
    items = [[key, number] for number, key in enumerate(keys)]
    by_all.offer_all(iter(items))
    for item in items:
        one_by_one.offer(item)
    assert list(by_all) == list(one_by_one)
    assert [by_all.poll() for _ in range(len(by_all))] == [one_by_one.poll() for _ in range(len(one_by_one))]


@pytest.mark.parametrize("seed", range(200))
def test_offer_all_in_two_keys_is_offer_one_by_one(seed):
    # Two key values into an empty queue (a big process's members: nearly all at one count) are placed by
    # following only the lower offers that climb: the same array as offering each.
    rng = random.Random(seed)
    low, high = sorted(rng.sample([0, 1, 2, 7, 0.5, 2.25], 2))
    size = rng.choice([2, 3, 5, 8, 16, 17, 40, 100, 257])
    share = rng.choice([0.0, 0.01, 0.1, 0.5, 0.9, 1.0])
    keys = [high if rng.random() < share else low for _ in range(size)]
    keys[rng.randrange(size)] = high  # both values present
    keys[rng.randrange(size)] = low
    items = [[key, number] for number, key in enumerate(keys)]
    by_all: JavaPriorityQueue[list] = JavaPriorityQueue(key=lambda item: item[0])
    by_all.offer_all(iter(items))
    one_by_one: JavaPriorityQueue[list] = JavaPriorityQueue(key=lambda item: item[0])
    for item in items:
        one_by_one.offer(item)
    assert by_all.array == one_by_one.array


@pytest.mark.parametrize("seed", range(150))
def test_two_level_queue_offered_is_the_one_of_javas_array(seed):
    # `TwoLevelQueue.offered` starts from every place lower and takes the upper ones out: the same queue
    # as the one made from Java's array of the same offers, step after step of heads going up a level.
    rng = random.Random(seed)
    size = rng.choice([1, 2, 3, 4, 7, 8, 15, 16, 31, 100, 1000])
    share = rng.choice([0.0, 0.001, 0.05, 0.3, 0.7, 1.0])
    keys = [4 if rng.random() < share else 3 for _ in range(size)]
    java: JavaPriorityQueue[int] = JavaPriorityQueue(key=lambda item: 0)
    for key, item in zip(keys, range(size), strict=True):
        java_heap_offer(java.array, (key, item))
    two = TwoLevelQueue.offered(keys, list(range(size)))
    assert _same_array(two, java, min(keys))
    for _ in range(rng.randint(0, 3 * size)):
        key, head = java.array[0]
        assert two.head() == head
        java.requeue_head_as(key + 1)
        assert two.requeue_head_up() == java.peek()
    assert _same_array(two, java, min(keys))


def test_peek_leaves_the_head():
    queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=float)
    assert queue.peek() is None
    for value in (3, 1, 2):
        queue.offer(value)
    assert (queue.peek(), len(queue), queue.poll()) == (1, 3, 1)


@pytest.mark.parametrize("seed", range(12))
def test_put_order_of_large_maps_is_the_one_put_by_put(seed):
    # hash_map_put_order sizes tables of 64 buckets and more from the key count alone: the same order as
    # putting every key, with repeated keys, colliding keys ("Aa"/"BB") and initial capacities.
    rng = random.Random(seed)
    keys = [f"member-{rng.randrange(5000)}" for _ in range(rng.choice([10, 70, 700, 3000]))]
    keys += ["Aa" * 3, "BBAaAa", "AaBBAa", "Aa" * 3]
    rng.shuffle(keys)
    capacity = rng.choice([None, 1, 16, 100, 5000])
    one_by_one = JavaHashOrder(capacity)
    for key in keys:
        one_by_one.put(key)
    assert hash_map_put_order(keys, capacity) == one_by_one.keys()


@pytest.mark.parametrize("seed", range(12))
def test_put_order_of_distinct_keys_is_the_one_put_by_put(seed):
    # `distinct=True` sorts a default-sized map's keys at once: the same order as putting them one by one,
    # also where colliding keys ("Aa"/"BB" products share one hash) crowd a small table's bucket, which
    # doubles it early (then it puts key by key), or come one short of that.
    rng = random.Random(seed)
    colliding = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=5)]  # 32 keys, one hash
    crowd = rng.choice([0, 3, 7, 8, 9, 32])
    others = [f"{rng.getrandbits(64):016x}-consumer-{i}" for i in range(rng.randrange(40, 1500))]
    keys = colliding[:crowd] + others[:16]
    rng.shuffle(keys)  # the crowd among the first keys, while the table is small
    keys += others[16:]
    assert hash_map_put_order(keys, distinct=True) == _put_one_by_one(keys)


def _put_one_by_one(keys: list[str]) -> list[str]:
    """The order of `new HashMap<>()` after a `put` of each key in turn, as `JavaHashOrder` simulates it."""
    order = JavaHashOrder()
    for key in keys:
        order.put(key)
    return order.keys()


@pytest.mark.parametrize("seed", range(40))
def test_put_order_of_a_few_distinct_keys_is_the_one_put_by_put(seed):
    # Up to 8 distinct keys stay in the 16-bucket table: ordered by bucket, ties (the colliding "Aa"/"BB"
    # products, or keys sharing a bucket by chance) in put order.
    rng = random.Random(seed)
    colliding = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=3)]
    keys = rng.sample(colliding, rng.randint(0, 4)) + [
        f"consumer-{rng.randrange(10**6)}-{i}" for i in range(8)
    ]
    keys = list(dict.fromkeys(keys))[: rng.randint(1, 8)]
    rng.shuffle(keys)
    assert hash_map_put_order(keys, distinct=True) == _put_one_by_one(keys)


@pytest.mark.parametrize("seed", range(12))
def test_compute_if_absent_all_is_one_call_per_key(seed):
    # Present keys are skipped unless a resize is pending: the same table as calling for every key.
    rng = random.Random(seed)
    keys = [f"process-{rng.randrange(rng.choice([3, 30, 300]))}" for _ in range(rng.randrange(1, 2000))]
    capacity = rng.choice([None, 1, 16, 1000])
    one_by_one, all_at_once = JavaHashOrder(capacity), JavaHashOrder(capacity)
    for key in keys:
        one_by_one.compute_if_absent(key)
    all_at_once.compute_if_absent_all(keys)
    assert all_at_once.keys() == one_by_one.keys()
    assert (all_at_once._capacity, all_at_once.treeified) == (one_by_one._capacity, one_by_one.treeified)


@pytest.mark.parametrize("seed", range(16))
def test_compute_if_absent_all_into_a_large_table_is_one_call_per_key(seed):
    # A first table of 64 buckets or more is sized from the key counts alone: the same table, order and
    # treeified flag as one call per key, with repeats, colliding keys ("Aa"/"BB") and resizes.
    rng = random.Random(seed)
    colliding = [
        "".join(rng.choice(["Aa", "BB"]) for _ in range(4)) + str(rng.randrange(3)) for _ in range(30)
    ]
    pool = colliding + [f"process-{n}" for n in range(rng.choice([10, 200, 2000]))]
    keys = [rng.choice(pool) for _ in range(rng.choice([1, 60, 500, 1500]))]
    if seed % 2:
        keys = list(dict.fromkeys(keys))  # every call inserts: the last call inserts the last key
    capacity = rng.choice([33, 64, 100, 700, 1000])
    one_by_one, all_at_once = JavaHashOrder(capacity), JavaHashOrder(capacity)
    for key in keys:
        one_by_one.compute_if_absent(key)
    all_at_once.compute_if_absent_all(keys)
    assert all_at_once.keys() == one_by_one.keys()
    assert (all_at_once._capacity, all_at_once._threshold, all_at_once.treeified) == (
        one_by_one._capacity,
        one_by_one._threshold,
        one_by_one.treeified,
    )


@pytest.mark.parametrize("seed", range(12))
def test_requeue_level_is_poll_and_offer_one_larger(seed):
    # Elements of one key, each head polled and offered back one larger, for several levels: the polls
    # and the array at each level's end are the level's places applied to the level's starting array.
    rng = random.Random(seed)
    size = rng.choice([1, 2, 3, 7, 16, 100, 300])
    queue: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
    queue.offer_all([[5, number] for number in rng.sample(range(1000), size)])
    level = requeue_level(size)
    start = [item for _, item in queue.array]
    for step in range(size * 3 + rng.randrange(size)):
        if step % size == 0 and step:
            start = [start[place] for place in level.final()]
            assert start == [item for _, item in queue.array]
        head = queue.peek()
        assert head is start[level.place(step % size)]
        head[0] += 1
        queue.requeue_head_as(head[0])


@pytest.mark.parametrize("seed", range(20))
def test_requeue_head_as_is_poll_then_offer(seed):
    # The hot loops' poll and offer in one call, with its own sift-down (odd and even sizes, equal keys).
    rng = random.Random(seed)
    items = [[rng.randint(0, 4), number] for number in range(rng.randint(1, 41))]
    by_requeue: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
    by_poll_offer: JavaPriorityQueue[list[int]] = JavaPriorityQueue(key=lambda item: item[0])
    by_requeue.offer_all(items)
    by_poll_offer.offer_all(items)
    for _ in range(300):
        head = by_requeue.peek()
        polled = by_poll_offer.poll()
        assert head is polled and head is not None
        head[0] += rng.randint(0, 2)
        by_requeue.requeue_head_as(head[0])
        by_poll_offer.offer(polled)
        assert list(by_requeue) == list(by_poll_offer)


@pytest.mark.parametrize("size", [1, 2, 15, 16, 17, 33, 100])
def test_requeue_level_arrays_after_any_step(size):
    # The array after each number of steps, as places, is the queue's own array then.
    level = requeue_level(size)
    keys = dict.fromkeys(range(size), 0.0)
    real = JavaPriorityQueue(key=keys.__getitem__)
    real.offer_all(range(size))
    for step in range(size + 1):
        assert level.places_after(step) == [place for _, place in real.array]
        if step < size:
            head = real.peek()
            assert head == level.place(step)
            keys[head] = 1.0
            real.requeue_head()


def _two_level_pair(
    rng: random.Random, size: int
) -> tuple[dict[int, int], JavaPriorityQueue[int], TwoLevelQueue[int]]:
    """Java's queue of `size` elements at keys 10 and 11, offered in a random order, and the same queue as a
    `TwoLevelQueue` (keys: element -> key, changed by the caller between a poll and an offer)."""
    keys = {item: rng.choice([10, 11]) for item in range(size)}
    java: JavaPriorityQueue[int] = JavaPriorityQueue(key=keys.__getitem__)
    java.offer_all(rng.sample(range(size), size))
    return keys, java, TwoLevelQueue(list(java.array))


def _same_array(two: TwoLevelQueue[int], java: JavaPriorityQueue[int], lowest: int) -> bool:
    return [(lowest + level, item) for level, item in two.array()] == java.array


@pytest.mark.parametrize("seed", range(150))
def test_two_level_queue_polls_and_arrays_are_javas(seed):
    # The streams assignor's standby loop: the head goes up a level; or the head is skipped
    # (`requeue_second_up`, with `second` naming the next one beforehand); or the head and the next ones
    # are polled while they hold the replica's task, the first that does not goes up, and the holders go
    # back at their keys (a level below the others when the level moved on meanwhile). Java's array after
    # every step is the two-level queue's.
    rng = random.Random(seed)
    size = rng.choice([1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 50, 100])
    keys, java, two = _two_level_pair(rng, size)
    lowest = min(keys.values())
    assert _same_array(two, java, lowest)
    for _ in range(rng.randint(size, 6 * size + 5)):
        head = two.head()
        assert head == java.peek()
        following = two.second()
        if size < 2 or rng.random() < 0.5:
            java.poll()
            keys[head] += 1
            java.offer(head)
            assert two.requeue_head_up() == java.peek()
        elif following is not None and rng.random() < 0.5:
            assert (java.poll(), java.poll()) == (head, following)
            keys[following] += 1
            java.offer(following)
            java.offer(head)
            assert two.requeue_second_up() == java.peek()
        else:
            held = []
            for _ in range(rng.randint(1, min(3, size - 1)) + 1):
                if not two.lower_count():
                    two.head()  # the level moves on
                level = two.level - two.below
                polled = two.poll()
                assert polled == java.poll()
                held.append((polled, level))
            taker, _ = held.pop()
            keys[taker] += 1
            java.offer(taker)
            two.offer_upper(taker)
            for holder, level in reversed(held):
                java.offer(holder)
                if level == two.level:
                    two.offer_lower(holder)
                elif not (level == two.level - 1 and two.offer_below(holder)):
                    return  # two levels below (or a second one below): callers go on with Java's array
        assert _same_array(two, java, lowest)


@pytest.mark.parametrize("seed", range(200))
def test_around_head_is_second_up_then_head_up_in_turn(seed):
    # With the head holding a replica's task, the streams assignor skips it: `requeue_second_up`, then the
    # next head takes one (`requeue_head_up`), in turn, while the skipped head keeps coming back.
    # `around_head` names the takers and `requeue_around_head` does those steps at once: the same takers
    # and the same array as Java's polls and offers, step by step, from varied starting queues.
    rng = random.Random(seed)
    size = rng.choice([4, 5, 8, 15, 16, 17, 31, 50, 100, 200, 257])
    upper_share = rng.choice([0.0, 0.05, 0.5])  # the shape arises early in a level: few upper elements
    keys = {item: 11 if rng.random() < upper_share else 10 for item in range(size)}
    java: JavaPriorityQueue[int] = JavaPriorityQueue(key=keys.__getitem__)
    java.offer_all(rng.sample(range(size), size))
    two = TwoLevelQueue(list(java.array))
    lowest = min(keys.values())
    checked = 0
    for _ in range(rng.randint(size, 4 * size)):
        head = two.head()
        takers = two.around_head(rng.choice([1, 2, 3, 7, size]))
        if takers and rng.random() < 0.6:
            count = rng.randint(1, len(takers))
            for step, taker in enumerate(takers[:count]):
                if step % 2 == 0:  # the head is polled and skipped; the next one takes
                    assert (java.poll(), java.poll()) == (head, taker)
                    keys[taker] += 1
                    java.offer(taker)
                    java.offer(head)
                else:  # the head is the next one; the skipped one comes back to the head
                    assert java.poll() == taker
                    keys[taker] += 1
                    java.offer(taker)
                    assert java.peek() == head
            two.requeue_around_head(count)
            checked += 1
        elif rng.random() < 0.4 or two.second() is None:
            java.poll()
            keys[head] += 1
            java.offer(head)
            two.requeue_head_up()
        else:
            following = two.second()
            assert (java.poll(), java.poll()) == (head, following)
            keys[following] += 1
            java.offer(following)
            java.offer(head)
            two.requeue_second_up()
        assert two.head() == java.peek()
        assert _same_array(two, java, lowest)
    # Where the last place's parent is on the tree's left edge it is the first lower place to be freed:
    # `around_head` never reads ahead there (the caller steps one by one). Small queues may not reach the
    # shape within the random steps; from 31 elements on, every seed here does.
    assert checked or size < 31 or size == 257
