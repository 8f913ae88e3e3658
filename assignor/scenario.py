"""One application as JSON (scenario.md): loading, checking and turning it into an `ApplicationState`.

Every rejection is a `ScenarioError` naming the JSON path of the offending field, so a person (or the fleet
job, which shapes its rows into the same dict) can point at the exact value. Tolerated oddities (ids of
tasks the topology no longer has, a task previously both active and standby) become warnings that the
planner puts into ``error_detail``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn, cast

from fleet_assignor.assignor.configs import AssignmentConfigs
from fleet_assignor.assignor.errors import ConfigException
from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.limits import MAX_GENERATED_THREADS, MAX_LONG, instant_range_text, is_instant
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import (
    ApplicationState,
    KafkaStreamsState,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
    task_info,
)
from fleet_assignor.assignor.task_id import TaskId, TaskIdFormatError, in_task_order

DEFAULT_ASSIGNOR = "high_availability"
LATEST_OFFSET = -2  # the client runs the task as active: caught up by definition
UNKNOWN_OFFSET = -3  # the offset is unknown

# The `applications` table's columns that a scenario's `configs` may carry (tables.md), besides the
# AssignmentConfigs fields themselves.
_ASSIGNMENT_CONFIG_KEYS = (
    "acceptable_recovery_lag",
    "max_warmup_replicas",
    "num_standby_replicas",
    "probing_rebalance_interval_ms",
    "rack_aware_assignment_tags",
    "rack_aware_assignment_strategy",
    "rack_aware_traffic_cost",
    "rack_aware_non_overlap_cost",
)
_CONFIG_KEYS = (*_ASSIGNMENT_CONFIG_KEYS, "assignor", "assignor_configs")


_NO_RACKS: frozenset[str] = frozenset()
_EMPTY_RACK = frozenset({""})  # an empty rack id means unknown, as in the tables


class ScenarioError(ValueError):
    """Unusable input (INVALID_INPUT): ``path`` is the JSON path of the offending field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ConsumerHistory:
    """One consumer (stream thread) of a client and what it owned before this rebalance.

    ``has_history`` is False for a consumer given as a plain string: it then owned nothing we know of, so
    the within-client distribution starts without stickiness for it.
    """

    consumer_id: str
    prev_active: frozenset[TaskId] = frozenset()
    prev_standby: frozenset[TaskId] = frozenset()
    has_history: bool = False


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: the assignor's input plus what the planner needs around it."""

    app_id: str | None
    application_state: ApplicationState
    assignor: str
    assignor_configured: bool  # True when `configs.assignor` named it (errors then point there)
    assignor_configs: Mapping[str, str]
    lags_computed: bool
    end_offset_sums: Mapping[TaskId, int]  # every task with a changelog partition
    consumers: Mapping[ProcessId, tuple[ConsumerHistory, ...]]  # sorted by consumer id
    warnings: tuple[str, ...] = ()  # "<JSON path>: <message>", in `error_detail`
    source: str = "<scenario>"
    # Each warning's (JSON path, message): for callers that name the input otherwise (the fleet job names
    # the table row a path stands for).
    warning_sites: tuple[tuple[str, str], ...] = ()

    def with_warnings_named(self, name: Callable[[str], str]) -> Scenario:
        """This scenario with each warning's path replaced by ``name(path)``, sorted: named by table rows,
        which have no order, they no longer follow the document's."""
        named = sorted(f"{name(path)}: {message}" for path, message in self.warning_sites)
        return replace(self, warnings=tuple(named))

    @property
    def now_ms(self) -> int:
        return self.application_state.now_ms

    def with_now_ms(self, now_ms: int) -> Scenario:
        state = self.application_state
        return replace(
            self, application_state=ApplicationState(state.tasks, state.clients, state.configs, now_ms)
        )

    def client(self, process_id: ProcessId) -> KafkaStreamsState | None:
        return self.application_state.clients.get(process_id)


# --- small helpers ------------------------------------------------------------------------------------


def _key_path(base: str, key: str) -> str:
    """A map key in a JSON path: ``clients[0].lags["0_1"]``."""
    return f"{base}[{json.dumps(key)}]"


def _show(value: object) -> str:
    """A value as it would appear in the JSON, cut short (the fleet job may hand us non-JSON objects)."""
    return json.dumps(value, default=repr)[:60]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _require_type(value: object, kind: type | tuple[type, ...], path: str, what: str) -> None:
    ok = isinstance(value, kind) and not (isinstance(value, bool) and kind in (int, (int,)))
    if not ok:
        raise ScenarioError(path, f"must be {what}, got {_show(value)}")


def _optional_list(obj: Mapping[str, Any], key: str, path: str) -> list:
    value = obj.get(key)
    if value is None:
        return []
    _require_type(value, (list, tuple), f"{path}.{key}", "a list")
    return list(value)


def _parse_task_id(text: object, path: str) -> TaskId:
    if not isinstance(text, str):
        raise ScenarioError(path, f"task id must be a string, got {_show(text)}")
    try:
        return TaskId.parse(text)
    except TaskIdFormatError as e:
        raise ScenarioError(path, str(e)) from None


def _task_id_or_none(text: object) -> TaskId | None:
    """The id of a well-formed task id text, else None (the caller then reports it with its path)."""
    if type(text) is not str:
        return None
    try:
        return TaskId.parse(text)
    except TaskIdFormatError:
        return None


def _all_str(values: list) -> bool:
    # A loop, not all() over a generator: the lists are short (a partition's racks, a task's stores) and
    # met for every partition of the fleet, where the generator's set-up cost more than its checks.
    for value in values:  # noqa: SIM110 (see above)
        if type(value) is not str:
            return False
    return True


_SENTINELS = (LATEST_OFFSET, UNKNOWN_OFFSET)


# A partition and its topic partition built through their slots (`frozen`): two per partition of every
# task, the loader's most numerous objects.
_topic_partition: Callable[[str, int], TopicPartition] = builder(TopicPartition)
_partition: Callable[[TopicPartition, bool, bool, frozenset[str]], TaskTopicPartition] = builder(
    TaskTopicPartition
)


def _plain_partition(raw: object) -> TaskTopicPartition | None:
    """A partition entry in the form the fleet job writes (exact JSON types, a list of racks), checked and
    built without the JSON paths `_Loader.partition` builds for its errors; None for any other form, which
    `_Loader.partition` then checks in full (so its errors are the same either way)."""
    if type(raw) is not dict:
        return None
    topic = raw.get("topic")
    number = raw.get("partition")
    source = raw.get("source", False)
    changelog = raw.get("changelog", False)
    racks = raw.get("racks")
    if (
        type(topic) is not str
        or type(number) is not int
        or number < 0
        or (source is not True and source is not False)
        or (changelog is not True and changelog is not False)
    ):
        return None
    if racks is None:
        rack_ids = _NO_RACKS
    elif type(racks) is not list or not _all_str(racks):
        return None
    elif not racks:
        rack_ids = _NO_RACKS
    else:
        rack_ids = frozenset(racks)
        if "" in rack_ids:
            rack_ids = rack_ids - _EMPTY_RACK
    return _partition(_topic_partition(topic, number), source, changelog, rack_ids)


@dataclass
class _Loader:
    """Walks one scenario dict in document order; the first problem met is the one reported."""

    source: str
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (JSON path, message)
    # Each task's id by the text `tasks` gives it: a previous list or a lag naming a task by that same text
    # names a known task, found without parsing the text again (filled by `tasks`).
    known_texts: dict[str, TaskId] = field(default_factory=dict)

    def warn(self, path: str, message: str) -> None:
        self.warnings.append((path, message))

    # --- configs --------------------------------------------------------------------------------------
    def configs(self, raw: Any) -> tuple[AssignmentConfigs, str | None, dict[str, str]]:
        if raw is None:
            return AssignmentConfigs(), None, {}
        _require_type(raw, dict, "configs", "an object")
        for key in raw:
            if key not in _CONFIG_KEYS:
                raise ScenarioError(
                    _key_path("configs", key) if not key.isidentifier() else f"configs.{key}",
                    f"unknown config key (known: {', '.join(_CONFIG_KEYS)})",
                )
        # A null takes the default, as a null column of the `applications` table does.
        values = {key: raw[key] for key in _ASSIGNMENT_CONFIG_KEYS if raw.get(key) is not None}
        try:
            configs = AssignmentConfigs(**values)
        except ConfigException as e:
            raise ScenarioError(f"configs.{e.config}", f"{e.reason}, got {_show(e.value)}") from None
        assignor = raw.get("assignor")
        if assignor is not None:
            _require_type(assignor, str, "configs.assignor", "a string")
            if not assignor:
                raise ScenarioError("configs.assignor", "must not be empty")
        return configs, assignor, self.assignor_configs(raw.get("assignor_configs"))

    def assignor_configs(self, raw: Any) -> dict[str, str]:
        if raw is None:
            return {}
        _require_type(raw, dict, "configs.assignor_configs", "an object of strings")
        for key, value in raw.items():
            _require_type(value, str, _key_path("configs.assignor_configs", key), "a string")
        return dict(sorted(raw.items()))

    # --- tasks ----------------------------------------------------------------------------------------
    def tasks(self, raw: Any) -> list[TaskInfo]:
        if raw is None:
            raise ScenarioError("tasks", 'missing (an application without tasks has `"tasks": []`)')
        _require_type(raw, (list, tuple), "tasks", "a list")
        seen: dict[TaskId, int] = {}
        named: bool | None = None
        infos = []
        for i, entry in enumerate(raw):
            path = f"tasks[{i}]"
            if type(entry) is not dict:
                _require_type(entry, dict, path, "an object")
            text = entry.get("id")
            task = _task_id_or_none(text)
            if task is None:
                task = _parse_task_id(text, f"{path}.id")
            if task in seen:
                raise ScenarioError(f"{path}.id", f"duplicate task id {task} (also tasks[{seen[task]}])")
            seen[task] = i
            is_named = task.topology_name is not None
            if named is None:
                named = is_named
            elif named != is_named:
                raise ScenarioError(f"{path}.id", "named and unnamed task ids mixed in one application")
            infos.append(self.task(entry, task, path))
            self.known_texts[text] = task
        return infos

    def task(self, entry: Mapping[str, Any], task: TaskId, path: str) -> TaskInfo:
        stores = entry.get("stores")
        if stores is None:
            stores = []
        elif type(stores) is not list or not _all_str(stores):
            stores = _optional_list(entry, "stores", path)
            for j, store in enumerate(stores):
                _require_type(store, str, f"{path}.stores[{j}]", "a string")
        stateful = entry.get("stateful")
        if stateful is not None:
            _require_type(stateful, bool, f"{path}.stateful", "true or false")
            # The tables can only say "has a state store", so the flag may not claim anything else.
            if stateful != bool(stores):
                raise ScenarioError(
                    f"{path}.stateful",
                    f"is {str(stateful).lower()} but the task has {len(stores)} stores "
                    "(stateful must equal bool(stores))",
                )
        raw_partitions = entry.get("partitions")
        if type(raw_partitions) is not list:
            raw_partitions = _optional_list(entry, "partitions", path)
        plain = list(map(_plain_partition, raw_partitions))
        if all(plain):  # every entry in the job's form
            partitions = cast("list[TaskTopicPartition]", plain)  # quoted: no type object per task
        else:  # an entry in another form (None here): checked in full, in document order
            partitions = [
                built or self.partition(p, f"{path}.partitions[{j}]")
                for j, (built, p) in enumerate(zip(plain, raw_partitions, strict=True))
            ]
        return task_info(task, bool(stores), frozenset(stores), tuple(partitions))

    def partition(self, raw: Any, path: str) -> TaskTopicPartition:
        # Hot in the fleet job (every partition of every task): paths are built only for an error.
        if not isinstance(raw, dict):
            _require_type(raw, dict, path, "an object")
        topic = raw.get("topic")
        if not isinstance(topic, str):
            _require_type(topic, str, f"{path}.topic", "a string")
        number = raw.get("partition")
        if not _is_int(number) or number < 0:
            raise ScenarioError(f"{path}.partition", f"must be an integer >= 0, got {_show(number)}")
        source = raw.get("source", False)
        if source is not True and source is not False:
            _require_type(source, bool, f"{path}.source", "true or false")
        changelog = raw.get("changelog", False)
        if changelog is not True and changelog is not False:
            _require_type(changelog, bool, f"{path}.changelog", "true or false")
        racks = raw.get("racks")
        if racks:
            if not isinstance(racks, (list, tuple)):
                _require_type(racks, (list, tuple), f"{path}.racks", "a list")
            for j, rack in enumerate(racks):
                if not isinstance(rack, str):
                    _require_type(rack, str, f"{path}.racks[{j}]", "a string")
            rack_ids = frozenset(racks)
            rack_ids = rack_ids - _EMPTY_RACK if "" in rack_ids else rack_ids
        elif racks is None or isinstance(racks, (list, tuple)):
            rack_ids = _NO_RACKS
        else:  # a falsy non-list (0, "", false)
            _require_type(racks, (list, tuple), f"{path}.racks", "a list")
        return TaskTopicPartition(TopicPartition(topic, number), source, changelog, rack_ids)

    # --- clients --------------------------------------------------------------------------------------
    def task_list(self, raw: Any, path: str, known: Mapping[TaskId, TaskInfo]) -> set[TaskId]:
        """Task ids of a previous list: unparsable ids are unusable, unknown ones are dropped (Kafka filters
        them after a topology change)."""
        if raw is None:
            return set()
        _require_type(raw, (list, tuple), path, "a list of task ids")
        tasks = set()
        known_texts = self.known_texts
        for j, text in enumerate(raw):
            known_task = known_texts.get(text) if type(text) is str else None
            if known_task is not None:
                tasks.add(known_task)
                continue
            task = _parse_task_id(text, f"{path}[{j}]")
            if task in known:
                tasks.add(task)
            else:
                self.warn(f"{path}[{j}]", f"unknown task {task} dropped")
        return tasks

    def consumers(
        self, raw: Mapping[str, Any], path: str, known: Mapping[TaskId, TaskInfo], seen: dict[str, str]
    ) -> list[ConsumerHistory]:
        entries = _optional_list(raw, "consumers", path)
        result = []
        for j, entry in enumerate(entries):
            entry_path = f"{path}.consumers[{j}]"
            if isinstance(entry, str):
                consumer, id_path = ConsumerHistory(entry), entry_path
            else:
                _require_type(entry, dict, entry_path, "a consumer id or an object with `id`")
                id_path = f"{entry_path}.id"
                _require_type(entry.get("id"), str, id_path, "a string")
                active = self.task_list(entry.get("prev_active"), f"{entry_path}.prev_active", known)
                standby = self.task_list(entry.get("prev_standby"), f"{entry_path}.prev_standby", known)
                consumer = ConsumerHistory(entry["id"], frozenset(active), frozenset(standby), True)
            if not consumer.consumer_id:
                raise ScenarioError(id_path, "consumer id must not be empty")
            if consumer.consumer_id in seen:
                raise ScenarioError(
                    id_path,
                    f"duplicate consumer id {consumer.consumer_id!r} (also {seen[consumer.consumer_id]})",
                )
            seen[consumer.consumer_id] = id_path
            result.append(consumer)
        return result

    def threads(self, raw: Mapping[str, Any], path: str, has_consumers: bool) -> int:
        threads = raw.get("threads")
        if threads is not None and (not _is_int(threads) or threads < 0):
            raise ScenarioError(f"{path}.threads", f"must be an integer >= 0, got {_show(threads)}")
        if not has_consumers and (threads is None or threads < 1):
            raise ScenarioError(f"{path}.threads", "a client without consumers needs threads >= 1")
        count: int = threads or 0
        if not has_consumers and count > MAX_GENERATED_THREADS:
            raise ScenarioError(
                f"{path}.threads",
                f"must be at most {MAX_GENERATED_THREADS:,} (got {count:,}): list the consumers",
            )
        return count

    def previous_tasks(
        self,
        raw: Mapping[str, Any],
        path: str,
        known: Mapping[TaskId, TaskInfo],
        consumers: list[ConsumerHistory],
    ) -> tuple[set[TaskId], set[TaskId]]:
        lists = {}
        for key in ("prev_active", "prev_standby"):
            given = self.task_list(raw.get(key), f"{path}.{key}", known) if raw.get(key) is not None else None
            with_history = [c for c in consumers if c.has_history]
            if with_history:
                union = set().union(*(getattr(c, key) for c in with_history))
                # Per-consumer history is the finer truth: a client-level list may repeat it, not contradict
                # it.
                if given is not None and given != union:
                    raise ScenarioError(
                        f"{path}.{key}",
                        f"disagrees with the union of the consumers' {key} lists: "
                        f"{sorted(str(t) for t in given)} != {sorted(str(t) for t in union)}",
                    )
                lists[key] = union
            else:
                lists[key] = given or set()
        active, standby = lists["prev_active"], lists["prev_standby"]
        for task in sorted(active & standby):
            self.warn(path, f"task {task} is in both prev_active and prev_standby: kept as active")
        return active, standby - active

    def reported_lags(
        self, raw: Any, path: str, known: Mapping[TaskId, TaskInfo], with_changelog: frozenset[TaskId]
    ) -> dict[TaskId, int]:
        if raw is None:
            return {}
        _require_type(raw, dict, path, "an object of task id -> lag")
        lags = {}
        known_texts = self.known_texts
        for key, value in raw.items():
            task = known_texts.get(key) if type(key) is str else None
            if task is None or not (type(value) is int and (0 <= value <= MAX_LONG or value in _SENTINELS)):
                task = self._checked_lag_task(path, key, value)
            if task in with_changelog:
                lags[task] = value
            elif task not in known:
                self.warn(_key_path(path, key), f"unknown task {task} dropped")
            # Lags of tasks without a changelog mean nothing: ignored.
        return lags

    @classmethod
    def _checked_lag_task(cls, path: str, key: Any, value: Any) -> TaskId:
        """The full check of one lag entry, for the entries the inline one does not pass; its task."""
        try:
            task = TaskId.parse(key)
        except TaskIdFormatError:
            task = None
        if (
            task is None
            or not _is_int(value)
            or not (value in (LATEST_OFFSET, UNKNOWN_OFFSET) or 0 <= value <= MAX_LONG)
        ):
            cls._bad_lag(path, key, value)
        return task

    @staticmethod
    def _bad_lag(path: str, key: Any, value: object) -> NoReturn:
        key_path = _key_path(path, key)
        _parse_task_id(key, key_path)
        raise ScenarioError(
            key_path, f"lag must be -2 (running active), -3 (unknown) or 0..2^63-1, got {_show(value)}"
        )

    def tags(self, raw: Mapping[str, Any], path: str, required: Sequence[str]) -> dict[str, str]:
        tags = raw.get("tags")
        if tags is None:
            tags = {}
        _require_type(tags, dict, f"{path}.tags", "an object of strings")
        for key, value in tags.items():
            _require_type(value, str, _key_path(f"{path}.tags", key), "a string")
        for key in required:
            if key not in tags:
                raise ScenarioError(
                    f"{path}.tags", f"missing tag {key!r} listed in configs.rack_aware_assignment_tags"
                )
        return dict(sorted(tags.items()))

    def optional_string(self, raw: Mapping[str, Any], key: str, path: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        _require_type(value, str, f"{path}.{key}", "a string or null")
        return value or None  # an empty rack means unknown, as in the tables


def _end_offset_sums(
    stateful: Sequence[TaskId], reported: Mapping[ProcessId, Mapping[TaskId, int]]
) -> dict[TaskId, int]:
    """A client with no state for a task lags by the whole changelog, so the largest non-negative lag
    reported for a task is its end-offset sum (0 when nobody reports one: empty changelogs). Keyed by
    exactly ``stateful``, in its order."""
    sums = dict.fromkeys(stateful, 0)
    for lags in reported.values():
        for task, lag in lags.items():
            if lag > sums.get(task, lag):
                sums[task] = lag
    return sums


def _client_lags(
    reported: Mapping[TaskId, int],
    prev_active: frozenset[TaskId],
    end_offset_sums: Mapping[TaskId, int],
    lags_computed: bool,
) -> dict[TaskId, int]:
    """Every task of ``end_offset_sums`` (the stateful ones, in their order): the lag reported, else -2 for
    a previous active, else the whole changelog."""
    # Most lags are the whole changelog: copying the sums and overwriting the few a client knows better
    # does in C what a loop over clients x tasks (900,000 at 300 x 3,000) would do in Python.
    lags = dict(end_offset_sums)
    for task in prev_active:
        if task in lags:
            lags[task] = LATEST_OFFSET
    for task, value in reported.items():
        if task in lags:
            lags[task] = value
    if not lags_computed:  # no end offsets: only running actives know where they stand
        return {task: LATEST_OFFSET if v == LATEST_OFFSET else UNKNOWN_OFFSET for task, v in lags.items()}
    return lags


@dataclass(frozen=True)
class _ClientInput:
    """One entry of ``clients`` once checked, before the end-offset sums (which need every client's lags)
    turn it into a `KafkaStreamsState`."""

    process_id: ProcessId
    consumers: tuple[ConsumerHistory, ...]  # in input order
    prev_active: frozenset[TaskId]
    prev_standby: frozenset[TaskId]
    reported_lags: Mapping[TaskId, int]
    tags: Mapping[str, str]
    rack: str | None
    host_info: str | None

    def sorted_consumers(self) -> tuple[ConsumerHistory, ...]:
        return tuple(sorted(self.consumers, key=lambda c: c.consumer_id))

    def streams_state(
        self,
        end_offset_sums: Mapping[TaskId, int],
        lags_computed: bool,
        lags_without_history: Mapping[TaskId, int],
    ) -> KafkaStreamsState:
        """``end_offset_sums``: every stateful task, in TaskId order. ``lags_without_history``: the lags
        of a client that ran nothing and reported nothing (`_client_lags` of neither), shared by all such
        clients: every client of a new group has them, and one shared table instead of one per client
        saves building them and, in the plan, reading a thousand tables out of cache."""
        consumers = self.sorted_consumers()
        lags: Mapping[TaskId, int]
        if self.reported_lags or self.prev_active:
            lags = MappingProxyType(
                _client_lags(self.reported_lags, self.prev_active, end_offset_sums, lags_computed)
            )
        else:
            lags = lags_without_history
        return KafkaStreamsState(
            process_id=self.process_id,
            num_processing_threads=len(consumers),
            consumer_client_ids=tuple(c.consumer_id for c in consumers),
            previous_active_tasks=self.prev_active,
            previous_standby_tasks=self.prev_standby,
            # What a consumer owned is what it has local state for (Kafka: its offset-sum map's keys).
            consumer_previous_stateful_tasks=MappingProxyType(
                {c.consumer_id: c.prev_active | c.prev_standby for c in consumers}
            ),
            task_lags=lags,
            host_info=self.host_info,
            client_tags=MappingProxyType(dict(self.tags)),
            rack_id=self.rack,
        )


class _ClientsLoader:
    """Reads the ``clients`` list with one `_Loader`: process ids and consumer ids must be unique across
    clients, so both are remembered from one client to the next."""

    def __init__(
        self, loader: _Loader, known: Mapping[TaskId, TaskInfo], with_changelog: frozenset[TaskId]
    ) -> None:
        self._loader = loader
        self._known = known
        self._with_changelog = with_changelog
        self._seen_pids: dict[ProcessId, tuple[str, ProcessId]] = {}
        self._seen_consumers: dict[str, str] = {}

    def clients(self, raw_clients: Any, configs: AssignmentConfigs) -> list[_ClientInput]:
        if raw_clients is None:
            raise ScenarioError("clients", "no clients")
        _require_type(raw_clients, (list, tuple), "clients", "a list")
        if not raw_clients:
            raise ScenarioError("clients", "no clients")
        return [self.client(raw, f"clients[{i}]", configs) for i, raw in enumerate(raw_clients)]

    def client(self, raw: Any, path: str, configs: AssignmentConfigs) -> _ClientInput:
        loader, known = self._loader, self._known
        _require_type(raw, dict, path, "an object")
        pid = self.process_id(raw.get("process_id"), path)
        consumers = loader.consumers(raw, path, known, self._seen_consumers)
        threads = loader.threads(raw, path, bool(consumers))
        if not consumers:
            consumers = self.generated_consumers(pid, threads, path)
        prev_active, prev_standby = loader.previous_tasks(raw, path, known, consumers)
        return _ClientInput(
            process_id=pid,
            consumers=tuple(consumers),
            prev_active=frozenset(prev_active),
            prev_standby=frozenset(prev_standby),
            reported_lags=loader.reported_lags(raw.get("lags"), f"{path}.lags", known, self._with_changelog),
            tags=loader.tags(raw, path, configs.rack_aware_assignment_tags),
            rack=loader.optional_string(raw, "rack", path),
            host_info=loader.optional_string(raw, "host_info", path),
        )

    def process_id(self, text: Any, path: str) -> ProcessId:
        try:
            pid = ProcessId.parse(text)
        except ValueError as e:
            raise ScenarioError(f"{path}.process_id", str(e)) from None
        if pid in self._seen_pids:
            other_path, other = self._seen_pids[pid]
            same = "" if str(other) == str(pid) else f", the same UUID as process id {other}"
            raise ScenarioError(f"{path}.process_id", f"duplicate process id {pid} (also {other_path}{same})")
        self._seen_pids[pid] = (path, pid)
        return pid

    def generated_consumers(self, pid: ProcessId, threads: int, path: str) -> list[ConsumerHistory]:
        """A client given by its thread count gets consumers named ``<process id>-<n>``, which must not
        clash with ids given elsewhere."""
        consumers = [ConsumerHistory(f"{pid}-{n}") for n in range(1, threads + 1)]
        for consumer in consumers:
            if consumer.consumer_id in self._seen_consumers:
                raise ScenarioError(
                    f"{path}.threads",
                    f"generated consumer id {consumer.consumer_id!r} clashes with "
                    f"{self._seen_consumers[consumer.consumer_id]}",
                )
            self._seen_consumers[consumer.consumer_id] = f"{path}.threads"
        return consumers


def _check_planning_instant(now_ms: int) -> None:
    if not is_instant(now_ms):
        raise ScenarioError(
            "now_ms", f"the planning instant must be within {instant_range_text()}, got {now_ms!r}"
        )


def _app_id(obj: Mapping[str, Any]) -> str | None:
    app_id = obj.get("app_id")
    if app_id is not None:
        _require_type(app_id, str, "app_id", "a string")
    return app_id


def _lags_computed(obj: Mapping[str, Any]) -> bool:
    lags_computed = obj.get("lags_computed", True)
    _require_type(lags_computed, bool, "lags_computed", "true or false")
    return lags_computed


def load_scenario(obj: object, *, source: str = "<scenario>", now_ms: int = 0) -> Scenario:
    """Check a scenario dict (scenario.md) and build the application's state; raise `ScenarioError`."""
    _check_planning_instant(now_ms)
    if not isinstance(obj, dict):
        raise ScenarioError("$", "a scenario must be a JSON object")
    loader = _Loader(source)
    app_id = _app_id(obj)
    configs, assignor, assignor_configs = loader.configs(obj.get("configs"))
    lags_computed = _lags_computed(obj)
    task_infos = loader.tasks(obj.get("tasks"))
    known = {info.id: info for info in task_infos}
    stateful = in_task_order(t for t, info in known.items() if info.has_changelog)
    clients = _ClientsLoader(loader, known, frozenset(stateful)).clients(obj.get("clients"), configs)

    end_sums = _end_offset_sums(stateful, {c.process_id: c.reported_lags for c in clients})
    without_history = MappingProxyType(_client_lags({}, frozenset(), end_sums, lags_computed))
    states = [client.streams_state(end_sums, lags_computed, without_history) for client in clients]
    consumer_map = {client.process_id: client.sorted_consumers() for client in clients}
    state = ApplicationState.of(task_infos, states, configs, now_ms)
    return Scenario(
        app_id=app_id,
        application_state=state,
        assignor=assignor or DEFAULT_ASSIGNOR,
        assignor_configured=assignor is not None,
        assignor_configs=MappingProxyType(assignor_configs),
        lags_computed=lags_computed,
        end_offset_sums=MappingProxyType(end_sums),
        consumers=MappingProxyType(dict(sorted(consumer_map.items()))),
        warnings=tuple(f"{path}: {message}" for path, message in loader.warnings),
        warning_sites=tuple(loader.warnings),
        source=source,
    )


def read_json_file(path: str | Path) -> object:
    """Parse a JSON file; unreadable files and bad JSON are a `ScenarioError` at the root path ``$``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError("$", f"cannot read file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError("$", f"not UTF-8 text: {e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError("$", f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None


def load_scenario_file(path: str | Path, *, now_ms: int = 0) -> Scenario:
    return load_scenario(read_json_file(path), source=str(path), now_ms=now_ms)
