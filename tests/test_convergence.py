"""HA convergence simulator: Kafka's TaskAssignorConvergenceTest (assignors.md §11.2), strategy `none`.

A cluster of capacity-1 clients is rebalanced over and over, each result fed back as the next previous
assignment, while clients are dropped, added and resurrected. After every perturbation the assignor must
stop asking for probing rebalances within Kafka's bound, and the settled assignment must be valid (every
stateful task on min(clients, 1 + standbys) clients, no warmup left) and balanced (active and stateful load
within 1 per thread, per-subtopology skew within 1).

Two lag models: Kafka's harness reports lag 0 for every task a client held last round; real clients report
-2 for running actives and a small lag for warmed-up standbys. Each seed runs under both.

`make test` runs CONVERGENCE_SEEDS fixed seeds (default 2,000, seeds 0..N-1) with strategy `none`, and
CONVERGENCE_RACK_SEEDS (default 50) under each rack strategy (clients on 3 racks, each partition replicated
on 1-3 of them; Kafka skips the balance check under min_traffic and allows a subtopology skew of 4 under
balance_subtopology). `make soak` runs CONVERGENCE_SOAK_SEEDS more (default 20,000; a tenth of that per
rack strategy) starting at CONVERGENCE_SOAK_START (default 100,000).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from fleet_assignor.assignor import (
    ApplicationState,
    AssignmentConfigs,
    ClientState,
    KafkaStreamsState,
    ProcessId,
    RackAwareStrategy,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)
from fleet_assignor.assignor.high_availability import assign_high_availability
from fleet_assignor.assignor.rack import RackAwareTaskAssignor
from tests.fixtures import (
    assert_balanced_active_assignment,
    assert_balanced_stateful_assignment,
    assert_valid_assignment,
    subtopology_skew,
)

END_OFFSET = 150_000  # every stateful task's changelog end; a client without state lags this much
ACCEPTABLE_LAG = 100
WARM_STANDBY_LAG = 50  # "real" lag model: a standby that kept up, within the acceptable lag
LAG_MODELS = ("kafka", "real")

SEEDS = int(os.environ.get("CONVERGENCE_SEEDS", "2000"))
CHUNK = 100
SOAK_SEEDS = int(os.environ.get("CONVERGENCE_SOAK_SEEDS", "20000"))
RACK_SEEDS = int(os.environ.get("CONVERGENCE_RACK_SEEDS", "50"))  # per rack strategy (the solver is slower)
RACKS = ["rack-0", "rack-1", "rack-2"]
SOAK_START = int(os.environ.get("CONVERGENCE_SOAK_START", "100000"))


@dataclass
class _Held:
    active: frozenset[TaskId] = frozenset()
    standby: frozenset[TaskId] = frozenset()


@dataclass
class Harness:
    """Kafka's convergence harness: live and dropped clients with what they held last round."""

    stateless: list[TaskId]
    stateful: list[TaskId]
    lag_model: str
    live: dict[int, _Held] = field(default_factory=dict)
    dropped: dict[int, _Held] = field(default_factory=dict)
    clients: dict[ProcessId, ClientState] = field(default_factory=dict)
    # rack variants: every client on one of RACKS, every partition replicated on 1-3 of them
    racks: random.Random | None = None
    client_racks: dict[int, str] = field(default_factory=dict)
    task_infos: list[TaskInfo] = field(default_factory=list)

    @classmethod
    def initialize(
        cls,
        n_stateless: int,
        n_stateful: int,
        n_clients: int,
        partition_count: Callable[[], int],
        lag_model: str,
        racks: random.Random | None = None,
    ) -> Harness:
        subtopology = 0
        groups: list[list[TaskId]] = []
        for count in (n_stateless, n_stateful):
            tasks: list[TaskId] = []
            while count > 0:
                partitions = min(count, partition_count())
                tasks += [TaskId(subtopology, p) for p in range(partitions)]
                subtopology += 1
                count -= partitions
            groups.append(tasks)
        harness = cls(groups[0], groups[1], lag_model, racks=racks)
        if racks is not None:
            harness.task_infos = [_task_info(t, t in set(groups[1]), racks) for t in groups[0] + groups[1]]
        for _ in range(n_clients):
            harness.add_client()
        return harness

    @property
    def all_tasks(self) -> list[TaskId]:
        return self.stateless + self.stateful

    def add_client(self) -> None:
        n = len(self.live) + len(self.dropped)
        self.live[n] = _Held()
        if self.racks is not None:
            self.client_racks[n] = self.racks.choice(RACKS)

    def drop_client(self) -> None:
        n = min(self.live)
        self.dropped[n] = self.live.pop(n)

    def drop_random_clients(self, count: int, rng: random.Random) -> None:
        for _ in range(count):
            if not self.live:
                return
            n = sorted(self.live)[rng.randrange(len(self.live))]
            self.dropped[n] = self.live.pop(n)

    def add_or_resurrect_clients_randomly(self, rng: random.Random, limit: int) -> None:
        for _ in range(rng.randrange(limit)):
            if rng.random() < 0.5 or not self.dropped:
                self.add_client()
            else:
                n = sorted(self.dropped)[rng.randrange(len(self.dropped))]
                self.live[n] = self.dropped.pop(n)

    def _lag(self, task: TaskId, held: _Held) -> int:
        if self.lag_model == "kafka":
            return 0 if task in held.active or task in held.standby else END_OFFSET
        if task in held.active:
            return -2
        return WARM_STANDBY_LAG if task in held.standby else END_OFFSET

    def prepare_for_next_rebalance(self) -> None:
        """Fresh capacity-1 ClientStates: previous tasks and lags from what each client held last round."""
        self.clients = {}
        for n in sorted(self.live):
            held = self.live[n]
            lags = {t: self._lag(t, held) for t in self.stateful}
            pid = ProcessId.of(n)
            self.clients[pid] = ClientState(
                pid,
                1,
                previous_active=held.active,
                previous_standby=held.standby,
                task_lags=lags,
                rack_id=self.client_racks.get(n),
            )

    def _rack_assignor(self, configs: AssignmentConfigs) -> RackAwareTaskAssignor | None:
        """One RackAwareTaskAssignor per assignment, over the live clients and their racks."""
        if self.racks is None:
            return None
        states = [
            KafkaStreamsState(pid, 1, ("consumer",), rack_id=state.rack_id)
            for pid, state in self.clients.items()
        ]
        return RackAwareTaskAssignor(ApplicationState.of(self.task_infos, states, configs))

    def rebalance(self, configs: AssignmentConfigs) -> bool:
        self.prepare_for_next_rebalance()
        probing = assign_high_availability(
            self.clients, self.all_tasks, self.stateful, configs, rack_assignor=self._rack_assignor(configs)
        )
        for n in self.live:
            state = self.clients[ProcessId.of(n)]
            self.live[n] = _Held(frozenset(state.active_tasks), frozenset(state.standby_tasks))
        return probing


def _task_info(task: TaskId, stateful: bool, racks: random.Random) -> TaskInfo:
    def replicas() -> frozenset[str]:
        return frozenset(racks.sample(RACKS, racks.randint(1, 3)))

    partitions = [
        TaskTopicPartition(TopicPartition(f"in-{task.subtopology}", task.partition), True, False, replicas())
    ]
    if stateful:
        changelog = TopicPartition(f"store-{task.subtopology}-changelog", task.partition)
        partitions.append(TaskTopicPartition(changelog, False, True, replicas()))
    return TaskInfo(task, stateful, frozenset({"store"} if stateful else ()), tuple(partitions))


def converge(harness: Harness, configs: AssignmentConfigs, limit: int) -> int:
    """Rebalance until no probing rebalance is requested; fail after ``limit`` assignments."""
    for iteration in range(1, limit + 1):
        if not harness.rebalance(configs):
            return iteration
    raise AssertionError(f"not converged after {limit} assignments")


def verify(harness: Harness, configs: AssignmentConfigs) -> None:
    """Valid always; balanced except under min_traffic (Kafka skips it there), with a per-subtopology skew
    of 4 under balance_subtopology, 1 otherwise."""
    clients = harness.clients
    assert_valid_assignment(configs.num_standby_replicas, harness.stateful, harness.stateless, clients)
    strategy = configs.rack_aware_assignment_strategy
    if strategy is RackAwareStrategy.MIN_TRAFFIC:
        return
    assert_balanced_active_assignment(clients)
    assert_balanced_stateful_assignment(harness.stateful, clients)
    assert subtopology_skew(clients) <= (4 if strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY else 1)


def run_randomized_scenario(seed: int, lag_model: str, strategy: str = "none") -> None:
    """Kafka's randomClusterPerturbationsShouldConverge for one seed (draws in Kafka's order); rack data,
    for the rack strategies, comes from a second generator seeded from the same seed."""
    rng = random.Random(seed)
    racks = None if strategy == "none" else random.Random(f"racks-{seed}")
    initial = rng.randrange(10) + 1
    n_stateless = rng.randrange(10) + 1
    n_stateful = rng.randrange(10) + 1
    max_warmups = rng.randrange(n_stateful) + 1
    num_standby = rng.randrange(initial + 1)
    events = rng.randrange(10) + 1
    configs = AssignmentConfigs(
        ACCEPTABLE_LAG, max_warmups, num_standby, 60_000, rack_aware_assignment_strategy=strategy
    )
    harness = Harness.initialize(
        n_stateless, n_stateful, initial, lambda: rng.randrange(10) + 1, lag_model, racks=racks
    )
    converge(harness, configs, 1)
    verify(harness, configs)
    bound = 2 * (n_stateful + n_stateful * num_standby)
    for _ in range(events):
        if rng.randrange(2) == 0:
            harness.drop_random_clients(rng.randrange(initial), rng)
        else:
            harness.add_or_resurrect_clients_randomly(rng, initial)
        if harness.live:
            converge(harness, configs, bound)
            verify(harness, configs)


def _run_seeds(seeds: range, strategy: str = "none") -> None:
    failures = []
    for seed in seeds:
        for lag_model in LAG_MODELS:
            try:
                run_randomized_scenario(seed, lag_model, strategy)
            except AssertionError as e:
                failures.append(f"seed {seed} ({lag_model}, {strategy}): {e}")
    reproduce = "reproduce with run_randomized_scenario(seed, lag_model, strategy):\n"
    assert not failures, reproduce + "\n".join(failures[:20])


# --- Kafka's fixed scenarios ------------------------------------------------------------------------------


@pytest.mark.parametrize("lag_model", LAG_MODELS)
def test_static_assignment_converges_with_the_first_assignment(lag_model):
    configs = AssignmentConfigs(ACCEPTABLE_LAG, 2, 0, 60_000)
    harness = Harness.initialize(1, 1, 1, lambda: 1, lag_model)
    assert converge(harness, configs, 1) == 1
    verify(harness, configs)


@pytest.mark.parametrize("lag_model", LAG_MODELS)
def test_converges_after_adding_a_node(lag_model):
    configs = AssignmentConfigs(ACCEPTABLE_LAG, 2, 0, 60_000)
    harness = Harness.initialize(7, 11, 1, lambda: 5, lag_model)
    converge(harness, configs, 1)
    harness.add_client()
    converge(harness, configs, 11 // 2 + 1)
    verify(harness, configs)


@pytest.mark.parametrize("lag_model", LAG_MODELS)
def test_dropping_nodes_converges(lag_model):
    configs = AssignmentConfigs(ACCEPTABLE_LAG, 2, 0, 60_000)
    harness = Harness.initialize(11, 13, 7, lambda: 5, lag_model)
    converge(harness, configs, 1)
    harness.drop_client()
    converge(harness, configs, 13 // 2 + 2)
    verify(harness, configs)


def test_adding_a_node_first_asks_for_probing_then_settles():
    """The convergence is real work: the new node gets warmups first (probing), then takes over."""
    configs = AssignmentConfigs(ACCEPTABLE_LAG, 2, 0, 60_000)
    harness = Harness.initialize(0, 8, 1, lambda: 8, "kafka")
    converge(harness, configs, 1)
    harness.add_client()
    assert harness.rebalance(configs) is True
    new = harness.clients[ProcessId.of(1)]
    assert new.active_task_count == 0 and new.standby_task_count == 2  # two warmups within the budget
    assert converge(harness, configs, 8) > 1
    assert [c.active_task_count for c in harness.clients.values()] == [4, 4]


# --- random perturbations --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start", range(0, SEEDS, CHUNK), ids=lambda s: f"seeds{s}-{min(s + CHUNK, SEEDS) - 1}"
)
def test_random_cluster_perturbations_converge(start):
    _run_seeds(range(start, min(start + CHUNK, SEEDS)))


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("start", range(0, RACK_SEEDS, CHUNK), ids=lambda s: f"seeds{s}")
def test_random_cluster_perturbations_converge_with_rack_strategy(strategy, start):
    _run_seeds(range(start, min(start + CHUNK, RACK_SEEDS)), strategy)


@pytest.mark.soak
@pytest.mark.parametrize("strategy", ["none", "min_traffic", "balance_subtopology"])
def test_random_cluster_perturbations_converge_soak(strategy):
    seeds = SOAK_SEEDS if strategy == "none" else SOAK_SEEDS // 10
    _run_seeds(range(SOAK_START, SOAK_START + seeds), strategy)
