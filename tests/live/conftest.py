"""Live Kafka fixtures: one real KRaft broker per pytest session and real Kafka Streams applications
(`jobs.live_cluster`, jars built by `make setup` under live/target). Every process is stopped at teardown."""

from __future__ import annotations

import re
import time

import pytest

from fleet_assignor.jobs.live_cluster import DemoApp, KafkaCluster

CLASSIC_APP = "live-classic"
STREAMS_APP = "live-streams"
APP_RACKS = ("rack-a", "rack-b", "rack-c")
# Plain consumer groups (no Kafka Streams) next to the classic application: group protocol -> group id.
PLAIN_GROUPS = {"classic": f"{CLASSIC_APP}-plain-classic", "consumer": f"{CLASSIC_APP}-plain-consumer"}


def wait_stable(bootstrap: str, app_id: str, members: int, timeout_s: float = 120.0, app_configs=None):
    """Poll snapshots until `app_id` is collectable with `members` consumers and two consecutive snapshots
    one second apart agree on its clients; returns the last (snapshot, rows)."""
    from fleet_assignor.jobs.collect import read_snapshot
    from fleet_assignor.jobs.live_snapshot import snapshot_rows

    deadline = time.monotonic() + timeout_s
    previous = None
    last_reason = "no snapshot yet"
    while time.monotonic() < deadline:
        snapshot = read_snapshot(bootstrap, groups=re.escape(app_id), timeout_ms=10_000)
        rows = snapshot_rows(snapshot, app_configs=app_configs)
        clients = rows.tables["client_subscriptions"]
        if app_id in rows.collected and len(clients) == members:
            if previous == clients:
                return snapshot, rows
            previous = clients
        else:
            previous = None
            last_reason = "; ".join(str(s) for s in rows.skipped) or f"{len(clients)} members"
        time.sleep(1.0)
    raise TimeoutError(f"{app_id} not stable with {members} members within {timeout_s} s: {last_reason}")


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory):
    """One KRaft broker (broker.rack=rack-a) on 127.0.0.1 with free ports, for the whole session."""
    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka"), racks=("rack-a",))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _app(kafka_cluster, tmp_path_factory, app_id: str, **kwargs):
    app = DemoApp(app_id, kafka_cluster.bootstrap, tmp_path_factory.mktemp(app_id), racks=APP_RACKS, **kwargs)
    try:
        app.wait_running(range(kwargs.get("instances", 3)))
    except BaseException:
        app.stop()
        raise
    return app


@pytest.fixture(scope="session")
def classic_app(kafka_cluster, tmp_path_factory):
    """Classic protocol (Streams' own assignor, HighAvailabilityTaskAssignor): 3 instances, 1 standby.
    The same JVM runs two plain KafkaConsumers (no Kafka Streams), groups PLAIN_GROUPS, one per group
    protocol."""
    app = _app(
        kafka_cluster,
        tmp_path_factory,
        CLASSIC_APP,
        instances=3,
        standbys=1,
        produce=3000,
        plain_consumers=tuple(PLAIN_GROUPS),
    )
    yield app
    app.stop()


@pytest.fixture(scope="session")
def streams_app(kafka_cluster, tmp_path_factory):
    """Streams protocol (KIP-1071, broker-side assignor): 2 instances, 1 standby (a group config)."""
    app = _app(
        kafka_cluster,
        tmp_path_factory,
        STREAMS_APP,
        protocol="streams",
        instances=2,
        standbys=1,
        produce=2000,
    )
    yield app
    app.stop()
