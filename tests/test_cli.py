"""``fleet-assignor app``: exit codes, the one-line error format, determinism, and every shared example
planned with fallback_prior checked against scenario.md's result format."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_assignor.assignor import AssignmentError, TaskId
from fleet_assignor.assignor.cli import main

REPO = Path(__file__).resolve().parents[1]
PID = "00000000-0000-0000-0000-000000000001"
ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+): (?P<path>[^:]+): (?P<reason>.+)\n$")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, obj) -> str:
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def small_scenario(**client) -> dict:
    return {
        "tasks": [
            {
                "id": "0_0",
                "stores": ["s"],
                "partitions": [{"topic": "cl", "partition": 0, "changelog": True}],
            },
            {"id": "1_0", "partitions": [{"topic": "in", "partition": 0, "source": True}]},
        ],
        "clients": [{"process_id": PID, "consumers": ["c1", "c2"], "prev_active": ["0_0"], **client}],
    }


def without_elapsed(text: str) -> str:
    return re.sub(r'"elapsed_ms": [0-9.e+-]+', '"elapsed_ms": X', text)


# --- plan ---------------------------------------------------------------------------------------------------


def test_plan_prints_the_result_and_exits_zero(tmp_path):
    file = write(tmp_path, "s.json", small_scenario())
    code, out, err = run("plan", file, "--assignor", "fallback_prior", "--now-ms", "1000")
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["status"] == "OK"
    assert result["assignment"][0]["active"] == ["0_0", "1_0"]
    assert result["assignment"][0]["followup_rebalance_deadline_ms"] == 601_000


def test_plan_output_is_byte_identical_apart_from_elapsed_ms(tmp_path, scenarios_dir):
    file = str(scenarios_dir / "example-005.json")
    first = run("plan", file, "--assignor", "fallback_prior", "--now-ms", "42")[1]
    second = run("plan", file, "--assignor", "fallback_prior", "--now-ms", "42")[1]
    assert without_elapsed(first) == without_elapsed(second)
    assert "X" in without_elapsed(first)


def test_plan_out_writes_the_file_and_nothing_to_stdout(tmp_path):
    file = write(tmp_path, "s.json", small_scenario())
    target = tmp_path / "result.json"
    code, out, err = run("plan", file, "--assignor", "fallback_prior", "--now-ms", "0", "--out", str(target))
    assert (code, out, err) == (0, "", "")
    assert json.loads(target.read_text())["assignor"] == "fallback_prior"


def test_plan_defaults_now_to_the_clock(tmp_path):
    file = write(tmp_path, "s.json", small_scenario())
    code, out, _ = run("plan", file, "--assignor", "fallback_prior")
    deadline = json.loads(out)["assignment"][0]["followup_rebalance_deadline_ms"]
    assert code == 0
    assert deadline > 1_700_000_000_000  # an epoch-ms instant after 2023, plus the probing interval


class FailingAssignor:
    def assign(self, state):
        raise RuntimeError("planned failure")


def test_an_assignor_failure_prints_the_result_and_exits_one(tmp_path, monkeypatch):
    module = type(sys)("cli_test_assignors")
    module.FailingAssignor = FailingAssignor
    monkeypatch.setitem(sys.modules, module.__name__, module)
    file = write(tmp_path, "s.json", small_scenario())
    code, out, err = run("plan", file, "--assignor", "cli_test_assignors:FailingAssignor", "--now-ms", "7")
    assert (code, err) == (1, "")
    result = json.loads(out)
    assert (result["status"], result["error_detail"]) == ("ASSIGNOR_FAILED", "planned failure")


@pytest.mark.parametrize(
    ("content", "extra", "path", "reason"),
    [
        ('{"tasks": [', (), "$", "invalid JSON at line 1"),
        (small_scenario(threads=-1), (), "clients[0].threads", "must be an integer >= 0, got -1"),
        ({"tasks": [], "clients": []}, (), "clients", "no clients"),
        (small_scenario(lags={"0_0": -1}), (), 'clients[0].lags["0_0"]', "lag must be"),
        (small_scenario(), ("--assignor", "nonsense"), "--assignor", "unknown assignor 'nonsense'"),
        (
            {**small_scenario(), "configs": {"assignor": "x.y:Z"}},
            (),
            "configs.assignor",
            "cannot import module",
        ),
    ],
)
def test_unusable_input_is_one_line_on_stderr_exit_two_and_nothing_on_stdout(
    tmp_path, content, extra, path, reason
):
    file = write(tmp_path, "bad.json", content)
    code, out, err = run("plan", file, "--now-ms", "0", *extra)
    assert (code, out) == (2, "")
    match = ERROR_LINE.match(err)
    assert match, err
    assert (match["file"], match["path"]) == (file, path)
    assert reason in match["reason"]


def test_a_missing_file_is_unusable_input(tmp_path):
    code, out, err = run("plan", str(tmp_path / "nope.json"))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {tmp_path / 'nope.json'}: $: cannot read file")


# --- validate -----------------------------------------------------------------------------------------------


def test_validate_reports_the_error_and_every_problem_and_exits_one(tmp_path):
    scenario = write(tmp_path, "s.json", small_scenario())
    assignment = write(
        tmp_path, "a.json", {"assignment": [{"process_id": PID, "active": ["0_0"], "standby": ["1_0"]}]}
    )
    code, out, err = run("validate", scenario, assignment)
    assert (code, err) == (1, "")
    result = json.loads(out)
    assert (result["assignor"], result["status"], result["error"]) == (
        "external",
        "INVALID_ASSIGNMENT",
        "INVALID_STANDBY_TASK",
    )
    assert result["error_detail"].startswith("INVALID_STANDBY_TASK: task 1_0")
    assert result["unassigned"] == ["1_0"]


def test_validate_names_the_assignment_file_for_its_unusable_input(tmp_path):
    scenario = write(tmp_path, "s.json", small_scenario())
    assignment = write(tmp_path, "a.json", {"assignment": [{"process_id": "not-a-uuid", "active": []}]})
    code, out, err = run("validate", scenario, assignment)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {assignment}: assignment[0].process_id: ")


def test_kafkas_own_answers_validate_cleanly(scenarios_dir):
    answers = sorted((scenarios_dir / "kafka").glob("example-*.json"))
    assert answers
    for answer in answers:
        scenario = scenarios_dir / f"{answer.name.split('.')[0]}.json"
        code, out, err = run("validate", str(scenario), str(answer))
        result = json.loads(out)
        assert (code, err, result["error"], result["status"]) == (0, "", "NONE", "OK"), answer.name
        kafka = {a["process_id"]: a for a in json.loads(answer.read_text())["assignment"]}
        for entry in result["assignment"]:
            assert sorted(entry["active"]) == sorted(kafka[entry["process_id"]]["active"])


# --- the process itself and the shared examples -------------------------------------------------------------


def python_m_assignor(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "fleet_assignor.assignor", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def test_python_m_assignor_exit_two_and_one_error_line(tmp_path):
    file = write(tmp_path, "bad.json", small_scenario(process_id="nope"))
    done = python_m_assignor("plan", file)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: {file}: clients[0].process_id: ")


def _task_key(text: str) -> TaskId:
    return TaskId.parse(text)


def check_result_format(result: dict, scenario: dict) -> None:
    """scenario.md's result object, checked field by field against the scenario it came from."""
    assert list(result) == [
        "assignor", "status", "assignment", "probing_rebalance", "error", "error_detail", "unassigned",
        "metrics", "elapsed_ms",
    ]  # fmt: skip
    assert isinstance(result["assignor"], str)
    assert result["status"] in ("OK", "INVALID_ASSIGNMENT", "ASSIGNOR_FAILED")
    assert result["error"] in AssignmentError.__members__
    assert result["error_detail"] is None or isinstance(result["error_detail"], str)
    assert isinstance(result["elapsed_ms"], float) and result["elapsed_ms"] == round(result["elapsed_ms"], 3)

    consumers_of = {}
    for client in scenario["clients"]:
        given = [c if isinstance(c, str) else c["id"] for c in client.get("consumers") or []]
        generated = [f"{client['process_id']}-{i}" for i in range(1, client.get("threads", 0) + 1)]
        consumers_of[client["process_id"].lower()] = sorted(given or generated)

    entries = result["assignment"]
    assert [e["process_id"] for e in entries] == sorted(e["process_id"] for e in entries)
    active_anywhere = set()
    for entry in entries:
        assert list(entry) == [
            "process_id",
            "active",
            "standby",
            "warmup",
            "consumers",
            "followup_rebalance_deadline_ms",
        ]
        for key in ("active", "standby", "warmup"):
            assert entry[key] == sorted(entry[key], key=_task_key)
            assert all(str(_task_key(t)) == t for t in entry[key])
        assert set(entry["warmup"]) <= set(entry["standby"])
        assert not set(entry["active"]) & set(entry["standby"])
        deadline = entry["followup_rebalance_deadline_ms"]
        assert deadline is None or (isinstance(deadline, int) and not isinstance(deadline, bool))
        consumers = entry["consumers"]
        assert list(consumers) == consumers_of[entry["process_id"]]
        per_consumer_active = [t for c in consumers.values() for t in c["active"]]
        per_consumer_standby = [t for c in consumers.values() for t in c["standby"]]
        assert sorted(per_consumer_active, key=_task_key) == entry["active"]
        assert sorted(per_consumer_standby, key=_task_key) == entry["standby"]
        loads = [len(c["active"]) + len(c["standby"]) for c in consumers.values()]
        assert max(loads) - min(loads) <= 1  # min or min+1 after the last distribution call
        active_anywhere |= set(entry["active"])
    assert result["probing_rebalance"] == any(
        e["followup_rebalance_deadline_ms"] is not None for e in entries
    )
    all_tasks = [t["id"] for t in scenario["tasks"]]
    assert result["unassigned"] == sorted((t for t in all_tasks if t not in active_anywhere), key=_task_key)

    metrics = result["metrics"]
    assert list(metrics) == [
        "active_moves", "standby_moves", "warmups", "cross_rack_cost", "restore_lag", "max_tasks_per_thread",
        "min_tasks_per_thread", "num_clients", "num_threads", "num_tasks", "num_stateful_tasks",
    ]  # fmt: skip
    for key in ("active_moves", "standby_moves", "warmups", "restore_lag", "num_clients", "num_threads"):
        assert isinstance(metrics[key], int) and not isinstance(metrics[key], bool), key
    assert metrics["warmups"] == sum(len(e["warmup"]) for e in entries)
    assert metrics["num_clients"] == len(scenario["clients"])
    assert metrics["num_threads"] == sum(len(consumers) for consumers in consumers_of.values())
    assert metrics["active_moves"] <= len(active_anywhere)
    assert metrics["standby_moves"] <= sum(len(e["standby"]) - len(e["warmup"]) for e in entries)
    assert metrics["restore_lag"] >= 0  # the lag markers -2 and -3 must never be summed
    assert metrics["cross_rack_cost"] is None or isinstance(metrics["cross_rack_cost"], int)
    assert isinstance(metrics["max_tasks_per_thread"], float)
    assert 0.0 <= metrics["min_tasks_per_thread"] <= metrics["max_tasks_per_thread"]
    assert metrics["num_clients"] == len(scenario["clients"])
    assert metrics["num_threads"] == sum(len(c) for c in consumers_of.values())
    assert metrics["num_tasks"] == len(all_tasks)
    assert metrics["warmups"] == sum(len(e["warmup"]) for e in entries)


def test_every_shared_example_plans_with_fallback_prior_in_the_result_format(scenarios_dir, tmp_path):
    files = sorted((scenarios_dir).glob("*.json"))
    assert len(files) >= 9
    for file in files:
        out = tmp_path / f"{file.stem}.result.json"
        done = python_m_assignor(
            "plan", str(file), "--assignor", "fallback_prior", "--now-ms", "1000", "--out", str(out)
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), file.name
        result = json.loads(out.read_text())
        scenario = json.loads(file.read_text())
        check_result_format(result, scenario)
        # fallback_prior places every task, keeps the assignment valid, and always asks for a follow-up
        assert (result["assignor"], result["status"], result["error"]) == ("fallback_prior", "OK", "NONE"), (
            file.name
        )
        assert result["unassigned"] == []
        assert result["probing_rebalance"] is True
        assert len(result["assignment"]) == len(scenario["clients"])


def test_an_unwritable_out_file_is_reported_on_one_line(tmp_path):
    file = write(tmp_path, "s.json", small_scenario())
    target = tmp_path / "no-such-dir" / "r.json"
    code, out, err = run("plan", file, "--assignor", "fallback_prior", "--now-ms", "0", "--out", str(target))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {target}: $: cannot write the result")


@pytest.mark.parametrize("assignor", ["high_availability", "sticky", "streams_sticky"])
def test_every_shared_example_plans_with_a_built_in_assignor_in_the_result_format(scenarios_dir, assignor):
    for file in sorted((scenarios_dir).glob("*.json")):
        code, out, err = run("plan", str(file), "--assignor", assignor, "--now-ms", "0")
        assert (code, err) == (0, ""), file.name
        result = json.loads(out)
        check_result_format(result, json.loads(file.read_text()))
        assert (result["assignor"], result["status"], result["unassigned"]) == (assignor, "OK", []), file.name
