"""The synthetic fleet of `make run` and `make bench`: seeded and stable row for row, every row in the
contract's columns, and internally consistent (what one table names, the others hold)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from fleet_assignor.jobs.synthetic import MAX_TASKS, RACKS, generate_fleet
from fleet_assignor.schemas.contract import INPUT_TABLES, RUNNING_ACTIVE

# generate_fleet(40, 7) as JSON: benchmarks and fingerprints compare runs on this fleet, so a refactoring
# must not change a single row (or the order of draws from the seeded generator).
FLEET_40_SEED_7_SHA256 = "b0a8dac7de82edf0a76d3071d4afe0713d40abad2f7e6188f0b4dff42ebe5541"


@pytest.fixture(scope="module")
def fleet():
    return generate_fleet(40, 7)


def test_the_seeded_fleet_is_stable_row_for_row(fleet):
    assert hashlib.sha256(json.dumps(fleet).encode()).hexdigest() == FLEET_40_SEED_7_SHA256
    assert generate_fleet(40, 7) == fleet
    assert generate_fleet(40, 8) != fleet


def test_rows_hold_only_contract_columns(fleet):
    assert list(fleet) == list(INPUT_TABLES)
    for table, rows in fleet.items():
        allowed = set(INPUT_TABLES[table].column_names)
        assert rows, table
        assert all(set(row) <= allowed for row in rows), table


def test_what_one_table_names_the_others_hold(fleet):
    apps = {r["app_id"] for r in fleet["tasks"]}
    assert apps == {r["app_id"] for r in fleet["client_subscriptions"]} and len(apps) == 40
    # about nine applications in ten have an applications row; the others plan with the defaults
    assert 30 <= len(fleet["applications"]) < 40
    consumers = {
        (r["app_id"], r["process_id"], r["consumer_client_id"]) for r in fleet["client_subscriptions"]
    }
    assert {
        (r["app_id"], r["process_id"], r["consumer_client_id"]) for r in fleet["task_offsets"]
    } <= consumers
    changelogs = {
        (r["app_id"], p["topic"], p["partition"]) for r in fleet["tasks"] for p in r["changelog_partitions"]
    }
    assert {(r["app_id"], r["topic"], r["partition"]) for r in fleet["changelog_end_offsets"]} == changelogs
    tasks = Counter(r["app_id"] for r in fleet["tasks"])
    assert max(tasks.values()) <= MAX_TASKS


def test_previous_actives_report_running_and_rack_rows_name_the_application_s_cluster(fleet):
    clusters = {r["app_id"]: r["cluster_id"] for r in fleet["applications"]}
    topics = {p["topic"]: r["app_id"] for r in fleet["tasks"] for p in r["source_partitions"]}
    topics.update({p["topic"]: r["app_id"] for r in fleet["tasks"] for p in r["changelog_partitions"]})
    for row in fleet["partition_racks"]:
        assert row["cluster_id"] == clusters.get(topics[row["topic"]])  # None without an applications row
        assert len(row["replica_racks"]) == 2 and set(row["replica_racks"]) <= set(RACKS)
    owners = {
        (r["app_id"], r["process_id"], t)
        for r in fleet["client_subscriptions"]
        for t in r["prev_active_tasks"]
    }
    running = {
        (r["app_id"], r["process_id"], r["task_id"]) for r in fleet["task_offsets"] if r["offset_sum"] < 0
    }
    assert running <= owners
    assert {r["offset_sum"] for r in fleet["task_offsets"] if r["offset_sum"] < 0} == {RUNNING_ACTIVE}
