"""What every ``fleet-assignor app`` subcommand shares: reading its input files, writing the result, the
exit codes and the one error that means unusable input.

A module of its own so that subcommands living elsewhere (``optimize-rack`` in `assignor.rack.report`) use
it without importing `assignor.cli`, which imports them to register them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from fleet_assignor.assignor.scenario import Scenario, ScenarioError, load_scenario, read_json_file

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_UNUSABLE_INPUT = 2


class UsageError(Exception):
    """Unusable input in one file: printed as ``error: FILE: JSON-PATH: reason``."""

    def __init__(self, file: str, path: str, reason: str) -> None:
        super().__init__(f"{file}: {path}: {reason}")
        self.file = file
        self.path = path
        self.reason = reason

    @classmethod
    def of(cls, file: str, error: ScenarioError) -> UsageError:
        return cls(file, error.path, error.reason)


def read_input(file: str) -> Any:
    try:
        return read_json_file(file)
    except ScenarioError as e:
        raise UsageError.of(file, e) from None


def read_scenario(file: str, now_ms: int = 0) -> Scenario:
    obj = read_input(file)
    try:
        return load_scenario(obj, source=file, now_ms=now_ms)
    except ScenarioError as e:
        raise UsageError.of(file, e) from None


def render(result: dict[str, Any]) -> str:
    """Deterministic text: the result's own key order (scenario.md's), fixed indentation."""
    return json.dumps(result, indent=2) + "\n"


def emit_result(result: dict[str, Any], out: str | None, stdout: TextIO) -> int:
    text = render(result)
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise UsageError(out, "$", f"cannot write the result: {e.strerror or e}") from None
    else:
        stdout.write(text)
    return EXIT_OK if result["status"] == "OK" else EXIT_NOT_OK
