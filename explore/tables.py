"""Scenario dicts written out as the job's input table rows (tables.md), so a scenario or a what-if fleet
can be planned by the real fleet job, and a job run compared with the planner on the same inputs.

The rows say what the scenario says: per-consumer history when the scenario has it (else the client's
previous tasks on its first consumer), offset sums from the lags against end offsets inferred as
scenario.md does, broker racks under `cluster_id` = the app id (so two applications' topics never share
rack rows), and no end-offset rows at all when the scenario says `lags_computed: false`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fleet_assignor.explore.planning import scenario_consumers
from fleet_assignor.explore.simulate import end_offset_sums
from fleet_assignor.schemas.columns import APPLICATION_CONFIG_COLUMNS, INPUT_TABLE_NAMES

RUNNING_ACTIVE = -2
UNKNOWN = -3
CONFIG_COLUMNS = APPLICATION_CONFIG_COLUMNS
INPUT_TABLES = INPUT_TABLE_NAMES


def scenario_rows(scenarios: Mapping | Iterable[Mapping]) -> dict[str, list[dict[str, Any]]]:
    """Input table name -> rows (dicts with tables.md's columns) for one scenario or a fleet of them."""
    fleet = [scenarios] if isinstance(scenarios, Mapping) else list(scenarios)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in INPUT_TABLES}
    for scenario in fleet:
        app_id = scenario["app_id"]
        tables["applications"].append(_application(scenario))
        tables["tasks"] += [_task(app_id, t) for t in scenario.get("tasks") or []]
        ends = end_offset_sums(scenario)
        for client in scenario.get("clients") or []:
            tables["client_subscriptions"] += _subscriptions(app_id, client)
            tables["task_offsets"] += _offsets(app_id, client, ends)
        if scenario.get("lags_computed", True):
            tables["changelog_end_offsets"] += _end_offsets(app_id, scenario, ends)
        tables["partition_racks"] += _racks(app_id, scenario)
    return tables


def _application(scenario: Mapping) -> dict[str, Any]:
    configs = scenario.get("configs") or {}
    row = {"app_id": scenario["app_id"], "cluster_id": scenario["app_id"]}
    row.update({c: configs.get(c) for c in CONFIG_COLUMNS})
    if row["assignor_configs"] is not None:
        row["assignor_configs"] = dict(row["assignor_configs"])
    return row


def _topic_partitions(task: Mapping, flag: str) -> list[dict[str, Any]]:
    return [
        {"topic": p["topic"], "partition": p["partition"]}
        for p in task.get("partitions") or []
        if p.get(flag)
    ]


def _task(app_id: str, task: Mapping) -> dict[str, Any]:
    return {
        "app_id": app_id,
        "task_id": task["id"],
        "state_stores": list(task.get("stores") or []),
        "source_partitions": _topic_partitions(task, "source"),
        "changelog_partitions": _topic_partitions(task, "changelog"),
    }


def _subscriptions(app_id: str, client: Mapping) -> list[dict[str, Any]]:
    consumer_ids, prev_active, prev_standby = scenario_consumers(client)
    history = {c["id"]: c for c in client.get("consumers") or [] if isinstance(c, Mapping)}
    rows = []
    for i, consumer in enumerate(consumer_ids):
        if history:
            own = history.get(consumer, {})
            active, standby = own.get("prev_active") or [], own.get("prev_standby") or []
        else:
            active, standby = (prev_active, prev_standby) if i == 0 else ([], [])
        rows.append(
            {
                "app_id": app_id,
                "process_id": client["process_id"],
                "consumer_client_id": consumer,
                "rack_id": client.get("rack"),
                "client_tags": dict(client.get("tags") or {}),
                "host_info": None,
                "prev_active_tasks": list(active),
                "prev_standby_tasks": list(standby),
            }
        )
    return rows


def _offsets(app_id: str, client: Mapping, ends: Mapping[str, int]) -> list[dict[str, Any]]:
    """One offset row per task the client has state for (a lag below the end sum, -2 or -3), reported
    by the client's first consumer."""
    consumer_ids, _, _ = scenario_consumers(client)
    rows = []
    for task, lag in sorted((client.get("lags") or {}).items()):
        if task not in ends or lag is None:
            continue
        if lag in (RUNNING_ACTIVE, UNKNOWN):
            offset = lag
        elif 0 <= lag < ends[task]:
            offset = ends[task] - lag
        else:
            continue  # no state: the full changelog, what a missing row means
        rows.append(
            {
                "app_id": app_id,
                "process_id": client["process_id"],
                "consumer_client_id": consumer_ids[0],
                "task_id": task,
                "offset_sum": offset,
            }
        )
    return rows


def _end_offsets(app_id: str, scenario: Mapping, ends: Mapping[str, int]) -> list[dict[str, Any]]:
    """The task's end-offset sum on its first changelog partition, 0 on the others."""
    rows = []
    for task in scenario.get("tasks") or []:
        for i, p in enumerate(_topic_partitions(task, "changelog")):
            end = ends.get(task["id"], 0) if i == 0 else 0
            rows.append(
                {"app_id": app_id, "topic": p["topic"], "partition": p["partition"], "end_offset": end}
            )
    return rows


def _racks(app_id: str, scenario: Mapping) -> list[dict[str, Any]]:
    seen: dict[tuple[str, int], list[str]] = {}
    for task in scenario.get("tasks") or []:
        for p in task.get("partitions") or []:
            if p.get("racks"):
                seen[(p["topic"], p["partition"])] = list(p["racks"])
    return [
        {"cluster_id": app_id, "topic": topic, "partition": partition, "replica_racks": racks}
        for (topic, partition), racks in sorted(seen.items())
    ]


# ---------------------------------------------------------------------------------- tables -> scenarios

MAX_LONG = 2**63 - 1
INTEGER_CONFIGS = frozenset(
    {
        "acceptable_recovery_lag",
        "max_warmup_replicas",
        "num_standby_replicas",
        "probing_rebalance_interval_ms",
        "rack_aware_traffic_cost",
        "rack_aware_non_overlap_cost",
    }
)


def scenarios_from_tables(tables: Mapping[str, Any], *, apps: Iterable[str] | None = None) -> list[dict]:
    """Scenario dicts (scenario.md) of the applications in the input tables (pandas or Spark frames keyed
    by table name), read with tables.md's rules, so a notebook can replan or what-if the real fleet without
    Spark. Rows the job would reject are not checked here: plan those applications with the job."""
    from fleet_assignor.explore.frames import normalize

    frames = {name: normalize(tables[name]) for name in INPUT_TABLES if name in tables}
    subscriptions = frames["client_subscriptions"]
    applications = frames.get("applications")
    wanted = set(subscriptions["app_id"])
    if applications is not None:
        wanted |= set(applications["app_id"])
    if apps is not None:
        wanted &= set(apps)
    configs = _configs_by_app(applications)
    racks = _racks_by_partition(frames.get("partition_racks"))
    ends = _end_offsets_by_partition(frames.get("changelog_end_offsets"))
    offsets = frames.get("task_offsets")
    scenarios = []
    for app_id in sorted(wanted):
        cluster, app_configs = configs.get(app_id, (None, {}))
        tasks = _tasks_of(frames["tasks"], app_id, cluster, racks)
        end_sums, computed = _end_sums(tasks, ends.get(app_id, {}))
        clients = _clients_of(subscriptions, offsets, app_id, end_sums, computed)
        scenario = {"app_id": app_id, "configs": app_configs, "tasks": tasks, "clients": clients}
        if not computed:
            scenario["lags_computed"] = False
        scenarios.append(scenario)
    return scenarios


def load_scenarios(
    input_dir: str, *, versions: Mapping[str, int] | None = None, apps: Iterable[str] | None = None
) -> list[dict]:
    """`scenarios_from_tables` of the Delta input tables under `input_dir` (at `versions`, e.g. a run's
    `input_versions`), read with delta-rs."""
    from pathlib import Path

    from fleet_assignor.explore.load import _read

    base = Path(input_dir)
    versions = dict(versions or {})
    tables = {
        name: _read(base / name, version=versions.get(name))
        for name in INPUT_TABLES
        if (base / name).exists()
    }
    return scenarios_from_tables(tables, apps=apps)


def _missing(value: Any) -> bool:
    try:
        return value is None or bool(value != value)  # NaN
    except (TypeError, ValueError):
        return False


def _configs_by_app(applications) -> dict[str, tuple[str | None, dict[str, Any]]]:
    result = {}
    if applications is None:
        return result
    for row in applications.to_dict("records"):
        configs = {}
        for column in CONFIG_COLUMNS:
            value = row.get(column)
            if column == "rack_aware_assignment_tags" and value is not None and not _missing(value):
                value = list(value)
            elif column == "assignor_configs" and value is not None and not _missing(value):
                value = dict(sorted(dict(value).items()))
            elif _missing(value):
                continue
            elif column in INTEGER_CONFIGS:
                value = int(value)  # pandas reads an integer column with nulls as float
            configs[column] = value
        result[row["app_id"]] = (None if _missing(row.get("cluster_id")) else row["cluster_id"], configs)
    return result


def _racks_by_partition(partition_racks) -> dict[tuple[str | None, str, int], list[str]]:
    racks = {}
    if partition_racks is None:
        return racks
    for row in partition_racks.to_dict("records"):
        cluster = None if _missing(row["cluster_id"]) else row["cluster_id"]
        values = row["replica_racks"]
        racks[(cluster, row["topic"], int(row["partition"]))] = [] if _missing_list(values) else list(values)
    return racks


def _missing_list(values: Any) -> bool:
    return values is None or (not isinstance(values, (list, tuple)) and not hasattr(values, "__len__"))


def _end_offsets_by_partition(end_offsets) -> dict[str, dict[tuple[str, int], int]]:
    ends: dict[str, dict[tuple[str, int], int]] = {}
    if end_offsets is None:
        return ends
    for row in end_offsets.to_dict("records"):
        ends.setdefault(row["app_id"], {})[(row["topic"], int(row["partition"]))] = int(row["end_offset"])
    return ends


def _pairs(values: Any) -> list[tuple[str, int]]:
    if _missing_list(values):
        return []
    return [
        (p["topic"], int(p["partition"])) if isinstance(p, Mapping) else (p[0], int(p[1])) for p in values
    ]


def _tasks_of(tasks, app_id: str, cluster: str | None, racks) -> list[dict[str, Any]]:
    from fleet_assignor.explore.ordering import task_key

    rows = sorted(tasks[tasks["app_id"] == app_id].to_dict("records"), key=lambda r: task_key(r["task_id"]))
    result = []
    for row in rows:
        stores = [] if _missing_list(row["state_stores"]) else list(row["state_stores"])
        flags: dict[tuple[str, int], dict[str, bool]] = {}
        for pair in _pairs(row["source_partitions"]):
            flags.setdefault(pair, {"source": False, "changelog": False})["source"] = True
        for pair in _pairs(row["changelog_partitions"]):
            flags.setdefault(pair, {"source": False, "changelog": False})["changelog"] = True
        partitions = [
            {"topic": t, "partition": p, **f, "racks": racks.get((cluster, t, p), [])}
            for (t, p), f in sorted(flags.items())
        ]
        result.append(
            {"id": row["task_id"], "stateful": bool(stores), "stores": stores, "partitions": partitions}
        )
    return result


def _end_sums(tasks: list[dict], ends: Mapping[tuple[str, int], int]) -> tuple[dict[str, int], bool]:
    """Per task with a changelog: the sum of its changelog partitions' end offsets (saturating); False when
    one of the application's changelog partitions has no end offset (lags cannot be computed)."""
    sums, computed = {}, True
    for task in tasks:
        changelog = [(p["topic"], p["partition"]) for p in task["partitions"] if p["changelog"]]
        if not changelog:
            continue
        if any(pair not in ends for pair in changelog):
            computed = False
        sums[task["id"]] = min(sum(ends.get(pair, 0) for pair in changelog), MAX_LONG)
    return sums, computed


def _clients_of(
    subscriptions, offsets, app_id: str, end_sums: Mapping[str, int], computed: bool
) -> list[dict]:
    from fleet_assignor.explore.ordering import process_key

    rows = subscriptions[subscriptions["app_id"] == app_id].to_dict("records")
    reported: dict[tuple[str, str], list[int]] = {}
    if offsets is not None:
        for row in offsets[offsets["app_id"] == app_id].to_dict("records"):
            if not _missing(row["offset_sum"]):
                reported.setdefault((row["process_id"], row["task_id"]), []).append(int(row["offset_sum"]))
    clients: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r["consumer_client_id"]):
        client = clients.setdefault(
            row["process_id"],
            {"process_id": row["process_id"], "consumers": [], "rack": row["rack_id"] or None,
             "tags": dict(sorted(dict(row["client_tags"] or {}).items()))},
        )  # fmt: skip
        client["consumers"].append(
            {
                "id": row["consumer_client_id"],
                "prev_active": []
                if _missing_list(row["prev_active_tasks"])
                else list(row["prev_active_tasks"]),
                "prev_standby": []
                if _missing_list(row["prev_standby_tasks"])
                else list(row["prev_standby_tasks"]),
            }
        )
    for client in clients.values():
        prev_active = {t for c in client["consumers"] for t in c["prev_active"]}
        client["lags"] = {
            task: _lag(reported.get((client["process_id"], task)), task in prev_active, end_sum, computed)
            for task, end_sum in end_sums.items()
        }
    return sorted(clients.values(), key=lambda c: process_key(c["process_id"]))


def _lag(offsets: list[int] | None, previous_active: bool, end_sum: int, computed: bool) -> int:
    """tables.md "Lags": -2 if any consumer says -2 (or a previous active reports nothing); -3 when lags
    cannot be computed or the offset is unknown; above the end sum = corrupted = the whole changelog."""
    if offsets is None:
        return RUNNING_ACTIVE if previous_active else (end_sum if computed else UNKNOWN)
    if RUNNING_ACTIVE in offsets:
        return RUNNING_ACTIVE
    if not computed:
        return UNKNOWN
    offset = max(offsets)
    if offset == UNKNOWN:
        return UNKNOWN
    return end_sum if offset > end_sum else end_sum - offset
