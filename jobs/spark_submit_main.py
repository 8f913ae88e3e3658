"""The file to hand to `spark-submit` (with the package on --py-files, or installed):

    spark-submit ... --py-files fleet_assignor.zip jobs/spark_submit_main.py plan --input-path ...

Python puts a script's own directory first on sys.path; this one sits inside the `jobs` package, so that
directory is dropped before importing, and `jobs` resolves to the shipped package.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

from jobs.cli import main  # noqa: E402 - after the sys.path fix above

if __name__ == "__main__":
    sys.exit(main())
