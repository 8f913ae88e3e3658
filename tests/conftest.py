"""Shared fixtures: one local SparkSession with Delta for the whole test session, and the shared/ dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's shared/ dir (spec, example scenarios): $SHARED_DIR, else <repo>/../shared."""
    configured = os.environ.get("SHARED_DIR")
    return Path(configured).resolve() if configured else (REPO_ROOT / ".." / "shared").resolve()


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession with the Delta jars from jvm/, built by the job's own session builder."""
    from jobs.spark import get_or_create_session

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
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_oracle():
    """One JVM running Kafka's own assignors for the session (tests/kafka_oracle.py); needs `make setup`."""
    from tests.kafka_oracle import KafkaOracle

    oracle = KafkaOracle()
    yield oracle
    oracle.close()
