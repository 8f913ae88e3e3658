"""``fleet-assignor app``: plan or check one application given as a scenario file (scenario.md).

Exit codes: 0 when the result's status is OK, 1 for INVALID_ASSIGNMENT or ASSIGNOR_FAILED (the result is
still printed), 2 for unusable input: one line ``error: FILE: JSON-PATH: reason`` on stderr, nothing on
stdout.

Subcommands are listed in `SUBCOMMANDS`; one defined elsewhere (``optimize-rack``) is registered by adding a
`Subcommand` there and reuses `assignor.cli_io` (reading input, writing the result, `UsageError`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from fleet_assignor.assignor.cli_io import (
    EXIT_UNUSABLE_INPUT,
    UsageError,
    emit_result,
    read_input,
    read_scenario,
)
from fleet_assignor.assignor.planner import evaluate_assignment, parse_external_assignment, plan
from fleet_assignor.assignor.rack.report import add_optimize_rack_arguments, run_optimize_rack
from fleet_assignor.assignor.scenario import ScenarioError


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- plan --------------------------------------------------------------------------------------


def _add_plan(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO.json")
    parser.add_argument(
        "--assignor",
        metavar="NAME|module:Class",
        help="overrides configs.assignor: high_availability (default), sticky, fallback_prior, module:Class",
    )
    parser.add_argument(
        "--now-ms", type=int, help="planning instant in epoch ms (follow-up deadlines); default: now"
    )
    parser.add_argument("--out", metavar="FILE", help="write the result there instead of stdout")


def _run_plan(args: argparse.Namespace, stdout: TextIO) -> int:
    now_ms = args.now_ms if args.now_ms is not None else _now_ms()
    scenario = read_scenario(args.scenario, now_ms)
    try:
        result = plan(scenario, assignor=args.assignor).as_dict()
    except ScenarioError as e:  # an unusable assignor name
        raise UsageError.of(args.scenario, e) from None
    return emit_result(result, args.out, stdout)


# --- validate --------------------------------------------------------------------------------------


def _add_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO.json")
    parser.add_argument("assignment", metavar="ASSIGNMENT.json", help="any object with an `assignment` list")
    parser.add_argument("--out", metavar="FILE", help="write the result there instead of stdout")


def _run_validate(args: argparse.Namespace, stdout: TextIO) -> int:
    scenario = read_scenario(args.scenario)
    try:
        task_assignment = parse_external_assignment(read_input(args.assignment))
    except ScenarioError as e:
        raise UsageError.of(args.assignment, e) from None
    return emit_result(evaluate_assignment(scenario, task_assignment).as_dict(), args.out, stdout)


# --- wiring --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, TextIO], int]


SUBCOMMANDS: list[Subcommand] = [
    Subcommand("plan", "plan one application and print the result JSON", _add_plan, _run_plan),
    Subcommand(
        "validate",
        "check an assignment computed elsewhere against a scenario",
        _add_validate,
        _run_validate,
    ),
    Subcommand(
        "optimize-rack",
        "apply the rack-aware optimizer to the scenario's previous assignment (--type active|standby)",
        add_optimize_rack_arguments,
        run_optimize_rack,
    ),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fleet-assignor app",
        description="Plan or check one application given as a scenario file.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for sub in SUBCOMMANDS:
        sub_parser = commands.add_parser(sub.name, help=sub.help)
        sub.add_arguments(sub_parser)
        sub_parser.set_defaults(run=sub.run)
    return parser


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.run(args, stdout)
    except UsageError as e:
        stderr.write(f"error: {e.file}: {e.path}: {_one_line(e.reason)}\n")
        return EXIT_UNUSABLE_INPUT


def _one_line(text: str) -> str:
    return " ".join(text.split())
