"""The frames a run is explored through: the output tables' columns are the contract's, and values from
either reader (Spark, delta-rs) normalize to the same plain Python values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fleet_assignor.explore.frames import (
    ASSIGNMENTS_COLUMNS,
    CLIENT_ASSIGNMENTS_COLUMNS,
    RESULTS_COLUMNS,
    RUNS_COLUMNS,
    TRANSITIONS_COLUMNS,
    RunFrames,
    normalize,
)
from fleet_assignor.schemas import contract


def test_output_frames_have_the_contract_s_columns():
    assert contract.RUNS.column_names == RUNS_COLUMNS
    assert contract.ASSIGNMENT_RESULTS.column_names == RESULTS_COLUMNS
    assert contract.ASSIGNMENTS.column_names == ASSIGNMENTS_COLUMNS
    assert contract.CLIENT_ASSIGNMENTS.column_names == CLIENT_ASSIGNMENTS_COLUMNS
    assert contract.TASK_TRANSITIONS.column_names == TRANSITIONS_COLUMNS


def test_arrays_maps_and_timestamps_normalize_to_plain_values():
    frame = pd.DataFrame(
        {
            "active_tasks": [np.array(["0_1", "0_2"]), None],
            "client_tags": [[("zone", "a")], {"zone": "b"}],
            "planned_at": [pd.Timestamp(0, unit="ms"), pd.Timestamp(1, unit="ms")],
        }
    )
    out = normalize(frame)
    assert out["active_tasks"].tolist() == [["0_1", "0_2"], None]
    assert out["client_tags"].tolist() == [{"zone": "a"}, {"zone": "b"}]
    assert str(out["planned_at"].dt.tz) == "UTC"


def test_frames_of_one_run_keep_only_its_rows_and_need_every_contract_column():
    results = pd.DataFrame(
        [{c: None for c in RESULTS_COLUMNS} | {"run_id": r, "app_id": "a"} for r in ("x", "y")]
    )
    empty = {c: pd.DataFrame(columns=cols) for c, cols in (
        ("assignments", ASSIGNMENTS_COLUMNS), ("client_assignments", CLIENT_ASSIGNMENTS_COLUMNS),
        ("transitions", TRANSITIONS_COLUMNS))}  # fmt: skip
    run = RunFrames.of("x", results=results, **empty)
    assert run.results["run_id"].tolist() == ["x"]
    with pytest.raises(ValueError, match="frame lacks columns"):
        RunFrames.of("x", results=results.drop(columns=["restore_lag"]), **empty)
