"""The `task_transitions` table (tables.md) shown per application and per client: how each client's
TaskManager will carry the plan out."""

from __future__ import annotations

import pandas as pd

from fleet_assignor.explore.frames import RunFrames
from fleet_assignor.explore.ordering import sort_frame

# Display order: what keeps running, what starts (promoted, then restored), standbys, then what stops.
TRANSITION_KINDS = (
    "KEEP_ACTIVE",
    "PROMOTE_STANDBY",
    "CREATE_ACTIVE",
    "KEEP_STANDBY",
    "CREATE_STANDBY",
    "CREATE_WARMUP",
    "DEMOTE_ACTIVE",
    "CLOSE",
)


def task_transitions(run: RunFrames, app_id: str, process_id: str | None = None) -> pd.DataFrame:
    """The rows of one application (one client, if given), clients in ProcessId and tasks in TaskId order."""
    rows = run.of_app(run.transitions, app_id)
    if process_id is not None:
        rows = rows[rows["process_id"] == process_id]
    return sort_frame(rows[["process_id", "task_id", "transition", "restore_lag"]], ["process_id", "task_id"])


def _counts(rows: pd.DataFrame, by: str) -> pd.DataFrame:
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=object if c == by else int) for c in (by, *TRANSITION_KINDS)})
    table = pd.crosstab(rows[by], rows["transition"])
    table = table.reindex(columns=list(TRANSITION_KINDS), fill_value=0).fillna(0).astype(int)
    table.columns.name = None
    return table.reset_index().rename(columns={"index": by})


def transition_counts(run: RunFrames, app_id: str | None = None) -> pd.DataFrame:
    """Transitions by kind: per application for the whole run, or per client of `app_id` (every client of
    the plan listed, those with no row included)."""
    if app_id is None:
        return _counts(run.transitions, "app_id").sort_values("app_id", kind="stable").reset_index(drop=True)
    rows = run.of_app(run.transitions, app_id)
    clients = pd.DataFrame({"process_id": run.of_app(run.client_assignments, app_id)["process_id"]})
    table = clients.merge(_counts(rows, "process_id"), on="process_id", how="left")
    for kind in TRANSITION_KINDS:
        table[kind] = table[kind].fillna(0).astype(int) if kind in table else 0
    return sort_frame(table[["process_id", *TRANSITION_KINDS]], ["process_id"])


def fleet_transition_totals(run: RunFrames) -> pd.Series:
    """Rows per transition kind over the whole run, in display order."""
    counts = run.transitions["transition"].value_counts()
    return pd.Series({kind: int(counts.get(kind, 0)) for kind in TRANSITION_KINDS}, name="rows")
