import pytest

from fleet_assignor.assignor import (
    ApplicationState,
    KafkaStreamsState,
    LagsNotComputedError,
    NoLagForTaskError,
    ProcessId,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)

T00, T01, T02 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)


def _client(n, lags=None, consumers=None):
    return KafkaStreamsState(
        ProcessId.of(n),
        2,
        ("c1", "c2"),
        previous_active_tasks=frozenset({T00}),
        consumer_previous_stateful_tasks=consumers or {"c1": frozenset({T00, T01, T02}), "c2": frozenset()},
        task_lags=lags,
    )


def test_prev_tasks_by_lag_orders_by_lag_then_task_and_skips_tasks_without_lag():
    state = _client(1, lags={T00: -2, T01: 50, T02: 7})
    assert state.prev_tasks_by_lag("c1") == (T00, T02, T01)
    assert state.prev_tasks_by_lag("c2") == ()
    assert state.prev_tasks_by_lag("unknown") == ()
    only_some = _client(1, lags={T01: 3})
    assert only_some.prev_tasks_by_lag("c1") == (T01,)


def test_lag_accessors_raise_without_lags_and_for_tasks_without_lag():
    app = ApplicationState.of([TaskInfo(T00, True)], [_client(1, lags={T00: 5})])
    with_lags = app.kafka_streams_states(compute_task_lags=True)[ProcessId.of(1)]
    assert with_lags.lag_for(T00) == 5
    with pytest.raises(NoLagForTaskError, match="has no lag for task 0_1"):
        with_lags.lag_for(T01)
    without = app.kafka_streams_states(compute_task_lags=False)[ProcessId.of(1)]
    for call in (
        lambda: without.lag_for(T00),
        lambda: without.prev_tasks_by_lag("c1"),
        without.stateful_tasks_to_lag_sums,
    ):
        with pytest.raises(LagsNotComputedError, match="were not computed"):
            call()
    # the lag-free view is cached and leaves the original untouched
    assert app.kafka_streams_states(compute_task_lags=False)[ProcessId.of(1)] is without
    assert with_lags.lag_for(T00) == 5


def test_application_state_orders_clients_by_signed_process_id_and_tasks_by_id():
    clients = [
        KafkaStreamsState(ProcessId.parse("00000000-0000-0000-0000-000000000001"), 1, ("a",)),
        KafkaStreamsState(ProcessId.parse("ff000000-0000-0000-0000-000000000000"), 1, ("b",)),
    ]
    app = ApplicationState.of([TaskInfo(T02, False), TaskInfo(T00, False)], clients)
    assert [str(p) for p in app.kafka_streams_states(False)] == [
        "ff000000-0000-0000-0000-000000000000",
        "00000000-0000-0000-0000-000000000001",
    ]
    assert list(app.all_tasks()) == [T00, T02]


def test_application_state_orders_tasks_as_task_id_comparison_does_and_refuses_a_mix_of_named_and_unnamed():
    unnamed = [TaskId(10, 0), TaskId(2, 7), TaskId(2, 1 << 20), TaskId(0, 11), TaskId(0, 2)]
    named = [TaskId(1, 0, "b"), TaskId(0, 5, "b"), TaskId(3, 0, "a")]
    for ids in (unnamed, named):
        app = ApplicationState.of([TaskInfo(t, False) for t in ids], [_client(1)])
        assert list(app.all_tasks()) == sorted(ids)  # TaskId's own comparison
    with pytest.raises(TypeError, match="can't compare a TaskId with a topology name"):
        ApplicationState.of([TaskInfo(t, False) for t in (TaskId(0, 1), TaskId(0, 1, "a"))], [_client(1)])


def test_stateful_means_changelog_for_the_legacy_set():
    changelog = TaskTopicPartition(TopicPartition("app-store-changelog", 0), False, True)
    source = TaskTopicPartition(TopicPartition("in", 0), True, False)
    in_memory_only = TaskInfo(T00, True, frozenset({"s"}), (source,))
    logged = TaskInfo(T01, True, frozenset({"s"}), (source, changelog))
    app = ApplicationState.of([in_memory_only, logged], [_client(1)])
    assert app.stateful_task_ids() == [T01]
    assert logged.changelog_partitions == (changelog,) and logged.source_partitions == (source,)


def test_task_topic_partition_equality_ignores_racks():
    a = TaskTopicPartition(TopicPartition("t", 1), True, False, frozenset({"r1"}))
    b = TaskTopicPartition(TopicPartition("t", 1), True, False, frozenset())
    assert a == b
