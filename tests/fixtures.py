"""Small, generic builders for tests (Kafka's AssignmentTestUtils equivalents, assignors.md §11.0).

Import from any test: ``from tests.fixtures import PID_1, TASK_0_0, client_state, stateful_task, ...``.
Everything here builds model objects directly; nothing runs an assignor.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from fleet_assignor.assignor import (
    ApplicationState,
    AssignedTask,
    AssignmentConfigs,
    ClientState,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    ProcessId,
    TaskId,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)


def pid(n: int) -> ProcessId:
    """``PID_n`` of Kafka's tests: ProcessId(UUID(0, n))."""
    return ProcessId.of(n)


def task(text: str) -> TaskId:
    return TaskId.parse(text)


def tasks(*texts: str) -> list[TaskId]:
    return [TaskId.parse(t) for t in texts]


PID_1, PID_2, PID_3, PID_4, PID_5, PID_6, PID_7, PID_8, PID_9 = (pid(n) for n in range(1, 10))

TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, TASK_0_4, TASK_0_5, TASK_0_6 = (TaskId(0, p) for p in range(7))
TASK_1_0, TASK_1_1, TASK_1_2, TASK_1_3 = (TaskId(1, p) for p in range(4))
TASK_2_0, TASK_2_1, TASK_2_2, TASK_2_3 = (TaskId(2, p) for p in range(4))
TASK_3_0, TASK_3_1, TASK_3_2 = (TaskId(3, p) for p in range(3))


def client_state(
    process: ProcessId | int,
    capacity: int = 1,
    *,
    active: Iterable[TaskId] = (),
    standby: Iterable[TaskId] = (),
    previous_active: Iterable[TaskId] = (),
    previous_standby: Iterable[TaskId] = (),
    tags: Mapping[str, str] | None = None,
    rack: str | None = None,
    lags: Mapping[TaskId, int] | None = None,
) -> ClientState:
    """A legacy ClientState with its current assignment already placed (actives, then standbys)."""
    process = pid(process) if isinstance(process, int) else process
    state = ClientState(
        process,
        capacity,
        previous_active=previous_active,
        previous_standby=previous_standby,
        task_lags=lags,
        client_tags=tags,
        rack_id=rack,
    )
    for t in active:
        state.assign_active(t)
    for t in standby:
        state.assign_standby(t)
    return state


def clients_map(*states: ClientState) -> dict[ProcessId, ClientState]:
    """ProcessId -> ClientState in signed ProcessId order."""
    return {s.process_id: s for s in sorted(states, key=lambda s: s.process_id)}


def changelog_partition(t: TaskId, racks: Iterable[str] = (), topic: str | None = None) -> TaskTopicPartition:
    """One partition that is both the task's source and its changelog (source-changelog optimisation)."""
    return TaskTopicPartition(
        TopicPartition(topic or f"test-topic-{t.subtopology}", t.partition), True, True, frozenset(racks)
    )


def stateful_task(t: TaskId | str, racks: Iterable[str] = ()) -> TaskInfo:
    """A task with a store and one source+changelog partition (the KIP-924 tests' stateful TaskInfo)."""
    t = TaskId.parse(t) if isinstance(t, str) else t
    return TaskInfo(t, True, frozenset({f"store-{t.subtopology}"}), (changelog_partition(t, racks),))


def stateless_task(t: TaskId | str, racks: Iterable[str] = ()) -> TaskInfo:
    """A task without stores; with racks it gets one source partition, else no partitions at all."""
    t = TaskId.parse(t) if isinstance(t, str) else t
    partitions: tuple[TaskTopicPartition, ...] = ()
    if racks:
        partitions = (
            TaskTopicPartition(
                TopicPartition(f"test-topic-{t.subtopology}", t.partition), True, False, frozenset(racks)
            ),
        )
    return TaskInfo(t, False, frozenset(), partitions)


def streams_state(
    process: ProcessId | int,
    threads: int = 1,
    *,
    previous_active: Iterable[TaskId] = (),
    previous_standby: Iterable[TaskId] = (),
    tags: Mapping[str, str] | None = None,
    rack: str | None = None,
    lags: Mapping[TaskId, int] | None = None,
) -> KafkaStreamsState:
    """A KafkaStreamsState whose consumers are named ``c<k>`` (one per thread)."""
    process = pid(process) if isinstance(process, int) else process
    return KafkaStreamsState(
        process_id=process,
        num_processing_threads=threads,
        consumer_client_ids=tuple(f"c{k}" for k in range(threads)),
        previous_active_tasks=frozenset(previous_active),
        previous_standby_tasks=frozenset(previous_standby),
        task_lags=dict(lags) if lags is not None else {},
        client_tags=dict(tags or {}),
        rack_id=rack,
    )


def app_state(
    task_infos: Iterable[TaskInfo],
    states: Iterable[KafkaStreamsState],
    configs: AssignmentConfigs | None = None,
    now_ms: int = 0,
) -> ApplicationState:
    return ApplicationState.of(task_infos, states, configs, now_ms)


def kafka_assignment(
    process: ProcessId | int, *, active: Iterable[TaskId] = (), standby: Iterable[TaskId] = ()
) -> KafkaStreamsAssignment:
    process = pid(process) if isinstance(process, int) else process
    return KafkaStreamsAssignment.of(
        process,
        [AssignedTask.active(t) for t in active] + [AssignedTask.standby(t) for t in standby],
    )


# ------------------------------------------------------------------ one application as input-table rows


def process_id(app_index: int, client: int) -> str:
    """The canonical process id of client `client` of application number `app_index` in table fixtures."""
    return f"00000000-0000-0000-{app_index:04d}-{client:012d}"


def healthy_app(app: str, index: int) -> dict[str, list[dict]]:
    """Two clients of one thread each, a stateful task 0_0 (changelog, standby wanted) and a stateless 0_1."""
    changelog = f"{app}-store-changelog"
    return {
        "applications": [{"app_id": app, "num_standby_replicas": 1}],
        "tasks": [
            {"app_id": app, "task_id": "0_0", "state_stores": ["store"],
             "source_partitions": [{"topic": f"{app}-in", "partition": 0}],
             "changelog_partitions": [{"topic": changelog, "partition": 0}]},
            {"app_id": app, "task_id": "0_1", "state_stores": [],
             "source_partitions": [{"topic": f"{app}-in", "partition": 1}], "changelog_partitions": []},
        ],
        "client_subscriptions": [
            {"app_id": app, "process_id": process_id(index, 1), "consumer_client_id": f"{app}-c1",
             "rack_id": "r1", "client_tags": {"zone": "a"}, "prev_active_tasks": ["0_0"],
             "prev_standby_tasks": []},
            {"app_id": app, "process_id": process_id(index, 2), "consumer_client_id": f"{app}-c2",
             "rack_id": "r2", "client_tags": {"zone": "b"}, "prev_active_tasks": ["0_1"],
             "prev_standby_tasks": []},
        ],
        "task_offsets": [
            {"app_id": app, "process_id": process_id(index, 2), "consumer_client_id": f"{app}-c2",
             "task_id": "0_0", "offset_sum": 40},
        ],
        "changelog_end_offsets": [{"app_id": app, "topic": changelog, "partition": 0, "end_offset": 100}],
        "partition_racks": [],
    }  # fmt: skip


def equivalent_scenario(example: dict, app_id: str, *, drop_configs: bool = False) -> dict:
    """The scenario the tables say: consumers carry history (the first consumer holds the client's
    previous tasks, as scenario_to_input_rows writes them)."""
    scenario = copy.deepcopy(example)
    scenario["app_id"] = app_id
    if drop_configs:
        scenario["configs"] = {}
    for client in scenario["clients"]:
        names = client.get("consumers") or [
            f"{client['process_id']}-{n}" for n in range(1, client["threads"] + 1)
        ]
        client["consumers"] = [
            {
                "id": name,
                "prev_active": client.get("prev_active", []) if i == 0 else [],
                "prev_standby": client.get("prev_standby", []) if i == 0 else [],
            }
            for i, name in enumerate(names)
        ]
    return scenario
