"""Shared fixtures: one local SparkSession with Delta for the whole test session, and the shared/ dir."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

# The shared helpers' asserts (Kafka's AssignmentTestUtils checks) report like the tests' own.
pytest.register_assert_rewrite("tests.fixtures")


SCENARIOS_DIR = REPO_ROOT / "tests" / "data" / "scenarios"


@pytest.fixture(scope="session")
def scenarios_dir() -> Path:
    """The example scenarios and Kafka's answers to them (tests/data/scenarios, kept in the repository)."""
    return SCENARIOS_DIR


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession with the Delta jars from jvm/, built by the job's own session builder."""
    from fleet_assignor.jobs.spark import get_or_create_session

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = get_or_create_session(
        "fleet-assignor-tests",
        master="local[2]",
        extra_conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse}",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            # Adaptive execution re-plans each stage for data that is a few rows here: about 15% of a small
            # run's time. It changes no row (the outputs are sorted and deterministic either way).
            "spark.sql.adaptive.enabled": "false",
        },
    )
    yield session
    session.stop()


@pytest.fixture(autouse=True, scope="module")
def _forget_delta_tables_after_each_module():
    """The suite's one session outlives every module's tables: what a module cached goes with it."""
    yield
    if "pyspark.sql" not in sys.modules:  # no module has used Spark yet: nothing to forget
        return
    from pyspark.sql import SparkSession

    from tests.fixtures import forget_delta_tables

    session = SparkSession.getActiveSession()
    if session is not None:
        forget_delta_tables(session)


@pytest.fixture(scope="session")
def kafka_oracle():
    """One JVM running Kafka's own assignors for the session (tests/kafka_oracle.py); needs `make setup`."""
    from tests.kafka_oracle import KafkaOracle

    oracle = KafkaOracle()
    yield oracle
    oracle.close()
