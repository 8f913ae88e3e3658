import random
from operator import attrgetter

import pytest

from fleet_assignor.assignor import TaskId, TaskIdFormatError
from fleet_assignor.assignor.task_id import in_task_order, sorted_task_ids


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0_1", TaskId(0, 1)),
        ("12_340", TaskId(12, 340)),
        ("topo__3_4", TaskId(3, 4, "topo")),
        ("a_b__1_2", TaskId(1, 2, "a_b")),
    ],
)
def test_parse_and_format_round_trip(text, expected):
    assert TaskId.parse(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize(
    "text", ["", "1", "_1", "1_", "a_1", "1_a", "00_1", "1_01", "-1_2", "1_2_3", "__1_2", 7]
)
def test_rejects_non_canonical_or_malformed(text):
    with pytest.raises(TaskIdFormatError, match=r"^task id "):
        TaskId.parse(text)


def test_orders_numerically_not_textually():
    ids = [TaskId.parse(t) for t in ["1_0", "0_10", "0_2", "10_0", "2_1"]]
    assert [str(t) for t in sorted(ids)] == ["0_2", "0_10", "1_0", "2_1", "10_0"]


def test_named_ids_order_by_name_first():
    ids = [TaskId(0, 0, "b"), TaskId(5, 5, "a"), TaskId(0, 1, "a")]
    assert sorted(ids) == [TaskId(0, 1, "a"), TaskId(5, 5, "a"), TaskId(0, 0, "b")]


def test_comparing_named_with_unnamed_raises():
    with pytest.raises(TypeError, match="can't compare a TaskId with a topology name to one without"):
        _ = TaskId(0, 0) < TaskId(0, 0, "x")


def test_sorted_task_ids_is_task_id_order_at_the_edges_of_the_int_key():
    big = 2**31 - 1  # the largest subtopology and partition the loaders accept
    ids = [TaskId(0, big), TaskId(1, 0), TaskId(big, big), TaskId(big, 0), TaskId(0, 0), TaskId(1, big)]
    random.Random(3).shuffle(ids)
    assert sorted_task_ids(ids) == sorted(ids)
    named = [TaskId(2, 1, "b"), TaskId(9, 9, "a"), TaskId(2, 0, "b"), TaskId(0, 0, "a_b")]
    assert sorted_task_ids(named) == sorted(named)


def test_sorted_task_ids_falls_back_on_a_mix_of_named_and_unnamed_ids():
    mixed = [TaskId(1, 0, "x"), TaskId(3, 0), TaskId(0, 5, "x"), TaskId(0, 9)]
    # unnamed first (the sort key copes with a mix) ...
    assert sorted_task_ids(mixed) == [TaskId(0, 9), TaskId(3, 0), TaskId(0, 5, "x"), TaskId(1, 0, "x")]
    # ... and a fallback key that refuses one (Kafka's comparison) still refuses it
    with pytest.raises(TypeError):
        sorted_task_ids(mixed, attrgetter("topology_name", "subtopology", "partition"))


def test_in_task_order_is_sorted_and_refuses_what_sorted_refuses():
    rng = random.Random(5)
    big = 2**31 - 1
    for _ in range(200):
        ids = list({TaskId(rng.choice((0, 1, 9, 10, big)), rng.choice((0, 2, 11, big))) for _ in range(8)})
        rng.shuffle(ids)
        assert in_task_order(iter(ids)) == sorted(ids)
        named = list({TaskId(rng.randint(0, 12), rng.randint(0, 3), rng.choice("ab")) for _ in range(6)})
        assert in_task_order(named) == sorted(named)
    mixed = [TaskId(1, 0, "x"), TaskId(3, 0), TaskId(0, 5, "x"), TaskId(0, 9)]
    for order in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]):
        with pytest.raises(TypeError):
            in_task_order([mixed[i] for i in order])
    # Not TaskIds (a custom assignor's mistake): what sorted() makes of them, result or error.
    for odd in (["1_0", "0_2"], [TaskId(0, 1), "0_2"], ["0_2", TaskId(0, 1)]):
        try:
            expected = sorted(odd)
        except Exception as error:
            with pytest.raises(type(error)):
                in_task_order(odd)
        else:
            assert in_task_order(odd) == expected


def test_equality_and_hash_include_the_name():
    assert TaskId(0, 1) != TaskId(0, 1, "x")
    assert len({TaskId(0, 1), TaskId.parse("0_1"), TaskId(0, 1, "x")}) == 2


def test_pickled_ids_are_found_in_an_interpreter_with_another_hash_seed():
    """A TaskId caches its hash, which for named ids depends on the interpreter's string-hash seed: an id
    pickled here and loaded in a worker must still be found in that worker's sets and dicts."""
    import base64
    import os
    import pickle
    import subprocess
    import sys

    ids = [TaskId.parse("orders__1_7"), TaskId.parse("0_3")]
    payload = base64.b64encode(pickle.dumps(ids)).decode()
    probe = (
        "import base64, pickle, sys\n"
        "from fleet_assignor.assignor import TaskId\n"
        f"loaded = pickle.loads(base64.b64decode({payload!r}))\n"
        "fresh = {TaskId.parse('orders__1_7'), TaskId.parse('0_3')}\n"
        "sys.exit(0 if all(t in fresh for t in loaded) else 1)\n"
    )
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=os.getcwd())
    assert done.returncode == 0, "an unpickled TaskId is not found among the same ids parsed in the worker"


def test_equal_ids_are_one_immutable_object():
    """Equality is identity (hashing in C): every way of making an id gives the one object."""
    import copy
    import pickle

    assert TaskId(1, 2) is TaskId.parse("1_2")
    assert TaskId(1, 2, "orders") is TaskId.parse("orders__1_2")
    assert copy.deepcopy(TaskId(0, 3)) is TaskId(0, 3)
    assert pickle.loads(pickle.dumps(TaskId(0, 3, "t"))) is TaskId(0, 3, "t")
    with pytest.raises(AttributeError, match="immutable"):
        TaskId(0, 1).partition = 2  # type: ignore[misc]


def test_an_id_nothing_uses_any_more_is_not_kept():
    """The table of ids is weak: a worker that meets many topology names keeps only the ids in use."""
    import gc
    import weakref

    gone = weakref.ref(TaskId(7, 7, "used-once"))
    gc.collect()
    assert gone() is None
    kept = TaskId(7, 8, "still-used")
    gc.collect()
    assert TaskId(7, 8, "still-used") is kept
