"""Explore fleet-assignor runs in a notebook: load a run's Delta outputs (no Spark needed), look at one
application's plan, compare runs or assignors, plan what-ifs and simulate rebalances, plot it all.

    from fleet_assignor import explore
    run = explore.load_run("/path/to/output", input_dir="/path/to/input")
    explore.client_load(run, "app-0001")
"""

from fleet_assignor.explore.analysis import (
    NoRolloutError,
    client_load,
    errors_by_type,
    fleet_rack_traffic,
    fleet_summary,
    move_counts,
    moves,
    previous_owners,
    rack_traffic,
    rack_traffic_totals,
    restore_lag,
    restore_lag_per_client,
    rollout,
    standby_spread,
    thread_load,
)
from fleet_assignor.explore.compare import assignment_diff, client_load_diff, compare_runs
from fleet_assignor.explore.frames import MissingInputsError, RunFrames, as_pandas
from fleet_assignor.explore.input_scenarios import load_scenarios, scenario_rows, scenarios_from_tables
from fleet_assignor.explore.load import RunNotFoundError, list_runs, load_inputs, load_run
from fleet_assignor.explore.planning import FleetPlan, plan_fleet, plan_one
from fleet_assignor.explore.simulate import Simulation, next_scenario, simulate
from fleet_assignor.explore.transitions import (
    TRANSITION_KINDS,
    fleet_transition_totals,
    task_transitions,
    transition_counts,
)
from fleet_assignor.explore.whatif import (
    AddClients,
    LoseRack,
    RemoveClients,
    SetConfig,
    WhatIf,
    apply_changes,
    compare_assignors,
    set_assignor,
    set_standby_replicas,
    what_if,
)

__all__ = [
    "TRANSITION_KINDS",
    "AddClients",
    "FleetPlan",
    "LoseRack",
    "MissingInputsError",
    "NoRolloutError",
    "RemoveClients",
    "RunFrames",
    "RunNotFoundError",
    "SetConfig",
    "Simulation",
    "WhatIf",
    "apply_changes",
    "as_pandas",
    "assignment_diff",
    "client_load",
    "client_load_diff",
    "compare_assignors",
    "compare_runs",
    "errors_by_type",
    "fleet_rack_traffic",
    "fleet_summary",
    "fleet_transition_totals",
    "list_runs",
    "load_inputs",
    "load_run",
    "load_scenarios",
    "move_counts",
    "moves",
    "next_scenario",
    "plan_fleet",
    "plan_one",
    "previous_owners",
    "rack_traffic",
    "rack_traffic_totals",
    "restore_lag",
    "restore_lag_per_client",
    "rollout",
    "scenario_rows",
    "scenarios_from_tables",
    "set_assignor",
    "set_standby_replicas",
    "simulate",
    "standby_spread",
    "task_transitions",
    "thread_load",
    "transition_counts",
    "what_if",
]
