"""Column lists shared by Spark and Spark-free code (the job's Python workers, the exploration API).

Plain Python on purpose: `explore` reads the tables with deltalake and must not need pyspark to know them.
"""

from __future__ import annotations

# The `applications` columns that are the scenario's `configs` keys (tables.md, scenario.md).
APPLICATION_CONFIG_COLUMNS: tuple[str, ...] = (
    "assignor",
    "acceptable_recovery_lag",
    "max_warmup_replicas",
    "num_standby_replicas",
    "probing_rebalance_interval_ms",
    "rack_aware_assignment_strategy",
    "rack_aware_traffic_cost",
    "rack_aware_non_overlap_cost",
    "rack_aware_assignment_tags",
    "assignor_configs",
)

# The input tables, in the contract's order (the Spark schemas: schemas.tables.INPUT_TABLES).
INPUT_TABLE_NAMES: tuple[str, ...] = (
    "applications",
    "tasks",
    "client_subscriptions",
    "task_offsets",
    "changelog_end_offsets",
    "partition_racks",
)
