"""A source topic used as a changelog (a table read with topology.optimization=all: the store "profiles" is
restored from "<app>.profiles" itself, there is no "-changelog" topic): its `changelog_end_offsets` rows are
the group's committed offsets of those partitions, as Kafka Streams' own lag computation does, not the log
end. The demo application's "hold" command blocks the table's stream thread, so the committed offsets stay
behind the log end by a known amount of records produced meanwhile. No Spark."""

from __future__ import annotations

import re
import time

import pytest

from fleet_assignor.jobs.collect import read_snapshot
from fleet_assignor.jobs.live_cluster import DemoApp
from fleet_assignor.jobs.live_snapshot import snapshot_rows
from tests.live.conftest import APP_RACKS

pytestmark = pytest.mark.kafka_live

PARTITIONS = 4
FIRST, MORE = 400, 200  # records produced to "<app>.profiles" before and during the hold


def _subtopology_reading(group: dict, topic: str) -> str:
    """A classic group's subtopology whose tasks read `topic` (from the members' decoded assignments)."""
    for member in group["members"]:
        parts = member["assignment"]["partitions"]
        for task, part in zip(member["streams_assignment"]["active_tasks"], parts, strict=False):
            if part["topic"] == topic:
                return task.rpartition("_")[0]
    raise AssertionError(f"no member reads {topic}")


def _app_configs(bootstrap: str, app_id: str, protocol: str) -> dict:
    """Classic groups carry no topology: say which subtopologies own the two changelogs (tests/live docs)."""
    if protocol == "streams":
        return {}
    deadline = time.monotonic() + 60
    while True:
        (group,) = read_snapshot(bootstrap, groups=re.escape(app_id), timeout_ms=10_000)["groups"]
        try:
            counts = _subtopology_reading(group, f"{app_id}-by-word-repartition")
            profiles = _subtopology_reading(group, f"{app_id}.profiles")
            return {
                app_id: {"changelogs": {f"{app_id}-counts-changelog": counts, f"{app_id}.profiles": profiles}}
            }
        except (KeyError, AssertionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _source_rows(bootstrap: str, app_id: str, app_configs: dict):
    """(snapshot, the group's JSON, {partition: end_offset} of the source changelog rows) when collected."""
    snapshot = read_snapshot(bootstrap, groups=re.escape(app_id), timeout_ms=10_000)
    rows = snapshot_rows(snapshot, app_configs=app_configs)
    if app_id not in rows.collected:
        return snapshot, None, None
    (group,) = snapshot["groups"]
    ends = {
        r["partition"]: r["end_offset"]
        for r in rows.tables["changelog_end_offsets"]
        if r["topic"] == f"{app_id}.profiles"
    }
    return snapshot, group, ends


def _wait(bootstrap: str, app_id: str, app_configs: dict, ok, what: str, timeout_s: float = 90.0):
    """Poll until two snapshots a second apart give the same rows and `ok(rows)` holds."""
    deadline = time.monotonic() + timeout_s
    previous, last = None, None
    while time.monotonic() < deadline:
        snapshot, group, ends = _source_rows(bootstrap, app_id, app_configs)
        last = ends
        if ends is not None and ok(ends) and ends == previous:
            return snapshot, group, ends
        previous = ends
        time.sleep(1.0)
    raise TimeoutError(f"{app_id}: {what} not reached within {timeout_s} s (last rows {last})")


PROTOCOLS = ("classic", "streams")


@pytest.fixture(scope="module")
def source_table_apps(kafka_cluster, tmp_path_factory):
    """One single-instance application per protocol, started together (their JVMs start in parallel)."""
    apps = {}
    try:
        for protocol in PROTOCOLS:
            app_id = f"live-source-table-{protocol}"
            apps[protocol] = DemoApp(
                app_id,
                kafka_cluster.bootstrap,
                tmp_path_factory.mktemp(app_id),
                protocol=protocol,
                instances=1,
                partitions=PARTITIONS,
                produce=FIRST,
                source_table=True,
                racks=APP_RACKS,
            )
        for app in apps.values():
            app.wait_running([0])
        yield apps
    finally:
        for app in apps.values():
            app.stop()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_source_topic_changelog_end_offset_is_the_committed_offset(
    kafka_cluster, source_table_apps, protocol
):
    app = source_table_apps[protocol]
    app_id = app.app_id
    bootstrap = kafka_cluster.bootstrap
    profiles = f"{app_id}.profiles"
    try:
        configs = _app_configs(bootstrap, app_id, protocol)
        snapshot, group, ends = _wait(
            bootstrap, app_id, configs, lambda e: sum(e.values()) == FIRST, "caught up"
        )
        rows = snapshot_rows(snapshot, app_configs=configs)
        # The table's tasks own their source partitions as changelog (both lists, tables.md).
        table_tasks = [
            t for t in rows.tables["tasks"] if any(s["topic"] == profiles for s in t["source_partitions"])
        ]
        assert len(table_tasks) == PARTITIONS
        for task in table_tasks:
            assert [(c["topic"], c["partition"]) for c in task["changelog_partitions"]] == [
                (s["topic"], s["partition"]) for s in task["source_partitions"]
            ]
        assert sorted(ends) == list(range(PARTITIONS))

        # Behind: the stream thread blocks on the first new record, so nothing more is committed.
        app.hold()
        app.send(f"produce {MORE}")
        app.wait_event("produced")
        snapshot, group, ends = _wait(
            bootstrap, app_id, configs, lambda e: sum(e.values()) < FIRST + MORE, "a frozen commit"
        )
        committed = group["committed_offsets"][profiles]  # what the Admin API reports as committed
        assert ends == {int(p): o for p, o in committed.items()}
        assert sum(ends.values()) < FIRST + MORE  # the log end: every record produced (no transactions)
        if protocol == "streams":  # a streams group's topology lists the source topic as a changelog
            log_end = {int(p): o for p, o in snapshot["end_offsets"][profiles].items()}
            assert sum(log_end.values()) == FIRST + MORE
            assert any(ends[p] < log_end[p] for p in ends)
        other = snapshot_rows(snapshot, app_configs=configs).tables["changelog_end_offsets"]
        assert {r["topic"] for r in other} == {f"{app_id}-counts-changelog", profiles}
    finally:
        app.release()
    _wait(bootstrap, app_id, configs, lambda e: sum(e.values()) == FIRST + MORE, "caught up again")
