"""The pairs `SwapBounds` rules out would not have moved anything: the pairwise standby swaps give the same
standbys, pair by pair, as Kafka's loop over every pair, on random inputs (costs zero or not, racks with
and without the task's replicas, predicates that refuse some moves), on the legacy path and on the KIP-924
one (with and without client tags)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fleet_assignor.assignor import ClientState, KafkaStreamsState, TaskInfo
from fleet_assignor.assignor.assignment import AssignedTask, KafkaStreamsAssignment
from fleet_assignor.assignor.rack import RackAwareTaskAssignor
from fleet_assignor.assignor.rack.costs import PartitionScope, RackCosts, RemoteCounts
from fleet_assignor.assignor.rack.graph import ceil_share
from fleet_assignor.assignor.rack.legacy import STANDBY_OPTIMIZER_MAX_ITERATION
from fleet_assignor.assignor.rack.swaps import SwapScreen, _breaks_caps, swap_rounds
from fleet_assignor.assignor.rack.tag_spread import TagSpreadDestinations
from fleet_assignor.assignor.rack.utils import (
    _movable,
    _swap_pair,
    _swap_screen,
    _swap_standbys_pairwise,
)
from fleet_assignor.assignor.standby import (
    AnyStandbyMove,
    ClientStateView,
    TagSpreadStandbyMove,
    tag_spread_allows_move,
)
from fleet_assignor.assignor.task_assignment_utils import standby_move_predicate
from fleet_assignor.assignor.task_id import sorted_task_ids
from fleet_assignor.assignor.task_movement import TASK_ORDER
from tests.fixtures import pid, rack_app_state, tid, ttp

COSTS = [(10, 1), (1, 10), (0, 0), (1, 0), (0, 1), (3, 2)]


def _topology(rng: random.Random, tasks: int, racks: list[str]) -> list[TaskInfo]:
    infos = []
    for n in range(tasks):
        changelogs = [
            ttp(f"store-{k}-changelog", n, rng.sample(racks, rng.randint(1, len(racks))), source=False,
                changelog=True)
            for k in range(rng.randint(1, 3))
        ]  # fmt: skip
        source = ttp("in", n, rng.sample(racks, 1), source=True, changelog=False)
        infos.append(TaskInfo(tid(f"{n % 3}_{n}"), True, frozenset({"s"}), (source, *changelogs)))
    return infos


def _random_case(seed: int):
    rng = random.Random(seed)
    racks = [f"rack{r}" for r in range(rng.randint(2, 4))]
    clients = rng.randint(3, 24)
    infos = _topology(rng, rng.randint(clients, 4 * clients), racks)
    app = rack_app_state(
        infos,
        [KafkaStreamsState(pid(n + 1), 1, (f"c{n}",), rack_id=rng.choice(racks)) for n in range(clients)],
        rack_aware_assignment_strategy="min_traffic",
        num_standby_replicas=2,
    )
    states = {p: ClientState.from_kafka_streams_state(s) for p, s in app.clients.items()}
    order = sorted(states)
    for info in infos:
        holders = rng.sample(order, min(len(order), rng.randint(1, 3)))
        states[holders[0]].assign_active(info.id)
        for holder in holders[1:]:
            states[holder].assign_standby(info.id)
    refused = {(rng.choice(order), rng.choice(infos).id) for _ in range(rng.randint(0, 10))}

    def predicate(source, destination, task, _clients) -> bool:
        return (destination.process_id, task) not in refused

    return app, states, predicate


def _every_pair(rack: RackAwareTaskAssignor, clients, costs: RackCosts, predicate) -> list[tuple]:
    """Kafka's loop: every pair, every round while anything moved; the pairs that moved, in order."""
    moved_pairs = []
    client_ids = sorted(clients)
    moved, rounds = True, 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved, rounds = False, rounds + 1
        for i, first in enumerate(client_ids):
            for second in client_ids[i + 1 :]:
                if rack._optimize_pair(clients, first, second, costs, predicate):
                    moved = True
                    moved_pairs.append((rounds, first, second))
    return moved_pairs


def _standbys(states) -> dict:
    return {p: sorted(s.standby_tasks) for p, s in states.items()}


@pytest.mark.parametrize("seed", range(60))
def test_the_pairs_ruled_out_leave_the_same_standbys_as_every_pair(seed):
    app, states, predicate = _random_case(seed)
    _, expected_states, _ = _random_case(seed)  # the same input again, for the full loop
    traffic, non_overlap = COSTS[seed % len(COSTS)]
    costs = RackCosts(traffic, non_overlap)
    expected_pairs = _every_pair(RackAwareTaskAssignor(app), expected_states, costs, predicate)

    rack = RackAwareTaskAssignor(app)
    solved: list[tuple] = []
    original = rack._optimize_pair

    def recording(clients, first, second, costs, move_predicate):
        moved = original(clients, first, second, costs, move_predicate)
        if moved:
            solved.append((first, second))
        return moved

    rack._optimize_pair = recording  # type: ignore[method-assign]
    after = rack.optimize_standby_tasks(states, traffic, non_overlap, predicate)

    assert _standbys(states) == _standbys(expected_states)
    assert solved == [(first, second) for _, first, second in expected_pairs]
    assert after == RackAwareTaskAssignor(app).standby_cost(expected_states, traffic)


def _own_rule(seed: int):
    """One of the assignors' own movement rules (which the optimizer screens with `SwapScreen`): every move
    allowed, or the client-tag rule over random zone / cluster tags."""
    if seed % 3 == 0:
        return AnyStandbyMove()
    rng = random.Random(seed)
    tags = {
        pid(n + 1): {"zone": rng.choice(["z1", "z2", "z3"]), "cluster": rng.choice(["k1", "k2"])}
        for n in range(30)
    }
    if seed % 3 == 1:
        tags = {p: {"zone": t["zone"]} for p, t in tags.items()}
    return TagSpreadStandbyMove(lambda state: tags[state.process_id])


@pytest.mark.parametrize("seed", range(45))
def test_the_screened_pairs_leave_the_same_standbys_as_every_pair(seed, monkeypatch):
    """With the assignors' own rules the legacy loop gives Kafka's loop's result, pair by pair; with the
    client-tag rule it solves only the pairs `SwapScreen` lets through, exactly the pairs that move."""
    app, states, _ = _random_case(seed)
    _, expected_states, _ = _random_case(seed)
    rule = _own_rule(seed)
    traffic, non_overlap = COSTS[seed // 3 % len(COSTS)]  # every rule with every cost pair
    costs = RackCosts(traffic, non_overlap)
    expected_pairs = _every_pair(RackAwareTaskAssignor(app), expected_states, costs, rule)

    rack = RackAwareTaskAssignor(app)
    solved: list[tuple] = []
    original = rack._swap_standbys

    def recording(a, b, movable_a, movable_b, costs):  # AnyStandbyMove: SwapBounds, not exact
        moves = original(a, b, movable_a, movable_b, costs)
        if moves:
            solved.append((a.process_id, b.process_id))
        return moves

    rack._swap_standbys = recording  # type: ignore[method-assign]
    screened_pair = SwapScreen.pair
    client_ids = sorted(states)

    def asked(screen, first, second):  # the tag rule: every pair the screen lets through is solved
        solved.append((client_ids[first], client_ids[second]))
        return screened_pair(screen, first, second)

    monkeypatch.setattr(SwapScreen, "pair", asked)
    rack.optimize_standby_tasks(states, traffic, non_overlap, rule)

    assert _standbys(states) == _standbys(expected_states)
    assert solved == [(first, second) for _, first, second in expected_pairs]


def test_the_tag_rule_for_all_destinations_is_the_scalar_rule():
    rng = random.Random(7)
    for _ in range(200):
        clients = rng.randint(2, 9)
        tags = [
            {
                k: rng.choice(["a", "b", "c"])
                for k in rng.sample(["zone", "cluster", "host"], rng.randint(0, 3))
            }
            for _ in range(clients)
        ]
        holders = set(rng.sample(range(clients), rng.randint(1, clients)))
        source = rng.choice(sorted(holders))
        states = {pid(n + 1): ClientState(pid(n + 1), 1, client_tags=tags[n]) for n in range(clients)}
        task = tid("0_0")
        for n in holders:
            states[pid(n + 1)].assign_standby(task)
        allowed = TagSpreadDestinations([t.items() for t in tags]).allowed(source, holders)
        for destination in range(clients):
            if destination in holders:
                continue
            expected = tag_spread_allows_move(
                ClientStateView(states), pid(source + 1), pid(destination + 1), task
            )
            assert bool(allowed[destination]) == expected


def test_random_cases_do_move_standbys():
    """The comparison above means something only if some cases swap."""
    moved = 0
    for seed in range(60):
        app, states, predicate = _random_case(seed)
        traffic, non_overlap = COSTS[seed % len(COSTS)]
        costs = RackCosts(traffic, non_overlap)
        moved += bool(_every_pair(RackAwareTaskAssignor(app), states, costs, predicate))
    assert moved >= 20


def _kip924_case(seed: int, strategy: str, tags: bool):
    """An application and random standbys for `rack.utils._swap_standbys_pairwise` (the KIP-924 path)."""
    rng = random.Random(seed)
    racks = [f"rack{r}" for r in range(rng.randint(2, 4))]
    clients = rng.randint(3, 20)
    infos = _topology(rng, rng.randint(clients, 4 * clients), racks)
    states = []
    for n in range(clients):
        rack = rng.choice(racks)
        zone = {"zone": rng.choice(["z1", "z2", rack])} if tags else {}
        states.append(KafkaStreamsState(pid(n + 1), 1, (f"c{n}",), rack_id=rack, client_tags=zone))
    configs = {"rack_aware_assignment_tags": ("zone",)} if tags else {}
    app = rack_app_state(
        infos, states, rack_aware_assignment_strategy=strategy, num_standby_replicas=2, **configs
    )
    assignments = {p: KafkaStreamsAssignment(p) for p in app.clients}
    order = sorted(assignments)
    for info in infos:
        holders = rng.sample(order, min(len(order), rng.randint(1, 3)))
        assignments[holders[0]].assign_task(AssignedTask.active(info.id))
        for holder in holders[1:]:
            assignments[holder].assign_task(AssignedTask.standby(info.id))
    return app, assignments


def _kip924_every_pair(app, assignments, costs: RackCosts) -> None:
    """Kafka's loop over every pair on the KIP-924 path (`_swap_standbys_pairwise` before SwapBounds)."""
    optimized = {t for a in assignments.values() for t in a.standby_tasks()}
    remote = RemoteCounts(app.all_tasks(), PartitionScope.CHANGELOG)
    predicate = standby_move_predicate(app)
    strategy = app.assignment_configs().rack_aware_assignment_strategy
    client_ids = sorted(app.clients)
    moved, rounds = True, 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved, rounds = False, rounds + 1
        for i, first in enumerate(client_ids):
            for second in client_ids[i + 1 :]:
                moved |= _swap_pair(
                    app, assignments, first, second, optimized, predicate, strategy, remote, costs
                )


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("seed", range(30))
def test_the_kip924_pairwise_swaps_leave_the_same_standbys_as_every_pair(seed, strategy):
    traffic, non_overlap = COSTS[seed % len(COSTS)]
    costs = RackCosts(traffic, non_overlap)
    app, assignments = _kip924_case(seed, strategy, tags=seed % 2 == 0)
    _, expected = _kip924_case(seed, strategy, tags=seed % 2 == 0)
    _kip924_every_pair(app, expected, costs)
    optimized = {t for a in assignments.values() for t in a.standby_tasks()}
    remote = RemoteCounts(app.all_tasks(), PartitionScope.CHANGELOG)
    _swap_standbys_pairwise(app, assignments, optimized, remote, costs)
    assert {p: a.tasks() for p, a in assignments.items()} == {p: a.tasks() for p, a in expected.items()}


def _checked_moves(seed: int) -> int:
    """One pairwise run of a random balance_subtopology case with the screen's movable counts compared to a
    recount after every move; how many moves were checked."""
    traffic, non_overlap = COSTS[seed % len(COSTS)]
    costs = RackCosts(traffic, non_overlap)
    app, assignments = _kip924_case(seed, "balance_subtopology", tags=seed % 2 == 0)
    optimized = {t for a in assignments.values() for t in a.standby_tasks()}
    remote = RemoteCounts(app.all_tasks(), PartitionScope.CHANGELOG)
    strategy = app.assignment_configs().rack_aware_assignment_strategy
    client_ids = sorted(app.clients)
    screen: SwapScreen = _swap_screen(app, assignments, client_ids, optimized, remote, costs, strategy)
    checked = 0

    def swap(i: int, j: int) -> bool:
        nonlocal checked
        standbys = screen.pair(i, j)
        moves = [] if standbys is None else standbys.moves(costs)
        if moves:
            screen.moved_rows([(row, (i, j)[destination]) for row, _, destination in moves])
            if screen._movable is not None:
                recount = screen._movable_counts(len(client_ids))
                assert np.array_equal(screen._movable, recount), seed
                if screen._towards_client >= 0:
                    towards = recount[:, :, screen._towards_client].T
                    assert np.array_equal(screen._towards, towards), seed
                checked += 1
        return bool(moves)

    swap_rounds(len(client_ids), screen, swap)
    return checked


def _pairs_checked(seed: int, strategy: str) -> int:
    """Every pair's `SwapScreen.pair` of one random case against the predicate's movable standbys; how many
    pairs had a problem to solve."""
    app, assignments = _kip924_case(seed, strategy, tags=seed % 2 == 0)
    optimized = {t for a in assignments.values() for t in a.standby_tasks()}
    remote = RemoteCounts(app.all_tasks(), PartitionScope.CHANGELOG)
    predicate = standby_move_predicate(app)
    client_ids = sorted(app.clients)
    screen = _swap_screen(
        app, assignments, client_ids, optimized, remote, RackCosts(1, 10),
        app.assignment_configs().rack_aware_assignment_strategy,
    )  # fmt: skip
    racks = [app.clients[c].rack_id for c in client_ids]
    solved = 0
    for i, first in enumerate(client_ids):
        for j, second in enumerate(client_ids[i + 1 :], start=i + 1):
            given = _movable(app, assignments, first, second, optimized, predicate)
            taken = _movable(app, assignments, second, first, optimized, predicate)
            standbys = screen.pair(i, j)
            if not given or not taken:
                assert standbys is None, (seed, i, j)
                continue
            assert standbys is not None, (seed, i, j)
            tasks = [screen.task(row) for row in standbys.rows]
            assert tasks == sorted_task_ids(given | taken, TASK_ORDER)
            assert standbys.holders == [0 if t in given else 1 for t in tasks]
            assert standbys.first_remote == [remote.count(t, racks[i]) for t in tasks]
            assert standbys.second_remote == [remote.count(t, racks[j]) for t in tasks]
            for a, b in zip(tasks, standbys.groups, strict=True):
                for c, d in zip(tasks, standbys.groups, strict=True):
                    ordered = strategy == "balance_subtopology" and a.subtopology < c.subtopology
                    assert (b < d) == ordered, (seed, i, j)
            solved += 1
    return solved


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_the_screens_pair_is_the_pairs_problem_of_its_movable_standbys(strategy):
    """What `SwapScreen.pair` hands a pair's solve, for every pair of random cases (with and without client
    tags), is the problem of the standbys the move predicate lets each side give the other: the same tasks in
    task order, the same holders and remote partitions on each rack, groups ordered as the subtopologies
    (one group for min_traffic); None exactly where a side has nothing to give."""
    assert sum(_pairs_checked(seed, strategy) for seed in range(16)) >= 100


def test_the_screens_movable_counts_follow_the_moves():
    """balance_subtopology's screen keeps, per client, group and destination, how many of the client's
    standbys of the group may move there, updated row by row on each move: after every move of pairwise
    runs (random cases, with and without client tags) they equal a recount from the screen's rows."""
    assert sum(_checked_moves(seed) for seed in range(40)) >= 50


def test_the_screens_cap_check_is_the_graphs_ceil_share():
    """balance_subtopology's caps of a pair (graph.py: each side's count of a group at most
    ceil(side's count x group's size / pair's count)), broken by the input or not, as the screen reads
    them from its counts in one comparison."""
    rng = random.Random(11)
    for _ in range(400):
        groups, partners = rng.randint(1, 6), rng.randint(1, 8)
        here = np.array([[rng.randint(0, 4) for _ in range(partners)] for _ in range(groups)])
        there = np.array([[rng.choice((0, 0, 1, 3, 6)) for _ in range(partners)] for _ in range(groups)])
        given, taken = here.sum(axis=0), there.sum(axis=0)
        expected = []
        for p in range(partners):
            total = int(given[p] + taken[p])
            sizes = here[:, p] + there[:, p]
            broken = total > 0 and any(
                here[g, p] > ceil_share(given[p], int(sizes[g]), total)
                or there[g, p] > ceil_share(taken[p], int(sizes[g]), total)
                for g in range(groups)
            )
            expected.append(broken)
        assert _breaks_caps(here, there, given, taken).tolist() == expected
