"""The exact solver against independent methods: brute force on tiny instances, an LP (HiGHS) on larger
ones. Both compare the optimum (cost, then moves), never the particular placement."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from fleet_assignor.assignor.rack.graph import ceil_share
from fleet_assignor.assignor.rack.solver import (
    SMALL_SOLVER_MAX_CLIENTS,
    InfeasiblePlacementError,
    PlacementProblem,
    _SmallSolver,
    _Solver,
    _TwoClientSolver,
    input_is_the_optimum,
    solve_placement,
    tie_broken_costs,
)


def _random_problem(rng: np.random.Generator, tasks: int, clients: int, groups: int, exclude: float):
    current = rng.integers(0, clients, tasks)
    capacity = np.bincount(current, minlength=clients).astype(np.int64)
    costs = rng.integers(0, 6, (tasks, clients)).astype(np.int64)
    allowed = rng.random((tasks, clients)) >= exclude
    allowed[np.arange(tasks), current] = True  # the input placement is always feasible
    group = rng.integers(0, groups, tasks)
    sizes = np.bincount(group, minlength=groups)
    caps = np.stack([ceil_share(capacity, int(v), tasks) for v in sizes])
    return PlacementProblem(costs, allowed, current, capacity, group, caps)


def _check_feasible(problem: PlacementProblem, placement: np.ndarray) -> None:
    tasks, clients = problem.costs.shape
    assert problem.allowed[np.arange(tasks), placement].all()
    assert (np.bincount(placement, minlength=clients) == problem.client_capacity).all()
    per_group = np.zeros_like(problem.group_capacity)
    np.add.at(per_group, (problem.groups, placement), 1)
    assert (per_group <= problem.group_capacity).all()


def _objective(problem: PlacementProblem, placement: np.ndarray) -> tuple[int, int]:
    rows = np.arange(len(placement))
    return int(problem.costs[rows, placement].sum()), int((placement != problem.current).sum())


def _brute_force(problem: PlacementProblem) -> tuple[int, int]:
    tasks, clients = problem.costs.shape
    best = None
    for choice in itertools.product(range(clients), repeat=tasks):
        placement = np.array(choice, dtype=np.int64)
        try:
            _check_feasible(problem, placement)
        except AssertionError:
            continue
        value = _objective(problem, placement)
        best = value if best is None or value < best else best
    return best


def test_matches_brute_force_on_hundreds_of_tiny_instances():
    rng = np.random.default_rng(20241025)
    for _ in range(300):
        problem = _random_problem(
            rng, int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 3)), exclude=0.25
        )
        placement = solve_placement(problem)
        _check_feasible(problem, placement)
        assert _objective(problem, placement) == _brute_force(problem)


def _lp_optimum(problem: PlacementProblem) -> float:
    """min sum(c'x) over the transportation polytope with group caps; c' = cost * (T+1) + moved, so the LP
    optimum encodes (cost, moves) lexicographically. Totally unimodular: the LP optimum is integral."""
    tasks, clients = problem.costs.shape
    scaled = problem.costs * (tasks + 1) + 1
    scaled[np.arange(tasks), problem.current] -= 1
    n = tasks * clients
    columns = np.arange(n)
    per_task = sp.csr_matrix((np.ones(n), (np.repeat(np.arange(tasks), clients), columns)), shape=(tasks, n))
    per_client = sp.csr_matrix(
        (np.ones(n), (np.tile(np.arange(clients), tasks), columns)), shape=(clients, n)
    )
    groups = problem.group_capacity.shape[0]
    rows = np.repeat(problem.groups, clients) * clients + np.tile(np.arange(clients), tasks)
    per_group = sp.csr_matrix((np.ones(n), (rows, columns)), shape=(groups * clients, n))
    bounds = [(0, 1 if ok else 0) for ok in problem.allowed.ravel()]
    result = linprog(
        scaled.ravel().astype(float),
        A_eq=sp.vstack([per_task, per_client]),
        b_eq=np.concatenate([np.ones(tasks), problem.client_capacity]),
        A_ub=per_group,
        b_ub=problem.group_capacity.ravel(),
        bounds=bounds,
        method="highs",
    )
    assert result.status == 0
    return result.fun


@pytest.mark.parametrize("seed", range(4))
def test_matches_linear_programming_on_larger_instances(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        tasks, clients = int(rng.integers(5, 40)), int(rng.integers(2, 7))
        problem = _random_problem(rng, tasks, clients, int(rng.integers(1, 5)), exclude=0.2)
        placement = solve_placement(problem)
        _check_feasible(problem, placement)
        cost, moves = _objective(problem, placement)
        assert cost * (tasks + 1) + moves == round(_lp_optimum(problem))


def test_keeps_the_input_when_every_placement_costs_the_same():
    rng = np.random.default_rng(7)
    problem = _random_problem(rng, 30, 5, 1, exclude=0.0)
    flat = PlacementProblem.single_group(
        np.zeros_like(problem.costs), problem.allowed, problem.current, problem.client_capacity
    )
    assert (solve_placement(flat) == problem.current).all()


def test_same_input_same_placement():
    rng = np.random.default_rng(11)
    problem = _random_problem(rng, 60, 6, 3, exclude=0.1)
    assert solve_placement(problem).tolist() == solve_placement(problem).tolist()


def _full_solve(problem: PlacementProblem) -> np.ndarray:
    """The successive-shortest-path solve itself, without the input-is-optimal shortcut."""
    return _Solver(tie_broken_costs(problem.costs, problem.allowed, problem.current), problem).run()


@pytest.mark.parametrize("seed", range(4))
def test_the_input_is_declared_optimal_only_when_the_full_solve_keeps_it(seed):
    """`input_is_the_optimum` lets solve_placement return the input; the full solve must agree every time
    it says so, on random inputs and on inputs that are an optimum already (the solve's own output)."""
    rng = np.random.default_rng(seed)
    declared = 0
    for _ in range(150):
        tasks, clients = int(rng.integers(3, 40)), int(rng.integers(3, 9))
        problem = _random_problem(rng, tasks, clients, int(rng.integers(1, 4)), float(rng.choice([0.0, 0.3])))
        optimum = _full_solve(problem)
        again = PlacementProblem(problem.costs, problem.allowed, optimum, problem.client_capacity,
                                 problem.groups, problem.group_capacity)  # fmt: skip
        for candidate in (problem, again):
            if input_is_the_optimum(candidate):
                declared += 1
                assert np.array_equal(_full_solve(candidate), candidate.current)
                assert np.array_equal(solve_placement(candidate), candidate.current)
        if problem.group_capacity.shape[0] == 1:
            # One group: an optimum has no cycle of moves that lowers the cost, so it is always declared.
            assert input_is_the_optimum(again)
    assert declared >= 50


def _as_the_general_solver_places(solver, problem: PlacementProblem) -> np.ndarray | None:
    """``solver``'s placement (a class with ``of(scaled costs, problem).run()``), checked equal to
    `_Solver`'s; None where both find none."""
    scaled = tie_broken_costs(problem.costs, problem.allowed, problem.current)
    try:
        general = _Solver(scaled, problem).run()
    except InfeasiblePlacementError:
        with pytest.raises(InfeasiblePlacementError):
            solver.of(scaled, problem).run()
        return None
    placement = np.array(solver.of(scaled, problem).run())
    assert np.array_equal(placement, general)
    return placement


@pytest.mark.parametrize("seed", range(4))
def test_the_two_client_solver_is_the_general_solver(seed):
    """`_TwoClientSolver` is `_Solver` for two clients: the same placement on random problems with group
    caps (tight and loose), many ties (small integer costs), left-out edges, and infeasible ones."""
    rng = np.random.default_rng(seed)
    compared = 0
    for k in range(500):
        tasks = int(rng.integers(1, 30))
        groups = np.unique(rng.integers(0, int(rng.integers(1, 6)), tasks), return_inverse=True)[1]
        costs = rng.integers(0, int(rng.integers(1, 6)), (tasks, 2))
        current = rng.integers(0, 2, tasks)
        allowed = np.ones((tasks, 2), dtype=bool)
        if k % 3 == 0:
            allowed = rng.random((tasks, 2)) > 0.15
            allowed[np.arange(tasks), current] = True
        counts = np.bincount(current, minlength=2).astype(np.int64)
        caps = np.stack([ceil_share(counts, int(size), tasks) for size in np.bincount(groups)])
        if k % 5 == 0:
            caps = caps + rng.integers(0, 2, caps.shape)
        problem = PlacementProblem(costs, allowed, current, counts, groups, caps)
        two_clients = _as_the_general_solver_places(_TwoClientSolver, problem)
        if two_clients is None:
            continue
        if input_is_the_optimum(problem):  # the pair shortcut (`placement.balanced_pair_placement`) skips it
            assert np.array_equal(two_clients, current)
        compared += 1
    assert compared > 400


@pytest.mark.parametrize("seed", range(4))
def test_the_small_solver_is_the_general_solver(seed):
    """`_SmallSolver` (plain Python, what solve_placement runs for a few clients) is `_Solver`: the same
    placement on random problems of 2 to SMALL_SOLVER_MAX_CLIENTS clients with many ties (small integer
    costs), one or several groups, tight and loose caps, left-out edges and tasks held by no client, and
    the same failure on the infeasible ones."""
    rng = np.random.default_rng(seed)
    compared = infeasible = 0
    for k in range(400):
        tasks, clients = int(rng.integers(1, 50)), int(rng.integers(2, SMALL_SOLVER_MAX_CLIENTS + 1))
        groups = np.unique(rng.integers(0, int(rng.integers(1, 6)), tasks), return_inverse=True)[1]
        current = rng.integers(-1 if k % 4 == 0 else 0, clients, tasks)
        counts = np.bincount(rng.integers(0, clients, tasks), minlength=clients).astype(np.int64)
        if k % 2 and (current >= 0).all():
            counts = np.bincount(current, minlength=clients).astype(np.int64)
        caps = np.stack([ceil_share(counts, int(size), tasks) for size in np.bincount(groups)])
        caps = caps + rng.integers(0, 2, caps.shape) * int(k % 3 == 0)
        if k % 5 == 4:  # a group shut out of one client: often no placement meets the counts
            caps[int(rng.integers(0, len(caps))), int(rng.integers(0, clients))] = 0
        allowed = rng.random((tasks, clients)) > (0.3 if k % 3 == 1 else 0.0)
        held = current >= 0
        allowed[np.nonzero(held)[0], current[held]] = True
        costs = rng.integers(0, int(rng.choice([2, 4, 20])), (tasks, clients))
        problem = PlacementProblem(costs, allowed, current, counts, groups, caps)
        if _as_the_general_solver_places(_SmallSolver, problem) is None:
            infeasible += 1
        else:
            compared += 1
    assert compared > 250 and infeasible > 10


def test_the_two_client_solver_is_the_general_solver_on_standby_pairs():
    """The shape of the balance_subtopology standby pairs (up to 10 groups, ~20 tasks, the input over its
    caps, costs 0-3 so that many tasks tie): `_TwoClientSolver`, whose search settles the sink at once when
    it is next, places every task as `_Solver` does."""
    rng = np.random.default_rng(11)
    for _ in range(600):
        tasks = int(rng.integers(2, 40))
        groups = np.unique(rng.integers(0, int(rng.integers(1, 11)), tasks), return_inverse=True)[1]
        costs = rng.integers(0, 4, (tasks, 2)) * int(rng.choice([1, 10]))
        current = np.where(rng.random(tasks) < rng.random(), 0, 1)
        counts = np.bincount(current, minlength=2).astype(np.int64)
        caps = np.stack([ceil_share(counts, int(size), tasks) for size in np.bincount(groups)])
        allowed = np.ones((tasks, 2), dtype=bool)
        problem = PlacementProblem(costs, allowed, current, counts, groups, caps)
        scaled = tie_broken_costs(costs, allowed, current)
        assert _TwoClientSolver.of(scaled, problem).run() == _Solver(scaled, problem).run().tolist()


class _SearchOnly(_Solver):
    """`_Solver` with every insertion searched (no direct placement)."""

    def _placed_directly(self, task, group, labels, rank) -> bool:
        return False


class _CountingDirect(_Solver):
    def __init__(self, costs, problem) -> None:
        super().__init__(costs, problem)
        self.direct = 0

    def _placed_directly(self, task, group, labels, rank) -> bool:
        placed = super()._placed_directly(task, group, labels, rank)
        self.direct += placed
        return placed


@pytest.mark.parametrize("seed", range(3))
def test_a_direct_placement_is_what_the_search_would_do(seed):
    """An insertion placed without the search (the task stays on its cheapest client, nothing moves) ends
    in the same placement, potentials and offset as the search: on random problems with many ties (costs
    0-2), one or several groups, tight and loose caps, and left-out edges."""
    rng = np.random.default_rng(seed)
    direct = searched = 0
    for k in range(150):
        tasks, clients = int(rng.integers(2, 60)), int(rng.integers(2, 12))
        problem = _random_problem(rng, tasks, clients, int(rng.integers(1, 5)), float(rng.choice([0.0, 0.3])))
        if k % 2:
            looser = problem.group_capacity + rng.integers(0, 2, problem.group_capacity.shape)
            problem = PlacementProblem(rng.integers(0, 3, (tasks, clients)), problem.allowed, problem.current,
                                       problem.client_capacity, problem.groups, looser)  # fmt: skip
        scaled = tie_broken_costs(problem.costs, problem.allowed, problem.current)
        with_direct, search_only = _CountingDirect(scaled, problem), _SearchOnly(scaled, problem)
        try:
            expected = search_only.run()
        except InfeasiblePlacementError:
            with pytest.raises(InfeasiblePlacementError):
                with_direct.run()
            continue
        assert np.array_equal(with_direct.run(), expected)
        assert np.array_equal(with_direct.potential, search_only.potential)
        assert with_direct.offset == search_only.offset
        direct += with_direct.direct
        searched += tasks - with_direct.direct
    assert direct > 1000 and searched > 500  # both ways were taken many times


class _CheckingRanks(_Solver):
    """`_Solver` that checks, before every insertion, the heap ranks it keeps up to date against their
    definition: 2 where a task could stay (room in the group's cap and the client's count), else 3."""

    checked = 0

    def _insert(self, task: int) -> None:
        room = (np.array(self.load) < self.client_cap) & (np.array(self.group_load) < self.group_cap)
        assert np.array_equal(self.rank, np.where(room, 2, 3))
        _CheckingRanks.checked += 1
        super()._insert(task)


@pytest.mark.parametrize("seed", range(3))
def test_the_kept_ranks_are_the_ranks_of_the_loads_at_every_insertion(seed):
    """Loads change as tasks are placed and moved (augmentations), and clients fill up; the ranks the
    solver keeps follow them, with caps tight, loose and zero."""
    rng = np.random.default_rng(seed)
    _CheckingRanks.checked = 0
    for k in range(120):
        tasks, clients = int(rng.integers(2, 50)), int(rng.integers(2, 10))
        problem = _random_problem(rng, tasks, clients, int(rng.integers(1, 5)), float(rng.choice([0.0, 0.3])))
        if k % 2:
            looser = problem.group_capacity + rng.integers(0, 2, problem.group_capacity.shape)
            problem = replace(problem, group_capacity=looser)
        scaled = tie_broken_costs(problem.costs, problem.allowed, problem.current)
        checking = _CheckingRanks(scaled, problem)
        try:
            placement = checking.run()
        except InfeasiblePlacementError:
            continue
        room = (np.array(checking.load) < checking.client_cap) & (
            np.array(checking.group_load) < checking.group_cap
        )
        assert np.array_equal(checking.rank, np.where(room, 2, 3))
        assert np.array_equal(placement, _SearchOnly(scaled, problem).run())
    assert _CheckingRanks.checked > 2000


class _TwoClientSearchOnly(_TwoClientSolver):
    def _placed_directly(self, task) -> bool:
        return False


class _TwoClientCountingDirect(_TwoClientSolver):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.direct = 0

    def _placed_directly(self, task) -> bool:
        placed = super()._placed_directly(task)
        self.direct += placed
        return placed


@pytest.mark.parametrize("seed", range(3))
def test_a_direct_placement_of_the_two_client_solver_is_what_its_search_would_do(seed):
    """As above for `_TwoClientSolver` (its own direct placement, in plain Python numbers), on the shape of
    the standby pairs: up to 10 groups, the input over its caps or within them, costs 0-3."""
    rng = np.random.default_rng(seed)
    direct = searched = 0
    for _ in range(300):
        tasks = int(rng.integers(1, 30))
        groups = np.unique(rng.integers(0, int(rng.integers(1, 11)), tasks), return_inverse=True)[1]
        current = rng.integers(0, 2, tasks)
        counts = np.bincount(current, minlength=2).astype(np.int64)
        caps = np.stack([ceil_share(counts, int(size), tasks) for size in np.bincount(groups)])
        caps = caps + rng.integers(0, 2, caps.shape) * int(rng.integers(0, 2))
        problem = PlacementProblem(rng.integers(0, 4, (tasks, 2)), np.ones((tasks, 2), dtype=bool), current,
                                   counts, groups, caps)  # fmt: skip
        scaled = tie_broken_costs(problem.costs, problem.allowed, problem.current)
        with_direct = _TwoClientCountingDirect.of(scaled, problem)
        search_only = _TwoClientSearchOnly.of(scaled, problem)
        assert with_direct.run() == search_only.run()
        assert with_direct.potential == search_only.potential
        assert with_direct.offset == search_only.offset
        direct += with_direct.direct
        searched += tasks - with_direct.direct
    assert direct > 1000 and searched > 300  # both ways were taken many times
