import uuid

import pytest

from fleet_assignor.assignor import ProcessId


def test_orders_by_signed_halves_like_java():
    high = ProcessId.parse("f0000000-0000-0000-0000-000000000000")
    low = ProcessId.parse("00000000-0000-0000-0000-000000000001")
    mid = ProcessId.parse("80000000-0000-0000-0000-000000000000")
    # Python's unsigned UUID order would put `low` first.
    assert sorted([low, high, mid]) == [mid, high, low]


def test_least_significant_half_is_signed_too():
    a = ProcessId.of(uuid.UUID(int=(1 << 63)))  # lsb with its top bit set: negative
    b = ProcessId.of(1)
    assert a < b


def test_fixture_ids_order_by_n():
    assert sorted(ProcessId.of(n) for n in [3, 1, 2]) == [ProcessId.of(1), ProcessId.of(2), ProcessId.of(3)]


def test_text_round_trip_and_equality():
    text = "6e1f3b4a-9c2d-4e5f-8a7b-1c2d3e4f5a6b"
    pid = ProcessId.parse(text)
    assert str(pid) == text
    assert pid == ProcessId.of(uuid.UUID(text))
    assert hash(pid) == hash(ProcessId.parse(text.upper()))


@pytest.mark.parametrize("text", ["", "not-a-uuid", "1234", None])
def test_rejects_non_uuid(text):
    with pytest.raises(ValueError, match=r"process id .*UUID"):
        ProcessId.parse(text)


def test_pickle_round_trip_keeps_equality_hash_and_order():
    import pickle

    ids = [ProcessId.of(uuid.UUID("80000000-0000-0000-0000-000000000001")), ProcessId.of(3)]
    loaded = pickle.loads(pickle.dumps(ids))
    assert loaded == ids and [hash(p) for p in loaded] == [hash(p) for p in ids]
    assert sorted(loaded) == sorted(ids) and set(loaded) == set(ids)
