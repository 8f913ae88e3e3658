"""Rack-aware task assignment (KIP-925): an exact minimum-cost optimizer for both Kafka code paths.

- `RackAwareTaskAssignor`: the legacy path on `ClientState`s (high-availability and legacy sticky).
- `optimize_rack_aware_active_tasks` / `optimize_rack_aware_standby_tasks`: the KIP-924 utilities on
  ``dict[ProcessId, KafkaStreamsAssignment]``.
"""

from fleet_assignor.assignor.rack.costs import (
    HIGH_AVAILABILITY_DEFAULT_COSTS,
    STATELESS_COSTS,
    STICKY_DEFAULT_COSTS,
    PartitionScope,
    RackCosts,
)
from fleet_assignor.assignor.rack.enablement import Enablement, OptimizedTaskType
from fleet_assignor.assignor.rack.graph import RackAssignmentError
from fleet_assignor.assignor.rack.legacy import STANDBY_OPTIMIZER_MAX_ITERATION, RackAwareTaskAssignor
from fleet_assignor.assignor.rack.utils import (
    RackOptimizationResult,
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)

__all__ = [
    "HIGH_AVAILABILITY_DEFAULT_COSTS",
    "STANDBY_OPTIMIZER_MAX_ITERATION",
    "STATELESS_COSTS",
    "STICKY_DEFAULT_COSTS",
    "Enablement",
    "OptimizedTaskType",
    "PartitionScope",
    "RackAssignmentError",
    "RackAwareTaskAssignor",
    "RackCosts",
    "RackOptimizationResult",
    "optimize_rack_aware_active_tasks",
    "optimize_rack_aware_standby_tasks",
]
