"""``python -m fleet_assignor``: the same commands as the ``fleet-assignor`` console script."""

from fleet_assignor.jobs.cli import run

if __name__ == "__main__":
    run()
