"""fleet-assignor's pure-Python core: the KIP-924 task assignment model, assignors and utilities.

No Spark here: usable from a notebook, a test or the one-application command line (`fleet-assignor app`).
"""

from fleet_assignor.assignor.assignment import (
    ACTIVE,
    STANDBY,
    AssignedTask,
    AssignedTaskType,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.configs import AssignmentConfigs, RackAwareStrategy
from fleet_assignor.assignor.constrained_priority_set import ConstrainedPrioritySet
from fleet_assignor.assignor.errors import (
    AssignmentError,
    ConfigException,
    LagsNotComputedError,
    NoLagForTaskError,
    TaskAssignmentException,
)
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.state import (
    ApplicationState,
    KafkaStreamsState,
    TaskInfo,
    TaskTopicPartition,
    TopicPartition,
)
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor, TaskAssignor
from fleet_assignor.assignor.task_id import TaskId, TaskIdFormatError

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
