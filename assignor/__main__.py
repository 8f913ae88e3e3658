"""``python -m fleet_assignor.assignor``: see `assignor.cli`."""

import sys

from fleet_assignor.assignor.cli import main

if __name__ == "__main__":
    sys.exit(main())
