"""assignor.cli_io: what the ``fleet-assignor app`` subcommands share (input files, the result, exit codes),
importable without the CLI that registers them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_assignor.assignor.cli_io import (
    EXIT_NOT_OK,
    EXIT_OK,
    UsageError,
    emit_result,
    read_input,
    read_scenario,
    render,
)
from fleet_assignor.assignor.scenario import ScenarioError

PID = "00000000-0000-0000-0000-000000000001"
SCENARIO = {"tasks": [{"id": "0_0"}], "clients": [{"process_id": PID, "threads": 1}]}


def test_exit_codes_are_the_documented_ones():
    assert (EXIT_OK, EXIT_NOT_OK) == (0, 1)


def test_a_usage_error_carries_file_path_and_reason():
    error = UsageError.of("in.json", ScenarioError("clients[0].threads", "must be an integer"))
    assert (error.file, error.path, error.reason) == ("in.json", "clients[0].threads", "must be an integer")
    assert str(error) == "in.json: clients[0].threads: must be an integer"


def test_read_input_turns_bad_json_into_a_usage_error_at_the_root(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(UsageError, match=r"bad\.json: \$: invalid JSON at line 1"):
        read_input(str(path))


def test_read_scenario_names_the_file_and_the_json_path(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tasks": [], "clients": []}))
    with pytest.raises(UsageError, match=r"s\.json: clients: no clients") as caught:
        read_scenario(str(path))
    assert caught.value.file == str(path)


def test_read_scenario_sets_the_planning_instant(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    scenario = read_scenario(str(path), now_ms=1234)
    assert scenario.now_ms == 1234
    assert scenario.source == str(path)


def test_render_keeps_the_result_key_order_and_ends_with_a_newline():
    text = render({"status": "OK", "assignor": "sticky"})
    assert text == '{\n  "status": "OK",\n  "assignor": "sticky"\n}\n'


@pytest.mark.parametrize(("status", "code"), [("OK", 0), ("INVALID_ASSIGNMENT", 1), ("ASSIGNOR_FAILED", 1)])
def test_emit_result_exit_code_follows_the_status(status, code):
    out = io.StringIO()
    assert emit_result({"status": status}, None, out) == code
    assert json.loads(out.getvalue()) == {"status": status}


def test_emit_result_writes_the_file_and_nothing_to_stdout(tmp_path):
    out = io.StringIO()
    target = tmp_path / "r.json"
    assert emit_result({"status": "OK"}, str(target), out) == EXIT_OK
    assert out.getvalue() == ""
    assert target.read_text() == render({"status": "OK"})


def test_emit_result_reports_an_unwritable_file_as_a_usage_error(tmp_path):
    target = tmp_path / "missing-dir" / "r.json"
    with pytest.raises(UsageError, match=r"r\.json: \$: cannot write the result") as caught:
        emit_result({"status": "OK"}, str(target), io.StringIO())
    assert caught.value.file == str(target)


def test_the_rack_report_imports_without_the_cli():
    """The import cycle this module broke: the optimize-rack subcommand needs none of `assignor.cli`."""
    code = (
        "import sys; import fleet_assignor.assignor.rack.report; "
        "print('fleet_assignor.assignor.cli' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert done.stdout.strip() == "False"
