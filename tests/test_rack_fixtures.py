"""Fixtures of Kafka's rack-aware tests (rack.md §10), shared by tests/test_rack_*.py (no tests here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fleet_assignor.assignor import (
    ApplicationState,
    AssignmentConfigs,
    ClientState,
    KafkaStreamsState,
    ProcessId,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)

# Source partitions read by each task, and changelog racks (rack.md §10 "Racks used in the fixtures").
SOURCE_RACKS = {
    "0_0": ("topic0", 0, {"r0", "r1"}),
    "0_1": ("topic0", 1, {"r1", "r2"}),
    "0_2": ("topic0", 2, {"r1", "r2"}),
    "1_0": ("topic1", 0, {"r0", "r2"}),
    "1_1": ("topic1", 1, {"r1", "r3"}),
    "1_2": ("topic1", 2, {"r0", "r1"}),
}
CHANGELOG_RACKS = {
    "0_0": {"r0", "r1"},
    "0_1": {"r1", "r2"},
    "0_2": {"r1", "r2"},
    "1_0": {"r0", "r2"},
    "1_1": {"r1", "r3"},
    "1_2": {"r0", "r1"},
}
CLIENT_RACKS = {1: "r0", 2: "r1", 3: "r2", 4: "r3", 5: "r4", 6: "r0", 7: "r1"}


def pid(n: int) -> ProcessId:
    return ProcessId.of(n)


def tid(text: str) -> TaskId:
    return TaskId.parse(text)


def ttp(
    topic: str, partition: int, racks: Iterable[str], *, source: bool, changelog: bool
) -> TaskTopicPartition:
    return TaskTopicPartition(TopicPartition(topic, partition), source, changelog, frozenset(racks))


def kafka_task(text: str, *, stateful: bool = True) -> TaskInfo:
    """A fixture task: its source partition and, when stateful, its changelog partition."""
    topic, partition, racks = SOURCE_RACKS[text]
    partitions = [ttp(topic, partition, racks, source=True, changelog=False)]
    if stateful:
        changelog = ttp(f"store-{text}-changelog", 0, CHANGELOG_RACKS[text], source=False, changelog=True)
        partitions.append(changelog)
    return TaskInfo(tid(text), stateful, frozenset({"store"}) if stateful else frozenset(), tuple(partitions))


def client(
    n: int,
    rack: str | None = "default",
    *,
    tags: Mapping[str, str] | None = None,
    prev_active: Iterable[str] = (),
    prev_standby: Iterable[str] = (),
) -> KafkaStreamsState:
    return KafkaStreamsState(
        pid(n),
        1,
        (f"c{n}",),
        previous_active_tasks=frozenset(tid(t) for t in prev_active),
        previous_standby_tasks=frozenset(tid(t) for t in prev_standby),
        client_tags=dict(tags or {}),
        rack_id=CLIENT_RACKS.get(n) if rack == "default" else rack,
    )


def app_state(tasks: Iterable[TaskInfo], clients: Iterable[KafkaStreamsState], **configs) -> ApplicationState:
    return ApplicationState.of(tasks, clients, AssignmentConfigs(**configs))


def client_states(
    app: ApplicationState,
    active: Mapping[int, Iterable[str]],
    standby: Mapping[int, Iterable[str]] | None = None,
) -> dict[ProcessId, ClientState]:
    states = {p: ClientState.from_kafka_streams_state(s) for p, s in app.clients.items()}
    for n, tasks in active.items():
        for t in tasks:
            states[pid(n)].assign_active(tid(t))
    for n, tasks in (standby or {}).items():
        for t in tasks:
            states[pid(n)].assign_standby(tid(t))
    return states


def actives(states: Mapping[ProcessId, ClientState]) -> dict[int, set[str]]:
    """{client number: active task texts}, for comparing with the test catalogue's layouts."""
    return {p.uuid.int: {str(t) for t in s.active_tasks} for p, s in states.items()}


def standbys(states: Mapping[ProcessId, ClientState]) -> dict[int, set[str]]:
    return {p.uuid.int: {str(t) for t in s.standby_tasks} for p, s in states.items()}
