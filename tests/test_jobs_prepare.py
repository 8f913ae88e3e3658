"""The Spark shaping steps of jobs.prepare on small hand-made frames (real local Spark, no Delta needed)."""

from __future__ import annotations

from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs.fleet_tables import input_frame
from jobs.prepare import end_offsets, ignored_rows, planned_app_ids, task_facts, task_partitions, task_rows


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
    expected = spark.createDataFrame(
        [("a", "0_0", "cl", 0, False, True), ("a", "0_0", "in", 0, True, True)],
        "app_id string, task_id string, topic string, partition int, source boolean, changelog boolean",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_task_facts_sum_changelog_end_offsets_and_count_rows(spark):
    tasks = _tasks(
        spark,
        [
            {"app_id": "a", "task_id": "0_0", "state_stores": ["s"], "source_partitions": [],
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
            ],
        )
    )
    facts, computed = task_facts(tasks, task_partitions(tasks), ends)
    expected = spark.createDataFrame(
        [("a", "0_0", True, 2**63 - 1, 1), ("a", "0_1", False, None, 2), ("b", "0_0", True, None, 1)],
        "app_id string, task_id string, has_changelog boolean, end_sum long, rows long",
    )
    assert_df_equality(facts.orderBy("app_id", "task_id"), expected, ignore_nullable=True)
    # b's changelog partition has no end offset: its lags cannot be computed.
    assert {r["app_id"]: r["lags_computed"] for r in computed.collect()} == {"a": True, "b": False}


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
