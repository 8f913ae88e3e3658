"""The job's Delta reads and writes, the parts that need no Spark session: who a commit belongs to, the
run condition, and read_complete refusing a table the contract does not have (the Delta reads and writes
themselves run in test_jobs_end_to_end, test_jobs_hardening and test_jobs_catalog_tables)."""

from __future__ import annotations

import pytest

from fleet_assignor.jobs import delta_io
from fleet_assignor.jobs.delta_io import COMMIT_CONFLICTS, Writer, read_complete


def test_a_commit_names_its_run_and_attempt_and_others_metadata_names_nobody():
    writer = Writer.new("run-1")
    assert delta_io._commit_writer(writer.metadata()) == writer
    assert delta_io._commit_writer('{"something": "else"}') is None
    assert delta_io._commit_writer(None) is None


def test_a_run_s_rows_are_its_partition():
    assert delta_io._run_condition("run-1") == "run_id = 'run-1'"


def test_commit_conflicts_are_delta_s_exception_classes():
    assert COMMIT_CONFLICTS and all(issubclass(c, BaseException) for c in COMMIT_CONFLICTS)


def test_read_complete_knows_only_the_output_tables():
    with pytest.raises(ValueError, match="unknown output table 'tasks'"):
        read_complete(None, "/nowhere", "tasks")  # type: ignore[arg-type]  # refused before Spark is used
