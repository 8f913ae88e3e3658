"""A synthetic fleet for `make run` and `make bench`: applications of mixed sizes (median ~20 tasks, a tail
up to 2,000), stateful and stateless subtopologies, racks and tags, standbys, a previous assignment with
lags. Seeded: the same arguments give the same tables."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from pyspark.sql import SparkSession

from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.schemas.contract import INPUT_TABLE_NAMES

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


def _application(index: int, rng: random.Random) -> Iterator[tuple[str, dict]]:  # noqa: C901 - to be split (issue 19)
    app = f"app-{index:06d}"
    cluster = f"cluster-{index % 3}"
    total = _num_tasks(rng)
    subtopologies = rng.randint(1, 4)
    partitions = max(1, math.ceil(total / subtopologies))
    stateful = [rng.random() < 0.5 for _ in range(subtopologies)]
    rack_aware = total <= 60 and rng.random() < 0.15
    standbys = 1 if any(stateful) and rng.random() < 0.5 else 0
    if rng.random() < 0.9:
        yield (
            "applications",
            {
                "app_id": app,
                "cluster_id": cluster,
                "num_standby_replicas": standbys,
                "rack_aware_assignment_strategy": "min_traffic" if rack_aware else None,
                "rack_aware_assignment_tags": ["zone"] if standbys and rng.random() < 0.3 else None,
            },
        )
        cluster_of_app = cluster
    else:
        cluster_of_app = None  # no applications row: defaults, and rack rows with a null cluster_id apply
    tasks: list[tuple[str, bool]] = []
    for sub in range(subtopologies):
        changelog = f"{app}-store-{sub}-changelog"
        for p in range(partitions):
            task_id = f"{sub}_{p}"
            tasks.append((task_id, stateful[sub]))
            source = {"topic": f"{app}-topic-{sub}", "partition": p}
            changelogs = [{"topic": changelog, "partition": p}] if stateful[sub] else []
            yield (
                "tasks",
                {
                    "app_id": app,
                    "task_id": task_id,
                    "state_stores": [f"store-{sub}"] if stateful[sub] else [],
                    "source_partitions": [source],
                    "changelog_partitions": changelogs,
                },
            )
            for tp in [source, *changelogs]:
                if stateful[sub] and tp is not source:
                    yield (
                        "changelog_end_offsets",
                        {"app_id": app, **tp, "end_offset": rng.randint(0, 1_000_000)},
                    )
                if rack_aware:
                    yield (
                        "partition_racks",
                        {"cluster_id": cluster_of_app, **tp, "replica_racks": rng.sample(RACKS, 2)},
                    )
    num_clients = max(2, min(60, math.ceil(total / 6)))
    consumers = []
    for client in range(1, num_clients + 1):
        pid = _process_id(index, client)
        for thread in range(1, rng.randint(1, 3) + 1):
            consumers.append((pid, f"{app}-{client}-StreamThread-{thread}-consumer", RACKS[client % 3]))
    has_history = rng.random() < 0.8
    owned: dict[str, list[str]] = {c[1]: [] for c in consumers}
    offsets = []
    if has_history:
        for t, (task_id, is_stateful) in enumerate(tasks):
            pid, consumer, _ = consumers[(t + rng.randint(0, 1)) % len(consumers)]
            owned[consumer].append(task_id)
            if is_stateful:
                offsets.append((pid, consumer, task_id, -2))
                other = consumers[rng.randrange(len(consumers))]
                if other[0] != pid:
                    offsets.append((other[0], other[1], task_id, rng.randint(0, 900_000)))
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
    for pid, consumer, task_id, value in offsets:
        yield "task_offsets", {
            "app_id": app, "process_id": pid, "consumer_client_id": consumer, "task_id": task_id,
            "offset_sum": value,
        }  # fmt: skip


def write_synthetic_fleet(spark: SparkSession, path: str, num_apps: int, seed: int = 7) -> dict[str, int]:
    """Generate and write the fleet as Delta tables under `path`; returns rows per table."""
    tables = generate_fleet(num_apps, seed)
    write_input_tables(spark, path, tables)
    return {table: len(rows) for table, rows in tables.items()}
