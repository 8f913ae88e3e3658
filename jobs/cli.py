"""The `fleet-assignor` command (and `python -m fleet_assignor`): one entry point for every command.

fleet-assignor plan ...      the fleet planning job (Spark + Delta)
fleet-assignor app ...       one application from a scenario file (plan | validate | optimize-rack)
fleet-assignor explore ...   write a run's figures
fleet-assignor --version
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


def _plan(argv: list[str]) -> int:
    # Imported when used, so that `fleet-assignor --help` and the one-application commands need no Spark.
    from fleet_assignor.jobs.plan_assignments import main

    return main(argv)


def _collect(argv: list[str]) -> int:
    from fleet_assignor.jobs.collect import main

    return main(argv)


def _app(argv: list[str]) -> int:
    from fleet_assignor.assignor.cli import main

    return main(argv)


def _explore(argv: list[str]) -> int:
    from fleet_assignor.explore.__main__ import main

    return main(argv)


COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "collect": (_collect, "snapshot a live cluster's Kafka Streams groups into the six input tables"),
    "plan": (_plan, "plan a fleet: the six input Delta tables in, the run's output tables out"),
    "app": (_app, "one application from a scenario file: plan | validate | optimize-rack"),
    "explore": (_explore, "write a run's figures (PNG) from its output tables"),
}


def usage() -> str:
    lines = ["usage: fleet-assignor COMMAND [options]   (fleet-assignor COMMAND --help for its options)", ""]
    lines += [f"  {name:<9} {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "  --version  print the version and exit"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] == "--version":
        from fleet_assignor import __version__

        print(f"fleet-assignor {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"fleet-assignor: unknown command {args[0]!r}\n{usage()}", file=sys.stderr)
        return 2
    return command[0](args[1:])


def run() -> None:
    """The console script: exits with main()'s code, so that runners which call the entry point and ignore
    its return value (a Databricks wheel task) still see a failed run fail."""
    sys.exit(main())


if __name__ == "__main__":
    run()
