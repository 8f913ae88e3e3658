"""Frozen dataclass values filled through their slots are the values their constructors give."""

from __future__ import annotations

import dataclasses

import pytest

from fleet_assignor.assignor import AssignedTask, KafkaStreamsAssignment, ProcessId
from fleet_assignor.assignor.distribution import ConsumerTasks, consumer_tasks
from fleet_assignor.assignor.frozen import builder, field_setters
from fleet_assignor.assignor.metrics import ClientTasks
from fleet_assignor.assignor.planner import ClientResult, _client_result
from fleet_assignor.assignor.scenario import _plain_partition
from fleet_assignor.assignor.state import TaskInfo, TaskTopicPartition, TopicPartition, task_info
from fleet_assignor.assignor.task_id import TaskId
from fleet_assignor.assignor.transitions import TaskTransition, TransitionKind, _transition

T1, T2, T3 = TaskId(0, 1), TaskId(0, 2), TaskId(1, 0)


def _same(built: object, constructed: object) -> None:
    assert built == constructed
    assert hash(built) == hash(constructed)
    assert repr(built) == repr(constructed)
    assert dataclasses.astuple(built) == dataclasses.astuple(constructed)  # type: ignore[call-overload]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.active = ()  # type: ignore[attr-defined]


def test_a_consumers_share_is_the_constructors():
    _same(consumer_tasks((T1, T2), (T3,)), ConsumerTasks((T1, T2), (T3,)))
    _same(consumer_tasks((), ()), ConsumerTasks())


def test_a_clients_tasks_are_the_constructors():
    assignment = KafkaStreamsAssignment.of(
        ProcessId.of(1), [AssignedTask.active(T1), AssignedTask.standby(T2), AssignedTask.warmup(T3)]
    )
    _same(ClientTasks.of(assignment), ClientTasks(*assignment.task_ids_by_role()))


def test_a_client_result_is_the_constructors():
    args = (ProcessId.of(7), ClientTasks(frozenset({T1})), {"c-1": ConsumerTasks((T1,))}, 5)
    built, constructed = _client_result(*args), ClientResult(*args)
    assert built == constructed and repr(built) == repr(constructed)
    assert built.as_dict() == constructed.as_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.tasks = ClientTasks()  # type: ignore[misc]


@pytest.mark.parametrize(
    "args", [("orders", 3, True, False, frozenset({"r1", "r2"})), ("log", 0, False, True, frozenset())]
)
def test_a_loaded_partition_is_the_constructors(args):
    topic, number, source, changelog, racks = args
    entry = {"topic": topic, "partition": number, "source": source, "changelog": changelog}
    built = _plain_partition({**entry, "racks": sorted(racks)})  # the job's form: the loader's fast path
    constructed = TaskTopicPartition(TopicPartition(topic, number), source, changelog, racks)
    for value, expected in ((built, constructed), (built.topic_partition, constructed.topic_partition)):
        assert value == expected and hash(value) == hash(expected) and repr(value) == repr(expected)
        assert dataclasses.astuple(value) == dataclasses.astuple(expected)
    assert built.rack_ids == racks  # equality leaves the racks out
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.is_source = not source  # type: ignore[misc]


@pytest.mark.parametrize("changelog", [True, False])
def test_a_loaded_task_is_the_constructors_with_its_derived_flag(changelog):
    partitions = (
        _plain_partition({"topic": "in", "partition": 0, "source": True}),
        _plain_partition({"topic": "log", "partition": 0, "changelog": changelog, "racks": ["r1"]}),
    )
    args = (T1, changelog, frozenset({"store"} if changelog else ()), partitions)
    built, constructed = task_info(*args), TaskInfo(*args)
    assert repr(built) == repr(constructed)
    assert dataclasses.astuple(built) == dataclasses.astuple(constructed)
    assert built.has_changelog is constructed.has_changelog is changelog
    assert built.changelog_partitions == constructed.changelog_partitions
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.is_stateful = not changelog  # type: ignore[misc]


def test_a_transition_is_the_constructors():
    args = (ProcessId.of(3), T2, TransitionKind.PROMOTE_STANDBY, 17)
    built, constructed = _transition(*args), TaskTransition(*args)
    assert built == constructed and hash(built) == hash(constructed) and repr(built) == repr(constructed)
    assert built.as_row() == constructed.as_row()
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.restore_lag = 0  # type: ignore[misc]


def test_a_builder_takes_its_fields_by_name_and_refuses_a_derived_field_unnamed():
    assert consumer_tasks(standby=(T3,), active=(T1,)) == ConsumerTasks((T1,), (T3,))
    with pytest.raises(TypeError):
        builder(TaskInfo)  # its __post_init__ derives a field: only named slots, set by the caller


def test_only_slotted_dataclasses_without_post_init_are_filled_this_way():
    @dataclasses.dataclass(frozen=True)
    class Plain:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            pass

    for cls in (Plain, Checked, int):
        with pytest.raises(TypeError):
            field_setters(cls)
