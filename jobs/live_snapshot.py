"""From one cluster snapshot (the JSON printed by ``fleet.live.Snapshot``) to the rows of the six input tables
of tables.md. Pure Python, no Spark: `jobs.collect` writes the rows.

What each table gets, per collected group (one Kafka Streams application, app_id = group id):

* ``client_subscriptions``: one row per group member (one stream thread's consumer). Previous tasks are the
  member's *current* assignment as the group reports it (classic: the AssignmentInfo of its assignment;
  streams: ``assignment``, warm-ups counted as standbys), i.e. what the next rebalance starts from.
* ``task_offsets``: a member's current active tasks get ``-2`` (running, caught up by definition, as Streams
  reports them). Other tasks take the offset sums the member reported: a classic member's SubscriptionInfo
  (sent at its last join, so possibly older than the snapshot) or a streams member's task offsets. A ``-2``
  in a classic subscription for a task the member no longer runs is stale and written as ``-3`` (unknown).
* ``tasks``: streams groups: from the described topology (task ``<subtopology>_<p>`` reads partition p of
  each source and repartition source topic and owns partition p of each changelog topic). Classic groups
  carry no topology, so it is derived: each member's AssignmentInfo lists its active tasks in the order of
  its assigned partitions sorted by (topic, partition), which gives every task's source partitions; standby
  entries add theirs. Changelog topics are the topics named ``<app_id>-<store>-changelog``; each is given to
  the one subtopology that can own it (task count = its partition count, and stateful: it has standbys or
  reported offset sums, when that is known). When more than one subtopology fits, ``--app-configs`` must
  say (``"changelogs": {"<topic>": "<subtopology>"}``); otherwise the group is skipped with that reason.
  A source topic used as a changelog (a table read with ``topology.optimization=all``) has no such name:
  ``--app-configs`` names it the same way (a source topic of that subtopology). Streams groups list it in
  their topology's changelog topics themselves.
* ``changelog_end_offsets``: the brokers' log-end offsets (list offsets, latest) of those changelog
  partitions; for a changelog partition that is a source topic of the application, the group's committed
  offset of that partition instead (0 when it has none), as Kafka Streams' own lag computation does.
* ``partition_racks``: every partition of every topic the collected groups use, with the racks of the
  brokers holding its replicas (unknown when a broker has no rack).
* ``applications``: streams groups' own group configs (``streams.num.standby.replicas``,
  ``streams.num.warmup.replicas``, ``streams.acceptable.recovery.lag``,
  ``streams.rack.aware.assignment.tags``); for classic groups the ``--app-configs`` file, else the standby
  count seen in the live assignment (the most standbys any task has), else Kafka's defaults. Extra columns
  (allowed by tables.md): ``group_protocol``, ``config_sources`` (column -> ``cluster``, ``app_configs``,
  ``inferred`` or ``default``), ``snapshot_at_ms``.

A group that cannot be collected (rebalancing, empty, not Kafka Streams, unauthorised, a topic gone) is
skipped and reported with the reason; the others are still collected.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet_assignor.schemas import contract
from fleet_assignor.schemas.contract import APPLICATION_CONFIG_COLUMNS, INPUT_TABLE_NAMES

# The `applications` config columns; Kafka's defaults apply to what the cluster does not hold (the table's
# defaults are the same values).
APP_CONFIG_KEYS = APPLICATION_CONFIG_COLUMNS
APP_CONFIGS_EXTRA_KEYS = ("changelogs",)
INT_KEYS = {
    "max_warmup_replicas",
    "num_standby_replicas",
    "rack_aware_traffic_cost",
    "rack_aware_non_overlap_cost",
}
LONG_KEYS = {"acceptable_recovery_lag", "probing_rebalance_interval_ms"}

# Streams group configs (KIP-1071) read from the cluster -> applications column.
STREAMS_GROUP_CONFIGS = {
    "streams.num.standby.replicas": "num_standby_replicas",
    "streams.num.warmup.replicas": "max_warmup_replicas",
    "streams.acceptable.recovery.lag": "acceptable_recovery_lag",
    "streams.rack.aware.assignment.tags": "rack_aware_assignment_tags",
}

RUNNING = contract.RUNNING_ACTIVE
UNKNOWN = contract.UNKNOWN


class AppConfigsError(ValueError):
    """An --app-configs file that cannot be used."""


@dataclass(frozen=True)
class SkippedGroup:
    group_id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.group_id}: {self.reason}"


@dataclass
class SnapshotRows:
    """The six tables' rows (dicts keyed by column name, sorted) and the groups that were not collected."""

    tables: dict[str, list[dict[str, Any]]]
    collected: list[str]
    skipped: list[SkippedGroup]
    cluster_id: str | None
    snapshot_at_ms: int
    warnings: list[str] = field(default_factory=list)


class _Skip(Exception):
    pass


# ------------------------------------------------------------------------------------------ app configs


def load_app_configs(path: str | Path | None) -> dict[str, dict[str, Any]]:
    """Read and check an --app-configs JSON file: {"<app_id>" | "*": {column: value, "changelogs": {...}}}."""
    if path is None:
        return {}
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise AppConfigsError(f"--app-configs {path}: {e}") from e
    return check_app_configs(document, str(path))


def check_app_configs(document: Any, where: str = "app configs") -> dict[str, dict[str, Any]]:
    if not isinstance(document, dict):
        raise AppConfigsError(f"{where}: expected an object keyed by application id")
    allowed = set(APP_CONFIG_KEYS) | set(APP_CONFIGS_EXTRA_KEYS)
    for app_id, configs in document.items():
        if not isinstance(configs, dict):
            raise AppConfigsError(f"{where}: {app_id}: expected an object")
        for key, value in configs.items():
            if key not in allowed:
                raise AppConfigsError(
                    f"{where}: {app_id}: unknown key {key!r} (one of {', '.join(sorted(allowed))})"
                )
            if (
                key in INT_KEYS | LONG_KEYS
                and value is not None
                and not (isinstance(value, int) and not isinstance(value, bool))
            ):
                raise AppConfigsError(f"{where}: {app_id}: {key} must be an integer")
            if key == "rack_aware_assignment_tags" and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                raise AppConfigsError(f"{where}: {app_id}: {key} must be a list of strings")
            if key in ("changelogs", "assignor_configs") and not (
                isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            ):
                raise AppConfigsError(f"{where}: {app_id}: {key} must map strings to strings")
    return document


def _configs_for(app_configs: Mapping[str, Mapping[str, Any]], app_id: str) -> dict[str, Any]:
    merged = dict(app_configs.get("*", {}))
    merged.update(app_configs.get(app_id, {}))
    return merged


# ------------------------------------------------------------------------------------------------ tasks


def _sort_key(task_id: str) -> tuple:
    sub, _, part = task_id.rpartition("_")
    return (sub, int(part)) if part.isdigit() else (task_id, 0)


def _store_name(app_id: str, changelog: str) -> str:
    prefix, suffix = f"{app_id}-", "-changelog"
    if changelog.startswith(prefix) and changelog.endswith(suffix):
        return changelog[len(prefix) : -len(suffix)]
    return changelog


def _partition_counts(snapshot: Mapping[str, Any]) -> dict[str, int]:
    return {name: len(topic["partitions"]) for name, topic in snapshot.get("topics", {}).items()}


def _check_topics(group_topics: Iterable[str], snapshot: Mapping[str, Any]) -> None:
    missing = {m["topic"]: m["reason"] for m in snapshot.get("missing_topics", [])}
    counts = _partition_counts(snapshot)
    for topic in sorted(set(group_topics)):
        if topic in missing:
            raise _Skip(f"topic {topic} cannot be described (deleted meanwhile?): {missing[topic]}")
        if topic not in counts:
            raise _Skip(f"topic {topic} is not in the snapshot's topic metadata")


def _task_row(
    app_id: str, task_id: str, sources: Iterable, changelogs: Iterable, stores: Iterable[str]
) -> dict:
    return {
        "app_id": app_id,
        "task_id": task_id,
        "state_stores": sorted(set(stores)),
        "source_partitions": [{"topic": t, "partition": p} for t, p in sorted(set(sources))],
        "changelog_partitions": [{"topic": t, "partition": p} for t, p in sorted(set(changelogs))],
    }


def streams_group_tasks(group: Mapping[str, Any], snapshot: Mapping[str, Any]) -> list[dict]:
    """Task rows of a streams group from its described topology."""
    app_id = group["group_id"]
    counts = _partition_counts(snapshot)
    topics = [
        t
        for s in group.get("subtopologies", [])
        for t in (*s["source_topics"], *s["repartition_source_topics"], *s["changelog_topics"])
    ]
    _check_topics(topics, snapshot)
    rows = []
    for sub in group.get("subtopologies", []):
        inputs = {t: counts[t] for t in sub["source_topics"]}
        inputs.update({t: counts.get(t, n) for t, n in sub["repartition_source_topics"].items()})
        changelogs = {t: counts.get(t, n) for t, n in sub["changelog_topics"].items()}
        num_tasks = max([*inputs.values(), *changelogs.values(), 0])
        stores = [_store_name(app_id, t) for t in changelogs]
        for p in range(num_tasks):
            rows.append(
                _task_row(
                    app_id,
                    f"{sub['id']}_{p}",
                    [(t, p) for t, n in inputs.items() if p < n],
                    [(t, p) for t, n in changelogs.items() if p < n],
                    stores,
                )
            )
    if not rows:
        raise _Skip("the described topology has no tasks")
    return rows


def classic_group_tasks(
    group: Mapping[str, Any], snapshot: Mapping[str, Any], configs: Mapping[str, Any]
) -> tuple[list[dict], list[str]]:
    """Task rows of a classic Streams group, derived from its members' assignments (module docstring)."""
    app_id = group["group_id"]
    counts = _partition_counts(snapshot)
    sources, stateful_subs, subscribed = _sources_from_members(group)
    _check_topics(subscribed, snapshot)
    _check_every_partition_owned(sources, subscribed, counts)
    tasks_by_sub: dict[str, list[str]] = defaultdict(list)
    for task_id in sources:
        tasks_by_sub[task_id.rpartition("_")[0]].append(task_id)
    configured = dict(configs.get("changelogs") or {})
    changelog_subs = _configured_source_changelogs(group, configured, subscribed, tasks_by_sub, sources)
    warnings = []
    for topic in group.get("changelog_topics", []):
        owner, by_count_alone = _changelog_owner(
            app_id, topic, configured, tasks_by_sub, stateful_subs, counts
        )
        changelog_subs[topic] = owner
        if by_count_alone:
            warnings.append(
                f"{app_id}: changelog {topic} given to subtopology {owner} by partition count alone"
            )
    rows = []
    for task_id in sorted(sources, key=_sort_key):
        sub, _, part = task_id.rpartition("_")
        logs = [t for t, s in changelog_subs.items() if s == sub]
        rows.append(
            _task_row(
                app_id,
                task_id,
                sources[task_id],
                [(t, int(part)) for t in logs if int(part) < counts[t]],
                [_store_name(app_id, t) for t in logs],
            )
        )
    return rows, warnings


def _sources_from_members(
    group: Mapping[str, Any],
) -> tuple[dict[str, set[tuple[str, int]]], set[str], set[str]]:
    """Each task's source partitions, the subtopologies known to have state, and the subscribed topics.

    A classic member's assignment lists its active tasks in the order of its assigned partitions, which is
    the only place a classic group tells which partition a task reads."""
    sources: dict[str, set[tuple[str, int]]] = defaultdict(set)
    stateful_subs: set[str] = set()
    subscribed: set[str] = set()
    for member in group["members"]:
        subscribed.update(member["subscription"]["topics"])
        assignment = member["streams_assignment"]
        partitions = [(p["topic"], p["partition"]) for p in member["assignment"]["partitions"]]
        active = assignment["active_tasks"]
        if len(active) != len(partitions):
            raise _Skip(
                f"member {member['client_id']}: {len(active)} active task entries for {len(partitions)} "
                "assigned partitions (cannot map tasks to partitions)"
            )
        for task_id, tp in zip(active, partitions, strict=False):
            sources[task_id].add(tp)
        for task_id, parts in assignment["standby_tasks"].items():
            sources[task_id].update((p["topic"], p["partition"]) for p in parts)
            stateful_subs.add(task_id.rpartition("_")[0])
        for task_id in member["streams_subscription"]["task_offset_sums"]:
            stateful_subs.add(task_id.rpartition("_")[0])
    return sources, stateful_subs, subscribed


def _check_every_partition_owned(
    sources: Mapping[str, set[tuple[str, int]]], subscribed: set[str], counts: Mapping[str, int]
) -> None:
    """A partition nobody owns means a task nobody reported: the topology cannot be rebuilt."""
    covered = {tp for tps in sources.values() for tp in tps}
    uncovered = sorted((t, p) for t in subscribed for p in range(counts[t]) if (t, p) not in covered)
    if uncovered:
        shown = ", ".join(f"{t}-{p}" for t, p in uncovered[:5])
        raise _Skip(
            f"no member owns partitions {shown}{' ...' if len(uncovered) > 5 else ''}: topology incomplete"
        )


def _configured_source_changelogs(
    group: Mapping[str, Any],
    configured: Mapping[str, str],
    subscribed: set[str],
    tasks_by_sub: Mapping[str, list[str]],
    sources: Mapping[str, set[tuple[str, int]]],
) -> dict[str, str]:
    """Source topics that `--app-configs` names as changelogs, by subtopology; the named subtopology must
    read the topic, since a source-topic changelog is restored from the partition the task reads."""
    named = set(group.get("changelog_topics", []))
    changelog_subs: dict[str, str] = {}
    for topic, sub in sorted(configured.items()):
        if topic in named or topic not in subscribed:
            continue
        if not any(t == topic for task in tasks_by_sub.get(sub, []) for t, _ in sources[task]):
            raise _Skip(f"--app-configs changelogs: source topic {topic} is not read by subtopology {sub!r}")
        changelog_subs[topic] = sub
    return changelog_subs


def _changelog_owner(
    app_id: str,
    topic: str,
    configured: Mapping[str, str],
    tasks_by_sub: Mapping[str, list[str]],
    stateful_subs: set[str],
    counts: Mapping[str, int],
) -> tuple[str, bool]:
    """The subtopology owning a `<app>-<store>-changelog` topic, and whether only its partition count (no
    sign of state) decided it: configured, else the one subtopology with as many tasks as partitions,
    preferring those with state."""
    if topic in configured:
        if configured[topic] not in tasks_by_sub:
            raise _Skip(f"--app-configs changelogs: {topic} -> subtopology {configured[topic]!r} unknown")
        return configured[topic], False
    fits = sorted(s for s, ids in tasks_by_sub.items() if len(ids) == counts.get(topic))
    if stateful_subs & set(fits):
        fits = sorted(stateful_subs & set(fits))
    if len(fits) != 1:
        raise _Skip(
            f"changelog {topic}: {'no' if not fits else 'more than one'} subtopology can own it "
            f"({', '.join(fits) or 'none'} fit): say which in --app-configs "
            f'{{"{app_id}": {{"changelogs": {{"{topic}": "<subtopology>"}}}}}}'
        )
    return fits[0], fits[0] not in stateful_subs


# ------------------------------------------------------------------------------------ clients, offsets


def _client_row(app_id: str, member: Mapping, process_id, rack, tags, host, active, standby) -> dict:
    return {
        "app_id": app_id,
        "process_id": process_id,
        "consumer_client_id": member["client_id"],
        "rack_id": rack or None,
        "client_tags": dict(sorted((tags or {}).items())),
        "host_info": host or None,
        "prev_active_tasks": sorted(set(active), key=_sort_key),
        "prev_standby_tasks": sorted(set(standby) - set(active), key=_sort_key),
    }


def _offset_rows(app_id: str, row: Mapping, reported: Mapping[str, int], stale_running: bool) -> list[dict]:
    active = set(row["prev_active_tasks"])
    offsets = {task: RUNNING for task in active}
    for task, value in reported.items():
        if task in active:
            continue
        offsets[task] = UNKNOWN if (value == RUNNING and stale_running) else int(value)
    return [
        {
            "app_id": app_id,
            "process_id": row["process_id"],
            "consumer_client_id": row["consumer_client_id"],
            "task_id": task,
            "offset_sum": offsets[task],
        }
        for task in sorted(offsets, key=_sort_key)
    ]


def classic_group_clients(group: Mapping[str, Any]) -> tuple[list[dict], list[dict]]:
    app_id = group["group_id"]
    clients, offsets = [], []
    for member in group["members"]:
        sub = member["streams_subscription"]
        assignment = member["streams_assignment"]
        row = _client_row(
            app_id,
            member,
            sub["process_id"],
            member["subscription"].get("rack"),
            sub["client_tags"],
            sub.get("user_endpoint"),
            assignment["active_tasks"],
            assignment["standby_tasks"].keys(),
        )
        clients.append(row)
        offsets.extend(_offset_rows(app_id, row, sub["task_offset_sums"], stale_running=True))
    return clients, offsets


def streams_group_clients(group: Mapping[str, Any]) -> tuple[list[dict], list[dict]]:
    app_id = group["group_id"]
    clients, offsets = [], []
    for member in group["members"]:
        assignment = member["assignment"]
        row = _client_row(
            app_id,
            member,
            member["process_id"],
            member.get("rack"),
            member["client_tags"],
            member.get("user_endpoint"),
            assignment["active"],
            [*assignment["standby"], *assignment["warmup"]],
        )
        clients.append(row)
        offsets.extend(_offset_rows(app_id, row, member["task_offsets"], stale_running=False))
    return clients, offsets


# --------------------------------------------------------------------------------------------- groups


def _check_classic(group: Mapping[str, Any]) -> None:
    state = group.get("state")
    protocol = group.get("protocol")
    if protocol and protocol != "stream":  # said first: a plain consumer group may also be rebalancing
        raise _Skip(f"not a Kafka Streams group (assignor protocol {protocol!r})")
    if state in ("Empty", "Dead") or not group.get("members"):
        raise _Skip(f"empty group (state {state}, no members)")
    if state != "Stable":
        raise _Skip(f"rebalancing (state {state})")
    if group.get("protocol") != "stream":
        raise _Skip(f"not a Kafka Streams group (assignor protocol {group.get('protocol')!r})")
    for member in group["members"]:
        for key in ("metadata_error", "assignment_error"):
            if key in member:
                raise _Skip(f"member {member['client_id']}: {member[key]}")
        if "streams_subscription" not in member:
            raise _Skip(f"member {member['client_id']}: no Kafka Streams subscription info")
        if "streams_assignment" not in member or "assignment" not in member:
            raise _Skip(f"rebalancing (member {member['client_id']} has no assignment yet)")
        code = member["streams_assignment"]["error_code"]
        if code:
            raise _Skip(f"member {member['client_id']}: Streams assignment error code {code}")


def _check_streams(group: Mapping[str, Any]) -> None:
    state = group.get("state")
    if state in ("Empty", "Dead") or not group.get("members"):
        raise _Skip(f"empty group (state {state}, no members)")
    if state != "Stable":
        raise _Skip(f"rebalancing (state {state})")
    for member in group["members"]:
        if member["assignment"] != member["target_assignment"]:
            raise _Skip(f"rebalancing (member {member['client_id']} has not reached its target assignment)")


def _application_row(
    app_id: str,
    protocol: str,
    cluster_id: str | None,
    configs: Mapping[str, Any],
    cluster_values: Mapping[str, Any],
    inferred: Mapping[str, Any],
    snapshot_at_ms: int,
) -> dict:
    row: dict[str, Any] = {"app_id": app_id, "cluster_id": cluster_id}
    sources = {}
    for key in APP_CONFIG_KEYS:
        if key in configs:
            row[key], sources[key] = configs[key], "app_configs"
        elif key in cluster_values:
            row[key], sources[key] = cluster_values[key], "cluster"
        elif key in inferred:
            row[key], sources[key] = inferred[key], "inferred"
        else:
            row[key], sources[key] = None, "default"
    row["rack_aware_assignment_tags"] = row["rack_aware_assignment_tags"] or []
    row["assignor_configs"] = dict(row["assignor_configs"] or {})
    row["group_protocol"] = protocol
    row["config_sources"] = dict(sorted(sources.items()))
    row["snapshot_at_ms"] = snapshot_at_ms
    return row


def _streams_cluster_configs(group: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, column in STREAMS_GROUP_CONFIGS.items():
        entry = group.get("configs", {}).get(name)
        if entry is None or entry.get("value") is None:
            continue
        text = entry["value"]
        if column == "rack_aware_assignment_tags":
            values[column] = [t.strip() for t in text.split(",") if t.strip()]
        else:
            values[column] = int(text)
    return values


def snapshot_rows(
    snapshot: Mapping[str, Any],
    *,
    cluster_id: str | None = None,
    app_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> SnapshotRows:
    """The six tables' rows for every collectable group of the snapshot (module docstring)."""
    app_configs = app_configs or {}
    cluster = cluster_id if cluster_id is not None else snapshot.get("cluster_id")
    at_ms = int(snapshot.get("finished_at_ms") or snapshot.get("started_at_ms") or 0)
    tables: dict[str, list[dict]] = {name: [] for name in INPUT_TABLE_NAMES}
    collected, skipped, warnings = [], [], []
    used_topics: set[str] = set()
    for group in sorted(snapshot.get("groups", []), key=lambda g: g["group_id"]):
        app_id = group["group_id"]
        if "error" in group:
            skipped.append(SkippedGroup(app_id, group["error"]))
            continue
        configs = _configs_for(app_configs, app_id)
        try:
            rows = _group_rows(group, snapshot, configs)
        except _Skip as e:
            skipped.append(SkippedGroup(app_id, str(e)))
            continue
        collected.append(app_id)
        warnings.extend(rows.warnings)
        tables["applications"].append(
            _application_row(
                app_id, group["type"], cluster, configs, rows.cluster_values, rows.inferred, at_ms
            )
        )
        tables["tasks"].extend(rows.tasks)
        tables["client_subscriptions"].extend(sorted(rows.clients, key=lambda r: r["consumer_client_id"]))
        tables["task_offsets"].extend(
            sorted(rows.offsets, key=lambda r: (r["consumer_client_id"], _sort_key(r["task_id"])))
        )
        end_offsets, missing = _end_offset_rows(group, rows.tasks, snapshot.get("end_offsets", {}))
        tables["changelog_end_offsets"].extend(end_offsets)
        warnings.extend(missing)
        used_topics.update(
            tp["topic"] for t in rows.tasks for tp in (*t["source_partitions"], *t["changelog_partitions"])
        )
    tables["partition_racks"].extend(_partition_rack_rows(snapshot, used_topics, cluster))
    return SnapshotRows(tables, collected, skipped, cluster, at_ms, warnings)


@dataclass(frozen=True)
class _GroupRows:
    """One collectable group's rows, and what its configs came from."""

    tasks: list[dict]
    clients: list[dict]
    offsets: list[dict]
    cluster_values: dict[str, Any]
    inferred: dict[str, Any]
    warnings: list[str]


def _group_rows(
    group: Mapping[str, Any], snapshot: Mapping[str, Any], configs: Mapping[str, Any]
) -> _GroupRows:
    """Rows of one group, by protocol; raises _Skip when the group cannot be planned from the snapshot."""
    app_id = group["group_id"]
    if group["type"] == "streams":
        _check_streams(group)
        tasks = streams_group_tasks(group, snapshot)
        clients, offsets = streams_group_clients(group)
        warnings = []
        if "configs_error" in group:
            warnings.append(f"{app_id}: {group['configs_error']}; Kafka's defaults used")
        return _GroupRows(tasks, clients, offsets, _streams_cluster_configs(group), {}, warnings)
    _check_classic(group)
    tasks, task_warnings = classic_group_tasks(group, snapshot, configs)
    clients, offsets = classic_group_clients(group)
    return _GroupRows(tasks, clients, offsets, {}, _inferred_standby_replicas(clients), task_warnings)


def _inferred_standby_replicas(clients: list[dict]) -> dict[str, int]:
    """A classic group's standby count is not on the cluster: the most standbys any task has now."""
    standbys: dict[str, int] = defaultdict(int)
    for row in clients:
        for task in row["prev_standby_tasks"]:
            standbys[task] += 1
    return {"num_standby_replicas": max(standbys.values())} if standbys else {}


def _end_offset_rows(
    group: Mapping[str, Any], tasks: list[dict], ends: Mapping[str, Mapping[str, int]]
) -> tuple[list[dict], list[str]]:
    """The changelog end offsets of one group's tasks, and a warning per partition without one."""
    app_id = group["group_id"]
    changelogs = sorted({(c["topic"], c["partition"]) for t in tasks for c in t["changelog_partitions"]})
    source_topics = {s["topic"] for t in tasks for s in t["source_partitions"]}
    committed = group.get("committed_offsets", {})
    rows, warnings = [], []
    for topic, partition in changelogs:
        if topic not in source_topics:
            end = ends.get(topic, {}).get(str(partition))
        elif "committed_offsets_error" in group:
            end = None
        else:
            # A source topic used as changelog: its committed offset (none committed yet: 0).
            end = committed.get(topic, {}).get(str(partition), 0)
        if end is None:
            warnings.append(f"{app_id}: no end offset for {topic}-{partition}: lags unknown")
            continue
        rows.append({"app_id": app_id, "topic": topic, "partition": partition, "end_offset": int(end)})
    return rows, warnings


def _partition_rack_rows(
    snapshot: Mapping[str, Any], used_topics: set[str], cluster: str | None
) -> list[dict]:
    """Replica racks of every partition the collected groups use; unknown (null) if any broker has none."""
    racks = {b["id"]: b.get("rack") for b in snapshot.get("brokers", [])}
    rows = []
    for topic in sorted(used_topics):
        for p in snapshot["topics"][topic]["partitions"]:
            replica_racks = [racks.get(r) for r in p["replicas"]]
            known = None if (not replica_racks or None in replica_racks) else sorted(set(replica_racks))
            rows.append(
                {"cluster_id": cluster, "topic": topic, "partition": p["partition"], "replica_racks": known}
            )
    return rows
