"""Load a run of the fleet job from its Delta output directory.

Primary path: `deltalake` (delta-rs), so a notebook needs no JVM and no SparkSession. Pass `spark=` to read
through Spark instead (the tables are the same Delta tables; the frames come out equal). Only runs the
`runs` table lists as COMPLETE are visible (tables.md: `runs` is written last and marks a run complete), so
a half-written run never shows. The inputs that give the outputs their meaning (racks, tags, threads,
previous tasks, task partitions) are read from `input_dir` at the exact Delta versions the run read
(`runs.input_versions`), so later input changes do not skew the view.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from fleet_assignor.explore.frames import RUNS_COLUMNS, RunFrames, empty, normalize
from fleet_assignor.explore.ordering import sort_frame, sorted_tasks
from fleet_assignor.schemas.contract import COMPLETE, PLAN_TABLE_NAMES


class RunNotFoundError(LookupError):
    """No complete run with that id (or none at all) in the output dir."""


def _read(path: Path, *, spark=None, version: int | None = None, run_id: str | None = None) -> pd.DataFrame:
    """One Delta table as pandas (rows of one run_id when given), via delta-rs or Spark."""
    if not path.exists():
        raise FileNotFoundError(f"no Delta table at {path}")
    if spark is not None:
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        frame = reader.load(str(path))
        if run_id is not None:
            frame = frame.where(frame["run_id"] == run_id)
        return frame.toPandas()
    from deltalake import DeltaTable

    table = DeltaTable(str(path), version=version)
    filters = [("run_id", "=", run_id)] if run_id is not None else None
    return table.to_pandas(filters=filters)


def list_runs(output_dir: str | Path, *, spark=None) -> pd.DataFrame:
    """The complete runs, oldest first (by completion time, then run id); no rows while there is no `runs`
    table yet (no run has completed)."""
    path = Path(output_dir) / "runs"
    if not (path / "_delta_log").is_dir():
        return empty(RUNS_COLUMNS)
    runs = normalize(_read(path, spark=spark), RUNS_COLUMNS)
    runs = runs[runs["status"] == COMPLETE]
    return runs.sort_values(["completed_at", "run_id"], kind="stable").reset_index(drop=True)


def load_run(
    output_dir: str | Path,
    run_id: str | None = None,
    *,
    input_dir: str | Path | None = None,
    spark=None,
) -> RunFrames:
    """One complete run (the latest when `run_id` is None) as RunFrames; with `input_dir`, its inputs too."""
    output_dir = Path(output_dir)
    runs = list_runs(output_dir, spark=spark)
    if runs.empty:
        raise RunNotFoundError(f"{output_dir}: no complete run in the runs table")
    if run_id is None:
        run_id = str(runs.iloc[-1]["run_id"])
    chosen = runs[runs["run_id"] == run_id]
    if chosen.empty:
        raise RunNotFoundError(
            f"{output_dir}: run {run_id!r} is not complete (complete runs: {', '.join(runs['run_id'])})"
        )
    run_row = chosen.iloc[0].to_dict()
    tables = {
        name: _read(output_dir / name, spark=spark, run_id=run_id)
        for name in PLAN_TABLE_NAMES
        # Runs written before the rollout report have no `rollout` table.
        if name != "rollout" or (output_dir / name).exists()
    }
    clients = partitions = None
    if input_dir is not None:
        versions = run_row.get("input_versions") or {}
        clients, partitions = load_inputs(input_dir, versions=versions, spark=spark)
    return RunFrames.of(
        run_id,
        results=sort_frame(tables["assignment_results"], ["app_id"]),
        assignments=sort_frame(tables["assignments"], ["app_id", "process_id", "task_type", "task_id"]),
        client_assignments=sort_frame(tables["client_assignments"], ["app_id", "process_id"]),
        transitions=sort_frame(tables["task_transitions"], ["app_id", "process_id", "task_id"]),
        clients=clients,
        task_partitions=partitions,
        run=run_row,
        rollout=sort_frame(tables["rollout"], ["app_id"]) if "rollout" in tables else None,
    )


# ------------------------------------------------------------------------------------------------ inputs


def load_inputs(
    input_dir: str | Path, *, versions: Mapping[str, int] | None = None, spark=None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(clients, task_partitions) frames from the input tables (at `versions`, per table, when given)."""
    input_dir = Path(input_dir)
    versions = dict(versions or {})

    def read(name: str) -> pd.DataFrame:
        return normalize(_read(input_dir / name, spark=spark, version=versions.get(name)))

    subscriptions = read("client_subscriptions")
    tasks = read("tasks")
    racks = read("partition_racks") if (input_dir / "partition_racks").exists() else None
    applications = read("applications") if (input_dir / "applications").exists() else None
    return clients_from_subscriptions(subscriptions), task_partitions_from_tables(tasks, racks, applications)


def _as_list(value) -> list:
    return [] if value is None or (isinstance(value, float) and pd.isna(value)) else list(value)


def clients_from_subscriptions(subscriptions: pd.DataFrame) -> pd.DataFrame:
    """One row per (app, client) from `client_subscriptions` (tables.md "Clients": a client is all rows of
    one process id; previous sets are unions; an empty rack id means none)."""
    rows = []
    for (app_id, process_id), group in subscriptions.groupby(["app_id", "process_id"], sort=False):
        first = group.iloc[0]
        prev_active = sorted_tasks(t for v in group["prev_active_tasks"] for t in _as_list(v))
        prev_standby = sorted_tasks(t for v in group["prev_standby_tasks"] for t in _as_list(v))
        rows.append(
            {
                "app_id": app_id,
                "process_id": process_id,
                "rack_id": first["rack_id"] or None,
                "client_tags": dict(first["client_tags"] or {}),
                "consumers": sorted(group["consumer_client_id"]),
                "num_threads": len(group),
                "prev_active": prev_active,
                "prev_standby": [t for t in prev_standby if t not in set(prev_active)],
            }
        )
    frame = pd.DataFrame(rows)
    return sort_frame(frame, ["app_id", "process_id"]) if rows else frame


def task_partitions_from_tables(
    tasks: pd.DataFrame, partition_racks: pd.DataFrame | None, applications: pd.DataFrame | None
) -> pd.DataFrame:
    """One row per (app, task, partition) with its replica racks (None when `partition_racks` has no row;
    the join on cluster_id is null-safe: a null cluster id matches only null)."""
    cluster_of = {}
    if applications is not None:
        cluster_of = {r.app_id: _key(r.cluster_id) for r in applications.itertuples(index=False)}
    racks = {}
    if partition_racks is not None:
        for r in partition_racks.itertuples(index=False):
            racks[(_key(r.cluster_id), r.topic, int(r.partition))] = _as_list(r.replica_racks) or None
    rows = []
    for task in tasks.itertuples(index=False):
        cluster = cluster_of.get(task.app_id)
        kinds: dict[tuple[str, int], dict[str, bool]] = {}
        for column, flag in (("source_partitions", "is_source"), ("changelog_partitions", "is_changelog")):
            for p in _as_list(getattr(task, column)):
                topic, partition = (
                    (p["topic"], int(p["partition"])) if isinstance(p, dict) else (p[0], int(p[1]))
                )
                kinds.setdefault((topic, partition), {"is_source": False, "is_changelog": False})[flag] = True
        for (topic, partition), flags in sorted(kinds.items()):
            rows.append(
                {
                    "app_id": task.app_id,
                    "task_id": task.task_id,
                    "topic": topic,
                    "partition": partition,
                    **flags,
                    "racks": racks.get((cluster, topic, partition)),
                }
            )
    frame = pd.DataFrame(
        rows, columns=["app_id", "task_id", "topic", "partition", "is_source", "is_changelog", "racks"]
    )
    return sort_frame(frame, ["app_id", "task_id", "topic", "partition"])


def _key(cluster_id) -> str | None:
    """Null-safe join key: None stays None (matches only None)."""
    return (
        None if cluster_id is None or (isinstance(cluster_id, float) and pd.isna(cluster_id)) else cluster_id
    )
