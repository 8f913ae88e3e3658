"""Write a run's fleet plots as PNG files (the README's figures come from `make run` this way):

python -m fleet_assignor.explore plots --output OUTPUT_DIR [--input INPUT_DIR] [--run-id ID] [--to DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = argparse.ArgumentParser(prog="fleet-assignor explore", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    plot = commands.add_parser("plots", help="fleet overview, moves per application, rack traffic")
    plot.add_argument("--output", required=True, help="the job's output dir (Delta tables)")
    plot.add_argument("--input", help="the job's input dir (needed for rack traffic)")
    plot.add_argument("--run-id", help="default: the latest complete run")
    plot.add_argument("--to", default="plots", help="directory for the PNG files")
    args = parser.parse_args(argv)

    from fleet_assignor.explore import load_run
    from fleet_assignor.explore import plots as p

    try:
        run = load_run(args.output, args.run_id, input_dir=args.input)
        target = Path(args.to)
        written = [p.save(p.plot_fleet(run), target / "fleet_overview.png")]
        written.append(p.save(p.plot_moves(run), target / "moves_per_app.png"))
        if run.rollout is not None:
            written.append(p.save(p.plot_rollout(run), target / "rollout.png"))
        if args.input:
            written.append(p.save(p.plot_rack_traffic(run), target / "rack_traffic.png"))
    except (LookupError, OSError, ValueError) as e:  # no such run or table, unreadable files: one line
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
