"""databricks.yml's job resource is a valid Databricks job: parsed with the `databricks-bundles` models
(`Job.from_dict` rejects unknown keys), after substituting the bundle variables' defaults as `databricks
bundle` would. Plus what the bundle promises: the conf file is deployed with it and passed by its workspace
path, the run id comes from the job run (a retry completes the same run), the knobs are variables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from databricks.bundles.jobs import Job

REPO = Path(__file__).resolve().parents[1]
BUNDLE = yaml.safe_load((REPO / "databricks.yml").read_text())


def _substitute(value, variables):
    """${var.NAME} by its default (a whole-string reference keeps the default's type, e.g. a list)."""
    if isinstance(value, dict):
        return {k: _substitute(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, variables) for v in value]
    if isinstance(value, str):
        whole = re.fullmatch(r"\$\{var\.(\w+)\}", value)
        if whole:
            return variables[whole.group(1)]
        return re.sub(r"\$\{var\.(\w+)\}", lambda m: str(variables[m.group(1)]), value)
    return value


@pytest.fixture(scope="module")
def job() -> dict:
    variables = {name: spec["default"] for name, spec in BUNDLE["variables"].items()}
    return _substitute(BUNDLE["resources"]["jobs"]["fleet_assignor_plan"], variables)


def test_the_job_resource_parses_as_a_databricks_job(job):
    parsed = Job.from_dict(job)
    assert parsed.name == "fleet-assignor-plan"
    with pytest.raises(ValueError, match="Unexpected field"):
        Job.from_dict({**job, "not_a_job_key": 1})  # the model does reject what it does not know


def test_the_wheel_task_runs_the_console_script_with_the_deployed_conf_and_the_job_run_id(job):
    (task,) = job["tasks"]
    wheel = task["python_wheel_task"]
    assert (wheel["package_name"], wheel["entry_point"]) == ("fleet_assignor", "fleet-assignor")
    args = wheel["parameters"]
    assert args[0] == "plan"
    conf = args[args.index("--conf") + 1]
    assert conf.startswith("${workspace.file_path}/")
    assert (REPO / conf.removeprefix("${workspace.file_path}/")).is_file()  # deployed with the bundle files
    assert "{{job.run_id}}" in args[args.index("--run-id") + 1]  # the same for every retry of a run


def test_retries_timeout_notifications_and_node_type_are_bundle_variables():
    raw = BUNDLE["resources"]["jobs"]["fleet_assignor_plan"]
    (task,) = raw["tasks"]
    assert task["max_retries"] == "${var.max_retries}"
    assert raw["timeout_seconds"] == "${var.timeout_seconds}"
    assert raw["email_notifications"]["on_failure"] == "${var.failure_emails}"
    assert raw["job_clusters"][0]["new_cluster"]["node_type_id"] == "${var.node_type_id}"


def test_no_arrow_batch_override(job):
    """README (Sizing): the grouped map's input is one row per application, the default batch size is fine."""
    spark_conf = job["job_clusters"][0]["new_cluster"]["spark_conf"]
    assert "spark.sql.execution.arrow.maxRecordsPerBatch" not in spark_conf
