"""fleet-assignor's pure-Python core: the KIP-924 task assignment model, assignors and utilities.

No Spark here: usable from a notebook, a test or the one-application command line (`python -m assignor`).
"""

from assignor.assignment import (
    ACTIVE,
    STANDBY,
    AssignedTask,
    AssignedTaskType,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from assignor.client_state import ClientState
from assignor.configs import AssignmentConfigs, RackAwareStrategy
from assignor.constrained_priority_set import ConstrainedPrioritySet
from assignor.errors import (
    AssignmentError,
    ConfigException,
    LagsNotComputedError,
    NoLagForTaskError,
    TaskAssignmentException,
)
from assignor.process_id import ProcessId
from assignor.state import (
    ApplicationState,
    KafkaStreamsState,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)
from assignor.task_assignor import BaseTaskAssignor, TaskAssignor
from assignor.task_id import TaskId, TaskIdFormatError

__all__ = [
    "ACTIVE",
    "STANDBY",
    "ApplicationState",
    "AssignedTask",
    "AssignedTaskType",
    "AssignmentConfigs",
    "AssignmentError",
    "BaseTaskAssignor",
    "ClientState",
    "ConfigException",
    "ConstrainedPrioritySet",
    "KafkaStreamsAssignment",
    "KafkaStreamsState",
    "LagsNotComputedError",
    "NoLagForTaskError",
    "ProcessId",
    "RackAwareStrategy",
    "TaskAssignment",
    "TaskAssignmentException",
    "TaskAssignor",
    "TaskId",
    "TaskIdFormatError",
    "TaskInfo",
    "TaskTopicPartition",
    "TopicPartition",
]
