"""Exact minimum-cost placement of tasks on clients (the min-cost flow of rack.md §4.3/§4.4), with
deterministic tie-breaks in favour of keeping tasks where they are (POLICY.md §6).

The problem (a transportation problem with optional per-group caps):
- every task goes to exactly one allowed client;
- client c receives exactly ``client_capacity[c]`` tasks (the capacities sum to the task count);
- at most ``group_capacity[g, c]`` tasks of group g go to client c (balance_subtopology; min_traffic is
  one group whose caps equal the client capacities).

Why our own successive-shortest-path (SSP) and not a library. Measured on this machine (2 cores):
- ``scipy.optimize.linprog`` (HiGHS, simplex or IPM) on the same LP: 0.02 s at 200 x 20 but 35 s at
  1,000 tasks x 50 clients, 35x over the 1 s budget;
- ``scipy.optimize.linear_sum_assignment`` needs one column per client *slot*: a dense T x T matrix
  (800 MB at 10,000 tasks) and no group caps;
- networkx's network simplex is pure Python over T x C arcs (2 million at 10,000 x 200);
- OR-tools would be fast but adds a 30 MB native runtime dependency for one function.
The SSP below works on a *contracted* residual graph whose nodes are (group, client) pairs and clients,
not tasks: a path step F(g,a) -> F(g,b) means "move the cheapest task of group g from client a to b"
(the cheapest per (a, b) is kept in a row of C numbers per (g, a), updated when tasks come and go). Tasks
are inserted one at a time (the row-by-row Hungarian scheme): each insertion is one Dijkstra on reduced
costs with node potentials, stopped as soon as the sink is settled, so it is usually a handful of heap
operations. Every insertion keeps the partial placement optimal for the tasks inserted so far, so the
final placement is an exact optimum (see benchmarks/bench_rack.py for the times). Where the first start node
has room in its cap and count, the search would settle just it, its client node and the sink: such an
insertion (three in four of a 300-client active flow, 93% of a standby pair's) is placed without it, with
the same potentials (`_placed_directly`). For a few clients (the fleet's usual application) the same solve
runs in plain Python numbers (`_SmallSolver`; two clients: `_TwoClientSolver`), where numpy's per-call cost
was most of the time.

Among heap entries of equal label the sink comes first, then client nodes, then (group, client) nodes of
clients with room left, then the others: reduced costs are 0 on many edges, and without this preference
Dijkstra settled most of the zero plateau before the sink (3,000 x 100 with 10 subtopologies: 34 s before,
under 1 s after). Entries come in runs (the start entries, each relaxed node's targets) of which only the
head is on the heap; a run finds its next entry by a minimum over its array, and is sorted only when asked
for many.

Measured here (2 shared cores under load), round-robin start, 3 racks, tc 10 / nc 1: 1,000 x 50 in
0.1-0.3 s and 10,000 x 200 in 2.5-6.5 s, both strategies (benchmarks/bench_rack.py), against Kafka's
190-420 s at 1,000 x 50 (rack.md §5.5).

Tie-breaks: costs are scaled to ``cost * (T + 1) + (1 if the task leaves its current client)``, so among
placements of equal cost the one with the fewest moves wins (a move count never reaches T + 1). Among
those, the result is a deterministic function of the inputs (fixed insertion order, heap keyed by
(label, rank, node index), first-minimum argmins): same inputs, same placement.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Self, cast

import numpy as np

# A cost no real edge reaches: "no edge". Kept far below int64 overflow when labels are added up.
NO_EDGE = np.int64(1) << np.int64(60)
_HALF = NO_EDGE // 2
# The same as Python ints, for the plain-Python two-client solver.
_NO_EDGE_INT = int(NO_EDGE)
_HALF_INT = int(_HALF)


class InfeasiblePlacementError(RuntimeError):
    """No placement satisfies the capacities (never the case when the input placement is valid)."""


@dataclass(frozen=True, eq=False)
class PlacementProblem:
    """``costs[t, c]``: the cost of task t on client c; ``allowed[t, c]``: whether t may go to c (an edge left
    out of the graph); ``current[t]``: the client index holding t now (always allowed), or -1;
    ``groups[t]``: the task's group index; ``group_capacity[g, c]``: caps per (group, client)."""

    costs: np.ndarray
    allowed: np.ndarray
    current: np.ndarray
    client_capacity: np.ndarray
    groups: np.ndarray
    group_capacity: np.ndarray

    @classmethod
    def single_group(
        cls, costs: np.ndarray, allowed: np.ndarray, current: np.ndarray, client_capacity: np.ndarray
    ) -> PlacementProblem:
        """min_traffic: one group whose caps are the client capacities (so they never bind)."""
        tasks = costs.shape[0]
        return cls(
            costs,
            allowed,
            current,
            np.asarray(client_capacity, dtype=np.int64),
            np.zeros(tasks, dtype=np.int64),
            np.asarray(client_capacity, dtype=np.int64).reshape(1, -1),
        )


def tie_broken_costs(costs: np.ndarray, allowed: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Scaled costs: minimum cost first, then fewest tasks leaving their current client."""
    tasks = costs.shape[0]
    scaled = costs.astype(np.int64) * np.int64(tasks + 1) + np.int64(1)
    held = current >= 0
    scaled[np.nonzero(held)[0], current[held]] -= 1
    return np.where(allowed, scaled, NO_EDGE)


class _Rows:
    """Per (group, client): the tasks there and, for every other client b, the cheapest move of one of them
    to b (delta cost and which task)."""

    def __init__(self, costs: np.ndarray, clients: int) -> None:
        self._costs = costs
        self._clients = clients
        self.has_no_edge: list[bool] = np.any(costs >= NO_EDGE, axis=1).tolist()
        self.members: dict[tuple[int, int], list[int]] = {}
        self.best: dict[tuple[int, int], np.ndarray] = {}
        self.best_task: dict[tuple[int, int], np.ndarray] = {}

    def _deltas(self, task: int, client: int) -> np.ndarray:
        row = self._costs[task]
        deltas = row - row[client]
        if self.has_no_edge[task]:
            deltas = np.where(row >= NO_EDGE, NO_EDGE, deltas)
        deltas[client] = NO_EDGE
        return deltas

    def add(self, group: int, client: int, task: int) -> None:
        key = (group, client)
        deltas = self._deltas(task, client)
        members = self.members.get(key)
        if not members:
            self.members[key] = [task]
            self.best[key] = deltas
            self.best_task[key] = np.full(self._clients, task, dtype=np.int64)
            return
        members.append(task)
        better = deltas < self.best[key]
        np.copyto(self.best[key], deltas, where=better)  # the row arrays are this object's own
        np.copyto(self.best_task[key], task, where=better)

    def remove(self, group: int, client: int, task: int) -> None:
        key = (group, client)
        members = self.members[key]
        members.remove(task)
        if not members:
            del self.members[key], self.best[key], self.best_task[key]
            return
        ids = np.asarray(members, dtype=np.int64)
        block = self._costs[ids]
        deltas = np.where(block >= NO_EDGE, NO_EDGE, block - block[:, client : client + 1])
        deltas[:, client] = NO_EDGE
        pick = np.argmin(deltas, axis=0)
        self.best[key] = deltas[pick, np.arange(self._clients)]
        self.best_task[key] = ids[pick]


def solve_placement(problem: PlacementProblem) -> np.ndarray:
    """The client index of every task in a minimum-cost placement (fewest moves among the optima)."""
    costs = tie_broken_costs(problem.costs, problem.allowed, problem.current)
    tasks, clients = costs.shape
    if tasks == 0:
        return np.zeros(0, dtype=np.int64)
    if int(problem.client_capacity.sum()) != tasks:
        raise InfeasiblePlacementError(
            f"client capacities sum to {int(problem.client_capacity.sum())}, not to the {tasks} tasks"
        )
    if clients == 2 and problem.group_capacity.shape[0] == 1:
        return _two_clients(costs, int(problem.client_capacity[0]))
    if 2 < clients <= SMALL_SOLVER_MAX_CLIENTS:
        # Not after `input_is_the_optimum`: where it answers, the solve returns the input too, and here the
        # solve costs less than the check (~100 us against ~50 + ~100 on the fleet's 30 tasks x 5 clients).
        return np.array(_SmallSolver.of(costs, problem).run(), dtype=np.int64)
    if input_is_the_optimum(problem):
        return problem.current.copy()
    if clients == 2:
        return np.array(_TwoClientSolver.of(costs, problem).run(), dtype=np.int64)
    return _Solver(costs, problem).run()


# Up to this many clients `_SmallSolver` (plain Python) solves; above, `_Solver`. Measured here (30 and 300
# tasks, 3 groups): plain Python 2-4x faster at 3-10 clients, ~1.5x at 20-40, even at 80.
SMALL_SOLVER_MAX_CLIENTS = 32


# A cost above any path of real moves: "no move from a to b".
_NO_MOVE = np.int64(1) << np.int64(60)
# Bellman-Ford rounds tried before the certificate is given up (the solve then runs as before).
_CERTIFICATE_ROUNDS = 64


def input_is_the_optimum(problem: PlacementProblem) -> bool:
    """True only when the input placement is the unique minimum of the tie-broken costs, so the exact solve
    would return it unchanged. The input must be complete, allowed and within every cap. Another placement
    with the same client counts differs from it by cycles of moves between clients; moving task t from a to
    b adds ``(T + 1) x (cost(t, b) - cost(t, a)) + 1`` to the tie-broken total, so with no cycle of negative
    cost (in plain costs) every cycle adds at least its number of moves: the input is strictly best. The
    cycles are looked for on the client graph whose edge a -> b costs the cheapest such move of a task on
    a: node potentials that no edge undercuts (Bellman-Ford from a virtual source converged) prove there is
    none; not converging within a few rounds proves nothing and the caller solves."""
    current = problem.current
    tasks, clients = problem.costs.shape
    rows = np.arange(tasks)
    if (current < 0).any() or not problem.allowed[rows, current].all():
        return False
    if not np.array_equal(np.bincount(current, minlength=clients), problem.client_capacity):
        return False
    group_load = np.zeros_like(problem.group_capacity)
    np.add.at(group_load, (problem.groups, current), 1)
    if (group_load > problem.group_capacity).any():
        return False
    if _swap_among_first_clients_pays(problem, rows):
        return False  # proven cheaper elsewhere: skip building the whole graph
    return not _has_negative_cycle(_move_graph(problem, rows))


# Clients whose tasks are tried first for a cost-lowering swap between two of them (a cheap "no").
_FIRST_CLIENTS = 32


def _swap_among_first_clients_pays(problem: PlacementProblem, rows: np.ndarray) -> bool:
    """A swap between two of the first _FIRST_CLIENTS clients lowers the cost: a negative cycle exists. An
    input far from optimal usually has one there, found at a fraction of the cost of the whole graph."""
    first = np.flatnonzero(problem.current < _FIRST_CLIENTS)
    if not len(first):
        return False
    sub = PlacementProblem(
        problem.costs[first][:, :_FIRST_CLIENTS],
        problem.allowed[first][:, :_FIRST_CLIENTS],
        problem.current[first],
        problem.client_capacity[:_FIRST_CLIENTS],
        problem.groups[first],
        problem.group_capacity[:, :_FIRST_CLIENTS],
    )
    graph = _move_graph(sub, rows[: len(first)])
    return bool((graph + graph.T < 0).any())


def _move_graph(problem: PlacementProblem, rows: np.ndarray) -> np.ndarray:
    """``graph[a, b]``: the least cost change of moving one task of client a to client b (0 on the
    diagonal, _NO_MOVE where no task of a may go to b)."""
    current = problem.current
    costs = problem.costs.astype(np.int64)
    deltas = np.where(problem.allowed, costs - costs[rows, current][:, None], _NO_MOVE)
    order = np.argsort(current, kind="stable")
    held = current[order]
    firsts = np.flatnonzero(np.r_[True, held[1:] != held[:-1]])
    graph = np.full((costs.shape[1], costs.shape[1]), _NO_MOVE, dtype=np.int64)
    graph[held[firsts]] = np.minimum(np.minimum.reduceat(deltas[order], firsts, axis=0), _NO_MOVE)
    np.fill_diagonal(graph, 0)
    return graph


def _has_negative_cycle(graph: np.ndarray) -> bool:
    """False only when proven: potentials no edge undercuts are found within _CERTIFICATE_ROUNDS rounds."""
    if (graph + graph.T < 0).any():
        return True  # a swap between two clients already lowers the cost
    potential = np.zeros(graph.shape[0], dtype=np.int64)
    for _ in range(_CERTIFICATE_ROUNDS):
        relaxed = np.minimum(potential, (potential[:, None] + graph).min(axis=0))
        if np.array_equal(relaxed, potential):
            return False
        potential = relaxed
    return True


def _two_clients(costs: np.ndarray, first_count: int) -> np.ndarray:
    """Two clients, one group (every standby swap): the total is sum(cost on client 1) plus, for the tasks
    put on client 0, their cost difference; so client 0 takes the ``first_count`` smallest differences
    (stable order: ties keep the lower task index), after the tasks only one side may take."""
    only_second = costs[:, 0] >= NO_EDGE
    only_first = costs[:, 1] >= NO_EDGE
    placement = np.ones(costs.shape[0], dtype=np.int64)
    placement[only_first] = 0
    free = np.nonzero(~only_first & ~only_second)[0]
    wanted = first_count - int(only_first.sum())
    if wanted < 0 or wanted > len(free):
        raise InfeasiblePlacementError("no placement of the tasks on two clients meets the counts")
    order = np.argsort(costs[free, 0] - costs[free, 1], kind="stable")
    placement[free[order[:wanted]]] = 0
    return placement


def solve_two_clients(
    costs: list[list[int]], groups: list[int], group_cap: list[list[int]], client_cap: list[int]
) -> list[int]:
    """`solve_placement` on two clients with every edge allowed, given as lists with tie-broken costs: one
    group as `_two_clients` (``client_cap[0]`` smallest cost differences on client 0, ties to the lower
    task), else `_TwoClientSolver`. `input_is_the_optimum` is not asked: it answers only where the input is
    the one minimum, which the exact solve returns as well."""
    if len(group_cap) == 1:
        order = sorted(range(len(costs)), key=lambda task: costs[task][0] - costs[task][1])
        placement = [1] * len(costs)
        for task in order[: client_cap[0]]:
            placement[task] = 0
        return placement
    return _TwoClientSolver(costs, groups, group_cap, client_cap).run()


# A run's entries taken one at a time before the rest is sorted at once.
_LAZY_TAKES = 8
# A taken entry's key in `_Run.keys`: above every entry's (labels below _HALF).
_TAKEN_KEY = 2 * NO_EDGE + 4


class _Run:
    """Entries (label, rank, node), nodes ascending, handed out smallest first. Most runs give one or two
    before the insertion ends, so the next is found by a minimum over the array; a run asked for more is
    sorted once and handed out from the sorted list."""

    __slots__ = ("keys", "labels", "nodes", "number", "ranks", "rest", "taken")

    def __init__(self, labels: np.ndarray, ranks: np.ndarray, nodes: np.ndarray, number: int) -> None:
        self.labels, self.ranks, self.nodes, self.number = labels, ranks, nodes, number
        # (label, rank) as one int, 2 x label + rank (ranks are 2 or 3, labels below _HALF): its first
        # minimum is the entry the heap order takes next, a rank-2 tie before the rank-3 entry included.
        self.keys = labels * 2 + ranks
        self.taken = 0
        self.rest: list[tuple[int, int, int, int]] | None = None

    def take(self) -> tuple[int, int, int, int] | None:
        if self.rest is not None:
            return self.rest.pop() if self.rest else None
        if self.taken == _LAZY_TAKES:
            self._sort_rest()
            return self.take()
        labels = self.labels
        index = int(self.keys.argmin())  # the lowest (label, rank), the lowest node among equal ones
        low = int(labels[index])
        if low >= NO_EDGE:
            return None
        rank = int(self.ranks[index])
        labels[index] = NO_EDGE  # taken
        self.keys[index] = _TAKEN_KEY
        self.taken += 1
        return low, rank, int(self.nodes[index]), self.number

    def _sort_rest(self) -> None:
        left = (self.labels < NO_EDGE).nonzero()[0]
        labels, ranks, nodes = self.labels[left], self.ranks[left], self.nodes[left]
        order = self.keys[left].argsort(kind="stable")  # (label, rank), then node: nodes ascend in a run
        rest = list(zip(labels[order].tolist(), ranks[order].tolist(), nodes[order].tolist(),
                        itertools.repeat(self.number), strict=False))  # fmt: skip
        rest.reverse()  # pop() from the end gives the smallest
        self.rest = rest


def _push_run(
    heap: list[tuple[int, int, int, int]],
    runs: list[_Run],
    labels: np.ndarray,
    ranks: np.ndarray,
    nodes: np.ndarray,
) -> None:
    """A new run of the entries (``labels``: a copy the run may overwrite); its smallest goes on the heap."""
    if not len(nodes):
        return
    run = _Run(labels, ranks, nodes, len(runs))
    runs.append(run)
    heapq.heappush(heap, cast(tuple[int, int, int, int], run.take()))


def _path_moves(
    parent: Sequence[int] | np.ndarray,
    sink: int,
    s_base: int,
    clients: int,
    cheapest: Callable[[int, int, int], int],
) -> tuple[list[tuple[int, int, int, int]], int]:
    """The augmenting path back from the sink: the task moves it makes (task, group, from, to), collected
    before any is applied (each choice was made on the rows as the search saw them), and the client of the
    new task's own edge. A step F(g, a) -> F(g, b) moves g's cheapest task on a to b; a step out of S(c)
    into F(g, c) is the leaving task's own move, counted there."""
    moves: list[tuple[int, int, int, int]] = []
    first_client = -1
    node = int(parent[sink])
    while node != -1:
        prev = int(parent[node])
        if node < s_base:
            group, client = divmod(node, clients)
            if prev == -1:
                first_client = client
            elif prev < s_base:
                source = prev - group * clients
                moves.append((cheapest(group, source, client), group, source, client))
        node = prev
    return moves, first_client


class _Steps:
    """The augmentation the solvers share, over their own rows (`_cheapest`, `_remove`, `_place`) and loads
    (`_count`). Node numbers: F(g, c) = g * C + c, S(c) = G * C + c, sink = G * C + C."""

    sink: int
    s_base: int
    clients: int
    groups: Sequence[int] | np.ndarray

    def _augment(self, task: int, parent: Sequence[int] | np.ndarray) -> None:
        moves, first_client = _path_moves(parent, self.sink, self.s_base, self.clients, self._cheapest)
        for moved, group, source, destination in moves:
            self._remove(group, source, moved)
            self._count(group, source, -1)
            self._place(moved, group, destination)
        self._place(task, int(self.groups[task]), first_client)

    def _cheapest(self, group: int, source: int, destination: int) -> int:
        """The task of ``group`` on ``source`` whose move to ``destination`` costs least (the first)."""
        raise NotImplementedError

    def _remove(self, group: int, client: int, task: int) -> None:
        raise NotImplementedError

    def _place(self, task: int, group: int, client: int) -> None:
        raise NotImplementedError

    def _count(self, group: int, client: int, delta: int) -> None:
        raise NotImplementedError


class _Loads(_Steps):
    """The loads both general solvers keep, per (group, client) and per client, with each (group, client)
    node's heap rank: 2 where a task could stay (room in the group's cap and the client's count), else 3.
    Kept up to date as tasks come and go, not recomputed per insertion."""

    group_load: list[list[int]]
    load: list[int]
    group_cap: list[list[int]]
    client_cap: list[int]
    groups_on: list[set[int]]
    room: list[bool]

    def _count(self, group: int, client: int, delta: int) -> None:
        group_load = self.group_load[group]
        group_load[client] += delta
        self.load[client] += delta
        if group_load[client] > 0:
            self.groups_on[client].add(group)
        else:
            self.groups_on[client].discard(group)
        # The ranks this changes: the node's own, or the client's column when its count crossed its capacity.
        room = self.load[client] < self.client_cap[client]
        if room != self.room[client]:
            self.room[client] = room
            self._set_client_ranks(
                client,
                [
                    2 if room and load[client] < cap[client] else 3
                    for load, cap in zip(self.group_load, self.group_cap, strict=True)
                ],
            )
        else:
            stays = room and group_load[client] < self.group_cap[group][client]
            self._set_rank(group, client, 2 if stays else 3)

    def _set_client_ranks(self, client: int, ranks: list[int]) -> None:
        raise NotImplementedError

    def _set_rank(self, group: int, client: int, rank: int) -> None:
        raise NotImplementedError


class _Solver(_Loads):
    """Node layout: F(g, c) = g * C + c (group g's tasks on client c), S(c) = G * C + c, sink = G * C + C."""

    def __init__(self, costs: np.ndarray, problem: PlacementProblem) -> None:
        self.costs = costs
        self.tasks, self.clients = costs.shape
        self.groups = problem.groups.astype(np.int64)
        # Loads and caps as Python numbers: they are read and written one at a time.
        self.group_cap: list[list[int]] = problem.group_capacity.tolist()
        self.n_groups = len(self.group_cap)
        self.client_cap: list[int] = problem.client_capacity.tolist()
        self.s_base = self.n_groups * self.clients
        self.sink = self.s_base + self.clients
        self.potential = np.zeros(self.sink + 1, dtype=np.int64)
        self.offset = 0
        self.dist = np.full(self.sink + 1, NO_EDGE, dtype=np.int64)
        self.parent = np.full(self.sink + 1, -1, dtype=np.int64)
        self.settled = np.zeros(self.sink + 1, dtype=bool)
        self.touched: list[int] = []
        self.start_block = slice(0, 0)
        self.groups_on: list[set[int]] = [set() for _ in range(self.clients)]
        self.group_load = [[0] * self.clients for _ in range(self.n_groups)]
        self.load = [0] * self.clients
        # Heap rank of each (group, client) node: 2 where a task could stay (room in the group's cap and the
        # client's count), else 3. Kept up to date as loads change (`_count`), not recomputed per insertion.
        self.room = [cap > 0 for cap in self.client_cap]
        self.rank = np.where((problem.group_capacity > 0) & np.array(self.room), 2, 3)
        self.placement = np.full(self.tasks, -1, dtype=np.int64)
        self.rows = _Rows(costs, self.clients)
        self.has_no_edge = self.rows.has_no_edge
        self.block_nodes = [np.arange(g * self.clients, (g + 1) * self.clients) for g in range(self.n_groups)]

    def run(self) -> np.ndarray:
        for task in range(self.tasks):
            self._insert(task)
        return self.placement

    # --- one insertion: Dijkstra on reduced costs from the new task, then augment ---------------------
    # Work per insertion is proportional to the nodes it touches, not to the graph: the label arrays are
    # reset only where written, and potentials are stored relative to a shared offset (every node not
    # settled moves by the sink's label, which is just the offset moving).
    def _insert(self, task: int) -> None:
        clients = self.clients
        pot = self.potential
        dist, parent, settled = self.dist, self.parent, self.settled
        group = int(self.groups[task])
        base = group * clients
        start = self.costs[task]
        labels = start - pot[base : base + clients] - self.offset
        if self.has_no_edge[task]:
            labels = np.where(start >= NO_EDGE, NO_EDGE, labels)
        # Ties among (group, client) nodes go to clients with room left: their path to the sink is short.
        rank = self.rank[group]
        if self._placed_directly(task, group, labels, rank):
            return
        dist[base : base + clients] = labels
        self.start_block = slice(base, base + clients)  # reset as a whole; other nodes written: touched
        # Entries come in sorted runs (the start entries, each group node's relaxed clients) merged through
        # the heap, which holds only each run's head: most insertions settle a few nodes, so pushing every
        # entry of a run (up to C each) would dominate. Entries are distinct (label, rank, node) triples (a
        # node is pushed again only with a lower label), so the pop order is the one of a heap of them all.
        starts = (labels < _HALF).nonzero()[0]  # 1-d: nonzero()[0] skips flatnonzero's wrapper
        heap: list[tuple[int, int, int, int]] = []
        runs: list[_Run] = []
        if len(starts) == clients:  # every client: the run takes the arrays whole (it only writes labels)
            _push_run(heap, runs, labels, rank, self.block_nodes[group])
        else:
            _push_run(heap, runs, labels[starts], rank[starts], base + starts)
        done: list[int] = []
        while heap:
            label, _, node, run = heapq.heappop(heap)
            if run >= 0:
                following = runs[run].take()
                if following is not None:
                    heapq.heappush(heap, following)
            if settled[node] or label != dist[node]:
                continue
            settled[node] = True
            done.append(node)
            if node == self.sink:
                break
            if node < self.s_base:
                self._relax_group_node(node, label, dist, parent, settled, heap, runs)
            else:
                self._relax_client_node(node, label, dist, parent, settled, heap)
        if not settled[self.sink]:
            self._reset(done)
            raise InfeasiblePlacementError(f"no client can take task index {task} within the capacities")
        sink_label = int(dist[self.sink])
        self.offset += sink_label
        settled_nodes = np.asarray(done, dtype=np.int64)
        pot[settled_nodes] += dist[settled_nodes] - sink_label
        self._augment(task, parent)
        self._reset(done)

    def _placed_directly(self, task: int, group: int, labels: np.ndarray, rank: np.ndarray) -> bool:
        """Whether the search would place the task on its first start node's client with nothing moving
        (most insertions), and if so that placement, with the potentials and offset the search leaves,
        without its runs, heap and label arrays. The search first settles the least (label, rank, node)
        start entry F(g, c). If it has rank 2 (room in g's cap and c's count), its edges F(g, c) -> S(c) ->
        sink exist, and both have reduced cost 0: reduced costs are never negative, no potential is ever
        positive (a settled node's label is at most the sink's) and the sink's stays 0, so the edge S(c) ->
        sink, of reduced cost pot[S(c)], makes pot[S(c)] 0, and then the edge F(g, c) -> S(c), of reduced
        cost pot[F(g, c)], makes that 0 too. So S(c), then the sink, come next at F(g, c)'s label, ahead of
        every other entry (whose labels are not lower; ranks 1 and 0 go first among equal labels)."""
        client = int(labels.argmin())  # the lowest node of the lowest label
        low = labels[client]
        if low >= _HALF:
            return False
        if rank[client] != 2:  # the least (label, rank, node): a tie of rank 2 comes first
            tied = (labels == low).nonzero()[0]
            client = int(tied[rank[tied].argmin()])
            if rank[client] != 2:
                return False
        pot = self.potential
        node, client_node = group * self.clients + client, self.s_base + client
        at = int(low) + int(pot[node])  # the label without F(g, c)'s potential
        at_client, at_sink = at - int(pot[client_node]), at - int(pot[self.sink])
        self.offset += at_sink
        pot[node] += int(low) - at_sink
        pot[client_node] += at_client - at_sink
        self._place(task, group, client)
        return True

    def _reset(self, done: list[int]) -> None:
        self.dist[self.start_block] = NO_EDGE
        self.parent[self.start_block] = -1
        touched = np.asarray(self.touched, dtype=np.int64)
        self.dist[touched] = NO_EDGE
        self.parent[touched] = -1
        self.settled[np.asarray(done, dtype=np.int64)] = False
        self.touched.clear()

    def _relax_group_node(self, node, label, dist, parent, settled, heap, runs) -> None:
        clients = self.clients
        group, client = divmod(node, clients)
        base = group * clients
        pot = self.potential
        best = self.rows.best.get((group, client))
        if best is not None:
            block = slice(base, base + clients)
            # A settled node's label never exceeds a new candidate (reduced costs are >= 0), and "no edge"
            # rows stay above _HALF: one comparison against min(label, _HALF) covers both.
            cand = best + (label + int(pot[node])) - pot[block]
            improved = (cand < np.minimum(dist[block], _HALF)).nonzero()[0]
            targets = base + improved
            if base != self.start_block.start:
                self.touched.extend(targets.tolist())
            values = cand[improved]
            dist[targets] = values
            parent[targets] = node
            _push_run(heap, runs, values, self.rank[group][improved], targets)
        if self.group_load[group][client] < self.group_cap[group][client]:
            target = self.s_base + client
            value = label + int(pot[node] - pot[target])
            if not settled[target] and value < dist[target]:
                dist[target] = value
                parent[target] = node
                self.touched.append(target)
                heapq.heappush(heap, (value, 1, target, -1))

    def _relax_client_node(self, node, label, dist, parent, settled, heap) -> None:
        client = node - self.s_base
        pot = self.potential
        if self.load[client] < self.client_cap[client]:
            value = label + int(pot[node] - pot[self.sink])
            if value < dist[self.sink]:
                dist[self.sink] = value
                parent[self.sink] = node
                self.touched.append(self.sink)
                heapq.heappush(heap, (value, 0, self.sink, -1))
        for group in sorted(self.groups_on[client]):
            target = group * self.clients + client
            value = label + int(pot[node] - pot[target])
            if not settled[target] and value < dist[target]:
                dist[target] = value
                parent[target] = node
                self.touched.append(target)
                heapq.heappush(heap, (value, 3, target, -1))  # a task must leave again: not a short way out

    def _cheapest(self, group: int, source: int, destination: int) -> int:
        return int(self.rows.best_task[(group, source)][destination])

    def _remove(self, group: int, client: int, task: int) -> None:
        self.rows.remove(group, client, task)

    def _place(self, task: int, group: int, client: int) -> None:
        self.rows.add(group, client, task)
        self.placement[task] = client
        self._count(group, client, 1)

    def _set_client_ranks(self, client: int, ranks: list[int]) -> None:
        self.rank[:, client] = ranks

    def _set_rank(self, group: int, client: int, rank: int) -> None:
        self.rank[group, client] = rank


class _ListSolver(_Steps):
    """A solver of `_Solver`'s steps in plain Python numbers: the problem as lists."""

    def __init__(
        self, costs: list[list[int]], groups: list[int], group_cap: list[list[int]], client_cap: list[int]
    ) -> None:
        """``costs``: tie-broken (`tie_broken_costs`), NO_EDGE for a left-out edge; the rest as in
        `PlacementProblem`, as lists."""
        self.costs = costs
        self.groups = groups
        self.group_cap = group_cap
        self.n_groups = len(group_cap)
        self.client_cap = client_cap
        self.clients = len(client_cap)
        self.s_base = self.n_groups * self.clients
        self.sink = self.s_base + self.clients
        self.potential = [0] * (self.sink + 1)
        self.offset = 0
        self.group_load = [[0] * self.clients for _ in group_cap]
        self.load = [0] * self.clients
        self.groups_on: list[set[int]] = [set() for _ in client_cap]
        self.placement = [-1] * len(costs)

    @classmethod
    def of(cls, costs: np.ndarray, problem: PlacementProblem) -> Self:
        return cls(
            costs.tolist(),
            problem.groups.tolist(),
            problem.group_capacity.tolist(),
            problem.client_capacity.tolist(),
        )


class _SmallSolver(_ListSolver, _Loads):
    """`_Solver` in plain Python numbers for an application of a few clients (the fleet's usual rack-aware
    active flow: ~30 tasks on 3-10 clients, where numpy's per-call cost made the solve ~250 us): the same
    node numbers, insertions, direct placements, heap order (label, rank, node), cheapest-task rows and
    augmentations, so the same placement. Each search pushes every entry on one heap: `_Solver`'s runs merge
    to the same pop order (its entries are distinct (label, rank, node) triples)."""

    def __init__(
        self, costs: list[list[int]], groups: list[int], group_cap: list[list[int]], client_cap: list[int]
    ) -> None:
        super().__init__(costs, groups, group_cap, client_cap)
        self.room = [cap > 0 for cap in client_cap]
        self.rank = [
            [2 if cap > 0 and room else 3 for cap, room in zip(caps, self.room, strict=True)]
            for caps in group_cap
        ]
        # Per (group, client): its tasks in arrival order, and per other client the cheapest move of one of
        # them there (delta, and the first task of that delta), as `_Rows`.
        self.members: dict[tuple[int, int], list[int]] = {}
        self.best: dict[tuple[int, int], list[int]] = {}
        self.best_task: dict[tuple[int, int], list[int]] = {}

    def run(self) -> list[int]:
        """The client index of every task."""
        for task in range(len(self.costs)):
            self._insert(task)
        return self.placement

    def _deltas(self, task: int, client: int) -> list[int]:
        row = self.costs[task]
        own = row[client]
        return [
            _NO_EDGE_INT if cost >= _NO_EDGE_INT or other == client else cost - own
            for other, cost in enumerate(row)
        ]

    def _insert(self, task: int) -> None:
        pot, offset, clients = self.potential, self.offset, self.clients
        group = self.groups[task]
        base = group * clients
        labels = [
            _NO_EDGE_INT if cost >= _NO_EDGE_INT else cost - pot[base + client] - offset
            for client, cost in enumerate(self.costs[task])
        ]
        rank = self.rank[group]
        if self._placed_directly(task, group, labels, rank):
            return
        sink = self.sink
        dist = [_NO_EDGE_INT] * (sink + 1)
        dist[base : base + clients] = labels
        parent = [-1] * (sink + 1)
        heap = [(label, rank[c], base + c) for c, label in enumerate(labels) if label < _HALF_INT]
        heapq.heapify(heap)
        done = self._search(heap, dist, parent)
        if not done or done[-1] != sink:
            raise InfeasiblePlacementError(f"no client can take task index {task} within the capacities")
        sink_label = dist[sink]
        self.offset += sink_label
        for node in done:
            pot[node] += dist[node] - sink_label
        self._augment(task, parent)

    def _placed_directly(self, task: int, group: int, labels: list[int], rank: list[int]) -> bool:
        """`_Solver._placed_directly`: the least (label, rank, node) start entry, if of rank 2, takes the
        task with nothing moving."""
        low = min(labels)
        if low >= _HALF_INT:
            return False
        client = labels.index(low)
        if rank[client] != 2:
            tied = [c for c, label in enumerate(labels) if label == low and rank[c] == 2]
            if not tied:
                return False
            client = tied[0]
        pot = self.potential
        node, client_node = group * self.clients + client, self.s_base + client
        at = low + pot[node]
        at_client, at_sink = at - pot[client_node], at - pot[self.sink]
        self.offset += at_sink
        pot[node] += low - at_sink
        pot[client_node] += at_client - at_sink
        self._place(task, group, client)
        return True

    def _search(self, heap: list[tuple[int, int, int]], dist: list[int], parent: list[int]) -> list[int]:
        """Settle nodes in heap order until the sink is; the settled nodes, in order."""
        pot, sink, s_base = self.potential, self.sink, self.s_base
        settled = [False] * (sink + 1)
        done: list[int] = []
        while heap:
            label, _, node = heapq.heappop(heap)
            if settled[node] or label != dist[node]:
                continue
            settled[node] = True
            done.append(node)
            if node == sink:
                break
            if node < s_base:
                self._relax_group_node(node, label + pot[node], heap, dist, parent, settled)
            else:
                self._relax_client_node(node, label + pot[node], heap, dist, parent, settled)
        return done

    def _relax_group_node(self, node: int, at: int, heap, dist, parent, settled) -> None:
        """F(g, c), settled at ``at`` (its label without its potential): g's cheapest task on c to each
        other client, or out through S(c)."""
        pot, clients = self.potential, self.clients
        group, client = divmod(node, clients)
        base = group * clients
        best = self.best.get((group, client))
        if best is not None:
            rank = self.rank[group]
            for other in range(clients):
                target = base + other
                value = best[other] + at - pot[target]
                # A settled node's label never exceeds a new candidate (as in `_Solver`).
                if value < dist[target] and value < _HALF_INT:
                    dist[target], parent[target] = value, node
                    heapq.heappush(heap, (value, rank[other], target))
        if self.group_load[group][client] < self.group_cap[group][client]:
            target = self.s_base + client
            if not settled[target] and at - pot[target] < dist[target]:
                dist[target], parent[target] = at - pot[target], node
                heapq.heappush(heap, (dist[target], 1, target))

    def _relax_client_node(self, node: int, at: int, heap, dist, parent, settled) -> None:
        """S(c), settled at ``at``: to the sink if c has room; back into the groups on c."""
        pot, sink = self.potential, self.sink
        client = node - self.s_base
        if self.load[client] < self.client_cap[client] and at - pot[sink] < dist[sink]:
            dist[sink], parent[sink] = at - pot[sink], node
            heapq.heappush(heap, (dist[sink], 0, sink))
        for group in sorted(self.groups_on[client]):
            target = group * self.clients + client
            if not settled[target] and at - pot[target] < dist[target]:
                dist[target], parent[target] = at - pot[target], node
                heapq.heappush(heap, (dist[target], 3, target))

    def _cheapest(self, group: int, source: int, destination: int) -> int:
        return self.best_task[(group, source)][destination]

    def _remove(self, group: int, client: int, task: int) -> None:
        key = (group, client)
        members = self.members[key]
        members.remove(task)
        if not members:
            del self.members[key], self.best[key], self.best_task[key]
            return
        best = [_NO_EDGE_INT + 1] * self.clients
        best_task = [members[0]] * self.clients
        for member in members:  # the first of the lowest deltas, as `_Rows.remove`'s argmin
            for other, delta in enumerate(self._deltas(member, client)):
                if delta < best[other]:
                    best[other], best_task[other] = delta, member
        self.best[key], self.best_task[key] = best, best_task

    def _place(self, task: int, group: int, client: int) -> None:
        key = (group, client)
        deltas = self._deltas(task, client)
        members = self.members.get(key)
        if not members:
            self.members[key] = [task]
            self.best[key] = deltas
            self.best_task[key] = [task] * self.clients
        else:
            members.append(task)
            best, best_task = self.best[key], self.best_task[key]
            for other, delta in enumerate(deltas):
                if delta < best[other]:
                    best[other], best_task[other] = delta, task
        self.placement[task] = client
        self._count(group, client, 1)

    def _set_client_ranks(self, client: int, ranks: list[int]) -> None:
        for row, rank in zip(self.rank, ranks, strict=True):
            row[client] = rank

    def _set_rank(self, group: int, client: int, rank: int) -> None:
        self.rank[group][client] = rank


class _TwoClientSolver(_ListSolver):
    """`_Solver` for two clients in plain Python numbers: the same insertions, Dijkstra steps, heap order
    (label, rank, node), cheapest-task rows and augmentations, so the same placement, without numpy's
    per-call cost on arrays of two (a balance_subtopology standby pair has ~20 tasks; the rack loop solves
    thousands of pairs). Node numbers are `_Solver`'s: F(g, c) = 2g + c, S(c) = 2G + c, sink = 2G + 2.
    Potentials are kept, as `_Solver` keeps them, relative to a shared offset (every node not settled moves
    by the sink's label, which is just the offset moving): the same labels, work only on settled nodes.
    The search is one loop (`_search`) without a method call per settled node nor per-insertion closures:
    at ~20 insertions per pair and thousands of pairs, those were a third of the time."""

    def __init__(
        self, costs: list[list[int]], groups: list[int], group_cap: list[list[int]], client_cap: list[int]
    ) -> None:
        super().__init__(costs, groups, group_cap, client_cap)
        # Per node F(g, c): its tasks in arrival order, and the cheapest move of one of them to the other
        # client (delta, task): the first of the lowest deltas, as `_Rows`.
        self.members: list[list[int]] = [[] for _ in range(self.s_base)]
        self.best: list[tuple[int, int] | None] = [None] * self.s_base

    def run(self) -> list[int]:
        """The client (0 or 1) of every task."""
        placed_directly, search = self._placed_directly, self._insert_by_search
        for task in range(len(self.costs)):
            if not placed_directly(task):
                search(task)
        return self.placement

    def _delta(self, task: int, client: int) -> int:
        row = self.costs[task]
        other = row[1 - client]
        return _NO_EDGE_INT if other >= _NO_EDGE_INT else other - row[client]

    def _insert_by_search(self, task: int) -> None:
        """An insertion `_placed_directly` did not take: Dijkstra on reduced costs from the task's two start
        nodes to the sink, then the augmentation. Heap ranks: sink 0, client nodes 1, F(g, c) 2 where the
        task could stay on c (room in g's cap and c's count) else 3, and 3 for F(g, c) reached from S(c) (a
        task must leave again)."""
        sink = self.sink
        dist = [_NO_EDGE_INT] * (sink + 1)
        parent = [-1] * (sink + 1)
        settled = [False] * (sink + 1)
        room = (self.load[0] < self.client_cap[0], self.load[1] < self.client_cap[1])
        done = self._search(self._start(task, dist, room), dist, parent, settled, room)
        if not settled[sink]:
            raise InfeasiblePlacementError(f"no client can take task index {task} within the capacities")
        sink_label = dist[sink]
        self.offset += sink_label
        pot = self.potential
        for node in done:
            pot[node] += dist[node] - sink_label
        self._augment(task, parent)

    def _placed_directly(self, task: int) -> bool:
        """`_Solver._placed_directly`: the first start entry, if of rank 2, takes the task with nothing
        moving (~93% of a standby pair's insertions). The two entries compared and the task placed here,
        without the loop, tuples and calls of the general steps: this runs ~50,000 times a plan."""
        group = self.groups[task]
        pot, offset = self.potential, self.offset
        node = 2 * group
        cost0, cost1 = self.costs[task]
        # Each start entry's label; a left-out edge or an unreachable label is no entry (as `_start`).
        label0 = cost0 - pot[node] - offset if cost0 < _NO_EDGE_INT else _HALF_INT
        label1 = cost1 - pot[node + 1] - offset if cost1 < _NO_EDGE_INT else _HALF_INT
        if label0 >= _HALF_INT:
            if label1 >= _HALF_INT:
                return False
            client, label = 1, label1
        elif label1 < label0:
            client, label = 1, label1
        else:
            client, label = 0, label0
        load, group_load = self.load, self.group_load[group]
        fits = load[client] < self.client_cap[client] and group_load[client] < self.group_cap[group][client]
        if not fits:
            if label0 != label1 or client == 1:
                return False
            # Equal labels: the entries' ranks decide, and client 1's comes first only where it fits.
            if not (load[1] < self.client_cap[1] and group_load[1] < self.group_cap[group][1]):
                return False
            client = 1
        node += client
        client_node = self.s_base + client
        at = label + pot[node]
        at_sink = at - pot[self.sink]
        self.offset = offset + at_sink
        pot[node] += label - at_sink
        pot[client_node] += at - pot[client_node] - at_sink
        # `_place` and `_count` written out: the task joins F(group, client), its best move if none is lower
        other = cost1 if client == 0 else cost0
        delta = _NO_EDGE_INT if other >= _NO_EDGE_INT else other - (cost0 if client == 0 else cost1)
        self.members[node].append(task)
        best = self.best[node]
        if best is None or delta < best[0]:
            self.best[node] = (delta, task)
        self.placement[task] = client
        group_load[client] += 1
        load[client] += 1
        self.groups_on[client].add(group)
        return True

    def _start(self, task: int, dist: list[int], room: tuple[bool, bool]) -> list[tuple[int, int, int]]:
        """The heap of the task's edges onto F(group, 0) and F(group, 1) (labels set in ``dist``)."""
        group = self.groups[task]
        load, cap = self.group_load[group], self.group_cap[group]
        heap: list[tuple[int, int, int]] = []
        for client, cost in enumerate(self.costs[task]):
            if cost < _NO_EDGE_INT:
                node = 2 * group + client
                label = cost - self.potential[node] - self.offset
                dist[node] = label
                if label < _HALF_INT:
                    heap.append((label, 2 if room[client] and load[client] < cap[client] else 3, node))
        heapq.heapify(heap)
        return heap

    def _search(self, heap, dist, parent, settled, room) -> list[int]:
        """Settle nodes in heap order until the sink is; the settled nodes, in order. The edges out of a
        node are relaxed here, not in a method per node kind: this loop runs ~100,000 times a plan."""
        pot, sink, s_base = self.potential, self.sink, self.s_base
        load, client_cap, group_load, group_cap = self.load, self.client_cap, self.group_load, self.group_cap
        done: list[int] = []
        while heap:
            label, _, node = heapq.heappop(heap)
            if settled[node] or label != dist[node]:
                continue
            settled[node] = True
            done.append(node)
            if node == sink:
                break
            at = label + pot[node]
            if node < s_base:  # F(g, c): g's cheapest task on c to the other client; or out through S(c)
                g, client = node >> 1, node & 1
                cheapest = self.best[node]
                value = _HALF_INT if cheapest is None else cheapest[0] + at - pot[node ^ 1]
                if value < dist[node ^ 1] and value < _HALF_INT:
                    other = 1 - client
                    stay = room[other] and group_load[g][other] < group_cap[g][other]
                    self._reach(heap, dist, parent, node ^ 1, value, 2 if stay else 3, node)
                if group_load[g][client] < group_cap[g][client]:
                    target = s_base + client
                    if not settled[target] and at - pot[target] < dist[target]:
                        self._reach(heap, dist, parent, target, at - pot[target], 1, node)
                continue
            client = node - s_base  # S(c): to the sink if c has room; back into the groups on c
            if load[client] < client_cap[client] and at - pot[sink] < dist[sink]:
                # The sink is next unless the heap holds a lower label: S(c) would push each F(g, c) at
                # the sink's label + pot[sink] - pot[F(g, c)], never lower (an insertion raises a node's
                # potential by its label if settled, else by the sink's: never more than the sink's), and
                # at equal labels the sink comes first. Settled at once: the same search, fewer pushes.
                if not heap or heap[0][0] >= at - pot[sink]:
                    dist[sink], parent[sink], settled[sink] = at - pot[sink], node, True
                    done.append(sink)
                    break
                self._reach(heap, dist, parent, sink, at - pot[sink], 0, node)
            for g in sorted(self.groups_on[client]):
                target = 2 * g + client
                if not settled[target] and at - pot[target] < dist[target]:
                    self._reach(heap, dist, parent, target, at - pot[target], 3, node)
        return done

    @staticmethod
    def _reach(heap, dist, parent, target: int, value: int, rank: int, node: int) -> None:
        dist[target] = value
        parent[target] = node
        heapq.heappush(heap, (value, rank, target))

    def _cheapest(self, group: int, source: int, destination: int) -> int:
        return cast(tuple[int, int], self.best[2 * group + source])[1]

    def _remove(self, group: int, client: int, task: int) -> None:
        node = 2 * group + client
        members = self.members[node]
        members.remove(task)
        if not members:
            self.best[node] = None
            return
        best = None
        for member in members:
            delta = self._delta(member, client)
            if best is None or delta < best[0]:
                best = (delta, member)
        self.best[node] = best

    def _place(self, task: int, group: int, client: int) -> None:
        node = 2 * group + client
        delta = self._delta(task, client)
        members = self.members[node]
        members.append(task)
        best = self.best[node]
        if best is None or delta < best[0]:
            self.best[node] = (delta, task)
        self.placement[task] = client
        self._count(group, client, 1)

    def _count(self, group: int, client: int, delta: int) -> None:
        self.group_load[group][client] += delta
        self.load[client] += delta
        if self.group_load[group][client] > 0:
            self.groups_on[client].add(group)
        else:
            self.groups_on[client].discard(group)
