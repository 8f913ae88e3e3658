"""The scheduled path as users run it: `spark-submit --master local[2]` (the script shipped with pyspark) on
a tiny fleet, with our code shipped on --py-files to a Python that does not have it installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fleet_assignor.jobs.delta_io import read_complete
from fleet_assignor.jobs.input_writer import write_input_tables
from fleet_assignor.jobs.spark import DELTA_CATALOG, DELTA_EXTENSION, delta_jars
from fleet_assignor.jobs.standalone_spark import package_zip
from fleet_assignor.schemas.contract import scenario_to_input_rows

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[1]


def _python_without_our_packages(root: Path) -> str:
    """A venv that sees the third-party packages of ours but not the editable install of this repo."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = Path(
        subprocess.check_output(
            [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    # A path added by a .pth is not a site dir, so the editable-install hooks in it are not run.
    (site / "third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(root / "bin" / "python")


def test_spark_submit_runs_the_job_from_py_files(spark, scenarios_dir, tmp_path):
    example = json.loads((scenarios_dir / "example-003.json").read_text())
    rows = scenario_to_input_rows({**example, "app_id": "submitted-app"})
    write_input_tables(spark, str(tmp_path / "in"), rows)
    archive = package_zip(tmp_path / "fleet_assignor.zip")
    python = _python_without_our_packages(tmp_path / "py")
    probe = subprocess.run([python, "-c", "import fleet_assignor.jobs"], capture_output=True, cwd=tmp_path)
    assert probe.returncode != 0  # the job must come from --py-files

    env = dict(os.environ, PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
    env.pop("PYSPARK_GATEWAY_PORT", None)
    java17 = "/usr/lib/jvm/java-17-openjdk-amd64"
    if os.path.isdir(java17):
        env["JAVA_HOME"] = java17
    command = [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master", "local[2]",
        "--driver-java-options", f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'}",
        "--jars", ",".join(delta_jars()),
        "--conf", f"spark.sql.extensions={DELTA_EXTENSION}",
        "--conf", f"spark.sql.catalog.spark_catalog={DELTA_CATALOG}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=2",
        "--py-files", str(archive),
        str(REPO / "jobs" / "spark_submit_main.py"),
        "plan",
        "--input-path", str(tmp_path / "in"),
        "--output-path", str(tmp_path / "out"),
        "--run-id", "submitted",
        "--planned-at", "2026-01-01T00:00:00Z",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "run submitted COMPLETE" in done.stdout
    assert "1 OK" in done.stdout
    # conf/log4j2.properties: Spark's JVM at WARN (none of its INFO lines, "Running Spark version ..."),
    # the job's own Python logging untouched (its INFO progress lines are there).
    spark_info = [line for line in done.stderr.splitlines() if re.match(r"\d\d/\d\d/\d\d [\d:]+ INFO ", line)]
    assert not spark_info, spark_info[:5]
    assert "Running Spark version" not in done.stderr
    # spark-submit's PythonRunner merges the Python driver's stderr into its own stdout (redirectErrorStream).
    assert re.search(r"fleet_assignor\.job INFO planned 1 applications", done.stdout), done.stdout[-3000:]

    results = read_complete(spark, str(tmp_path / "out"), "assignment_results").collect()
    assert [(r["app_id"], r["status"]) for r in results] == [("submitted-app", "OK")]
    clients = read_complete(spark, str(tmp_path / "out"), "client_assignments").collect()
    assigned = sorted(t for r in clients for t in r["active_tasks"])
    assert assigned == sorted(t["id"] for t in example["tasks"])
