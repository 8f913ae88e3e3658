"""The tests' shared helpers (Kafka's AssignmentTestUtils equivalents, assignors.md §11.0, and the helpers
more than one test module uses), in one place: test modules import helpers from here, never from each other
(tests/test_self_contained.py checks it).

Import from any test: ``from tests.fixtures import PID_1, TASK_0_0, client_state, stateful_task, ...``.
Everything here builds model objects, scenarios or rows directly, or checks an assignment; nothing here runs
an assignor. Sections: model builders; Kafka's AssignmentTestUtils checks; one application as input-table
rows; README.md's code blocks; explore scenarios; jobs' compact JSON; rack (Kafka's rack-aware fixtures,
``rack_``-prefixed where a name would be ambiguous).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from fleet_assignor.assignor import (
    ApplicationState,
    AssignedTask,
    AssignmentConfigs,
    BaseTaskAssignor,
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


# ------------------------------------------------------------------ Kafka's AssignmentTestUtils checks


def verify_task_placement(clients: Mapping[ProcessId, ClientState], all_tasks: Iterable[TaskId]) -> None:
    """Every task has exactly one active; no client holds a task both as active and as standby."""
    for task in all_tasks:
        owners = [p for p, c in clients.items() if c.has_active(task)]
        assert len(owners) == 1, f"task {task} active on {owners}"
    for state in clients.values():
        assert not set(state.active_tasks) & set(state.standby_tasks), state


def assert_valid_assignment(
    num_standby: int,
    stateful: Iterable[TaskId],
    stateless: Iterable[TaskId],
    clients: Mapping[ProcessId, ClientState],
    max_warmups: int = 0,
) -> None:
    """Known tasks only, no standby of a stateless task, each task on exactly
    min(clients, 1 + standbys) clients (stateless: 1); up to ``max_warmups`` tasks have one extra holder."""
    stateful, stateless = set(stateful), set(stateless)
    known = stateful | stateless
    holders: dict[TaskId, int] = {t: 0 for t in known}
    for state in clients.values():
        for t in state.active_tasks:
            assert t in known, f"unknown active {t}"
            holders[t] += 1
        for t in state.standby_tasks:
            assert t in stateful, f"standby {t} is not a stateful task"
            holders[t] += 1
    extra = 0
    for t, count in holders.items():
        expected = min(len(clients), 1 + (num_standby if t in stateful else 0))
        if count == expected + 1 and extra < max_warmups:
            extra += 1
            continue
        assert count == expected, f"task {t} on {count} clients, expected {expected}"


def assert_balanced_active_assignment(clients: Mapping[ProcessId, ClientState]) -> None:
    loads = [c.active_task_load for c in clients.values()]
    assert max(loads) - min(loads) <= 1.0, loads


def assert_balanced_stateful_assignment(stateful: Iterable[TaskId], clients: Mapping[ProcessId, ClientState]):
    stateful = set(stateful)
    loads = [
        len((set(c.active_tasks) | set(c.standby_tasks)) & stateful) / c.capacity for c in clients.values()
    ]
    assert max(loads) - min(loads) <= 1.0, loads


def subtopology_skew(clients: Mapping[ProcessId, ClientState]) -> int:
    """The largest (max - min) over subtopologies with an active anywhere of the per-client active counts."""
    subtopologies = {t.subtopology for c in clients.values() for t in c.active_tasks}
    worst = 0
    for sub in subtopologies:
        counts = [sum(1 for t in c.active_tasks if t.subtopology == sub) for c in clients.values()]
        worst = max(worst, max(counts) - min(counts))
    return worst


def assert_balanced_tasks(clients: Mapping[ProcessId, ClientState], threshold: int = 1) -> None:
    assert subtopology_skew(clients) <= threshold


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


def thread_rows(result: dict) -> list[tuple]:
    """The `assignments` rows a plan result object says, as (process_id, consumer_client_id, task_id,
    task_type, is_warmup), sorted."""
    return sorted(
        (e["process_id"], consumer, task, kind.upper(), kind == "standby" and task in e["warmup"])
        for e in result["assignment"]
        for consumer, tasks in e["consumers"].items()
        for kind in ("active", "standby")
        for task in tasks[kind]
    )


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


# ------------------------------------------------------------------ README.md's code blocks

README = Path(__file__).resolve().parents[1] / "README.md"
# Examples too slow for the test suite; `make bench` runs them.
README_SLOW_EXAMPLES = ("benchmarks.",)


def code_blocks(language: str) -> list[tuple[str, str]]:
    """(heading of the section, block text) of every fenced block in that language, in README order."""
    blocks, heading = [], ""
    lines = README.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.strip() == f"```{language}":
            end = lines.index("```", i + 1)
            blocks.append((heading, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return blocks


def shell_commands(block: str) -> list[str]:
    """Commands of a bash block: continuation lines joined, trailing comments dropped."""
    commands, current = [], ""
    for raw in block.splitlines():
        line = re.sub(r"\s+#.*$", "", raw).rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if current.strip():
            commands.append(current.strip())
        current = ""
    return commands


def assignor_commands() -> list[str]:
    """README's `.venv/bin/python -m ...` commands (the one-application examples), the slow ones left out."""
    return [
        c for _, block in code_blocks("bash") for c in shell_commands(block)
        if c.startswith(".venv/bin/python -m ") and not any(s in c for s in README_SLOW_EXAMPLES)
    ]  # fmt: skip


# ------------------------------------------------------------------ explore: scenarios planned and simulated

EXPLORE_NOW = 1_700_000_000_000  # now_ms of the explore, rollout and simulation tests
INTERVAL = 600_000  # two_clients' probing_rebalance_interval_ms
A = "00000000-0000-0000-0000-000000000001"
B = "00000000-0000-0000-0000-000000000002"
C = "00000000-0000-0000-0000-000000000003"
TRANSITIONS_STATEFUL = ["0_0", "0_1", "0_2", "0_3", "0_4", "0_5"]


def _transitions_task(task_id: str, changelog: bool) -> dict:
    partition = int(task_id.split("_")[1])
    parts = [
        {
            "topic": f"in-{task_id[0]}",
            "partition": partition,
            "source": True,
            "changelog": False,
            "racks": ["r1"],
        }
    ]
    if changelog:
        parts.append(
            {
                "topic": "store-changelog",
                "partition": partition,
                "source": False,
                "changelog": True,
                "racks": ["r2"],
            }
        )
    return {
        "id": task_id,
        "stateful": changelog,
        "stores": ["store"] if changelog else [],
        "partitions": parts,
    }


def transitions_scenario() -> dict:
    """Previous: A runs 0_0-0_2 and stands by 0_3; B runs 0_4 and stands by 0_5; C is new. The scripted
    plan below reaches every transition kind once or more (worked out in EXPECTED_TRANSITIONS)."""
    # Imported here: it imports fleet_assignor.explore and pandas, which most users of this module never need.
    from fleet_assignor.explore.scripted import plan_config

    plan = {
        A: {"active": ["0_0", "0_3"], "standby": ["0_1"]},
        B: {"active": ["0_2"], "standby": ["0_0", "0_5"]},
        C: {"active": ["0_1", "0_4", "0_5", "1_0"], "warmup": ["0_3"]},
    }
    full = dict.fromkeys(TRANSITIONS_STATEFUL, 1000)
    return {
        "app_id": "transitions",
        "configs": {
            "assignor": "fleet_assignor.explore.scripted:ScriptedAssignor",
            "assignor_configs": plan_config(plan),
        },
        "tasks": [_transitions_task(t, True) for t in TRANSITIONS_STATEFUL]
        + [_transitions_task("1_0", False)],
        "clients": [
            {
                "process_id": A,
                "consumers": ["a-1"],
                "prev_active": ["0_0", "0_1", "0_2"],
                "prev_standby": ["0_3"],
                "lags": {**full, "0_0": -2, "0_1": -2, "0_2": -2, "0_3": 50},
                "rack": "r1",
            },
            {
                "process_id": B,
                "consumers": ["b-1"],
                "prev_active": ["0_4"],
                "prev_standby": ["0_5"],
                "lags": {**full, "0_4": -2, "0_5": 10},
                "rack": "r2",
            },
            {"process_id": C, "consumers": ["c-1"], "lags": {**full, "0_1": -3, "0_4": 200}, "rack": "r1"},
        ],
    }


# (process, task) -> (transition, restore_lag), by tables.md's rules applied to the scenario above.
EXPECTED_TRANSITIONS = {
    (A, "0_0"): ("KEEP_ACTIVE", 0),
    (A, "0_1"): ("DEMOTE_ACTIVE", 0),
    (A, "0_2"): ("CLOSE", 0),
    (A, "0_3"): ("PROMOTE_STANDBY", 50),
    (B, "0_0"): ("CREATE_STANDBY", 1000),
    (B, "0_2"): ("CREATE_ACTIVE", 1000),
    (B, "0_4"): ("CLOSE", 0),
    (B, "0_5"): ("KEEP_STANDBY", 10),
    (C, "0_1"): ("CREATE_ACTIVE", 1000),  # lag -3: the whole changelog
    (C, "0_3"): ("CREATE_WARMUP", 1000),
    (C, "0_4"): ("CREATE_ACTIVE", 200),
    (C, "0_5"): ("CREATE_ACTIVE", 1000),
    (C, "1_0"): ("CREATE_ACTIVE", 0),  # no changelog
}


def _simulated_task(task_id: str) -> dict:
    partition = int(task_id.split("_")[1])
    return {"id": task_id, "stateful": True, "stores": ["s"], "partitions": [
        {"topic": "in", "partition": partition, "source": True, "changelog": False},
        {"topic": "s-changelog", "partition": partition, "source": False, "changelog": True},
    ]}  # fmt: skip


def two_clients() -> dict:
    """A runs both stateful tasks; B is new with no state (changelogs of 1000 records)."""
    return {
        "app_id": "sim",
        "configs": {"acceptable_recovery_lag": 100, "max_warmup_replicas": 1, "num_standby_replicas": 0,
                    "probing_rebalance_interval_ms": INTERVAL},
        "tasks": [_simulated_task("0_0"), _simulated_task("0_1")],
        "clients": [
            {"process_id": A, "consumers": ["a-1"], "prev_active": ["0_0", "0_1"],
             "lags": {"0_0": -2, "0_1": -2}},
            {"process_id": B, "consumers": ["b-1"], "lags": {"0_0": 1000, "0_1": 1000}},
        ],
    }  # fmt: skip


# ------------------------------------------------------------------ jobs: one application's compact JSON

JOBS_NOW = 1_767_225_600_000  # now_ms of the jobs' plan-row tests (2026-01-01)
P1, P2 = str(ProcessId.of(1)), str(ProcessId.of(2))  # compact()'s two clients, as process id text


def compact(**overrides) -> str:
    """What jobs.prepare builds for a two-client app with a stateful 0_0 (end sum 100) and stateless 0_1."""
    obj = {
        "app_id": "a",
        "configs": {"num_standby_replicas": 1},
        "tasks": [
            {"id": "0_0", "stores": ["s"], "end_sum": 100, "partitions": [
                {"topic": "cl", "partition": 0, "source": False, "changelog": True, "racks": []}]},
            {"id": "0_1", "stores": [], "partitions": [
                {"topic": "in", "partition": 1, "source": True, "changelog": False, "racks": []}]},
        ],
        "clients": [
            {"process_id": P1, "consumers": [{"id": "c1", "prev_active": ["0_0"], "prev_standby": []}],
             "rack": None, "tags": {}, "lags": {"0_0": -2}},
            {"process_id": P2, "consumers": [{"id": "c2", "prev_active": ["0_1"], "prev_standby": []}],
             "rack": None, "tags": {}, "lags": {"0_0": 60}},
        ],
        "lags_computed": True,
    }  # fmt: skip
    obj.update(overrides)
    return json.dumps(obj)


class FailingAssignor(BaseTaskAssignor):
    """An assignor that always raises (the ASSIGNOR_FAILED path)."""

    def assign(self, application_state):
        raise RuntimeError("boom from the assignor")


# ------------------------------------------------------------------ rack: Kafka's rack-aware test fixtures
# rack.md §10, for tests/test_rack_*.py. Clients are numbered (process pid(n), consumer c<n>, rack from
# CLIENT_RACKS); tasks are the catalogue's six (SOURCE_RACKS, CHANGELOG_RACKS). The builders that would be
# ambiguous beside the generic ones above are prefixed rack_ (rack_app_state takes AssignmentConfigs keyword
# arguments, rack_client builds a KafkaStreamsState of one thread).

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


def tid(text: str) -> TaskId:
    return TaskId.parse(text)


def ttp(
    topic: str, partition: int, racks: Iterable[str], *, source: bool, changelog: bool
) -> TaskTopicPartition:
    return TaskTopicPartition(TopicPartition(topic, partition), source, changelog, frozenset(racks))


def rack_task(text: str, *, stateful: bool = True) -> TaskInfo:
    """A fixture task: its source partition and, when stateful, its changelog partition."""
    topic, partition, racks = SOURCE_RACKS[text]
    partitions = [ttp(topic, partition, racks, source=True, changelog=False)]
    if stateful:
        changelog = ttp(f"store-{text}-changelog", 0, CHANGELOG_RACKS[text], source=False, changelog=True)
        partitions.append(changelog)
    return TaskInfo(tid(text), stateful, frozenset({"store"}) if stateful else frozenset(), tuple(partitions))


def rack_client(
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


def rack_app_state(
    tasks: Iterable[TaskInfo], clients: Iterable[KafkaStreamsState], **configs
) -> ApplicationState:
    return ApplicationState.of(tasks, clients, AssignmentConfigs(**configs))


def rack_client_states(
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


def rack_actives(states: Mapping[ProcessId, ClientState]) -> dict[int, set[str]]:
    """{client number: active task texts}, for comparing with the test catalogue's layouts."""
    return {p.uuid.int: {str(t) for t in s.active_tasks} for p, s in states.items()}


def rack_standbys(states: Mapping[ProcessId, ClientState]) -> dict[int, set[str]]:
    return {p.uuid.int: {str(t) for t in s.standby_tasks} for p, s in states.items()}


# The rack-aware standby tests' layout, actives A, standbys S (rack.md §10): P1 A{0_0} S{0_1,1_1};
# P2 A{0_1} S{0_0,1_0}; P3 A{1_0} S{0_0,0_2}; P4 A{1_1} S{0_1,1_2}; P6 A{0_2} S{1_0,1_2};
# P7 A{1_2} S{0_2,1_1}.
STANDBY_LAYOUT_ACTIVE = {1: ["0_0"], 2: ["0_1"], 3: ["1_0"], 4: ["1_1"], 6: ["0_2"], 7: ["1_2"]}
STANDBY_LAYOUT_STANDBY = {
    1: ["0_1", "1_1"],
    2: ["0_0", "1_0"],
    3: ["0_0", "0_2"],
    4: ["0_1", "1_2"],
    6: ["1_0", "1_2"],
    7: ["0_2", "1_1"],
}
SIX_TASKS = ["0_0", "0_1", "0_2", "1_0", "1_1", "1_2"]


def forget_delta_tables(spark) -> None:
    """Drop Delta's cached table states. Delta keeps each table it has read or written cached in the session
    (the log's state, persisted), so a session that writes thousands of new tables, as the fuzzing does,
    fills the driver's heap: about 25 MB per run of the job on new paths, out of memory after ~30 fuzz
    examples (two runs each) at the default 1 GB. A job's own session touches the same tables each run."""
    spark.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
