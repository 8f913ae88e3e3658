"""The job on a real Spark standalone cluster: a master and two 1-core workers started from pyspark's own
jars (jobs/standalone_spark.py), the job submitted with `spark-submit --master spark://...`, our code on
--py-files (a zip laid out as the wheel), the executors' Python given by `spark.pyspark.python` (a venv with
the third-party packages but not this repository). Its output tables equal a local run's on the same fleet.
Several JVMs on a shared machine: a soak test (`make soak`)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from chispa import assert_df_equality

from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.jobs.standalone_spark import StandaloneSpark, cluster_env, package_zip, submit_command
from fleet_assignor.jobs.synthetic import write_synthetic_fleet
from fleet_assignor.schemas.spark_schemas import OUTPUT_TABLES

pytestmark = [pytest.mark.spark, pytest.mark.soak]

PLANNED_AT = "2026-01-01T00:00:00Z"
PLANNED_AT_MS = 1_767_225_600_000
RUN_ID = "on-a-cluster"
# Columns that differ between two runs of the same plan: wall-clock timings.
TIMINGS = {"assignment_results": ["duration_ms"], "rollout": ["simulation_ms"], "runs": ["completed_at"]}
# The map columns of `runs` (one row per run), which Spark cannot sort by: compared as values.
RUNS_MAPS = ["input_versions", "rollout_totals", "risk_counts", "worst_applications"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    standalone = StandaloneSpark(tmp_path_factory.mktemp("standalone"), workers=2, worker_memory="1g")
    standalone.start()
    yield standalone
    standalone.stop()  # the finalizer: master and workers, whatever the test did


def _python_without_our_packages(root: Path) -> str:
    """A venv that sees the third-party packages but not the editable install of this repository."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = str(root / "bin" / "python")
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([python, "-c", purelib], text=True).strip())
    # A path added by a .pth is not a site dir, so the editable-install hooks in it are not run.
    (site / "third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_the_job_on_a_standalone_cluster_writes_what_a_local_run_writes(spark, cluster, tmp_path):
    inputs = str(tmp_path / "in")
    write_synthetic_fleet(spark, inputs, 12, seed=21)
    local_out = str(tmp_path / "local")
    run_job(
        spark, JobConfig(input_path=inputs, output_path=local_out, run_id=RUN_ID, planned_at_ms=PLANNED_AT_MS)
    )

    python = _python_without_our_packages(tmp_path / "py")
    assert subprocess.run([python, "-c", "import fleet_assignor"], capture_output=True).returncode != 0
    cluster_out = str(tmp_path / "cluster")
    job = [
        "plan",
        "--input-path",
        inputs,
        "--output-path",
        cluster_out,
        "--run-id",
        RUN_ID,
        "--planned-at",
        PLANNED_AT,
    ]
    command = submit_command(cluster.url, package_zip(tmp_path / "fleet_assignor.zip"), python, job)
    done = subprocess.run(
        command, capture_output=True, text=True, env=cluster_env(), cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert f"run {RUN_ID} COMPLETE" in done.stdout
    # The executors were the cluster's: both workers ran one (their work dirs hold the application).
    for index in range(cluster.workers):
        assert list((cluster.work_dir / f"worker-{index}").glob("app-*")), index

    for table in OUTPUT_TABLES:
        ignore = TIMINGS.get(table, []) + (RUNS_MAPS if table == "runs" else [])
        expected = read_complete(spark, local_out, table)
        actual = read_complete(spark, cluster_out, table)
        assert expected.count() > 0, table
        assert_df_equality(
            actual, expected, ignore_row_order=True, ignore_nullable=True, ignore_columns=ignore
        )
    runs = [read_complete(spark, out, "runs").first() for out in (local_out, cluster_out)]
    for column in RUNS_MAPS:
        assert runs[0][column] == runs[1][column], column
