"""The Spark shaping steps of jobs.prepare on small hand-made frames (real local Spark, no Delta needed)."""

from __future__ import annotations

from chispa import assert_df_equality
from pyspark.sql import functions as F

from fleet_assignor.jobs.input_writer import input_frame
from fleet_assignor.jobs.prepare import (
    end_offsets,
    ignored_rows,
    planned_app_ids,
    rack_metadata,
    task_details,
    task_partitions,
    task_rows,
)


def _tasks(spark, rows):
    usable, _ = task_rows(input_frame(spark, "tasks", rows))
    return usable


def test_a_source_topic_used_as_changelog_is_one_partition_with_both_flags(spark):
    tasks = _tasks(
        spark,
        [
            {"app_id": "a", "task_id": "0_0", "state_stores": ["s"],
             # the source topic doubles as the changelog; a repeated entry and a null entry
             "source_partitions": [{"topic": "in", "partition": 0}, {"topic": "in", "partition": 0},
                                   {"topic": None, "partition": 3}],
             "changelog_partitions": [{"topic": "in", "partition": 0}, {"topic": "cl", "partition": 0}]},
            {"app_id": "a", "task_id": "0_1", "state_stores": [], "source_partitions": None,
             "changelog_partitions": None},
        ],
    )  # fmt: skip
    actual = task_partitions(tasks).orderBy("task_id", "topic", "partition")
    # One row per partition; a task row without partitions keeps one row (its stores, no partition); the
    # first row of each task row carries the stores and counts the row.
    first = actual.where(F.col("first_entry")).select("task_id", "stores").orderBy("task_id")
    assert [tuple(r) for r in first.collect()] == [("0_0", ["s"]), ("0_1", [])]
    expected = spark.createDataFrame(
        [
            ("a", "0_1", None, None, None, None),
            ("a", "0_0", "cl", 0, False, True),
            ("a", "0_0", "in", 0, True, True),
        ],
        "app_id string, task_id string, topic string, partition int, source boolean, changelog boolean",
    )
    assert_df_equality(
        actual.drop("stores", "first_entry"), expected, ignore_nullable=True, ignore_row_order=True
    )


def test_task_details_sum_changelog_end_offsets_count_rows_and_join_racks(spark):
    tasks = _tasks(
        spark,
        [
            {"app_id": "a", "task_id": "0_0", "state_stores": ["s"],
             "source_partitions": [{"topic": "in", "partition": 0}],
             "changelog_partitions": [{"topic": "cl", "partition": 0}, {"topic": "cl", "partition": 1}]},
            {"app_id": "a", "task_id": "0_1", "state_stores": []},
            {"app_id": "a", "task_id": "0_1", "state_stores": []},
            {"app_id": "b", "task_id": "0_0", "state_stores": ["s"], "source_partitions": [],
             "changelog_partitions": [{"topic": "cl", "partition": 0}]},
        ],
    )  # fmt: skip
    ends, _ = end_offsets(
        input_frame(
            spark,
            "changelog_end_offsets",
            [
                {"app_id": "a", "topic": "cl", "partition": 0, "end_offset": 2**62},
                {"app_id": "a", "topic": "cl", "partition": 1, "end_offset": 2**62},  # saturates
                {"app_id": "a", "topic": "in", "partition": 0, "end_offset": 9},  # a source: not summed
            ],
        )
    )
    racks = rack_metadata(
        input_frame(
            spark,
            "partition_racks",
            [
                {"cluster_id": "k", "topic": "in", "partition": 0, "replica_racks": ["r2", "r1", ""]},
                {"cluster_id": None, "topic": "in", "partition": 0, "replica_racks": ["r9"]},
                {"cluster_id": "k", "topic": "cl", "partition": 1, "replica_racks": ["r1"]},
                {"cluster_id": "k", "topic": "cl", "partition": 1, "replica_racks": ["r2"]},  # conflict
            ],
        )
    )
    clusters = spark.createDataFrame([("a", "k"), ("b", None)], "app_id string, cluster_id string")
    details = {(r["app_id"], r["task_id"]): r for r in task_details(tasks, clusters, racks, ends).collect()}
    assert set(details) == {("a", "0_0"), ("a", "0_1"), ("b", "0_0")}
    a0, a1, b0 = details["a", "0_0"], details["a", "0_1"], details["b", "0_0"]
    assert (a0["has_changelog"], a0["end_sum"], a0["missing"]) == (True, 2**63 - 1, False)
    assert (a1["has_changelog"], a1["end_sum"], a1["missing"]) == (False, None, False)
    # b's changelog partition has no end offset: its application's lags cannot be computed.
    assert (b0["has_changelog"], b0["end_sum"], b0["missing"]) == (True, None, True)
    assert a0["stores"] == ["s"] and a1["stores"] == [] and a1["partitions"] == []
    assert [
        (p["topic"], p["partition"], p["source"], p["changelog"], p["racks"]) for p in a0["partitions"]
    ] == [
        ("cl", 0, False, True, []),
        ("cl", 1, False, True, []),  # conflicting rack rows: no racks, and a problem
        ("in", 0, True, False, ["r1", "r2"]),  # cluster k's racks, not the null cluster's
    ]
    assert len(a0["problems"]) == 1 and "topic=cl, partition=1" in a0["problems"][0]
    assert a1["problems"] == ["tasks row (task_id=0_1): 2 rows for one task"]
    assert b0["problems"] == []


def test_ignored_rows_count_null_app_ids_and_applications_not_planned(spark):
    def ids(*values):  # ignored_rows reads the app_id column only; nulls as another writer may leave
        return spark.createDataFrame([(v,) for v in values], "app_id string")

    inputs = {
        "applications": ids("a", None),
        "client_subscriptions": ids("b"),
        "tasks": ids("a", "x", "x", "x"),
        "task_offsets": ids(None, "b"),
        "changelog_end_offsets": ids("y"),
    }
    planned = planned_app_ids(inputs["applications"], inputs["client_subscriptions"])
    counted = {
        (r["table"], r["reason"]): r["rows"]
        for r in ignored_rows(inputs, planned).where(F.col("rows") > 0).collect()
    }
    assert counted == {
        ("applications", "null app_id"): 1,
        ("tasks", "application not planned"): 3,
        ("task_offsets", "null app_id"): 1,
        ("changelog_end_offsets", "application not planned"): 1,
    }
