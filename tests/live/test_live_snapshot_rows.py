"""The snapshot-to-rows rules on snapshots of the real applications, altered the way a live cluster alters
them (a group rebalancing, unreadable, a topic deleted meanwhile, a topology that cannot be derived): the
group is reported by name with the reason and every other group is still collected. No Spark."""

from __future__ import annotations

import copy
import json

import pytest

from fleet_assignor.jobs.collect import read_snapshot
from fleet_assignor.jobs.live_snapshot import AppConfigsError, check_app_configs, snapshot_rows
from tests.live.conftest import CLASSIC_APP, STREAMS_APP, wait_stable

pytestmark = pytest.mark.kafka_live


@pytest.fixture(scope="module")
def snapshot(kafka_cluster, classic_app, streams_app):
    wait_stable(kafka_cluster.bootstrap, CLASSIC_APP, 3)
    wait_stable(kafka_cluster.bootstrap, STREAMS_APP, 2)
    return read_snapshot(kafka_cluster.bootstrap, groups="live-(classic|streams)", timeout_ms=15_000)


def _group(snapshot, app_id):
    return next(g for g in snapshot["groups"] if g["group_id"] == app_id)


def _skipped(rows):
    return {s.group_id: s.reason for s in rows.skipped}


def test_both_groups_collected_as_they_are(snapshot):
    rows = snapshot_rows(snapshot)
    assert rows.collected == [CLASSIC_APP, STREAMS_APP]
    assert rows.skipped == []
    assert rows.cluster_id == snapshot["cluster_id"]
    # Sorted, deterministic rows: the same snapshot gives the same rows.
    assert json.dumps(snapshot_rows(copy.deepcopy(snapshot)).tables, sort_keys=True) == json.dumps(
        rows.tables, sort_keys=True
    )


@pytest.mark.parametrize(
    ("app_id", "state", "reason"),
    [
        (CLASSIC_APP, "PreparingRebalance", "rebalancing (state PreparingRebalance)"),
        (CLASSIC_APP, "Empty", "empty group"),
        (STREAMS_APP, "Reconciling", "rebalancing (state Reconciling)"),
    ],
)
def test_a_group_not_stable_is_skipped_and_the_other_collected(snapshot, app_id, state, reason):
    altered = copy.deepcopy(snapshot)
    _group(altered, app_id)["state"] = state
    rows = snapshot_rows(altered)
    assert _skipped(rows)[app_id].startswith(reason)
    assert rows.collected == [a for a in (CLASSIC_APP, STREAMS_APP) if a != app_id]
    assert {r["app_id"] for t in rows.tables.values() for r in t if "app_id" in r} == set(rows.collected)


def test_an_unreadable_group_is_reported_with_the_helpers_reason(snapshot):
    altered = copy.deepcopy(snapshot)
    _group(altered, STREAMS_APP)["error"] = (
        "cannot describe the streams group (GroupAuthorizationException: x)"
    )
    rows = snapshot_rows(altered)
    assert "GroupAuthorizationException" in _skipped(rows)[STREAMS_APP]
    assert rows.collected == [CLASSIC_APP]


def test_a_topic_deleted_meanwhile_skips_its_group(snapshot):
    altered = copy.deepcopy(snapshot)
    topic = f"{CLASSIC_APP}.clicks"
    del altered["topics"][topic]
    altered["missing_topics"].append({"topic": topic, "reason": "UnknownTopicOrPartitionException"})
    rows = snapshot_rows(altered)
    assert topic in _skipped(rows)[CLASSIC_APP] and "deleted" in _skipped(rows)[CLASSIC_APP]
    assert rows.collected == [STREAMS_APP]


def test_a_changelog_that_two_subtopologies_could_own_needs_the_app_configs(snapshot):
    """Without standbys or offset sums, both 4-task subtopologies (the re-keying one and the counting one)
    could own the 4-partition changelog: the group is skipped, naming the file entry that settles it."""
    altered = copy.deepcopy(snapshot)
    for member in _group(altered, CLASSIC_APP)["members"]:
        member["streams_assignment"]["standby_tasks"] = {}
        member["streams_subscription"]["task_offset_sums"] = {}
    changelog = f"{CLASSIC_APP}-counts-changelog"
    rows = snapshot_rows(altered)
    assert changelog in _skipped(rows)[CLASSIC_APP] and "--app-configs" in _skipped(rows)[CLASSIC_APP]
    configured = snapshot_rows(altered, app_configs={CLASSIC_APP: {"changelogs": {changelog: "1"}}})
    assert CLASSIC_APP in configured.collected
    stateful = sorted(
        t["task_id"]
        for t in configured.tables["tasks"]
        if t["app_id"] == CLASSIC_APP and t["changelog_partitions"]
    )
    assert stateful == ["1_0", "1_1", "1_2", "1_3"]
    # The same rows as when the live standbys tell which subtopology is stateful.
    assert [t for t in configured.tables["tasks"] if t["app_id"] == CLASSIC_APP] == [
        t for t in snapshot_rows(snapshot).tables["tasks"] if t["app_id"] == CLASSIC_APP
    ]


def test_stale_running_marks_become_unknown_and_current_actives_run(snapshot):
    """A classic subscription's -2 for a task the member no longer runs is from its last join: unknown."""
    altered = copy.deepcopy(snapshot)
    member = _group(altered, CLASSIC_APP)["members"][0]
    standby = sorted(member["streams_assignment"]["standby_tasks"])
    assert standby, "the demo runs one standby per stateful task"
    member["streams_subscription"]["task_offset_sums"] = {standby[0]: -2}
    rows = snapshot_rows(altered)
    offsets = {
        r["task_id"]: r["offset_sum"]
        for r in rows.tables["task_offsets"]
        if r["consumer_client_id"] == member["client_id"]
    }
    assert offsets[standby[0]] == -3
    assert all(offsets[t] == -2 for t in member["streams_assignment"]["active_tasks"])


@pytest.mark.parametrize(
    "document",
    [
        {"app": {"num_standby_replicas": "1"}},
        {"app": {"no_such_key": 1}},
        {"app": {"rack_aware_assignment_tags": "zone"}},
        ["app"],
    ],
)
def test_unusable_app_configs_are_refused(document):
    with pytest.raises(AppConfigsError, match=r"^app configs: "):
        check_app_configs(document)


def test_a_plain_consumer_group_is_not_a_streams_group(snapshot):
    altered = copy.deepcopy(snapshot)
    _group(altered, CLASSIC_APP)["protocol"] = "range"
    rows = snapshot_rows(altered)
    assert _skipped(rows)[CLASSIC_APP] == "not a Kafka Streams group (assignor protocol 'range')"
    assert rows.collected == [STREAMS_APP]
