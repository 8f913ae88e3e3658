"""Spark side of the fleet job: from the six input tables to one compact row per application.

Everything row-shaped happens here, in Spark: which applications are planned, row-level INVALID_INPUT
problems (each naming table, row key and problem), lags (saturating end-offset sums, sentinels kept),
null-safe rack joins. The result has one row per application: `app_id` and `scenario`, a JSON object that
`jobs.scenario_shape` turns into the scenario dict of scenario.md inside the grouped map.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleet_assignor.assignor.limits import MAX_LONG
from fleet_assignor.schemas.contract import APPLICATION_CONFIG_COLUMNS

LATEST_OFFSET = -2  # running active: caught up by definition
UNKNOWN_OFFSET = -3

APP = "app_id"
PID = "process_id"
CID = "consumer_client_id"
TID = "task_id"


@dataclass(frozen=True)
class PreparedFleet:
    """The per-application frame and what the summary reports about rows that were not used.

    `apps` reads frames persisted on the way (`cached`): call `release()` once the run has planned."""

    apps: DataFrame  # app_id, scenario (JSON string)
    ignored_rows: DataFrame  # table, reason, rows
    app_ids: DataFrame  # app_id of every planned application (cheap to count: two columns read)
    cached: tuple[DataFrame, ...] = ()

    def release(self) -> None:
        for frame in self.cached:
            frame.unpersist()


# ------------------------------------------------------------------------------------------ small helpers


def _text(column: Column) -> Column:
    """A value for an error message: the value, or `null`."""
    return F.coalesce(column.cast("string"), F.lit("null"))


def _key(*pairs: tuple[str, Column]) -> Column:
    """`(k1=v1, k2=v2)` for the row key in error messages."""
    parts: list[Column] = [F.lit("(")]
    for i, (name, column) in enumerate(pairs):
        parts.append(F.lit(("" if i == 0 else ", ") + f"{name}="))
        parts.append(_text(column))
    parts.append(F.lit(")"))
    return F.concat(*parts)


def _problem(frame: DataFrame, message: Column) -> DataFrame:
    return frame.select(F.col(APP), message.alias("problem"))


def _problems(frame: DataFrame, checks: list[tuple[Column, Column]]) -> DataFrame:
    """Every (condition, message) check in one pass over the frame: (app_id, problem) per failed check."""
    messages = F.array(*[F.when(condition, message) for condition, message in checks])
    return frame.select(F.col(APP), F.explode(F.filter(messages, lambda m: m.isNotNull())).alias("problem"))


def _clean_strings(column: Column) -> Column:
    """Sorted distinct non-null elements; a null array is empty."""
    return F.array_sort(F.array_distinct(F.filter(F.coalesce(column, F.array()), lambda x: x.isNotNull())))


def _has_null_element(column: Column) -> Column:
    return F.coalesce(F.exists(column, lambda x: x.isNull()), F.lit(False))


def _saturating_sum(column: Column) -> Column:
    """Sum of longs that saturates at 2^63-1 instead of overflowing (ANSI mode would raise)."""
    total = F.sum(column.cast("decimal(38,0)"))
    cap = F.lit(MAX_LONG).cast("decimal(38,0)")
    # Not `least`, which skips nulls: a sum of no values stays null instead of becoming the cap.
    return F.when(total > cap, cap).otherwise(total).cast("long")


def _sorted_map_json(column: Column) -> Column:
    """A map's content as text independent of its entry order (to compare maps)."""
    return F.to_json(F.array_sort(F.map_entries(F.coalesce(column, F.create_map()))))


# ------------------------------------------------------------------------------------------ applications


def planned_app_ids(applications: DataFrame, subscriptions: DataFrame) -> DataFrame:
    """Every app_id found in `applications` or `client_subscriptions` is planned."""
    ids = applications.select(APP).union(subscriptions.select(APP))
    return ids.where(F.col(APP).isNotNull()).distinct()


CONFIG_COLUMNS = APPLICATION_CONFIG_COLUMNS


def application_configs(applications: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(app_id, cluster_id, configs struct) per application, and problems for conflicting duplicate rows."""
    rows = applications.where(F.col(APP).isNotNull())
    fingerprint = F.to_json(
        F.struct(
            *[F.col(c) for c in ("cluster_id", *CONFIG_COLUMNS) if c != "assignor_configs"],
            _sorted_map_json(F.col("assignor_configs")).alias("assignor_configs"),
        )
    )
    # One aggregation: identical duplicate rows are one row, so any of them gives the configs.
    grouped = (
        rows.withColumn("_fingerprint", fingerprint)
        .groupBy(APP)
        .agg(
            F.size(F.collect_set("_fingerprint")).alias("n"),
            F.first(
                F.struct(F.col("cluster_id"), F.struct(*[F.col(c) for c in CONFIG_COLUMNS]).alias("configs"))
            ).alias("row"),
        )
    )
    problems = _problem(
        grouped.where(F.col("n") > 1),
        F.concat(
            F.lit("applications row "),
            _key((APP, F.col(APP))),
            F.lit(": "),
            F.col("n").cast("string"),
            F.lit(" conflicting rows for one application"),
        ),
    )
    configs = grouped.select(
        APP, F.col("row.cluster_id").alias("cluster_id"), F.col("row.configs").alias("configs")
    )
    return configs, problems


# ----------------------------------------------------------------------------------------------- clients


def subscription_rows(subscriptions: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Usable `client_subscriptions` rows (normalized) and the problems of the unusable ones."""
    subs = subscriptions.where(F.col(APP).isNotNull())
    row_key = _key((PID, F.col(PID)), (CID, F.col(CID)))
    prefix = F.concat(F.lit("client_subscriptions row "), row_key, F.lit(": "))
    checks = [
        (F.col(PID).isNull(), F.concat(prefix, F.lit("process_id is null"))),
        (F.col(CID).isNull(), F.concat(prefix, F.lit("consumer_client_id is null"))),
    ]
    for column in ("prev_active_tasks", "prev_standby_tasks"):
        checks.append(
            (_has_null_element(F.col(column)), F.concat(prefix, F.lit(f"null task id in {column}")))
        )
    problems = [_problems(subs, checks)]
    usable = subs.where(F.col(PID).isNotNull() & F.col(CID).isNotNull()).select(
        APP,
        PID,
        CID,
        F.when(F.col("rack_id") != "", F.col("rack_id")).alias("rack"),
        F.col("client_tags").alias("tags"),
        _sorted_map_json(F.col("client_tags")).alias("tags_key"),
        F.col("host_info"),
        _clean_strings(F.col("prev_active_tasks")).alias("prev_active"),
        _clean_strings(F.col("prev_standby_tasks")).alias("prev_standby"),
    )
    duplicates = usable.groupBy(APP, CID).agg(
        F.count(F.lit(1)).alias("n"), F.array_sort(F.collect_set(PID)).alias("pids")
    )
    problems.append(
        _problem(
            duplicates.where(F.col("n") > 1),
            F.concat(
                F.lit("client_subscriptions row "),
                _key((CID, F.col(CID))),
                F.lit(": consumer_client_id in "),
                F.col("n").cast("string"),
                F.lit(" rows (process_ids "),
                F.array_join(F.col("pids"), ", "),
                F.lit(")"),
            ),
        )
    )
    return usable, _union(problems)


def clients(usable: DataFrame) -> tuple[DataFrame, DataFrame]:
    """One row per (app_id, process_id): consumers with their history, rack, tags, host; and the problems
    of clients whose rows disagree."""
    null_marker = F.lit("\u0000")
    grouped = usable.groupBy(APP, PID).agg(
        F.size(F.collect_set(F.coalesce(F.col("rack"), null_marker))).alias("n_rack"),
        F.size(F.collect_set("tags_key")).alias("n_tags"),
        F.size(F.collect_set(F.coalesce(F.col("host_info"), null_marker))).alias("n_host"),
        F.max("rack").alias("rack"),
        F.max("host_info").alias("host_info"),
        F.first("tags").alias("tags"),
        F.array_sort(
            F.collect_list(
                F.struct(
                    F.col(CID).alias("id"),
                    F.col("prev_active").alias("prev_active"),
                    F.col("prev_standby").alias("prev_standby"),
                )
            )
        ).alias("consumers"),
    )
    checks = [
        (
            F.col(count) > 1,
            F.concat(
                F.lit("client_subscriptions rows of "),
                _key((PID, F.col(PID))),
                F.lit(f": the client's rows disagree on {column}"),
            ),
        )
        for count, column in (("n_rack", "rack_id"), ("n_tags", "client_tags"), ("n_host", "host_info"))
    ]
    problems = [_problems(grouped, checks)]
    return grouped.drop("n_rack", "n_tags", "n_host"), _union(problems)


# ------------------------------------------------------------------------------------------------- tasks


def _task_row_prefix() -> Column:
    return F.concat(F.lit("tasks row "), _key((TID, F.col(TID))), F.lit(": "))


def task_rows(tasks: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Usable `tasks` rows and problems (null task ids, partitions with nulls; duplicate task ids are found
    by `task_details`, which groups by task anyway)."""
    rows = tasks.where(F.col(APP).isNotNull())
    prefix = _task_row_prefix()
    checks = [
        (
            F.col(TID).isNull(),
            F.concat(
                prefix, F.lit("task_id is null (state_stores="), _text(F.to_json("state_stores")), F.lit(")")
            ),
        )
    ]
    for column in ("source_partitions", "changelog_partitions"):
        bad = F.coalesce(
            F.exists(F.col(column), lambda p: p.isNull() | p["topic"].isNull() | p["partition"].isNull()),
            F.lit(False),
        )
        checks.append((bad, F.concat(prefix, F.lit(f"{column} has an entry with a null topic or partition"))))
    return rows.where(F.col(TID).isNotNull()), _problems(rows, checks)


def _usable_partitions(column: str) -> Column:
    """A task's partition list without null entries or repeats, as (topic, partition) structs."""
    entries = F.filter(
        F.coalesce(F.col(column), F.array()),
        lambda p: p.isNotNull() & p["topic"].isNotNull() & p["partition"].isNotNull(),
    )
    return F.array_distinct(
        F.transform(entries, lambda p: F.struct(p["topic"].alias("topic"), p["partition"].alias("partition")))
    )


def task_partitions(usable_tasks: DataFrame) -> DataFrame:
    """(app_id, task_id, stores, first_entry, topic, partition, source, changelog): one row per partition of
    a task row, and one row with null partition columns for a task row without partitions. A source topic
    used as changelog appears in both lists and becomes one partition with both flags. `first_entry` marks
    one row per `tasks` row (to count them); `stores` is set on that row only.

    Row by row, with no shuffle: the partitions of a task all come from its one row."""
    lists = usable_tasks.select(
        APP,
        TID,
        _clean_strings(F.col("state_stores")).alias("stores"),
        _usable_partitions("source_partitions").alias("s"),
        _usable_partitions("changelog_partitions").alias("c"),
    )
    exploded = lists.select(
        APP, TID, "stores", "s", "c", F.posexplode_outer(F.array_union("s", "c")).alias("pos", "p")
    )
    first_entry = F.coalesce(F.col("pos"), F.lit(0)) == 0
    return exploded.select(
        APP,
        TID,
        F.when(first_entry, F.col("stores")).alias("stores"),
        first_entry.alias("first_entry"),
        F.col("p.topic").alias("topic"),
        F.col("p.partition").alias("partition"),
        F.array_contains("s", F.col("p")).alias("source"),
        F.array_contains("c", F.col("p")).alias("changelog"),
    )


# ------------------------------------------------------------------------------------------------- racks


def rack_metadata(partition_racks: DataFrame) -> DataFrame:
    """(cluster_id, topic, partition, racks, n_values): identical duplicates merged, conflicts counted."""
    racks = _clean_strings(F.col("replica_racks"))
    rows = partition_racks.where(F.col("topic").isNotNull() & F.col("partition").isNotNull()).select(
        "cluster_id", "topic", "partition", F.filter(racks, lambda r: r != "").alias("racks")
    )
    return rows.groupBy("cluster_id", "topic", "partition").agg(
        F.size(F.collect_set(F.to_json(F.col("racks")))).alias("n_values"),
        F.first("racks").alias("racks"),
    )


def _with_racks(partitions: DataFrame, app_clusters: DataFrame, racks: DataFrame) -> DataFrame:
    """Partitions with `racks` (empty when unknown or conflicting) and a `rack_conflict` message, joined
    null-safely on (cluster_id, topic, partition): a null cluster_id matches only null."""
    with_cluster = partitions.join(app_clusters, APP, "left")
    joined = with_cluster.alias("p").join(
        racks.alias("r"),
        F.col("p.cluster_id").eqNullSafe(F.col("r.cluster_id"))
        & (F.col("p.topic") == F.col("r.topic"))
        & (F.col("p.partition") == F.col("r.partition")),
        "left",
    )
    conflicting = F.coalesce(F.col("r.n_values"), F.lit(0)) > 1
    message = F.concat(
        F.lit("partition_racks row "),
        _key(
            ("cluster_id", F.col("p.cluster_id")),
            ("topic", F.col("p.topic")),
            ("partition", F.col("p.partition")),
        ),
        F.lit(": "),
        F.col("r.n_values").cast("string"),
        F.lit(" conflicting replica_racks values"),
    )
    return joined.select(
        *[F.col(f"p.{c}").alias(c) for c in partitions.columns],
        F.when(conflicting, F.array()).otherwise(F.coalesce(F.col("r.racks"), F.array())).alias("racks"),
        F.when(conflicting, message).alias("rack_conflict"),
    )


# ---------------------------------------------------------------------------------------- end offsets


def end_offsets(changelog_end_offsets: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(app_id, topic, partition, end_offset) with identical duplicates merged, and problems: conflicting
    values, and values outside 0 .. 2^63-1 (a log-end offset is never negative).

    A null end_offset says no more than a missing row: the end offset could not be fetched."""
    rows = changelog_end_offsets.where(
        F.col(APP).isNotNull()
        & F.col("topic").isNotNull()
        & F.col("partition").isNotNull()
        & F.col("end_offset").isNotNull()
    )
    prefix = F.concat(
        F.lit("changelog_end_offsets row "),
        _key(("topic", F.col("topic")), ("partition", F.col("partition"))),
        F.lit(": "),
    )
    negative = _problem(
        rows.where(F.col("end_offset") < 0),
        F.concat(
            prefix,
            F.lit("column end_offset "),
            F.col("end_offset").cast("string"),
            F.lit(f" is out of range (a log-end offset: 0 .. {MAX_LONG})"),
        ),
    )
    grouped = rows.groupBy(APP, "topic", "partition").agg(
        F.array_sort(F.collect_set("end_offset")).alias("values"), F.max("end_offset").alias("end_offset")
    )
    conflicts = _problem(
        grouped.where(F.size("values") > 1),
        F.concat(
            prefix,
            F.lit("conflicting end_offset values "),
            F.array_join(F.col("values").cast("array<string>"), ", "),
        ),
    )
    # A negative end offset is a problem above, and no input to the lags (which would be wrong).
    usable = grouped.where((F.size("values") == 1) & (F.col("end_offset") >= 0))
    return usable.select(APP, "topic", "partition", "end_offset"), negative.unionByName(conflicts)


# ------------------------------------------------------------------------------------------- task details


def task_details(
    usable_tasks: DataFrame, app_clusters: DataFrame, racks: DataFrame, ends: DataFrame
) -> DataFrame:
    """One row per usable (app_id, task_id): stores, partitions (with racks), has_changelog, end_sum,
    missing, and `problems` (the task id given by several `tasks` rows; its partitions' conflicting rack
    rows).

    One aggregation answers everything asked of a task: its scenario entry, its problems, and what the
    lags need (end_sum, null without a changelog, saturates at 2^63-1; `missing` when a changelog partition
    has no end offset, which makes the application's lags uncomputable, tables.md)."""
    partitions = _with_racks(task_partitions(usable_tasks), app_clusters, racks)
    with_ends = partitions.join(ends, [APP, "topic", "partition"], "left")
    changelog = F.coalesce(F.col("changelog"), F.lit(False))
    partition = F.struct("topic", "partition", "source", "changelog", "racks")
    details = with_ends.groupBy(APP, TID).agg(
        F.sum(F.col("first_entry").cast("int")).alias("rows"),  # `tasks` rows with this task id
        F.max("stores").alias("stores"),
        F.array_sort(F.collect_list(F.when(F.col("topic").isNotNull(), partition))).alias("partitions"),
        F.max(changelog).alias("has_changelog"),
        _saturating_sum(F.when(changelog, F.col("end_offset"))).alias("end_sum"),
        F.max(changelog & F.col("end_offset").isNull()).alias("missing"),
        F.collect_set("rack_conflict").alias("rack_conflicts"),
    )
    duplicated = F.concat(_task_row_prefix(), F.col("rows").cast("string"), F.lit(" rows for one task"))
    problems = F.concat(
        F.when(F.col("rows") > 1, F.array(duplicated)).otherwise(F.array()), F.col("rack_conflicts")
    )
    return details.select(
        APP, TID, "stores", "partitions", "has_changelog", "end_sum", "missing", problems.alias("problems")
    )


# --------------------------------------------------------------------------------------------- offsets


def offset_rows(task_offsets: DataFrame, usable_clients: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Usable `task_offsets` rows and problems (null keys, bad sentinels, no matching consumer)."""
    rows = task_offsets.where(F.col(APP).isNotNull())
    row_key = _key((PID, F.col(PID)), (CID, F.col(CID)), (TID, F.col(TID)))
    prefix = F.concat(F.lit("task_offsets row "), row_key, F.lit(": "))
    keyed_condition = F.col(PID).isNotNull() & F.col(CID).isNotNull() & F.col(TID).isNotNull()
    bad_value = (F.col("offset_sum") < UNKNOWN_OFFSET) | (F.col("offset_sum") == -1)
    checks = [(F.col(c).isNull(), F.concat(prefix, F.lit(f"{c} is null"))) for c in (PID, CID, TID)]
    checks.append(
        (
            keyed_condition & bad_value,
            F.concat(
                prefix,
                F.lit("column offset_sum "),
                F.col("offset_sum").cast("string"),
                F.lit(f" is out of range (-3 unknown, -2 running active, or an offset sum 0 .. {MAX_LONG})"),
            ),
        )
    )
    problems = [_problems(rows, checks)]
    keyed = rows.where(keyed_condition)
    consumers = usable_clients.select(APP, PID, CID).distinct()
    orphans = keyed.join(consumers, [APP, PID, CID], "left_anti")
    problems.append(
        _problem(
            orphans,
            F.concat(prefix, F.lit("no client_subscriptions row for this (process_id, consumer_client_id)")),
        )
    )
    # A null offset_sum reports nothing: the row is not used.
    usable = keyed.where(F.col("offset_sum").isNotNull() & ~bad_value)
    return usable, _union(problems)


def client_lags(offsets: DataFrame, usable_clients: DataFrame, details: DataFrame) -> DataFrame:
    """(app_id, process_id, task_id, lag) with tables.md's rules, for an application whose lags can be
    computed (`uncomputable_lags` applies the rule for the others).

    Per (client, task with a changelog): -2 if any of the client's rows says -2, else from the largest
    offset_sum: -3 stays -3, above the end sum counts as the end sum (corrupted state), else end sum minus
    it; no row but a previous active: -2. Offsets for tasks without a changelog are ignored; offsets for
    task ids unknown to the topology are passed on as -3 so the planner drops them with a warning
    (tables.md: tolerated). Clients without state for a task get no entry (the scenario then gives them
    the end sum, see jobs.scenario_shape)."""
    reported = offsets.select(
        APP,
        PID,
        TID,
        (F.col("offset_sum") == LATEST_OFFSET).cast("int").alias("running"),
        F.col("offset_sum"),
    )
    # A previous active task is an entry even without an offset row (then `running` stays null).
    prev_active = usable_clients.select(
        APP,
        PID,
        F.explode("prev_active").alias(TID),
        F.lit(None).cast("int").alias("running"),
        F.lit(None).cast("long").alias("offset_sum"),
    )
    entries = (
        reported.unionByName(prev_active)
        .groupBy(APP, PID, TID)
        .agg(F.max("running").alias("running"), F.max("offset_sum").alias("offset_sum"))
        .join(
            details.select(APP, TID, "has_changelog", "end_sum", F.lit(True).alias("known")),
            [APP, TID],
            "left",
        )
    )
    unknown_reported = F.col("known").isNull() & F.col("running").isNotNull()
    entries = entries.where(F.coalesce(F.col("has_changelog"), F.lit(False)) | unknown_reported)
    lag = (
        F.when(F.col("known").isNull(), F.lit(UNKNOWN_OFFSET))
        .when(F.col("running") == 1, F.lit(LATEST_OFFSET))
        .when(F.col("running").isNull(), F.lit(LATEST_OFFSET))  # a previous active without an offset row
        .when(F.col("offset_sum") == UNKNOWN_OFFSET, F.lit(UNKNOWN_OFFSET))
        .when(F.col("offset_sum") > F.col("end_sum"), F.col("end_sum"))  # corrupted state
        .otherwise(F.col("end_sum") - F.col("offset_sum"))
    )
    return entries.select(APP, PID, TID, lag.cast("long").alias("lag"))


def uncomputable_lags(clients: Column) -> Column:
    """The clients of an application whose lags cannot be computed: every lag -3 except -2 (tables.md).

    Applied to the application's few clients rather than joined to every lag row."""
    return F.transform(
        clients,
        lambda c: c.withField(
            "lags",
            F.transform_values(
                c["lags"], lambda _, lag: F.when(lag == LATEST_OFFSET, lag).otherwise(F.lit(UNKNOWN_OFFSET))
            ),
        ),
    )


def _union(frames: list[DataFrame]) -> DataFrame:
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


# -------------------------------------------------------------------------------------------- assembly


def prepare_fleet(inputs: dict[str, DataFrame]) -> PreparedFleet:
    """The six input tables (contract columns) -> one row per planned application: app_id, scenario JSON.

    One lazy plan with one persisted frame, the task details (release it with `PreparedFleet.release`);
    other frames that several steps use are computed again by each."""
    applications = inputs["applications"]
    subscriptions = inputs["client_subscriptions"]
    planned = planned_app_ids(applications, subscriptions)

    configs, app_problems = application_configs(applications)
    usable_subs, sub_problems = subscription_rows(subscriptions)
    client_frame, client_problems = clients(usable_subs)
    usable_tasks, task_problems = task_rows(inputs["tasks"])
    ends, end_problems = end_offsets(inputs["changelog_end_offsets"])
    details = task_details(
        usable_tasks, configs.select(APP, "cluster_id"), rack_metadata(inputs["partition_racks"]), ends
    )
    # The tasks of each application and the lags both read the task details (explode, two joins, one
    # aggregation over every partition of every task): computing them once measured 106 s of shaping at
    # 100,000 applications against 127 s.
    details = details.persist(StorageLevel.MEMORY_AND_DISK)
    usable_offsets, offset_problems = offset_rows(inputs["task_offsets"], usable_subs)
    lags = client_lags(usable_offsets, usable_subs, details)

    problems = _union(
        [
            app_problems,
            sub_problems,
            client_problems,
            task_problems,
            end_problems,
            offset_problems,
        ]
    )
    # Sorted once, below, together with the problems of the tasks.
    problems_per_app = problems.groupBy(APP).agg(F.collect_set("problem").alias("problems"))

    tasks_per_app = details.groupBy(APP).agg(
        F.array_sort(
            F.collect_list(F.struct(F.col(TID).alias("id"), "stores", "partitions", "end_sum"))
        ).alias("tasks"),
        (~F.max("missing")).alias("lags_computed"),
        F.flatten(F.collect_list("problems")).alias("task_problems"),
    )
    lags_per_client = lags.groupBy(APP, PID).agg(
        F.map_from_entries(F.array_sort(F.collect_list(F.struct(TID, "lag")))).alias("lags")
    )
    clients_per_app = (
        client_frame.join(lags_per_client, [APP, PID], "left")
        .groupBy(APP)
        .agg(
            # In collection order: jobs.scenario_shape sorts them by process id (a struct holding maps
            # cannot be sorted by Spark without a comparator lambda, which runs interpreted).
            F.collect_list(
                F.struct(
                    F.col(PID).alias("process_id"),
                    "consumers",
                    "rack",
                    "tags",
                    "host_info",
                    F.coalesce(F.col("lags"), F.create_map().cast("map<string,bigint>")).alias("lags"),
                )
            ).alias("clients")
        )
    )
    per_app = (
        planned.join(configs, APP, "left")
        .join(tasks_per_app, APP, "left")
        .join(clients_per_app, APP, "left")
        .join(problems_per_app, APP, "left")
    )
    lags_computed = F.coalesce(F.col("lags_computed"), F.lit(True))
    all_problems = F.array_sort(
        F.array_distinct(
            F.concat(F.coalesce(F.col("problems"), F.array()), F.coalesce(F.col("task_problems"), F.array()))
        )
    )
    scenario = F.to_json(
        F.struct(
            F.col(APP).alias("app_id"),
            F.col("configs"),
            F.col("tasks"),
            F.when(lags_computed, F.col("clients"))
            .otherwise(uncomputable_lags(F.col("clients")))
            .alias("clients"),
            lags_computed.alias("lags_computed"),
            F.when(F.size(all_problems) > 0, all_problems).alias("problems"),
        )
    )
    apps = per_app.select(APP, scenario.alias("scenario"))
    return PreparedFleet(
        apps=apps, ignored_rows=ignored_rows(inputs, planned), app_ids=planned, cached=(details,)
    )


def ignored_rows(inputs: dict[str, DataFrame], planned: DataFrame) -> DataFrame:
    """(table, reason, rows): rows of apps that are not planned, and rows with a null app_id.

    Rows are counted per (table, app_id) first, so only one small row per application meets `planned`."""
    per_app = (
        _union(
            [
                inputs[table].select(F.lit(table).alias("table"), APP)
                for table in (
                    "applications",
                    "client_subscriptions",
                    "tasks",
                    "task_offsets",
                    "changelog_end_offsets",
                )
            ]
        )
        .groupBy("table", APP)
        .agg(F.count(F.lit(1)).alias("rows"))
    )
    marked = per_app.join(planned.withColumn("planned", F.lit(True)), APP, "left")
    reason = (
        F.when(F.col(APP).isNull(), F.lit("null app_id"))
        # applications and client_subscriptions rows define the planned applications.
        .when(F.col("planned").isNull(), F.lit("application not planned"))
    )
    ignored = marked.select("table", reason.alias("reason"), "rows").where(F.col("reason").isNotNull())
    return ignored.groupBy("table", "reason").agg(F.sum("rows").cast("long").alias("rows"))
