"""``python -m fleet_assignor``: the same commands as the ``fleet-assignor`` console script."""

import sys

from fleet_assignor.jobs.cli import main

if __name__ == "__main__":
    sys.exit(main())
