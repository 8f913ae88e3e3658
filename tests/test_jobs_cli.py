"""The `fleet-assignor` command: every command listed, --version, exit codes that runners see."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from fleet_assignor import __version__
from fleet_assignor.jobs import cli
from fleet_assignor.jobs.plan_assignments import QUIET_LOGGERS, configure_logging


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("collect", "plan", "app", "explore", "--version"):
        assert f"  {command}" in out


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fleet-assignor {__version__}"


def test_unknown_command_and_no_command_exit_2(capsys):
    assert cli.main(["nope"]) == 2
    assert "unknown command 'nope'" in capsys.readouterr().err
    assert cli.main([]) == 2


def test_the_console_script_exits_with_the_code_a_runner_ignoring_returns_still_sees(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["fleet-assignor", "plan", "--assignor", "nosuch"])
    with pytest.raises(SystemExit, match=r"^2$") as raised:
        cli.run()
    assert raised.value.code == 2


def test_python_dash_m_fleet_assignor_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "fleet_assignor", "app", "plan", "/no/such.json"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: /no/such.json: $: cannot read file: No such file or directory"
    ]


def test_explore_errors_are_one_line_and_exit_2(tmp_path):
    argv = [sys.executable, "-m", "fleet_assignor", "explore", "plots", "--output", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {tmp_path}: no complete run in the runs table"]


def test_the_job_logs_at_info_and_libraries_at_warning(monkeypatch):
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    configure_logging()
    assert logging.getLogger("fleet_assignor.job").getEffectiveLevel() == logging.INFO
    for name in QUIET_LOGGERS:
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING
