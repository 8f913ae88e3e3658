"""The file to hand to `spark-submit` (with the package on --py-files, or installed):

    spark-submit ... --py-files fleet_assignor.zip \\
        fleet_assignor/jobs/spark_submit_main.py plan --input-path ...

It ships inside the package (`fleet_assignor/jobs/spark_submit_main.py` in the wheel and the zip); every
import is absolute (`fleet_assignor.*`), so the script's own folder first on sys.path shadows nothing.
"""

import sys

from fleet_assignor.jobs.cli import main

if __name__ == "__main__":
    sys.exit(main())
