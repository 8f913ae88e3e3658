"""assignor.rack.costs: which partitions count per scope, remote counts (fetch-from-follower: any replica's
rack is local), edge costs and the default costs per caller (rack.md §1, §3)."""

from __future__ import annotations

import numpy as np

from fleet_assignor.assignor import TaskInfo, TaskTopicPartition, TopicPartition
from fleet_assignor.assignor.rack.costs import (
    HIGH_AVAILABILITY_DEFAULT_COSTS,
    STATELESS_COSTS,
    STICKY_DEFAULT_COSTS,
    PartitionScope,
    RackCosts,
    RemoteCounts,
    edge_costs,
    remote_partition_counts,
    resolve_costs,
)
from tests.fixtures import TASK_0_0, TASK_0_1


def _partition(topic: str, source: bool, changelog: bool, *racks: str) -> TaskTopicPartition:
    return TaskTopicPartition(TopicPartition(topic, 0), source, changelog, frozenset(racks))


# 0_0 reads "in" (replicas on r1 and r2) and writes "cl" (replica on r3); 0_1 reads "in2" (replica on r2).
TASK_A = TaskInfo(
    TASK_0_0,
    True,
    frozenset({"s"}),
    (_partition("in", True, False, "r1", "r2"), _partition("cl", False, True, "r3")),
)
TASK_B = TaskInfo(TASK_0_1, False, frozenset(), (_partition("in2", True, False, "r2"),))


def test_each_scope_selects_its_partitions():
    topics = {scope: [p.topic_partition.topic for p in scope.partitions(TASK_A)] for scope in PartitionScope}
    assert topics == {PartitionScope.SOURCE: ["in"], PartitionScope.ALL: ["in", "cl"],
                      PartitionScope.CHANGELOG: ["cl"]}  # fmt: skip


def test_a_partition_is_local_on_the_rack_of_any_replica_and_remote_without_a_rack():
    counts = remote_partition_counts([TASK_A, TASK_B], ["r1", "r2", "r3", None, "r9"], PartitionScope.ALL)
    # 0_0: "in" is local on r1 and r2, "cl" on r3; without a rack or on an unknown one both are remote
    assert counts.tolist() == [[1, 1, 1, 2, 2], [1, 0, 1, 1, 1]]


def test_no_clients_give_an_empty_column_set():
    assert remote_partition_counts([TASK_A], [], PartitionScope.ALL).shape == (1, 0)


def test_remote_counts_per_task_agree_with_the_matrix():
    remote = RemoteCounts({TASK_0_0: TASK_A, TASK_0_1: TASK_B}, PartitionScope.CHANGELOG)
    racks = ["r1", "r3", None]
    assert [[remote.count(t, rack) for rack in racks] for t in (TASK_0_0, TASK_0_1)] == (
        remote.matrix([TASK_0_0, TASK_0_1], racks).tolist()
    )
    assert remote.count(TASK_0_0, "r3") == 0 and remote.count(TASK_0_0, None) == 1
    assert remote.count(TASK_0_1, "r1") == 0  # a stateless task has no changelog partition to miss


def test_edge_costs_charge_non_overlap_except_on_the_current_holder():
    remote = np.array([[0, 2], [1, 1]], dtype=np.int64)
    current = np.array([1, -1], dtype=np.int64)  # task 0 on client 1; task 1 unplaced
    assert edge_costs(remote, current, RackCosts(traffic=10, non_overlap=3)).tolist() == [[3, 20], [13, 13]]


def test_configured_costs_override_the_callers_defaults_one_by_one():
    assert resolve_costs(None, None, STICKY_DEFAULT_COSTS) == RackCosts(1, 10)
    assert resolve_costs(5, None, HIGH_AVAILABILITY_DEFAULT_COSTS) == RackCosts(5, 1)
    assert resolve_costs(None, 0, HIGH_AVAILABILITY_DEFAULT_COSTS) == RackCosts(10, 0)
    assert RackCosts(traffic=1, non_overlap=0) == STATELESS_COSTS


def test_remote_counts_on_one_rack_are_the_matrix_column_however_often_asked():
    remote = RemoteCounts({TASK_0_0: TASK_A, TASK_0_1: TASK_B}, PartitionScope.ALL)
    racks = ["r1", "r2", "r3", None, "r9"]
    matrix = remote_partition_counts([TASK_A, TASK_B], racks, PartitionScope.ALL)
    for tasks in ([TASK_0_1], [TASK_0_0, TASK_0_1], [TASK_0_1, TASK_0_0, TASK_0_1]):  # partly known, then all
        for column, rack in enumerate(racks):
            row = {TASK_0_0: 0, TASK_0_1: 1}
            assert remote.counts_on(tasks, rack) == [int(matrix[row[t], column]) for t in tasks]
