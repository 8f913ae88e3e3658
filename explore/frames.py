"""The frames a run is explored through: the job's output tables (tables.md) as pandas, plus the inputs
that give them meaning (client racks, tags, threads, previous tasks; task partitions and their racks).

Everything in `explore` works on these pandas frames. A Spark DataFrame is accepted wherever a frame is
and converted with `as_pandas`; array columns become lists of str and map columns dicts, whichever reader
produced them (Spark, delta-rs), so both give equal frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fleet_assignor.schemas import contract

# The output tables' columns (the contract's).
RUNS_COLUMNS = contract.RUNS.column_names
RESULTS_COLUMNS = contract.ASSIGNMENT_RESULTS.column_names
ASSIGNMENTS_COLUMNS = contract.ASSIGNMENTS.column_names
CLIENT_ASSIGNMENTS_COLUMNS = contract.CLIENT_ASSIGNMENTS.column_names
TRANSITIONS_COLUMNS = contract.TASK_TRANSITIONS.column_names
ROLLOUT_COLUMNS = contract.ROLLOUT.column_names
# Inputs, one row per client / per (task, partition): what the outputs alone cannot say.
CLIENTS_COLUMNS = (
    "app_id",
    "process_id",
    "rack_id",
    "client_tags",
    "consumers",
    "num_threads",
    "prev_active",
    "prev_standby",
)
TASK_PARTITIONS_COLUMNS = ("app_id", "task_id", "topic", "partition", "is_source", "is_changelog", "racks")

LIST_COLUMNS = frozenset(
    {"unassigned_tasks", "active_tasks", "standby_tasks", "consumers", "prev_active", "prev_standby", "racks"}
)
MAP_COLUMNS = frozenset({"input_versions", "client_tags"})
TIMESTAMP_COLUMNS = frozenset({"planned_at", "completed_at", "followup_rebalance_deadline"})


class MissingInputsError(ValueError):
    """An analysis needs the run's inputs (racks, tags, previous tasks) and the frames carry none."""


def as_pandas(frame: object) -> pd.DataFrame:
    """A pandas copy of a pandas or Spark DataFrame (Spark's is collected with `toPandas`)."""
    if isinstance(frame, pd.DataFrame):
        return frame.copy()
    to_pandas = getattr(frame, "toPandas", None)
    if to_pandas is None:
        raise TypeError(f"expected a pandas or Spark DataFrame, got {type(frame).__name__}")
    return to_pandas()


def _as_list(value: object) -> list | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    raise TypeError(f"expected an array value, got {value!r}")


def _as_dict(value: object) -> dict | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    # Arrow maps arrive as a list of (key, value) pairs.
    return {k: _plain(v) for k, v in list(value)}


def _plain(value: object) -> object:
    """numpy scalars to Python ones, so frames from either reader compare equal."""
    return value.item() if isinstance(value, np.generic) else value


def normalize(frame: object, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """A pandas frame with lists, dicts and UTC timestamps in the known columns; `columns` first, in order."""
    pdf = as_pandas(frame)
    if columns is not None:
        missing = [c for c in columns if c not in pdf.columns]
        if missing:
            raise ValueError(f"frame lacks columns {missing} (have {list(pdf.columns)})")
        pdf = pdf[list(columns) + [c for c in pdf.columns if c not in columns]]
    for column in pdf.columns:
        if column in LIST_COLUMNS:
            pdf[column] = pdf[column].map(_as_list).astype(object)
        elif column in MAP_COLUMNS:
            pdf[column] = pdf[column].map(_as_dict).astype(object)
        elif column in TIMESTAMP_COLUMNS:
            pdf[column] = _utc(pdf[column])
    return pdf.reset_index(drop=True)


def _utc(values: pd.Series) -> pd.Series:
    converted = pd.to_datetime(values, utc=True)
    return converted.dt.as_unit("ms") if hasattr(converted.dt, "as_unit") else converted


def empty(columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True, eq=False)
class RunFrames:
    """One run (or one what-if plan) as frames: the output tables restricted to the run, plus inputs.

    `clients` and `task_partitions` are None when the inputs are not known (a run loaded without its
    input dir); analyses that need them raise MissingInputsError.
    """

    run_id: str
    results: pd.DataFrame
    assignments: pd.DataFrame
    client_assignments: pd.DataFrame
    transitions: pd.DataFrame
    clients: pd.DataFrame | None = None
    task_partitions: pd.DataFrame | None = None
    run: dict | None = None
    # The `rollout` table's rows of the run (None: a run written before the table existed, or a plan made
    # in the notebook).
    rollout: pd.DataFrame | None = None

    @classmethod
    def of(
        cls,
        run_id: str,
        *,
        results: object,
        assignments: object,
        client_assignments: object,
        transitions: object,
        clients: object | None = None,
        task_partitions: object | None = None,
        run: dict | None = None,
        rollout: object | None = None,
    ) -> RunFrames:
        """Build from pandas or Spark frames shaped as tables.md's outputs; other runs' rows are dropped."""

        def own(frame: object, columns: tuple[str, ...]) -> pd.DataFrame:
            pdf = normalize(frame, columns)
            return pdf[pdf["run_id"] == run_id].reset_index(drop=True)

        return cls(
            run_id=run_id,
            results=own(results, RESULTS_COLUMNS),
            assignments=own(assignments, ASSIGNMENTS_COLUMNS),
            client_assignments=own(client_assignments, CLIENT_ASSIGNMENTS_COLUMNS),
            transitions=own(transitions, TRANSITIONS_COLUMNS),
            clients=None if clients is None else normalize(clients, CLIENTS_COLUMNS),
            task_partitions=None
            if task_partitions is None
            else normalize(task_partitions, TASK_PARTITIONS_COLUMNS),
            run=run,
            rollout=None if rollout is None else own(rollout, ROLLOUT_COLUMNS),
        )

    @property
    def planned_at_ms(self) -> int | None:
        """The run's planning instant in epoch ms (the `now_ms` to replan its inputs with)."""
        planned_at = (self.run or {}).get("planned_at")
        if planned_at is None or pd.isna(planned_at):
            return None
        return int(pd.Timestamp(planned_at).value // 1_000_000)

    @property
    def app_ids(self) -> list[str]:
        return sorted(self.results["app_id"].unique())

    def result(self, app_id: str) -> dict:
        """The `assignment_results` row of one application, as a dict."""
        rows = self.results[self.results["app_id"] == app_id]
        if rows.empty:
            raise KeyError(
                f"run {self.run_id}: no application {app_id!r} (have {len(self.results)} applications)"
            )
        return rows.iloc[0].to_dict()

    def of_app(self, frame: pd.DataFrame, app_id: str) -> pd.DataFrame:
        """Rows of `frame` for one application (checks the application exists in the run)."""
        self.result(app_id)
        return frame[frame["app_id"] == app_id].reset_index(drop=True)

    def require_inputs(self, what: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self.clients is None or self.task_partitions is None:
            raise MissingInputsError(
                f"{what} needs the run's inputs: load the run with input_dir=... (run {self.run_id})"
            )
        return self.clients, self.task_partitions
