"""The one place that builds a SparkSession for the fleet job, its tests and benchmarks.

Locally the Delta Lake JVM jars come from `jvm/jars/` (fetched by `make setup` with Maven), so nothing is
downloaded at run or test time. Where a session already exists or is being provided by the platform
(Databricks, `spark-submit --packages io.delta:...`), that session is used as it is.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
JARS_ENV = "FLEET_ASSIGNOR_JARS"
# Set by every Databricks runtime (e.g. "17.3") in the driver's environment, wheel tasks included.
DATABRICKS_RUNTIME_ENV = "DATABRICKS_RUNTIME_VERSION"
DEFAULT_MASTER = "local[*]"

# Settings a local session gets; all are session-level and can be overridden by `extra_conf`.
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.default.parallelism": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    # The job's plan has ~80 code-generated stages: with Spark's default cache of 100 classes a second run
    # in the same session compiles them all again (Janino, then the JIT), which costs more than running them.
    "spark.sql.codegen.cache.maxEntries": "2000",
    # Spark creates its warehouse directory (default: ./spark-warehouse) when the catalog is first touched;
    # a local session's in-memory catalog keeps nothing between runs, so it never lands in the working tree.
    "spark.sql.warehouse.dir": str(Path(tempfile.gettempdir()) / "fleet-assignor-spark-warehouse"),
}

# Runtime settings the job relies on whatever session it gets (timestamps are UTC in every table).
RUNTIME_SETTINGS: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
}


class DeltaJarsMissingError(RuntimeError):
    """No Delta jars to put on a new local session."""


def delta_jar_dir() -> Path:
    """Where `make setup` put the Delta jars (override with FLEET_ASSIGNOR_JARS)."""
    configured = os.environ.get(JARS_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[1] / "jvm" / "jars"


def delta_jars() -> list[str]:
    """The Delta jar paths, sorted so the classpath is the same on every machine."""
    directory = delta_jar_dir()
    jars = sorted(str(p) for p in directory.glob("*.jar")) if directory.is_dir() else []
    if not any("delta-spark" in Path(j).name for j in jars):
        raise DeltaJarsMissingError(
            f"no delta-spark jar in {directory}: run `make setup` (Maven fetches them), set {JARS_ENV}, "
            "or start the job through spark-submit with --packages io.delta:delta-spark_2.13:<version>"
        )
    return jars


def databricks_runtime() -> str | None:
    """The Databricks runtime version when running on Databricks (DATABRICKS_RUNTIME_VERSION), else None."""
    return os.environ.get(DATABRICKS_RUNTIME_ENV) or None


def _databricks_session(app_name: str) -> SparkSession:
    """The cluster's session: the active one, else the one the runtime's launcher started (getOrCreate with
    no master, no jars, no interpreter pinning: it attaches to the running JVM and never starts one)."""
    session = SparkSession.getActiveSession()
    if session is not None:
        return session
    return SparkSession.builder.appName(app_name).getOrCreate()


def _session_is_provided() -> bool:
    """True when someone else owns the JVM: an active session, or a driver started by spark-submit."""
    if SparkSession.getActiveSession() is not None:
        return True
    # spark-submit (and Databricks' launcher) start the JVM first and hand Python its gateway port.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def pin_local_python(master: str) -> None:
    """For a local master only: the workers run this interpreter (unless PYSPARK_PYTHON says otherwise)."""
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def get_or_create_session(
    app_name: str = "fleet-assignor",
    master: str | None = None,
    extra_conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Return the running session untouched, or build a local one with the Delta jars and extension.

    Only a local session this function creates gets this interpreter as its workers' Python: a session or
    cluster that was given (spark-submit, Databricks, a standalone/YARN/Kubernetes master) keeps the
    interpreter its owner chose, whose path may not exist on the executors' hosts.

    On Databricks (DATABRICKS_RUNTIME_VERSION set) the cluster's session is used, explicitly: `master` and
    `extra_conf` are ignored and no local session is ever built there."""
    if databricks_runtime():
        session = _databricks_session(app_name)
    elif _session_is_provided():
        session = SparkSession.builder.appName(app_name).getOrCreate()
    else:
        pin_local_python(master or DEFAULT_MASTER)
        conf = dict(LOCAL_DEFAULTS)
        conf.update(
            {
                "spark.jars": ",".join(delta_jars()),
                "spark.sql.extensions": DELTA_EXTENSION,
                "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
            }
        )
        conf.update(extra_conf or {})
        builder = SparkSession.builder.appName(app_name).master(master or DEFAULT_MASTER)
        for key, value in conf.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
    for key, value in RUNTIME_SETTINGS.items():
        session.conf.set(key, value)
    return session
