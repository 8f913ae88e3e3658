"""Errors of the assignment protocol and of its inputs."""

from __future__ import annotations

import enum


class AssignmentError(enum.Enum):
    """What `validate_task_assignment` finds wrong with a returned assignment.

    Declaration order is the precedence (POLICY.md §5): when several problems apply, the first one here
    is the error, whatever order the assignment was returned in.
    """

    @staticmethod
    def _generate_next_value_(name: str, start: int, count: int, last_values: list) -> str:
        return name

    NONE = enum.auto()
    ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES = enum.auto()
    ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS = enum.auto()
    INVALID_STANDBY_TASK = enum.auto()
    MISSING_PROCESS_ID = enum.auto()
    UNKNOWN_PROCESS_ID = enum.auto()
    UNKNOWN_TASK_ID = enum.auto()

    @property
    def precedence(self) -> int:
        return _PRECEDENCE[self]


_PRECEDENCE = {error: rank for rank, error in enumerate(AssignmentError)}


class TaskAssignmentException(Exception):
    """Raised by an assignor that cannot produce an assignment."""


class ConfigException(ValueError):
    """An assignment config outside its allowed range; the message names the config."""

    def __init__(self, config: str, value: object, reason: str) -> None:
        super().__init__(f"invalid value {value!r} for configuration {config}: {reason}")
        self.config = config
        self.value = value
        self.reason = reason


class LagsNotComputedError(RuntimeError):
    """Lags were asked of a `KafkaStreamsState` built with ``compute_task_lags=False``."""


class NoLagForTaskError(KeyError):
    """Lags were asked for a task that has no lag entry (a task without changelog partitions)."""
