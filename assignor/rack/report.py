"""``fleet-assignor app optimize-rack``: the KIP-924 rack optimizer applied to a scenario's previous
assignment (`identity_assignment`) with the scenario's cost configs (scenario.md, "Applying the rack-aware
optimizer"). The result is a plan result object plus ``rack_cost``."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any, TextIO

from fleet_assignor.assignor.assignment import TaskAssignment
from fleet_assignor.assignor.cli_io import emit_result, read_scenario
from fleet_assignor.assignor.planner import evaluate_assignment
from fleet_assignor.assignor.rack.enablement import OptimizedTaskType
from fleet_assignor.assignor.rack.graph import RackAssignmentError
from fleet_assignor.assignor.rack.utils import (
    RackOptimizationResult,
    cross_rack_partitions,
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)
from fleet_assignor.assignor.scenario import Scenario, load_scenario
from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams, identity_assignment

_OPTIMIZERS = {
    OptimizedTaskType.ACTIVE: optimize_rack_aware_active_tasks,
    OptimizedTaskType.STANDBY: optimize_rack_aware_standby_tasks,
}


def optimize_rack(scenario: Scenario, task_type: OptimizedTaskType) -> dict[str, Any]:
    """The result object for one loaded scenario; the optimizer's own problems (an input assignment that
    is not a valid flow, e.g. one active claimed by two clients) come back as ``disabled_reason``."""
    state = scenario.application_state
    assignments = identity_assignment(state)
    params = RackAwareOptimizationParams.of(state)
    started = time.perf_counter()
    try:
        rack = _OPTIMIZERS[task_type](params, assignments)
    except RackAssignmentError as e:
        configs = state.assignment_configs()
        rack = RackOptimizationResult(
            task_type, False, str(e), configs.rack_aware_traffic_cost, configs.rack_aware_non_overlap_cost
        )
        assignments = identity_assignment(state)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    if not rack.enabled:  # nothing moved: say what the previous assignment costs, when the racks tell
        counted = cross_rack_partitions(state, assignments, task_type)
        rack = replace(rack, cross_rack_partitions_before=counted, cross_rack_partitions_after=counted)
    result = evaluate_assignment(
        scenario, TaskAssignment.of(assignments), assignor=f"optimize_rack_{task_type.value.lower()}"
    ).as_dict()
    result["elapsed_ms"] = round(elapsed_ms, 3)
    result["rack_cost"] = rack.as_dict()
    return result


def optimize_rack_scenario(obj: object, task_type: str | OptimizedTaskType, *, source: str = "<scenario>"):
    """`optimize_rack` on a scenario dict; raises `ScenarioError` for unusable input."""
    kind = task_type if isinstance(task_type, OptimizedTaskType) else OptimizedTaskType(task_type.upper())
    return optimize_rack(load_scenario(obj, source=source), kind)


# --- the subcommand (registered in assignor/cli.py) ------------------------------------------------------
def add_optimize_rack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO.json")
    parser.add_argument("--type", dest="task_type", choices=["active", "standby"], default="active")
    parser.add_argument("--out", metavar="FILE", help="write the result there instead of stdout")


def run_optimize_rack(args: argparse.Namespace, stdout: TextIO) -> int:
    scenario = read_scenario(args.scenario)
    return emit_result(optimize_rack(scenario, OptimizedTaskType(args.task_type.upper())), args.out, stdout)
