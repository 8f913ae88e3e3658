"""A synthetic fleet for `make run` and `make bench`: applications of mixed sizes (median ~20 tasks, a tail
up to 2,000), stateful and stateless subtopologies, racks and tags, standbys, a previous assignment with
lags. Seeded: the same arguments give the same tables."""

from __future__ import annotations

import math
import random
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass

from pyspark.sql import SparkSession

from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.schemas.contract import INPUT_TABLE_NAMES, RUNNING_ACTIVE

RACKS = ("rack-a", "rack-b", "rack-c")
MAX_TASKS = 2000


def _process_id(app_index: int, client: int) -> str:
    return f"{app_index:08x}-0000-4000-8000-{client:012x}"


def _num_tasks(rng: random.Random) -> int:
    if rng.random() < 0.002:  # the tail: a few very large applications
        return rng.randint(500, MAX_TASKS)
    return max(1, min(MAX_TASKS, int(math.exp(rng.gauss(math.log(20), 0.8)))))


def generate_fleet(num_apps: int, seed: int = 7) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {t: [] for t in INPUT_TABLE_NAMES}
    for index in range(num_apps):
        for table, row in _application(index, random.Random(seed * 1_000_003 + index)):
            tables[table].append(row)
    return tables


@dataclass(frozen=True, slots=True)
class _Shape:
    """What one synthetic application is made of, drawn before any of its rows."""

    index: int
    app: str
    cluster: str
    total: int  # the drawn task count; the topology rounds it up to whole subtopologies
    subtopologies: int
    partitions: int
    stateful: list[bool]  # per subtopology
    rack_aware: bool
    standbys: int


def _shape(index: int, rng: random.Random) -> _Shape:
    total = _num_tasks(rng)
    subtopologies = rng.randint(1, 4)
    stateful = [rng.random() < 0.5 for _ in range(subtopologies)]
    return _Shape(
        index=index,
        app=f"app-{index:06d}",
        cluster=f"cluster-{index % 3}",
        total=total,
        subtopologies=subtopologies,
        partitions=max(1, math.ceil(total / subtopologies)),
        stateful=stateful,
        rack_aware=total <= 60 and rng.random() < 0.15,
        standbys=1 if any(stateful) and rng.random() < 0.5 else 0,
    )


def _application(index: int, rng: random.Random) -> Iterator[tuple[str, dict]]:
    """(table, row) pairs of one application. The order of the draws from `rng` is the fleet's identity:
    each part draws in the order the rows are made."""
    shape = _shape(index, rng)
    cluster_of_app = yield from _applications_row(shape, rng)
    tasks = yield from _topology_rows(shape, cluster_of_app, rng)
    consumers = _consumers(shape, rng)
    owned, offsets = _previous_assignment(tasks, consumers, rng)
    yield from _subscription_rows(shape.app, consumers, owned)
    for pid, consumer, task_id, value in offsets:
        yield "task_offsets", {
            "app_id": shape.app, "process_id": pid, "consumer_client_id": consumer, "task_id": task_id,
            "offset_sum": value,
        }  # fmt: skip


def _applications_row(shape: _Shape, rng: random.Random) -> Generator[tuple[str, dict], None, str | None]:
    """The `applications` row of nine applications in ten; returns the cluster the application's rack rows
    name (None without a row: defaults, and rack rows with a null cluster_id apply)."""
    if rng.random() >= 0.9:
        return None
    yield (
        "applications",
        {
            "app_id": shape.app,
            "cluster_id": shape.cluster,
            "num_standby_replicas": shape.standbys,
            "rack_aware_assignment_strategy": "min_traffic" if shape.rack_aware else None,
            "rack_aware_assignment_tags": ["zone"] if shape.standbys and rng.random() < 0.3 else None,
        },
    )
    return shape.cluster


def _topology_rows(
    shape: _Shape, cluster_of_app: str | None, rng: random.Random
) -> Generator[tuple[str, dict], None, list[tuple[str, bool]]]:
    """`tasks` rows, the changelogs' end offsets and, for rack-aware applications, the partitions' racks;
    returns (task id, stateful) of every task."""
    app = shape.app
    tasks: list[tuple[str, bool]] = []
    for sub in range(shape.subtopologies):
        stateful = shape.stateful[sub]
        changelog = f"{app}-store-{sub}-changelog"
        for p in range(shape.partitions):
            task_id = f"{sub}_{p}"
            tasks.append((task_id, stateful))
            source = {"topic": f"{app}-topic-{sub}", "partition": p}
            changelogs = [{"topic": changelog, "partition": p}] if stateful else []
            yield (
                "tasks",
                {
                    "app_id": app,
                    "task_id": task_id,
                    "state_stores": [f"store-{sub}"] if stateful else [],
                    "source_partitions": [source],
                    "changelog_partitions": changelogs,
                },
            )
            for tp in [source, *changelogs]:
                if stateful and tp is not source:
                    yield (
                        "changelog_end_offsets",
                        {"app_id": app, **tp, "end_offset": rng.randint(0, 1_000_000)},
                    )
                if shape.rack_aware:
                    yield (
                        "partition_racks",
                        {"cluster_id": cluster_of_app, **tp, "replica_racks": rng.sample(RACKS, 2)},
                    )
    return tasks


def _consumers(shape: _Shape, rng: random.Random) -> list[tuple[str, str, str]]:
    """(process id, consumer id, rack) of every thread: one client per six tasks (2 to 60), 1 to 3 threads
    each, racks in turn."""
    num_clients = max(2, min(60, math.ceil(shape.total / 6)))
    consumers = []
    for client in range(1, num_clients + 1):
        pid = _process_id(shape.index, client)
        for thread in range(1, rng.randint(1, 3) + 1):
            consumers.append((pid, f"{shape.app}-{client}-StreamThread-{thread}-consumer", RACKS[client % 3]))
    return consumers


def _previous_assignment(
    tasks: list[tuple[str, bool]], consumers: list[tuple[str, str, str]], rng: random.Random
) -> tuple[dict[str, list[str]], list[tuple[str, str, str, int]]]:
    """For four applications in five, a previous assignment: each task active on one consumer (it reports
    -2 for a stateful one) and, for a stateful task, a lagging copy on some other client. Returns the
    previous actives per consumer and the (process, consumer, task, offset sum) reports."""
    has_history = rng.random() < 0.8
    owned: dict[str, list[str]] = {c[1]: [] for c in consumers}
    offsets: list[tuple[str, str, str, int]] = []
    if not has_history:
        return owned, offsets
    for t, (task_id, is_stateful) in enumerate(tasks):
        pid, consumer, _ = consumers[(t + rng.randint(0, 1)) % len(consumers)]
        owned[consumer].append(task_id)
        if is_stateful:
            offsets.append((pid, consumer, task_id, RUNNING_ACTIVE))
            other = consumers[rng.randrange(len(consumers))]
            if other[0] != pid:
                offsets.append((other[0], other[1], task_id, rng.randint(0, 900_000)))
    return owned, offsets


def _subscription_rows(
    app: str, consumers: list[tuple[str, str, str]], owned: Mapping[str, list[str]]
) -> Iterator[tuple[str, dict]]:
    for pid, consumer, rack in consumers:
        yield (
            "client_subscriptions",
            {
                "app_id": app,
                "process_id": pid,
                "consumer_client_id": consumer,
                "rack_id": rack,
                "client_tags": {"zone": rack},
                "host_info": None,
                "prev_active_tasks": owned[consumer],
                "prev_standby_tasks": [],
            },
        )


def write_synthetic_fleet(spark: SparkSession, path: str, num_apps: int, seed: int = 7) -> dict[str, int]:
    """Generate and write the fleet as Delta tables under `path`; returns rows per table."""
    tables = generate_fleet(num_apps, seed)
    write_input_tables(spark, path, tables)
    return {table: len(rows) for table, rows in tables.items()}
