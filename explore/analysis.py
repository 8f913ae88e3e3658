"""Per-application and fleet-level views of one run: load, moves, standby spread, rack traffic, restore lag.

Every function takes a `RunFrames` (see `explore.load` and `explore.planning`) and returns a new pandas
frame in a deterministic order (clients by signed ProcessId, tasks by TaskId).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace

import pandas as pd

from fleet_assignor.explore.frames import RunFrames
from fleet_assignor.explore.ordering import sort_frame, sorted_processes, sorted_tasks

ACTIVE_TRANSITIONS = ("KEEP_ACTIVE", "PROMOTE_STANDBY", "CREATE_ACTIVE")
NEW_ACTIVE_TRANSITIONS = ("PROMOTE_STANDBY", "CREATE_ACTIVE")


# ------------------------------------------------------------------------------------------------ load


def client_load(run: RunFrames, app_id: str) -> pd.DataFrame:
    """One row per client of the plan (clients with no task included): actives, standbys, warmups.

    `standby` excludes warmups; `active_per_thread` needs the thread count, known from the inputs.
    """
    clients = run.of_app(run.client_assignments, app_id)
    rows = run.of_app(run.assignments, app_id)
    warmups = rows[rows["is_warmup"].astype(bool)].groupby("process_id").size()
    threads, racks = _threads_and_racks(run, app_id)
    table = pd.DataFrame(
        {
            "process_id": clients["process_id"],
            "rack_id": clients["process_id"].map(racks),
            "num_threads": clients["process_id"].map(threads),
            "active": clients["active_tasks"].map(len),
            "warmup": clients["process_id"].map(warmups).fillna(0).astype(int),
        }
    )
    table["standby"] = clients["standby_tasks"].map(len) - table["warmup"]
    table["active_per_thread"] = table["active"] / table["num_threads"]
    table = table[
        ["process_id", "rack_id", "num_threads", "active", "standby", "warmup", "active_per_thread"]
    ]
    return sort_frame(table, ["process_id"])


def thread_load(run: RunFrames, app_id: str) -> pd.DataFrame:
    """One row per consumer (stream thread): actives, standbys, warmups it carries.

    With the inputs known, threads that got nothing are listed too.
    """
    rows = run.of_app(run.assignments, app_id)
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"active": 0, "standby": 0, "warmup": 0}
    )
    for row in rows.itertuples(index=False):
        kind = "active" if row.task_type == "ACTIVE" else ("warmup" if row.is_warmup else "standby")
        counts[(row.process_id, row.consumer_client_id)][kind] += 1
    if run.clients is not None:
        for client in run.of_app(run.clients, app_id).itertuples(index=False):
            for consumer in client.consumers or []:
                counts[(client.process_id, consumer)]
    table = pd.DataFrame(
        [{"process_id": p, "consumer_client_id": c, **n} for (p, c), n in counts.items()],
        columns=["process_id", "consumer_client_id", "active", "standby", "warmup"],
    )
    return sort_frame(table, ["process_id", "consumer_client_id"])


def _threads_and_racks(run: RunFrames, app_id: str) -> tuple[dict[str, float], dict[str, object]]:
    if run.clients is None:
        return {}, {}
    clients = run.of_app(run.clients, app_id)
    return dict(zip(clients["process_id"], clients["num_threads"], strict=False)), dict(
        zip(clients["process_id"], clients["rack_id"], strict=False)
    )


# ----------------------------------------------------------------------------------------------- moves


def previous_owners(run: RunFrames, app_id: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """task -> clients that held it as active / as standby before the plan (a task in both: active)."""
    clients, _ = run.require_inputs("previous ownership")
    active: dict[str, list[str]] = defaultdict(list)
    standby: dict[str, list[str]] = defaultdict(list)
    for client in run.of_app(clients, app_id).itertuples(index=False):
        prev_active = set(client.prev_active or [])
        for task in prev_active:
            active[task].append(client.process_id)
        for task in set(client.prev_standby or []) - prev_active:
            standby[task].append(client.process_id)
    return (
        {t: sorted_processes(p) for t, p in active.items()},
        {t: sorted_processes(p) for t, p in standby.items()},
    )


def moves(run: RunFrames, app_id: str) -> pd.DataFrame:
    """What moved versus the previous assignment (scenario.md, Metrics), one row per move.

    `role` ACTIVE: a task some client held as active that is now active on a client that did not (or on
    none, `to_process_id` null); `from_process_id` is its previous owner (the first in ProcessId order if
    several claimed it). `role` STANDBY: a standby on a client that held the task in neither previous list.
    `role` WARMUP: a warmup replica placed. So the counts per role equal the results' `active_moves`,
    `standby_moves` and `warmups`.
    """
    prev_active, _ = previous_owners(run, app_id)
    transitions = run.of_app(run.transitions, app_id)
    new_active = {
        r.task_id: (r.process_id, r.transition, r.restore_lag)
        for r in transitions.itertuples(index=False)
        if r.transition in ACTIVE_TRANSITIONS
    }
    rows = []
    for task, owners in prev_active.items():
        target = new_active.get(task)
        if target is not None and target[0] in owners:
            continue
        to_process, transition, lag = target if target is not None else (None, None, None)
        rows.append(_move("ACTIVE", task, owners[0], to_process, transition, lag))
    for r in transitions.itertuples(index=False):
        if r.transition in ("CREATE_STANDBY", "CREATE_WARMUP"):
            role = "STANDBY" if r.transition == "CREATE_STANDBY" else "WARMUP"
            rows.append(_move(role, r.task_id, None, r.process_id, r.transition, r.restore_lag))
    table = pd.DataFrame(
        rows, columns=["role", "task_id", "from_process_id", "to_process_id", "transition", "restore_lag"]
    )
    return sort_frame(table, ["role", "task_id", "to_process_id"])


def _move(role, task, source, target, transition, lag) -> dict:
    return {
        "role": role,
        "task_id": task,
        "from_process_id": source,
        "to_process_id": target,
        "transition": transition,
        "restore_lag": lag,
    }


def move_counts(run: RunFrames, app_id: str) -> dict[str, int]:
    """Moves by role: {'ACTIVE': n, 'STANDBY': n, 'WARMUP': n}."""
    counts = moves(run, app_id)["role"].value_counts()
    return {role: int(counts.get(role, 0)) for role in ("ACTIVE", "STANDBY", "WARMUP")}


# ---------------------------------------------------------------------------------------- restore lag


def restore_lag(run: RunFrames, app_id: str) -> pd.DataFrame:
    """Actives that must restore before they run (transition restore_lag > 0), largest first per client."""
    transitions = run.of_app(run.transitions, app_id)
    restoring = transitions[
        transitions["transition"].isin(ACTIVE_TRANSITIONS) & (transitions["restore_lag"].fillna(0) > 0)
    ]
    table = restoring[["process_id", "task_id", "transition", "restore_lag"]]
    return sort_frame(table, ["process_id", "task_id"])


def restore_lag_per_client(run: RunFrames, app_id: str) -> pd.DataFrame:
    """Per client: the number of actives restoring and the records they restore in total."""
    lags = restore_lag(run, app_id)
    clients = run.of_app(run.client_assignments, app_id)["process_id"]
    grouped = lags.groupby("process_id")["restore_lag"]
    table = pd.DataFrame(
        {
            "process_id": clients,
            "restoring_tasks": clients.map(grouped.size()).fillna(0).astype(int),
            "restore_lag": clients.map(grouped.sum()).fillna(0).astype("int64"),
        }
    )
    return sort_frame(table, ["process_id"])


# ------------------------------------------------------------------------------------- standby spread


def _stateful_tasks(run: RunFrames, app_id: str) -> list[str]:
    _, partitions = run.require_inputs("standby spread")
    app = run.of_app(partitions, app_id)
    return sorted_tasks(app.loc[app["is_changelog"].astype(bool), "task_id"])


def standby_spread(run: RunFrames, app_id: str) -> pd.DataFrame:
    """Per stateful task: its active and standbys (warmups apart), and across how many racks and tag values
    the replicas spread. `standbys_on_active_rack` counts standbys that share the active's rack (a rack loss
    would take both); `distinct_<tag>` columns follow the application's tag keys."""
    clients, _ = run.require_inputs("standby spread")
    app_clients = run.of_app(clients, app_id).set_index("process_id")
    tag_keys = sorted({k for tags in app_clients["client_tags"] for k in (tags or {})})
    rows = run.of_app(run.assignments, app_id)
    holders: dict[str, dict[str, list[str]]] = defaultdict(
        lambda: {"ACTIVE": [], "STANDBY": [], "WARMUP": []}
    )
    for row in rows.itertuples(index=False):
        kind = "WARMUP" if row.is_warmup else row.task_type
        holders[row.task_id][kind].append(row.process_id)
    table_rows = []
    for task in _stateful_tasks(run, app_id):
        held = holders.get(task, {"ACTIVE": [], "STANDBY": [], "WARMUP": []})
        active = held["ACTIVE"][0] if held["ACTIVE"] else None
        standbys = sorted_processes(held["STANDBY"])
        replicas = ([active] if active else []) + standbys
        racks = [app_clients.at[p, "rack_id"] for p in replicas]
        active_rack = app_clients.at[active, "rack_id"] if active else None
        row = {
            "task_id": task,
            "active_process_id": active,
            "num_standbys": len(standbys),
            "num_warmups": len(held["WARMUP"]),
            "distinct_racks": len({r for r in racks if r is not None}),
            "unknown_racks": sum(r is None for r in racks),
            "standbys_on_active_rack": sum(
                active_rack is not None and app_clients.at[p, "rack_id"] == active_rack for p in standbys
            ),
        }
        for key in tag_keys:
            values = {(app_clients.at[p, "client_tags"] or {}).get(key) for p in replicas}
            row[f"distinct_{key}"] = len(values - {None})
        table_rows.append(row)
    columns = [
        "task_id",
        "active_process_id",
        "num_standbys",
        "num_warmups",
        "distinct_racks",
        "unknown_racks",
        "standbys_on_active_rack",
        *[f"distinct_{k}" for k in tag_keys],
    ]
    return pd.DataFrame(table_rows, columns=columns)


# ----------------------------------------------------------------------------------------- rack traffic


def _partition_index(run: RunFrames, app_id: str) -> dict[str, dict[str, list[list[str] | None]]]:
    """task -> {'source': [racks of each source partition], 'changelog': [...]} (None = unknown racks)."""
    _, partitions = run.require_inputs("rack traffic")
    index: dict[str, dict[str, list]] = defaultdict(lambda: {"source": [], "changelog": []})
    for p in run.of_app(partitions, app_id).itertuples(index=False):
        racks = list(p.racks) if p.racks else None
        if p.is_source:
            index[p.task_id]["source"].append(racks)
        if p.is_changelog:
            index[p.task_id]["changelog"].append(racks)
    return index


def _cross_rack(rack: str | None, partition_racks: list[list[str] | None]) -> int | None:
    """Partitions with no replica on `rack`; None when the client's or a partition's racks are unknown."""
    if not partition_racks:
        return 0
    if rack is None or any(r is None for r in partition_racks):
        return None
    return sum(rack not in r for r in partition_racks)


def _client_cost(rack, actives, standbys, index) -> int | None:
    """scenario.md's cross_rack_cost for one client: source partitions of actives, changelog of standbys."""
    parts = [_cross_rack(rack, index[t]["source"]) for t in actives if t in index]
    parts += [_cross_rack(rack, index[t]["changelog"]) for t in standbys if t in index]
    return None if any(p is None for p in parts) else sum(parts)


def rack_traffic(run: RunFrames, app_id: str) -> pd.DataFrame:
    """Per client, cross-rack partitions fetched in steady state before the plan (previous assignment) and
    after it (scenario.md's `cross_rack_cost` definition; null where racks are unknown). The `after`
    column sums to the results' `cross_rack_cost`."""
    clients, _ = run.require_inputs("rack traffic")
    index = _partition_index(run, app_id)
    planned = run.of_app(run.client_assignments, app_id).set_index("process_id")
    rows = []
    for client in run.of_app(clients, app_id).itertuples(index=False):
        prev_active = set(client.prev_active or [])
        prev_standby = set(client.prev_standby or []) - prev_active
        has_plan = client.process_id in planned.index
        actives = planned.at[client.process_id, "active_tasks"] if has_plan else []
        standbys = planned.at[client.process_id, "standby_tasks"] if has_plan else []
        rows.append(
            {
                "process_id": client.process_id,
                "rack_id": client.rack_id,
                "before": _client_cost(client.rack_id, prev_active, prev_standby, index),
                "after": _client_cost(client.rack_id, actives or [], standbys or [], index)
                if has_plan
                else None,
            }
        )
    table = pd.DataFrame(rows, columns=["process_id", "rack_id", "before", "after"]).astype(
        {"before": "Int64", "after": "Int64"}
    )
    return sort_frame(table, ["process_id"])


def rack_traffic_totals(run: RunFrames, app_id: str) -> tuple[int | None, int | None]:
    """(before, after) totals for one application; None when any client's cost is unknown."""
    table = rack_traffic(run, app_id)

    def total(column: str) -> int | None:
        return None if table[column].isna().any() else int(table[column].sum())

    return total("before"), total("after")


def per_app(run: RunFrames) -> Iterator[tuple[str, RunFrames]]:
    """(app_id, the run restricted to that application) for every application, splitting each frame once
    (a fleet-wide loop over per-app analyses would otherwise filter every frame once per application)."""
    names = ("results", "assignments", "client_assignments", "transitions", "clients", "task_partitions")
    groups = {}
    for name in names:
        frame = getattr(run, name)
        if frame is not None:
            split = {k: g.reset_index(drop=True) for k, g in frame.groupby("app_id", sort=False)}
            groups[name] = (split, frame)
    for app_id in run.app_ids:
        parts = {name: split.get(app_id, frame.iloc[0:0]) for name, (split, frame) in groups.items()}
        yield app_id, replace(run, **parts)


def fleet_rack_traffic(run: RunFrames) -> pd.DataFrame:
    """Per planned application (with assignment rows): cross-rack partitions before and after."""
    rows = []
    for app_id, app_run in per_app(run):
        if app_run.result(app_id)["status"] not in ("OK", "ASSIGNOR_FAILED"):
            continue
        before, after = rack_traffic_totals(app_run, app_id)
        rows.append({"app_id": app_id, "before": before, "after": after})
    return pd.DataFrame(rows, columns=["app_id", "before", "after"]).astype(
        {"before": "Int64", "after": "Int64"}
    )


# ------------------------------------------------------------------------------------------------ fleet


def fleet_summary(run: RunFrames) -> pd.DataFrame:
    """One row per application: status, error, moves, warmups, imbalance (max - min actives per thread),
    cross-rack cost, restore lag, probing rebalance."""
    r = run.results
    table = pd.DataFrame(
        {
            "app_id": r["app_id"],
            "assignor": r["assignor"],
            "status": r["status"],
            "error": r["error"],
            "num_clients": r["num_clients"],
            "num_tasks": r["num_tasks"],
            "active_moves": r["active_moves"],
            "standby_moves": r["standby_moves"],
            "warmups": r["warmups"],
            "imbalance": r["max_tasks_per_thread"] - r["min_tasks_per_thread"],
            "cross_rack_cost": r["cross_rack_cost"],
            "restore_lag": r["restore_lag"],
            "probing_rebalance": r["probing_rebalance"],
        }
    )
    return table.sort_values("app_id", kind="stable").reset_index(drop=True)


class NoRolloutError(LookupError):
    """The run has no `rollout` rows: written before the rollout report, or a plan made in the notebook."""


def rollout(run: RunFrames) -> pd.DataFrame:
    """The `rollout` table of the run, one row per rolled-out application (docs/rollout.md), most flagged
    first: the applications an operator should look at before letting the plan happen.

    Adds `flags` (the risk names, comma-separated) and `num_flags`."""
    if run.rollout is None:
        raise NoRolloutError(
            f"run {run.run_id} has no rollout table (runs before the rollout report, or a notebook plan)"
        )
    table = run.rollout.copy()
    table["num_flags"] = [len(r) for r in table["risks"]]
    table["flags"] = [", ".join(str(f["name"]) for f in r) for r in table["risks"]]
    order = table.sort_values(
        ["num_flags", "active_moves_fraction", "restore_records", "app_id"],
        ascending=[False, False, False, True],
        kind="stable",
    )
    return order.reset_index(drop=True)


def errors_by_type(run: RunFrames) -> pd.DataFrame:
    """Applications per (status, error), most frequent first (ties by name)."""
    r = run.results.fillna({"error": "NONE"})
    counts = r.groupby(["status", "error"]).size().rename("applications").reset_index()
    return counts.sort_values(["applications", "status", "error"], ascending=[False, True, True]).reset_index(
        drop=True
    )
