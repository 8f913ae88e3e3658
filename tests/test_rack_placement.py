"""assignor.rack.placement: one optimization run (costs, strategy problem, exact solve) and what it reports;
the fallback that admits the input placement when balance_subtopology's caps leave no placement."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fleet_assignor.assignor import RackAwareStrategy, TaskInfo, TaskTopicPartition, TopicPartition
from fleet_assignor.assignor.rack.costs import PartitionScope, RackCosts, RemoteCounts
from fleet_assignor.assignor.rack.graph import subtopology_of
from fleet_assignor.assignor.rack.placement import (
    balanced_pair_placement,
    min_traffic_pair_placement,
    optimize_placement,
    with_input_admitted,
)
from fleet_assignor.assignor.rack.solver import PlacementProblem
from fleet_assignor.assignor.task_id import TaskId
from tests.fixtures import TASK_0_0, TASK_0_1, TASK_1_0, TASK_1_1


def _task(task, rack: str) -> TaskInfo:
    partition = TaskTopicPartition(TopicPartition(f"in-{task}", 0), True, False, frozenset({rack}))
    return TaskInfo(task, False, frozenset(), (partition,))


# Each task's one partition lives on one rack: subtopology 0's on r2, subtopology 1's on r1.
REMOTE = RemoteCounts(
    {t: _task(t, "r2") for t in (TASK_0_0, TASK_0_1)} | {t: _task(t, "r1") for t in (TASK_1_0, TASK_1_1)},
    PartitionScope.ALL,
)


def _run(current, costs, tasks=(TASK_0_0, TASK_1_0), strategy=RackAwareStrategy.MIN_TRAFFIC, allowed=None):
    current = np.array(current, dtype=np.int64)
    allowed = np.ones((len(tasks), 2), dtype=bool) if allowed is None else allowed
    return optimize_placement(
        strategy, list(tasks), ["r1", "r2"], current, allowed, REMOTE, costs, subtopology_of
    )


def test_two_crossed_tasks_swap_when_traffic_outweighs_the_moves():
    outcome = _run([0, 1], RackCosts(traffic=10, non_overlap=1))
    assert outcome.placement.tolist() == [1, 0]
    assert (outcome.remote_before, outcome.remote_after, outcome.moved, outcome.cost) == (2, 0, 2, 2)
    assert outcome.moves() == [(TASK_0_0, 0, 1), (TASK_1_0, 1, 0)]


def test_nothing_moves_when_moving_costs_more_than_the_traffic_saved():
    outcome = _run([0, 1], RackCosts(traffic=1, non_overlap=5))
    assert outcome.placement.tolist() == [0, 1]
    assert (outcome.remote_before, outcome.remote_after, outcome.moved, outcome.cost) == (2, 2, 0, 2)
    assert outcome.moves() == []


def test_a_left_out_edge_is_never_used():
    allowed = np.array([[True, False], [True, True]])
    outcome = _run([0, 1], RackCosts(traffic=10, non_overlap=1), allowed=allowed)
    assert outcome.placement.tolist() == [0, 1]


def test_no_tasks_report_zeros():
    outcome = _run(np.zeros(0, dtype=np.int64), RackCosts(1, 1), tasks=())
    assert (outcome.remote_before, outcome.remote_after, outcome.moved, outcome.cost) == (0, 0, 0, 0)
    assert outcome.moves() == []


def test_with_input_admitted_raises_each_cap_to_the_input_count():
    problem = PlacementProblem(
        costs=np.zeros((3, 2), dtype=np.int64),
        allowed=np.ones((3, 2), dtype=bool),
        current=np.array([0, 0, 1]),
        client_capacity=np.array([2, 1]),
        groups=np.array([0, 0, 1]),
        group_capacity=np.array([[1, 1], [0, 0]]),
    )
    assert with_input_admitted(problem).group_capacity.tolist() == [[2, 1], [0, 1]]
    assert problem.group_capacity.tolist() == [[1, 1], [0, 0]]  # a new problem; the input is unchanged


def test_balance_subtopology_keeps_the_input_when_its_caps_admit_no_placement():
    """Two tasks of each subtopology on two clients of two: the caps allow ceil(2 * 2 / 4) = 1 task of a
    subtopology per client, but neither task of subtopology 0 may leave client 0. No placement meets the
    caps; with the input's counts admitted, the input itself is the answer."""
    tasks = (TASK_0_0, TASK_0_1, TASK_1_0, TASK_1_1)
    allowed = np.array([[True, False], [True, False], [True, True], [True, True]])
    outcome = _run([0, 0, 1, 1], RackCosts(traffic=10, non_overlap=1), tasks=tasks,
                   strategy=RackAwareStrategy.BALANCE_SUBTOPOLOGY, allowed=allowed)  # fmt: skip
    assert outcome.placement.tolist() == [0, 0, 1, 1]
    assert outcome.moved == 0


def _random_changelog_tasks(
    rng: random.Random, racks: list[str]
) -> tuple[dict[TaskId, TaskInfo], RemoteCounts]:
    """60 stateful tasks in 1-5 subtopologies, each with 1-3 changelog partitions on 1 or 2 of `racks`."""
    infos = {}
    for n in range(60):
        task = TaskId(n % rng.randint(1, 5), n)
        partitions = tuple(
            TaskTopicPartition(
                TopicPartition(f"c{n}-{k}", 0), False, True, frozenset(rng.sample(racks, rng.randint(1, 2)))
            )
            for k in range(rng.randint(1, 3))
        )
        infos[task] = TaskInfo(task, True, frozenset({"s"}), partitions)
    return infos, RemoteCounts(infos, PartitionScope.CHANGELOG)


def _balanced_pair(tasks, current, pair, remote, costs):
    return balanced_pair_placement(tasks, current, pair, remote, costs, subtopology_of)


def _min_traffic_pair(tasks, current, pair, remote, costs):
    return min_traffic_pair_placement(tasks, current, pair, remote, costs)


@pytest.mark.parametrize(
    ("strategy", "pair_placement", "seed", "pairs"),
    [
        (RackAwareStrategy.BALANCE_SUBTOPOLOGY, _balanced_pair, 3, 400),
        (RackAwareStrategy.MIN_TRAFFIC, _min_traffic_pair, 5, 600),
    ],
)
def test_plain_python_pair_placement_is_optimize_placement(strategy, pair_placement, seed, pairs):
    """The standby pairs' plain-Python paths (balance_subtopology for the KIP-924 pairs, min_traffic) give
    optimize_placement's placement (two clients, every edge), on random pairs with one or several
    subtopologies, ties (few racks, equal costs) and zero costs."""
    rng = random.Random(seed)
    racks = ["r1", "r2", "r3"]
    infos, remote = _random_changelog_tasks(rng, racks)
    for _ in range(pairs):
        tasks = sorted(rng.sample(sorted(infos), rng.randint(1, 25)))
        current = [rng.randint(0, 1) for _ in tasks]
        pair = rng.sample(racks, 2) if rng.random() < 0.8 else [None, "r1"]
        costs = RackCosts(*rng.choice([(10, 1), (1, 10), (0, 0), (1, 0), (3, 2)]))
        outcome = optimize_placement(
            strategy,
            tasks,
            pair,
            np.array(current, dtype=np.int64),
            np.ones((len(tasks), 2), dtype=bool),
            remote,
            costs,
            subtopology_of,
        )
        assert pair_placement(tasks, current, pair, remote, costs) == outcome.placement.tolist()
