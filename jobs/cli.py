"""`fleet-assignor` console entry point: `fleet-assignor plan ...` runs the fleet planning job,
`fleet-assignor collect ...` snapshots a live cluster into the input tables."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = (
    "usage: fleet-assignor plan [options]   (fleet-assignor plan --help for the options)\n"
    "       fleet-assignor collect [options]   (fleet-assignor collect --help: snapshot a live cluster)"
)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "plan":
        # Imported here so `fleet-assignor --help` needs no Spark.
        from jobs.plan_assignments import main as plan_main

        return plan_main(rest)
    if command == "collect":
        from jobs.collect import main as collect_main

        return collect_main(rest)
    print(f"fleet-assignor: unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
