"""The read-only inputs of an assignor: the topology's tasks and the clients' states (KIP-924)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from types import MappingProxyType

from fleet_assignor.assignor.configs import AssignmentConfigs
from fleet_assignor.assignor.errors import LagsNotComputedError, NoLagForTaskError
from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.task_id import TaskId, sorted_by_order_key


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class TaskTopicPartition:
    """One partition a task reads (source) or restores from (changelog), with the racks of its replicas.

    Equality ignores the racks, as Kafka's does. An empty ``rack_ids`` means the racks are unknown.
    """

    topic_partition: TopicPartition
    is_source: bool
    is_changelog: bool
    rack_ids: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition


# A partition's roles read in C: a task's are filtered at every load (thousands of tasks; a generator per
# task cost more than the test).
_is_source: Callable[[TaskTopicPartition], bool] = attrgetter("is_source")
_is_changelog: Callable[[TaskTopicPartition], bool] = attrgetter("is_changelog")


@dataclass(frozen=True, slots=True, eq=False)
class TaskInfo:
    """A task of the topology. ``is_stateful`` means "has a state store" (Kafka's ``TaskInfo.isStateful``);
    standby eligibility and the legacy assignors' notion of stateful mean "has a changelog partition"
    (`has_changelog`)."""

    id: TaskId
    is_stateful: bool
    state_store_names: frozenset[str] = frozenset()
    topic_partitions: tuple[TaskTopicPartition, ...] = ()
    # Asked for every task by every assignor call (the stateful set, standby eligibility): derived once.
    _has_changelog: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_has_changelog", any(map(_is_changelog, self.topic_partitions)))

    @property
    def has_changelog(self) -> bool:
        return self._has_changelog

    @property
    def source_partitions(self) -> tuple[TaskTopicPartition, ...]:
        return tuple(filter(_is_source, self.topic_partitions))

    @property
    def changelog_partitions(self) -> tuple[TaskTopicPartition, ...]:
        return tuple(filter(_is_changelog, self.topic_partitions))


_task_info: Callable[..., TaskInfo] = builder(
    TaskInfo, ["id", "is_stateful", "state_store_names", "topic_partitions", "_has_changelog"]
)


def task_info(
    task: TaskId, is_stateful: bool, stores: frozenset[str], partitions: tuple[TaskTopicPartition, ...]
) -> TaskInfo:
    """``TaskInfo(...)`` built through its slots (`frozen`), its derived flag as ``__post_init__`` sets it:
    one per task of every load."""
    return _task_info(task, is_stateful, stores, partitions, any(map(_is_changelog, partitions)))


# `TaskInfo.has_changelog` read in C, for scans over many tasks (validation checks every standby's task).
has_changelog: Callable[[TaskInfo], bool] = attrgetter("_has_changelog")


@dataclass(frozen=True, slots=True, eq=False)
class KafkaStreamsState:
    """What one KafkaStreams client reported, read-only (KIP-924 ``KafkaStreamsState``).

    ``task_lags`` holds the lag of every task with a changelog (assignors.md §1.3); it is None when the
    state was obtained with ``compute_task_lags=False``, and the lag accessors then raise.
    ``consumer_previous_stateful_tasks`` maps each consumer to the tasks it reported local state for.
    """

    process_id: ProcessId
    num_processing_threads: int
    consumer_client_ids: tuple[str, ...]
    previous_active_tasks: frozenset[TaskId] = frozenset()
    previous_standby_tasks: frozenset[TaskId] = frozenset()
    consumer_previous_stateful_tasks: Mapping[str, frozenset[TaskId]] = field(default_factory=dict)
    task_lags: Mapping[TaskId, int] | None = None
    host_info: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    rack_id: str | None = None

    def _lags(self) -> Mapping[TaskId, int]:
        if self.task_lags is None:
            raise LagsNotComputedError(
                f"lags of client {self.process_id} were not computed: "
                "use kafka_streams_states(compute_task_lags=True)"
            )
        return self.task_lags

    def lag_for(self, task: TaskId) -> int:
        """The client's lag for a changelogged task: -2 running active, -3 unknown, else records behind."""
        lags = self._lags()
        try:
            return lags[task]
        except KeyError:
            raise NoLagForTaskError(f"client {self.process_id} has no lag for task {task}") from None

    def prev_tasks_by_lag(self, consumer_client_id: str) -> tuple[TaskId, ...]:
        """The consumer's previously owned stateful tasks, by (lag, TaskId); empty for an unknown consumer."""
        lags = self._lags()
        owned = self.consumer_previous_stateful_tasks.get(consumer_client_id, frozenset())
        if not owned:
            return ()
        return tuple(sorted((t for t in owned if t in lags), key=lambda t: (lags[t], t.sort_key)))

    def stateful_tasks_to_lag_sums(self) -> Mapping[TaskId, int]:
        return self._lags()

    @property
    def sorted_previous_active_tasks(self) -> list[TaskId]:
        return sorted(self.previous_active_tasks)

    @property
    def sorted_previous_standby_tasks(self) -> list[TaskId]:
        return sorted(self.previous_standby_tasks)


_ID: Callable[[TaskInfo], TaskId] = attrgetter("id")
_ID_ORDER_KEY: Callable[[TaskInfo], int | tuple[bool, str, int, int]] = attrgetter("id.order_key")
_PROCESS_ID: Callable[[KafkaStreamsState], ProcessId] = attrgetter("process_id")


def _in_task_id_order(tasks: Iterable[TaskInfo]) -> list[TaskInfo]:
    """Tasks sorted by id: by the ids' `order_key` (compared in C), and by the ids themselves where the
    keys do not sort (named among unnamed ids: TaskId's own comparison raises, as it did)."""
    return sorted_by_order_key(tasks, _ID_ORDER_KEY, _ID)


@dataclass(frozen=True, eq=False)
class ApplicationState:
    """Everything an assignor may read about one application (KIP-924 ``ApplicationState``).

    Clients are kept in signed ProcessId order and tasks in TaskId order, so iterating either mapping
    is deterministic. ``now_ms`` is the planning instant (POLICY.md §7): assignors derive follow-up
    deadlines from it instead of reading the clock, so the same inputs give the same outputs.
    """

    tasks: Mapping[TaskId, TaskInfo]
    clients: Mapping[ProcessId, KafkaStreamsState]
    configs: AssignmentConfigs = field(default_factory=AssignmentConfigs)
    now_ms: int = 0
    _without_lags: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        tasks: Iterable[TaskInfo],
        clients: Iterable[KafkaStreamsState],
        configs: AssignmentConfigs | None = None,
        now_ms: int = 0,
    ) -> ApplicationState:
        task_map = {info.id: info for info in _in_task_id_order(tasks)}
        client_map = {state.process_id: state for state in sorted(clients, key=_PROCESS_ID)}
        return cls(
            MappingProxyType(task_map), MappingProxyType(client_map), configs or AssignmentConfigs(), now_ms
        )

    def kafka_streams_states(self, compute_task_lags: bool) -> Mapping[ProcessId, KafkaStreamsState]:
        if compute_task_lags:
            return self.clients
        if "states" not in self._without_lags:
            self._without_lags["states"] = MappingProxyType(
                {pid: replace(state, task_lags=None) for pid, state in self.clients.items()}
            )
        return self._without_lags["states"]

    def assignment_configs(self) -> AssignmentConfigs:
        return self.configs

    def all_tasks(self) -> Mapping[TaskId, TaskInfo]:
        return self.tasks

    def stateful_task_ids(self) -> list[TaskId]:
        """Tasks with a changelog partition, sorted: the legacy assignors' and the lag rules' stateful set."""
        return [tid for tid, info in self.tasks.items() if info.has_changelog]
