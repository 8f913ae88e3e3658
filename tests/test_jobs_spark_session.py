"""The session builder: a local session with the Delta jars writes and reads a Delta table."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_assignor.jobs import spark as spark_module

pytestmark = pytest.mark.spark


def test_local_session_has_delta_extension_and_utc(spark):
    assert spark.conf.get("spark.sql.extensions") == spark_module.DELTA_EXTENSION
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"


def test_delta_write_then_read_round_trips_and_versions(spark, tmp_path):
    path = str(tmp_path / "t")
    spark.createDataFrame([("a", 1), ("b", 2)], "k string, v int").write.format("delta").save(path)
    spark.createDataFrame([("c", 3)], "k string, v int").write.format("delta").mode("append").save(path)
    latest = sorted(tuple(r) for r in spark.read.format("delta").load(path).collect())
    first = sorted(tuple(r) for r in spark.read.format("delta").option("versionAsOf", 0).load(path).collect())
    assert latest == [("a", 1), ("b", 2), ("c", 3)]
    assert first == [("a", 1), ("b", 2)]


def test_existing_session_is_returned_untouched(spark):
    again = spark_module.get_or_create_session("another-name", master="local[1]")
    assert again is spark or again.sparkContext is spark.sparkContext
    assert again.sparkContext.master == "local[2]"


def test_missing_jars_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv(spark_module.JARS_ENV, str(tmp_path))
    with pytest.raises(spark_module.DeltaJarsMissingError, match="make setup"):
        spark_module.delta_jars()


@pytest.mark.parametrize(
    "master, pinned",
    [
        ("local[2]", True),
        ("local", True),
        ("spark://host:7077", False),
        ("yarn", False),
        ("k8s://h:443", False),
    ],
)
def test_only_local_sessions_get_this_interpreter_for_their_workers(monkeypatch, master, pinned):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    spark_module.pin_local_python(master)
    assert ("PYSPARK_PYTHON" in spark_module.os.environ) is pinned
    assert ("PYSPARK_DRIVER_PYTHON" in spark_module.os.environ) is pinned


def test_a_given_interpreter_is_never_replaced(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster/python")
    spark_module.pin_local_python("local[2]")
    assert spark_module.os.environ["PYSPARK_PYTHON"] == "/opt/cluster/python"


class _FakeConf:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def set(self, key: str, value: str) -> None:
        self.values[key] = value


class _FakeSession:
    def __init__(self) -> None:
        self.conf = _FakeConf()


class _FakeBuilder:
    """Records what a builder was asked for; getOrCreate returns the 'cluster's' session."""

    def __init__(self, session: _FakeSession) -> None:
        self.session, self.calls = session, []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name, args))
            return self

        return record

    def getOrCreate(self):
        self.calls.append(("getOrCreate", ()))
        return self.session


@pytest.mark.parametrize("active", [True, False])
def test_on_databricks_the_clusters_session_is_used_and_no_local_one_is_built(monkeypatch, active):
    """DATABRICKS_RUNTIME_VERSION set: the active session (or the runtime's, through a builder given no
    master, jars or conf), never a local one: no Delta jars looked up, no interpreter pinned."""
    cluster_session = _FakeSession()
    builder = _FakeBuilder(cluster_session)

    class FakeSparkSession:
        getActiveSession = staticmethod(lambda: cluster_session if active else None)

    FakeSparkSession.builder = builder
    monkeypatch.setattr(spark_module, "SparkSession", FakeSparkSession)
    monkeypatch.setenv(spark_module.DATABRICKS_RUNTIME_ENV, "17.3")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    monkeypatch.setattr(spark_module, "delta_jars", lambda: pytest.fail("looked up local Delta jars"))

    session = spark_module.get_or_create_session(
        "fleet-assignor-plan", master="local[4]", extra_conf={"a": "b"}
    )
    assert session is cluster_session
    assert spark_module.databricks_runtime() == "17.3"
    assert "PYSPARK_PYTHON" not in spark_module.os.environ
    names = [name for name, _ in builder.calls]
    assert names == ([] if active else ["appName", "getOrCreate"]), builder.calls
    assert cluster_session.conf.values == spark_module.RUNTIME_SETTINGS


def test_off_databricks_the_runtime_is_not_detected(monkeypatch):
    monkeypatch.delenv(spark_module.DATABRICKS_RUNTIME_ENV, raising=False)
    assert spark_module.databricks_runtime() is None
    monkeypatch.setenv(spark_module.DATABRICKS_RUNTIME_ENV, "")
    assert spark_module.databricks_runtime() is None


def test_a_local_session_keeps_its_warehouse_out_of_the_working_tree():
    warehouse = Path(spark_module.LOCAL_DEFAULTS["spark.sql.warehouse.dir"]).resolve()
    repo = Path(__file__).resolve().parents[1]
    assert not warehouse.is_relative_to(repo)
    assert not warehouse.is_relative_to(Path.cwd().resolve())
