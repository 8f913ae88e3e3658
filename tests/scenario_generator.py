"""Seeded random scenarios (scenario.md) for the Kafka differential tests and the convergence simulator.

`generate_scenario(seed, knobs)` is pure Python on `random.Random(seed)`: the same seed and knobs give the
same dict on every machine. The variety follows issue 9: clients with 1-8 threads, 1-8 subtopologies,
stateless and stateful tasks (logged stores, unlogged stores, source-changelog topics), previous actives and
standbys that are fresh, stable, churned, stale (unknown task ids) or conflicting (two previous owners),
lags with -2, -3 and caught-up / not-caught-up mixes, racks on clients and partitions (full, partial,
none), client tags, 0-3 standbys, every rack strategy and every cost configuration.

Every scenario is *usable* input (scenario.md, "Unusable input"): tag keys of `rack_aware_assignment_tags`
exist on every client, at most 5 tags, configs in range, `stateful == bool(stores)`, unique ids. `Knobs`
narrows the draw (sizes, racks or tags forced on or off, history shapes, strategies) for other users.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

STRATEGIES = ("none", "min_traffic", "balance_subtopology")
HISTORY_KINDS = ("fresh", "stable", "churned", "shuffled")
TAG_KEYS = ("zone", "cluster", "az", "pod", "host")
BIG_LAG = 1_000_000


@dataclass(frozen=True)
class Knobs:
    """What kind of scenario to draw. A `None` flag means "decide at random per seed"."""

    clients: tuple[int, int] = (1, 10)
    threads: tuple[int, int] = (1, 8)
    subtopologies: tuple[int, int] = (1, 8)
    partitions: tuple[int, int] = (1, 12)
    # Probability that a subtopology has a state store.
    stateful_share: float = 0.6
    # None = random; True/False forces racks on clients and partitions present / absent.
    racks: bool | None = None
    # With racks: probability that some client or partition lacks its rack (disables rack optimization).
    partial_racks_share: float = 0.15
    tags: bool | None = None
    num_standby_replicas: tuple[int, int] = (0, 3)
    # The other assignment configs, drawn per seed (the defaults are the draws the seeds were first run with).
    max_warmup_replicas: tuple[int, int] = (1, 3)
    acceptable_recovery_lags: tuple[int, ...] = (0, 0, 100, 10_000, 10_000, 2**62)
    probing_rebalance_intervals_ms: tuple[int, ...] = (60_000, 600_000)
    # Which previous-assignment shapes to draw from (see HISTORY_KINDS).
    history: tuple[str, ...] = HISTORY_KINDS
    # Stale ids (tasks the topology lost) and conflicting owners (two previous actives of one task).
    stale_share: float = 0.15
    conflict_share: float = 0.15
    # Probability of a top-level "lags_computed": false (end offsets unavailable).
    lags_unavailable_share: float = 0.05
    strategies: tuple[str, ...] = STRATEGIES
    # Probability that costs are configured (each independently).
    cost_share: float = 0.7
    # Probability that consumers carry per-consumer history objects instead of plain names.
    consumer_history_share: float = 0.2
    # Kafka-style UUID(0, n) process ids instead of random ones (random ones exercise the signed order).
    small_process_ids_share: float = 0.2
    # Tasks that may never exist twice etc. are always honoured; this only bounds the total size.
    max_tasks: int = 200
    extra: dict[str, Any] = field(default_factory=dict)


DEFAULT_KNOBS = Knobs()


# Shapes the default draw never or seldom makes, each with what makes it unusual (checked on the draw, so
# that a change of the generator cannot quietly take it away).
UNUSUAL_SHAPES: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], bool]]] = {
    # Subtopology ids of two digits (TaskId order is numeric: 10_0 after 9_0, unlike the text).
    "two_digit_subtopologies": (
        {"subtopologies": (9, 14), "partitions": (1, 5), "max_tasks": 250},
        lambda s: any(int(t["id"].split("_")[0]) >= 10 for t in s["tasks"]),
    ),
    "many_standbys": (
        {"num_standby_replicas": (3, 5), "clients": (2, 12)},
        lambda s: s["configs"]["num_standby_replicas"] >= 3,
    ),
    "many_threads": (
        {"threads": (8, 32), "clients": (1, 4), "max_tasks": 300},
        lambda s: min(c["threads"] for c in s["clients"]) >= 8,
    ),
    # Warmup budgets over the default draw's 3, recovery lags between its values, other probing intervals.
    "other_configs": (
        {
            "max_warmup_replicas": (1, 12),
            "acceptable_recovery_lags": (1, 5, 50, 1_000, 99_999, 500_000),
            "probing_rebalance_intervals_ms": (60_000, 123_456, 3_600_000),
        },
        lambda s: s["configs"]["max_warmup_replicas"] > 3,
    ),
    "tiny_groups": (
        {"clients": (1, 3), "threads": (1, 2), "partitions": (1, 3)},
        lambda s: len(s["clients"]) <= 3,
    ),
}


def generate_scenario(seed: int, knobs: Knobs = DEFAULT_KNOBS) -> dict[str, Any]:
    """One usable scenario dict, a pure function of (seed, knobs)."""
    return _Generator(random.Random(seed), knobs, f"gen-{seed}").scenario()


def generate_scenarios(seeds: range | list[int], knobs: Knobs = DEFAULT_KNOBS) -> list[dict[str, Any]]:
    return [generate_scenario(seed, knobs) for seed in seeds]


def _pick(rng: random.Random, bounds: tuple[int, int]) -> int:
    return rng.randint(bounds[0], bounds[1])


def _flag(rng: random.Random, forced: bool | None, probability: float) -> bool:
    return forced if forced is not None else rng.random() < probability


class _Generator:
    def __init__(self, rng: random.Random, knobs: Knobs, app_id: str) -> None:
        self.rng = rng
        self.knobs = knobs
        self.app_id = app_id

    # -- topology -------------------------------------------------------------------------------------------
    def scenario(self) -> dict[str, Any]:
        rng = self.rng
        self.use_racks = _flag(rng, self.knobs.racks, 0.6)
        self.rack_pool = [f"rack-{i}" for i in range(rng.randint(1, 4))]
        self.partial_racks = self.use_racks and rng.random() < self.knobs.partial_racks_share
        tasks = self.tasks()
        configs, tag_keys = self.configs()
        clients = self.clients(tasks, tag_keys, configs)
        scenario: dict[str, Any] = {
            "app_id": self.app_id,
            "configs": configs,
            "tasks": tasks,
            "clients": clients,
        }
        if rng.random() < self.knobs.lags_unavailable_share:
            scenario["lags_computed"] = False
        return scenario

    def racks_for_partition(self) -> list[str]:
        if not self.use_racks or (self.partial_racks and self.rng.random() < 0.2):
            return []
        replicas = self.rng.randint(1, min(3, len(self.rack_pool)))
        return sorted(self.rng.sample(self.rack_pool, replicas))

    def tasks(self) -> list[dict[str, Any]]:
        rng = self.rng
        tasks: list[dict[str, Any]] = []
        for sub in range(_pick(rng, self.knobs.subtopologies)):
            partitions = _pick(rng, self.knobs.partitions)
            if len(tasks) + partitions > self.knobs.max_tasks:
                partitions = max(0, self.knobs.max_tasks - len(tasks))
            if partitions == 0:
                break
            stateful = rng.random() < self.knobs.stateful_share
            # A store is logged (changelog topic), unlogged (no changelog) or backed by its source topic.
            store_kind = (
                rng.choices(["logged", "unlogged", "source"], weights=[8, 1, 1])[0] if stateful else None
            )
            source_topics = [f"{self.app_id}-src-{sub}-{k}" for k in range(rng.choice([1, 1, 1, 2]))]
            for partition in range(partitions):
                tasks.append(self.task(sub, partition, stateful, store_kind, source_topics))
        return tasks

    def task(
        self, sub: int, partition: int, stateful: bool, store_kind: str | None, source_topics: list[str]
    ) -> dict[str, Any]:
        parts = []
        for i, topic in enumerate(source_topics):
            doubles_as_changelog = store_kind == "source" and i == 0
            parts.append(self.partition(topic, partition, True, doubles_as_changelog))
        if store_kind == "logged":
            parts.append(self.partition(f"{self.app_id}-store-{sub}-changelog", partition, False, True))
        stores = [f"store-{sub}"] if stateful else []
        return {"id": f"{sub}_{partition}", "stateful": stateful, "stores": stores, "partitions": parts}

    def partition(self, topic: str, number: int, source: bool, changelog: bool) -> dict[str, Any]:
        return {
            "topic": topic,
            "partition": number,
            "source": source,
            "changelog": changelog,
            "racks": self.racks_for_partition(),
        }

    # -- configs --------------------------------------------------------------------------------------------
    def configs(self) -> tuple[dict[str, Any], list[str]]:
        rng = self.rng
        with_tags = _flag(rng, self.knobs.tags, 0.3)
        tag_keys = sorted(rng.sample(TAG_KEYS, rng.randint(1, 3))) if with_tags else []
        config_tags = sorted(rng.sample(tag_keys, rng.randint(1, len(tag_keys)))) if tag_keys else []
        costs = [
            rng.choice([0, 1, 1, 10, 10, 100]) if rng.random() < self.knobs.cost_share else None for _ in "tn"
        ]
        configs = {
            "acceptable_recovery_lag": rng.choice(self.knobs.acceptable_recovery_lags),
            "max_warmup_replicas": _pick(rng, self.knobs.max_warmup_replicas),
            "num_standby_replicas": _pick(rng, self.knobs.num_standby_replicas),
            "probing_rebalance_interval_ms": rng.choice(self.knobs.probing_rebalance_intervals_ms),
            "rack_aware_assignment_tags": config_tags,
            "rack_aware_assignment_strategy": rng.choice(self.knobs.strategies),
            "rack_aware_traffic_cost": costs[0],
            "rack_aware_non_overlap_cost": costs[1],
        }
        return configs, tag_keys

    # -- clients and history --------------------------------------------------------------------------------
    def process_ids(self, count: int) -> list[str]:
        rng = self.rng
        if rng.random() < self.knobs.small_process_ids_share:
            numbers = rng.sample(range(1, 10 * count + 1), count)
            return [str(uuid.UUID(int=n)) for n in numbers]
        ids: list[str] = []
        while len(ids) < count:
            candidate = str(uuid.UUID(int=rng.getrandbits(128)))
            if candidate not in ids:
                ids.append(candidate)
        return ids

    def clients(
        self, tasks: list[dict[str, Any]], tag_keys: list[str], configs: dict[str, Any]
    ) -> list[dict]:
        rng = self.rng
        count = _pick(rng, self.knobs.clients)
        pids = self.process_ids(count)
        history = rng.choice(self.knobs.history)
        prev_active, prev_standby = self.history(history, tasks, count, configs["num_standby_replicas"])
        changelog_tasks = [t["id"] for t in tasks if any(p["changelog"] for p in t["partitions"])]
        clients = []
        for index, pid in enumerate(pids):
            threads = _pick(rng, self.knobs.threads)
            client: dict[str, Any] = {"process_id": pid, "threads": threads}
            active, standby = prev_active[index], prev_standby[index]
            self.add_stale_ids(active, standby)
            self.add_consumers(client, index, threads, active, standby)
            client["lags"] = self.lags(changelog_tasks, active, standby, configs["acceptable_recovery_lag"])
            client["rack"] = self.client_rack()
            client["tags"] = self.client_tags(tag_keys)
            clients.append(client)
        return clients

    def history(
        self, kind: str, tasks: list[dict[str, Any]], count: int, standbys: int
    ) -> tuple[list[list[str]], list[list[str]]]:
        """Previous actives and standbys per client index, for the chosen history shape."""
        rng = self.rng
        active: list[list[str]] = [[] for _ in range(count)]
        standby: list[list[str]] = [[] for _ in range(count)]
        if kind == "fresh":
            return active, standby
        # "churned": some previous owners are gone (their tasks have no previous owner now) and some
        # clients are new (no history); "shuffled": ownership ignores balance entirely.
        gone = {i for i in range(count) if kind == "churned" and rng.random() < 0.3}
        for position, task in enumerate(tasks):
            owner = rng.randrange(count) if kind == "shuffled" else position % count
            if owner not in gone and rng.random() < 0.95:
                active[owner].append(task["id"])
            if rng.random() < self.knobs.conflict_share / 4 and count > 1:
                # A second client also claims the task as its previous active.
                other = rng.choice([i for i in range(count) if i != owner])
                active[other].append(task["id"])
            if any(p["changelog"] for p in task["partitions"]):
                holders = [i for i in range(count) if i != owner and i not in gone]
                for i in rng.sample(holders, min(len(holders), rng.randint(0, max(standbys, 1)))):
                    standby[i].append(task["id"])
                if rng.random() < self.knobs.conflict_share / 8:
                    standby[owner].append(task["id"])  # both active and standby: tolerated, kept as active
        return active, standby

    def add_stale_ids(self, active: list[str], standby: list[str]) -> None:
        """Ids of tasks the topology no longer has (a subtopology or partitions removed since)."""
        if self.rng.random() < self.knobs.stale_share:
            active.append(f"{self.rng.randint(20, 30)}_{self.rng.randint(0, 5)}")
        if self.rng.random() < self.knobs.stale_share:
            standby.append(f"{self.rng.randint(0, 30)}_{self.rng.randint(40, 60)}")

    def add_consumers(
        self, client: dict[str, Any], index: int, threads: int, active: list[str], standby: list[str]
    ) -> None:
        rng = self.rng
        names = [f"consumer-{index}-{i}" for i in range(threads)]
        shape = rng.random()
        if shape < self.knobs.consumer_history_share:
            # Per-consumer history: each previous task on one of the consumers; no client-level lists.
            per_consumer = [{"id": name, "prev_active": [], "prev_standby": []} for name in names]
            for task in active:
                rng.choice(per_consumer)["prev_active"].append(task)
            for task in standby:
                rng.choice(per_consumer)["prev_standby"].append(task)
            client["consumers"] = per_consumer
            return
        if shape < self.knobs.consumer_history_share + 0.15:
            client["consumers"] = []  # named from threads
        else:
            client["consumers"] = names
        client["prev_active"] = sorted(set(active), key=active.index)
        client["prev_standby"] = sorted(set(standby), key=standby.index)

    def lags(
        self, changelog_tasks: list[str], active: list[str], standby: list[str], acceptable: int
    ) -> dict[str, int]:
        """Lags with Kafka's meaning: -2 running active, -3 unknown, else offsets behind the end."""
        rng = self.rng
        threshold = min(acceptable, BIG_LAG)
        lags: dict[str, int] = {}
        for task in changelog_tasks:
            roll = rng.random()
            if task in active:
                if roll < 0.6:
                    lags[task] = -2
                elif roll < 0.8:
                    continue  # missing: -2 for a previous active
                else:
                    lags[task] = rng.randint(0, 2 * threshold + 10)  # still restoring
            elif task in standby:
                if roll < 0.45:
                    lags[task] = rng.randint(0, threshold)  # caught up
                elif roll < 0.9:
                    lags[task] = rng.randint(threshold + 1, threshold + BIG_LAG)
                elif roll < 0.95:
                    lags[task] = -3
                else:
                    lags[task] = -2  # stale report of a running active
            elif roll < 0.25:
                lags[task] = rng.randint(0, BIG_LAG)  # leftover state from an older assignment
            elif roll < 0.28:
                lags[task] = -3
        return lags

    def client_rack(self) -> str | None:
        if not self.use_racks or (self.partial_racks and self.rng.random() < 0.2):
            return None
        return self.rng.choice(self.rack_pool)

    def client_tags(self, tag_keys: list[str]) -> dict[str, str]:
        rng = self.rng
        tags = {key: f"{key}-{rng.randint(0, 2)}" for key in tag_keys}
        if tag_keys and rng.random() < 0.1:
            tags["extra"] = "x"  # a tag no config asks for (at most 5 tags in total)
        return tags


# --- fixed shapes (Kafka's scale tests), for tests that need long histories -------------------------------


def scale_scenario(tasks: int, clients: int, *, threads: int = 1, standbys: int = 1) -> dict[str, Any]:
    """One stateful subtopology of `tasks` partitions, `clients` clients of `threads` threads, no history
    (the shape of benchmarks/bench_kafka.py's scale shapes)."""

    def task(partition: int) -> dict[str, Any]:
        return {
            "id": f"0_{partition}",
            "stores": ["store-0"],
            "partitions": [
                {"topic": "src-0", "partition": partition, "source": True},
                {"topic": "store-0-changelog", "partition": partition, "changelog": True},
            ],
        }

    return {
        "app_id": f"scale-{tasks}x{clients}",
        "configs": {"num_standby_replicas": standbys},
        "tasks": [task(p) for p in range(tasks)],
        "clients": [{"process_id": str(uuid.UUID(int=i + 1)), "threads": threads} for i in range(clients)],
    }


def next_round(scenario: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The scenario after `result` was rolled out: each consumer owns what the result gave it, actives
    run (lag -2) and standbys are 10 records behind."""
    by_pid = {uuid.UUID(c["process_id"]): c for c in result["assignment"]}
    clients = []
    for client in scenario["clients"]:
        held = by_pid[uuid.UUID(client["process_id"])]
        consumers = [
            {"id": consumer, "prev_active": tasks["active"], "prev_standby": tasks["standby"]}
            for consumer, tasks in held["consumers"].items()
        ]
        lags = {t: -2 for t in held["active"]} | {t: 10 for t in held["standby"]}
        rest = {k: v for k, v in client.items() if k not in ("threads", "prev_active", "prev_standby")}
        clients.append({**rest, "consumers": consumers, "lags": lags})
    return {**scenario, "clients": clients}
