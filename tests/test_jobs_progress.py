"""An operator's view of a run: a line per stage (inputs read with their row counts, how many applications
are planned, planning progress, each table written), on the job's own logger."""

from __future__ import annotations

import logging
import time

import pytest

from fleet_assignor.jobs import plan_assignments
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.plan_assignments import progress_lines, run_job
from fleet_assignor.schemas.contract import merge_input_rows
from tests.fixtures import healthy_app

pytestmark = pytest.mark.spark


def test_every_stage_says_what_it_did(spark, tmp_path, caplog, monkeypatch):
    fleet = merge_input_rows(*(healthy_app(f"p-{i}", i) for i in range(1, 4)))
    write_input_tables(spark, str(tmp_path / "in"), fleet)
    monkeypatch.setattr(plan_assignments, "PROGRESS_INTERVAL_S", 0.05)
    caplog.set_level(logging.INFO, logger="fleet_assignor")
    run_job(spark, JobConfig(input_path=str(tmp_path / "in"), output_path=str(tmp_path / "out"), run_id="p"))
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("fleet_assignor")]
    assert any(line.startswith("input client_subscriptions: version 0, 6 rows") for line in lines), lines
    assert any(line.startswith("input tasks: version 0, 6 rows") for line in lines), lines
    assert "shaping and planning 3 applications (grouped map: arrow)" in lines[0:20], lines
    progress = [line for line in lines if line.startswith("planning: ")]
    assert progress and all(line.endswith(" of 3 applications planned") for line in progress), lines
    assert "planned 3 applications: 3 OK" in lines
    for table in ("assignment_results", "assignments", "client_assignments", "task_transitions"):
        assert any(line.startswith(f"wrote {table} in ") for line in lines), (table, lines)
    assert lines[-1] == "wrote runs: run p complete"


def test_progress_lines_repeat_while_the_block_runs_and_stop_after(caplog):
    caplog.set_level(logging.INFO, logger="fleet_assignor")
    calls = []
    with progress_lines(lambda: f"tick {len(calls)}" if not calls.append(1) else "", interval_s=0.02):
        time.sleep(0.15)
    seen = len([r for r in caplog.records if r.getMessage().startswith("tick")])
    time.sleep(0.1)
    assert seen >= 2
    assert len([r for r in caplog.records if r.getMessage().startswith("tick")]) == seen
