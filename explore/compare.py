"""Two runs side by side (two job runs, two assignors on the same inputs, a plan and its what-if)."""

from __future__ import annotations

import pandas as pd

from fleet_assignor.explore.frames import RunFrames
from fleet_assignor.explore.ordering import sort_frame, sorted_processes, sorted_tasks

COMPARED_METRICS = (
    "status",
    "assignor",
    "error",
    "probing_rebalance",
    "active_moves",
    "standby_moves",
    "warmups",
    "max_tasks_per_thread",
    "min_tasks_per_thread",
    "cross_rack_cost",
    "restore_lag",
)
NUMERIC_DELTAS = ("active_moves", "standby_moves", "warmups", "cross_rack_cost", "restore_lag")


def _holders(run: RunFrames, app_id: str) -> dict[str, tuple[str | None, list[str], list[str]]]:
    """task -> (active client, standby clients, warmup clients) in one run (empty: the app has no rows)."""
    rows = run.assignments[run.assignments["app_id"] == app_id]
    held: dict[str, tuple[str | None, list[str], list[str]]] = {}
    for row in rows.itertuples(index=False):
        active, standbys, warmups = held.get(row.task_id, (None, [], []))
        if row.task_type == "ACTIVE":
            active = row.process_id
        elif row.is_warmup:
            warmups = [*warmups, row.process_id]
        else:
            standbys = [*standbys, row.process_id]
        held[row.task_id] = (active, standbys, warmups)
    return {t: (a, sorted_processes(s), sorted_processes(w)) for t, (a, s, w) in held.items()}


def assignment_diff(a: RunFrames, b: RunFrames, app_id: str, *, only_changed: bool = False) -> pd.DataFrame:
    """Per task of one application: where its active, standbys and warmups are in run `a` and in run `b`."""
    holders_a, holders_b = _holders(a, app_id), _holders(b, app_id)
    rows = []
    for task in sorted_tasks([*holders_a, *holders_b]):
        active_a, standbys_a, warmups_a = holders_a.get(task, (None, [], []))
        active_b, standbys_b, warmups_b = holders_b.get(task, (None, [], []))
        rows.append(
            {
                "task_id": task,
                "active_a": active_a,
                "active_b": active_b,
                "standbys_a": standbys_a,
                "standbys_b": standbys_b,
                "warmups_a": warmups_a,
                "warmups_b": warmups_b,
                "active_changed": active_a != active_b,
                "standbys_changed": standbys_a != standbys_b,
            }
        )
    table = pd.DataFrame(
        rows,
        columns=[
            "task_id",
            "active_a",
            "active_b",
            "standbys_a",
            "standbys_b",
            "warmups_a",
            "warmups_b",
            "active_changed",
            "standbys_changed",
        ],
    )
    if only_changed:
        table = table[table["active_changed"] | table["standbys_changed"]].reset_index(drop=True)
    return table


def compare_runs(a: RunFrames, b: RunFrames) -> pd.DataFrame:
    """Per application in either run: the key results in `a` and `b` (`<metric>_a`, `<metric>_b`), the
    difference b - a of the counting metrics (`<metric>_delta`), and how many tasks have their active on
    another client in `b` than in `a` (`actives_differ`)."""
    left = a.results.set_index("app_id")
    right = b.results.set_index("app_id")
    rows = []
    for app_id in sorted(set(left.index) | set(right.index)):
        row: dict[str, object] = {"app_id": app_id}
        for metric in COMPARED_METRICS:
            row[f"{metric}_a"] = left.at[app_id, metric] if app_id in left.index else None
            row[f"{metric}_b"] = right.at[app_id, metric] if app_id in right.index else None
        for metric in NUMERIC_DELTAS:
            x, y = row[f"{metric}_a"], row[f"{metric}_b"]
            row[f"{metric}_delta"] = None if _missing(x) or _missing(y) else y - x
        diff = assignment_diff(a, b, app_id)
        row["actives_differ"] = int(diff["active_changed"].sum())
        row["standbys_differ"] = int(diff["standbys_changed"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _missing(value: object) -> bool:
    return value is None or bool(pd.isna(value))


def client_load_diff(a: RunFrames, b: RunFrames, app_id: str) -> pd.DataFrame:
    """Per client in either run: actives and standbys (warmups included) in `a` and `b`."""

    def counts(run: RunFrames) -> pd.DataFrame:
        rows = run.client_assignments[run.client_assignments["app_id"] == app_id]
        return pd.DataFrame(
            {
                "process_id": rows["process_id"],
                "active": rows["active_tasks"].map(len),
                "standby": rows["standby_tasks"].map(len),
            }
        )

    table = counts(a).merge(counts(b), on="process_id", how="outer", suffixes=("_a", "_b"))
    for column in ("active_a", "active_b", "standby_a", "standby_b"):
        table[column] = table[column].fillna(0).astype(int)
    return sort_frame(table, ["process_id"])
