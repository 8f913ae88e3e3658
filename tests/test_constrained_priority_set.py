import random

from fleet_assignor.assignor import ConstrainedPrioritySet, ProcessId, TaskId

T = TaskId(0, 0)


def _reference_poll(members, weight, ok):
    for client in sorted(members, key=lambda c: (weight(c), c)):
        if ok(client):
            return client
    return None


def test_poll_returns_least_loaded_then_smallest_process_id_and_removes_it():
    load = {ProcessId.of(1): 2.0, ProcessId.of(2): 1.0, ProcessId.of(3): 1.0}
    s = ConstrainedPrioritySet(lambda c, t: True, load.__getitem__)
    s.offer_all(load)
    assert s.poll(T) == ProcessId.of(2)
    assert s.poll(T) == ProcessId.of(3)
    assert s.poll(T) == ProcessId.of(1)
    assert s.poll(T) is None


def test_rejected_clients_stay_and_none_leaves_the_set_unchanged():
    load = {ProcessId.of(n): float(n) for n in range(1, 4)}
    s = ConstrainedPrioritySet(lambda c, t: c != ProcessId.of(1), load.__getitem__)
    s.offer_all(load)
    assert s.poll(T, lambda c: c == ProcessId.of(3)) == ProcessId.of(3)
    assert s.poll(T, lambda c: False) is None
    assert len(s) == 2 and ProcessId.of(1) in s


def test_matches_min_over_current_weights_under_the_reoffer_discipline():
    rng = random.Random(7)
    for _ in range(200):
        clients = [ProcessId.of(rng.randrange(1, 50)) for _ in range(rng.randrange(1, 8))]
        load = {c: float(rng.randrange(0, 4)) for c in clients}

        def below_six(client, _task=None, load=load):
            return load[client] < 6

        s = ConstrainedPrioritySet(below_six, load.__getitem__)
        s.offer_all(clients)
        members = set(clients)
        for _ in range(20):
            if rng.random() < 0.6:
                got = s.poll(T)
                want = _reference_poll(members, load.__getitem__, below_six)
                assert got == want
                if got is not None:
                    members.discard(got)
                    load[got] += rng.choice([0.5, 1.0])
                    if rng.random() < 0.8:
                        s.offer(got)
                        members.add(got)
            else:
                client = rng.choice(clients)
                load[client] = float(rng.randrange(0, 4))
                s.offer(client)
                members.add(client)
