"""``python -m assignor``: see `assignor.cli`."""

import sys

from assignor.cli import main

if __name__ == "__main__":
    sys.exit(main())
