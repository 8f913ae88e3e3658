"""assignor.rack.graph: the starting flow's checks, the exact subtopology caps and the problem each strategy
builds (rack.md §4.3, §4.4; POLICY.md §4)."""

from __future__ import annotations

import numpy as np
import pytest

from fleet_assignor.assignor import RackAwareStrategy, TaskId
from fleet_assignor.assignor.rack.graph import (
    RackAssignmentError,
    build_problem,
    ceil_share,
    current_holders,
    legacy_subtopology_of,
    subtopology_of,
)
from tests.fixtures import PID_1, PID_2, TASK_0_0, TASK_0_1, TASK_1_0


def test_current_holders_maps_each_task_to_its_client_and_ignores_other_tasks():
    held = [{TASK_0_1, TaskId(9, 9)}, {TASK_0_0}]
    assert current_holders([TASK_0_0, TASK_0_1], [PID_1, PID_2], held).tolist() == [1, 0]


def test_a_task_held_twice_is_not_a_valid_starting_flow():
    with pytest.raises(RackAssignmentError, match=f"Task 0_0 assigned to multiple clients {PID_2}, {PID_1}"):
        current_holders([TASK_0_0], [PID_1, PID_2], [{TASK_0_0}, {TASK_0_0}])


def test_a_task_held_by_nobody_is_not_a_valid_starting_flow():
    with pytest.raises(RackAssignmentError, match="Task 0_1 not assigned to any client"):
        current_holders([TASK_0_0, TASK_0_1], [PID_1], [{TASK_0_0}])


def test_ceil_share_is_exact_integer_arithmetic():
    """ceil(orig * v / T) in integers: 7 * 3 / 21 is exactly 1 (not rounded up), 8 * 3 / 21 rounds up to 2."""
    assert ceil_share(np.array([7, 8, 0]), 3, 21).tolist() == [1, 2, 0]


def _problem(strategy, tasks, current, clients=2):
    costs = np.zeros((len(tasks), clients), dtype=np.int64)
    allowed = np.ones_like(costs, dtype=bool)
    return build_problem(strategy, tasks, costs, allowed, np.array(current), clients, subtopology_of)


def test_min_traffic_keeps_each_client_count_in_one_group():
    problem = _problem(RackAwareStrategy.MIN_TRAFFIC, [TASK_0_0, TASK_0_1, TASK_1_0], [0, 0, 1])
    assert problem.client_capacity.tolist() == [2, 1]
    assert problem.groups.tolist() == [0, 0, 0]
    assert problem.group_capacity.tolist() == [[2, 1]]


def test_balance_subtopology_caps_each_subtopology_per_client():
    """Subtopology 0 has 2 of 3 tasks: client 0 (2 tasks) may hold ceil(2*2/3) = 2, client 1 ceil(1*2/3) = 1;
    subtopology 1 (1 task): ceil(2/3) = 1 and ceil(1/3) = 1."""
    problem = _problem(RackAwareStrategy.BALANCE_SUBTOPOLOGY, [TASK_0_0, TASK_0_1, TASK_1_0], [0, 0, 1])
    assert problem.groups.tolist() == [0, 0, 1]
    assert problem.group_capacity.tolist() == [[2, 1], [1, 1]]


def test_balance_subtopology_without_tasks_has_no_groups():
    problem = _problem(RackAwareStrategy.BALANCE_SUBTOPOLOGY, [], np.zeros(0, dtype=np.int64))
    assert problem.group_capacity.shape == (0, 2)


def test_strategy_none_builds_no_problem():
    with pytest.raises(ValueError, match="Rack aware assignment is disabled"):
        _problem(RackAwareStrategy.NONE, [TASK_0_0], [0])


def test_groupings_kip924_by_number_legacy_by_named_topology_too():
    named = TaskId(1, 0, "orders")
    assert subtopology_of(named) == subtopology_of(TASK_1_0) == 1
    assert legacy_subtopology_of(named) == ("orders", 1)
    assert legacy_subtopology_of(TASK_1_0) == ("", 1)
    assert legacy_subtopology_of(named) != legacy_subtopology_of(TASK_1_0)
