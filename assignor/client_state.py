"""Mutable per-client working state of the legacy-style assignors (assignors.md §1.4).

Built from a read-only `KafkaStreamsState` at the start of one assignment and thrown away after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from fleet_assignor.assignor.errors import NoLagForTaskError
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId


class ClientState:
    __slots__ = (
        "_active",
        "_consumer_ids",
        "_consumers",
        "_standby",
        "_warmup",
        "capacity",
        "client_tags",
        "consumer_previous_stateful",
        "followup_rebalance_deadline",
        "previous_active",
        "previous_standby",
        "process_id",
        "rack_id",
        "task_lags",
    )

    def __init__(
        self,
        process_id: ProcessId,
        capacity: int,
        *,
        previous_active: Iterable[TaskId] = (),
        previous_standby: Iterable[TaskId] = (),
        task_lags: Mapping[TaskId, int] | None = None,
        client_tags: Mapping[str, str] | None = None,
        rack_id: str | None = None,
        consumers: Iterable[str] = (),
        consumer_previous_stateful: Mapping[str, frozenset[TaskId]] | None = None,
    ) -> None:
        if capacity <= 0:
            raise ValueError(f"client {process_id} must have at least one thread, got {capacity}")
        self.process_id = process_id
        self.capacity = capacity
        self.client_tags: Mapping[str, str] = MappingProxyType(dict(client_tags or {}))
        self.rack_id = rack_id
        # A client of a big application has thousands of consumers, which the assignors do not read: they
        # are sorted when first asked for, and a read-only history is kept as it is.
        self._consumer_ids = consumers if isinstance(consumers, tuple | frozenset) else tuple(consumers)
        self._consumers: tuple[str, ...] | None = None
        self.previous_active = frozenset(previous_active)
        self.previous_standby = frozenset(previous_standby)
        self.consumer_previous_stateful: Mapping[str, frozenset[TaskId]] = (
            consumer_previous_stateful
            if isinstance(consumer_previous_stateful, MappingProxyType)
            else dict(consumer_previous_stateful or {})
        )
        # A read-only map is kept as it is: a client of a big application has thousands of lags.
        self.task_lags: Mapping[TaskId, int] = (
            task_lags if isinstance(task_lags, MappingProxyType) else dict(task_lags or {})
        )
        self._active: set[TaskId] = set()
        self._standby: set[TaskId] = set()
        self._warmup: set[TaskId] = set()
        self.followup_rebalance_deadline: int | None = None

    @classmethod
    def from_kafka_streams_state(cls, state: KafkaStreamsState) -> ClientState:
        return cls(
            state.process_id,
            state.num_processing_threads,
            previous_active=state.previous_active_tasks,
            previous_standby=state.previous_standby_tasks,
            task_lags=state.task_lags or {},
            client_tags=state.client_tags,
            rack_id=state.rack_id,
            consumers=state.consumer_client_ids,
            consumer_previous_stateful=state.consumer_previous_stateful_tasks,
        )

    @property
    def consumers(self) -> tuple[str, ...]:
        """The client's consumer ids, sorted."""
        if self._consumers is None:
            self._consumers = tuple(sorted(self._consumer_ids))
        return self._consumers

    # --- current assignment ---------------------------------------------------------------------------
    @property
    def active_tasks(self) -> list[TaskId]:
        return sorted(self._active)

    @property
    def standby_tasks(self) -> list[TaskId]:
        """Standbys including warmups, sorted."""
        return sorted(self._standby)

    @property
    def warmup_tasks(self) -> list[TaskId]:
        return sorted(self._warmup)

    def active_set(self) -> frozenset[TaskId]:
        return frozenset(self._active)

    def standby_set(self) -> frozenset[TaskId]:
        return frozenset(self._standby)

    def has_active(self, task: TaskId) -> bool:
        return task in self._active

    def has_standby(self, task: TaskId) -> bool:
        return task in self._standby

    def has_assigned_task(self, task: TaskId) -> bool:
        return task in self._active or task in self._standby

    def assign_active(self, task: TaskId) -> None:
        self._require_unassigned(task)
        self._active.add(task)

    def assign_standby(self, task: TaskId, *, warmup: bool = False) -> None:
        self._require_unassigned(task)
        self._standby.add(task)
        if warmup:
            self._warmup.add(task)

    def add_unheld_standby(self, task: TaskId) -> None:
        """`assign_standby` for a caller that has just found the task neither active nor standby here
        (`has_assigned_task`): the least-loaded standby placement, once per replica."""
        self._standby.add(task)

    def unassign_active(self, task: TaskId) -> None:
        if task not in self._active:
            raise ValueError(f"task {task} is not active on client {self.process_id}")
        self._active.remove(task)

    def unassign_standby(self, task: TaskId) -> None:
        if task not in self._standby:
            raise ValueError(f"task {task} is not a standby on client {self.process_id}")
        self._standby.remove(task)
        self._warmup.discard(task)

    def _require_unassigned(self, task: TaskId) -> None:
        if task in self._active or task in self._standby:
            raise ValueError(f"task {task} is already assigned to client {self.process_id}")

    # --- loads (float division, as Kafka) ---------------------------------------------------------------
    @property
    def active_task_count(self) -> int:
        return len(self._active)

    @property
    def standby_task_count(self) -> int:
        return len(self._standby)

    @property
    def assigned_task_count(self) -> int:
        return len(self._active) + len(self._standby)

    @property
    def active_task_load(self) -> float:
        return len(self._active) / self.capacity

    @property
    def assigned_task_load(self) -> float:
        return (len(self._active) + len(self._standby)) / self.capacity

    def reached_capacity(self) -> bool:
        return self.assigned_task_count >= self.capacity

    def has_unfulfilled_quota(self, tasks_per_thread: int) -> bool:
        return len(self._active) < self.capacity * tasks_per_thread

    def has_more_available_capacity_than(self, other: ClientState) -> bool:
        mine, theirs = self.assigned_task_load, other.assigned_task_load
        if mine != theirs:
            return mine < theirs
        return self.capacity > other.capacity

    # --- lags -------------------------------------------------------------------------------------------
    def lag_for(self, task: TaskId) -> int:
        try:
            return self.task_lags[task]
        except KeyError:
            raise NoLagForTaskError(f"client {self.process_id} has no lag for task {task}") from None

    def stateful_active_tasks(self) -> list[TaskId]:
        return sorted(t for t in self._active if t in self.task_lags)

    def stateless_active_tasks(self) -> list[TaskId]:
        return sorted(t for t in self._active if t not in self.task_lags)

    def prev_tasks_by_lag(self, consumer: str) -> list[TaskId]:
        owned = self.consumer_previous_stateful.get(consumer, frozenset())
        lags = self.task_lags
        return sorted((t for t in owned if t in lags), key=lambda t: (lags[t], t))

    def __repr__(self) -> str:
        return (
            f"ClientState({self.process_id}, capacity={self.capacity}, "
            f"active={[str(t) for t in self.active_tasks]}, standby={[str(t) for t in self.standby_tasks]})"
        )
