"""The fleet planning job: six Delta input tables in, grouped-map calls of ~64 applications, Delta tables out.

    fleet-assignor plan --input-path DIR --output-path DIR [--run-id ID] [--assignor NAME]
                        [--conf FILE] [--as-of-version N|TABLE=N] [--planned-at INSTANT]
    python -m fleet_assignor.jobs.plan_assignments ...   (the same)

Stages: read and check the inputs (nothing is written when a schema drifts), shape one compact row per
application in Spark, plan every application in a grouped map, then write `assignment_results`,
`assignments`, `client_assignments`, `task_transitions` (one Delta transaction each, replacing this run's
rows) and `runs` last, which marks the run complete.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from fleet_assignor.assignor.limits import MAX_LONG
from fleet_assignor.jobs.config import (
    ConfigError,
    JobConfig,
    check_assignors,
    check_run_id,
    load_conf_file,
    parse_instant_ms,
    parse_versions,
    run_id_for,
)
from fleet_assignor.jobs.delta_io import (
    ConcurrentWriteError,
    InputTableError,
    SchemaDriftError,
    Writer,
    check_sole_writer,
    conform,
    delete_run_rows,
    read_existing,
    read_inputs,
    run_filter,
    write_run_rows,
)
from fleet_assignor.jobs.grouped import GroupedMapKind, PlanSettings, plan_in_grouped_map
from fleet_assignor.jobs.prepare import prepare_fleet
from fleet_assignor.jobs.spark import get_or_create_session
from fleet_assignor.schemas.contract import (
    ASSIGNOR_FAILED,
    COMPLETE,
    INPUT_TABLE_NAMES,
    INVALID_ASSIGNMENT,
    INVALID_INPUT,
    OK,
    PLAN_TABLE_NAMES,
    ROW_ASSIGNMENT,
    ROW_CLIENT,
    ROW_RESULT,
    ROW_ROLLOUT,
    ROW_TRANSITION,
    STATUSES,
)
from fleet_assignor.schemas.spark_schemas import (
    ASSIGNMENT_RESULTS,
    ASSIGNMENTS,
    CLIENT_ASSIGNMENTS,
    ROLLOUT,
    RUNS,
    TASK_TRANSITIONS,
)

log = logging.getLogger("fleet_assignor.job")

# The order of the output writes: results first (a failed attempt leaves its planning instant there),
# `runs` last.
RUN_TABLES = PLAN_TABLE_NAMES


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    planned_at_ms: int
    statuses: dict[str, int]
    num_tasks: int
    active_moves: int
    standby_moves: int
    input_versions: dict[str, int]
    ignored_rows: dict[str, int]
    output: str
    seconds: float
    rollout: RolloutView = field(default_factory=lambda: RolloutView({}, {}, {}))

    @property
    def num_applications(self) -> int:
        return sum(self.statuses.values())

    def text(self) -> str:
        s = self.statuses
        lines = [
            f"run {self.run_id} COMPLETE in {self.seconds:.1f} s (planned at {self.planned_at_ms} ms)",
            f"  applications: {self.num_applications} planned, {s.get(OK, 0)} OK, "
            f"{s.get(INVALID_INPUT, 0)} invalid input, {s.get(INVALID_ASSIGNMENT, 0)} invalid assignment, "
            f"{s.get(ASSIGNOR_FAILED, 0)} assignor failed",
            f"  tasks: {self.num_tasks}; moves: {self.active_moves} active, {self.standby_moves} standby",
            "  inputs read at versions: " + ", ".join(f"{t}={v}" for t, v in self.input_versions.items()),
        ]
        for key, rows in sorted(self.ignored_rows.items()):
            lines.append(f"  ignored: {rows} rows of {key}")
        lines += self.rollout.lines()
        lines.append(f"  outputs: {self.output}")
        return "\n".join(lines)


@dataclass(frozen=True)
class RolloutView:
    """The fleet's view of the `rollout` table for one run: totals, applications flagged per risk, and the
    worst application by each risk (its value, then its app_id, decide)."""

    totals: dict[str, int]
    risk_counts: dict[str, int]
    worst_applications: dict[str, str]

    @property
    def flagged(self) -> int:
        return self.totals.get("applications_flagged", 0)

    def lines(self) -> list[str]:
        t = self.totals
        if not t:
            return []
        hours = t.get("max_estimated_duration_ms", 0) / 3_600_000
        lines = [
            f"  rollout: {t.get('applications', 0)} applications, {self.flagged} flagged; "
            f"{t.get('restore_records', 0)} changelog records to restore; "
            f"{t.get('total_active_moves', 0)} active moves over {t.get('probing_rebalances', 0)} simulated "
            f"probing rebalances; longest estimated rollout {hours:.1f} h",
        ]
        for risk, count in sorted(self.risk_counts.items()):
            lines.append(f"  risk {risk}: {count} applications, worst {self.worst_applications.get(risk)}")
        return lines


# ---------------------------------------------------------------------------------------- output frames


def _ts(ms: Column | int) -> Column:
    return F.timestamp_millis(ms if not isinstance(ms, int) else F.lit(ms))


def output_frames(planned: DataFrame, run_id: str, planned_at_ms: int) -> dict[str, DataFrame]:
    """Split the grouped map's flat rows into the four per-run output tables (contract columns)."""
    run = F.lit(run_id).alias("run_id")

    def of(kind: str) -> DataFrame:
        return planned.where(F.col("kind") == kind).withColumn("run_id", run)

    results = of(ROW_RESULT).withColumn("planned_at", _ts(planned_at_ms))
    clients = of(ROW_CLIENT).withColumn(
        "followup_rebalance_deadline", _ts(F.col("followup_rebalance_deadline_ms"))
    )
    return {
        "assignment_results": conform(results, ASSIGNMENT_RESULTS),
        "assignments": conform(of(ROW_ASSIGNMENT), ASSIGNMENTS),
        "client_assignments": conform(clients, CLIENT_ASSIGNMENTS),
        "task_transitions": conform(of(ROW_TRANSITION), TASK_TRANSITIONS),
        "rollout": conform(of(ROW_ROLLOUT), ROLLOUT),
    }


def _saturating_sum(column: str) -> Column:
    # Each application's records saturate at 2^63-1 (docs: valid ranges); so does the fleet's total,
    # instead of an ANSI overflow that would fail the run.
    total = F.sum(F.col(column).cast("decimal(38,0)"))
    return F.least(total, F.lit(MAX_LONG).cast("decimal(38,0)")).cast("long")


def _rollout_totals() -> tuple[tuple[str, Column], ...]:
    # Columns need a running session: built per call, not at import.
    return (
        ("applications", F.count(F.lit(1))),
        ("applications_flagged", F.sum(F.when(F.size("risks") > 0, 1).otherwise(0))),
        ("restore_records", _saturating_sum("restore_records")),
        ("active_moves", F.sum("active_moves")),
        ("total_active_moves", F.sum("total_active_moves")),
        ("probing_rebalances", F.sum("probing_rebalances")),
        ("not_converged", F.sum(F.when(F.col("converged"), 0).otherwise(1))),
        ("max_estimated_duration_ms", F.max("estimated_duration_ms")),
    )


def rollout_view(rollout: DataFrame) -> RolloutView:
    """Totals, risk counts and the worst application per risk of one run's `rollout` rows."""
    wanted = _rollout_totals()
    row = rollout.agg(*(column.alias(name) for name, column in wanted)).first()
    totals = {name: int(row[name] or 0) for name, _ in wanted}
    flags = rollout.select("app_id", F.explode("risks").alias("risk")).select(
        "app_id", F.col("risk.name").alias("name"), F.col("risk.value").alias("value")
    )
    # Per risk, in one pass: how many applications it flags, and the worst of them (the largest value, then
    # the smallest app_id, so that reruns name the same application).
    first = Window.partitionBy("name").orderBy(F.col("value").desc(), F.col("app_id"))
    per_risk = (
        flags.withColumn("n", F.count(F.lit(1)).over(Window.partitionBy("name")))
        .withColumn("rank", F.row_number().over(first))
        .where("rank = 1")
        .collect()
    )
    counts = {r["name"]: int(r["n"]) for r in per_risk}
    worst = {r["name"]: r["app_id"] for r in per_risk}
    return RolloutView(totals, counts, worst)


def runs_row(
    spark: SparkSession,
    run_id: str,
    planned_at_ms: int,
    versions: dict[str, int],
    statuses: dict[str, int],
    rollout: RolloutView | None = None,
) -> DataFrame:
    counts = [statuses.get(s, 0) for s in STATUSES]
    view = rollout or RolloutView({}, {}, {})
    row = (
        run_id, COMPLETE, versions, sum(counts), *counts,
        view.totals, view.risk_counts, view.worst_applications,
    )  # fmt: skip
    frame = spark.createDataFrame(
        [row],
        "run_id string, status string, input_versions map<string,bigint>, num_applications int, num_ok int, "
        "num_invalid_input int, num_invalid_assignment int, num_assignor_failed int, "
        "rollout_totals map<string,bigint>, risk_counts map<string,int>, "
        "worst_applications map<string,string>",
    )
    frame = frame.withColumn("planned_at", _ts(planned_at_ms)).withColumn(
        "completed_at", _ts(int(time.time() * 1000))
    )
    return conform(frame, RUNS)


# ------------------------------------------------------------------------------------------ the planning


def earlier_planned_at(spark: SparkSession, config: JobConfig, run_id: str) -> int | None:
    """The planning instant of an earlier attempt of the same run id (its runs row, else its results)."""
    for table in ("runs", "assignment_results"):
        existing = read_existing(spark, config.output_location(table))
        if existing is None:
            continue
        found = existing.where(run_filter(run_id)).agg(F.min(F.unix_millis("planned_at"))).first()[0]
        if found is not None:
            return int(found)
    return None


def resolve_run(spark: SparkSession, config: JobConfig) -> tuple[str, int]:
    """(run_id, planned_at ms): --planned-at, else an earlier attempt's, else now (POLICY.md §7)."""
    now_ms = int(time.time() * 1000)
    if config.run_id is None:
        planned_at = config.planned_at_ms if config.planned_at_ms is not None else now_ms
        return run_id_for(planned_at), planned_at
    run_id = check_run_id(config.run_id)
    if config.planned_at_ms is not None:
        return run_id, config.planned_at_ms
    earlier = earlier_planned_at(spark, config, run_id)
    return run_id, earlier if earlier is not None else now_ms


def run_job(
    spark: SparkSession,
    config: JobConfig,
    *,
    after_write: Callable[[str], None] | None = None,
) -> RunSummary:
    """Plan the fleet once. `after_write(table)` is called after each output write (tests inject failures
    there)."""
    started = time.perf_counter()
    check_assignors(config)
    if config.shuffle_partitions > 0:
        spark.conf.set("spark.sql.shuffle.partitions", str(config.shuffle_partitions))
    locations = {name: config.input_location(name) for name in INPUT_TABLE_NAMES}
    snapshot = read_inputs(spark, locations, config.as_of_versions)
    run_id, planned_at_ms = resolve_run(spark, config)
    log.info(
        "run %s: planning instant %d ms, grouped map %s", run_id, planned_at_ms, config.grouped_map.value
    )

    prepared = prepare_fleet(snapshot.frames)
    total = prepared.app_ids.count()
    log.info("shaping and planning %d applications (grouped map: %s)", total, config.grouped_map.value)
    settings = PlanSettings(
        now_ms=planned_at_ms,
        assignor=config.assignor,
        allowed_assignors=config.allowed_assignors,
        rollout=config.rollout,
    )
    progress = spark.sparkContext.accumulator(0)
    planned = plan_in_grouped_map(
        prepared.apps, settings, config.grouped_map, progress, applications=total
    ).persist(StorageLevel.MEMORY_AND_DISK)
    writer = Writer.new(run_id)
    try:
        frames = output_frames(planned, run_id, planned_at_ms)

        def write(table: str) -> None:
            stage = time.perf_counter()
            write_run_rows(frames[table], config.output_location(table), writer)
            log.info("wrote %s in %.1f s", table, time.perf_counter() - stage)
            if after_write is not None:
                after_write(table)

        # A rerun first withdraws its completion mark, so readers never see a half-replaced run.
        delete_run_rows(spark, config.output_location("runs"), writer)
        # The results first: it plans the fleet, and a failed attempt leaves its planning instant there.
        with progress_lines(lambda: f"planning: {progress.value} of {total} applications planned"):
            write(RUN_TABLES[0])
        # The others only read the persisted plan: written side by side, with the summary's reads of the
        # inputs and of the plan, so that one table's Delta commit (driver work) overlaps another's Parquet
        # writing, and the summary's small jobs overlap both.
        with ThreadPoolExecutor(max_workers=len(RUN_TABLES) + 2) as pool:
            ignored_rows = pool.submit(prepared.ignored_rows.collect)
            summed = pool.submit(_totals, frames["assignment_results"])
            viewed = pool.submit(rollout_view, frames["rollout"])
            writes = [pool.submit(write, table) for table in RUN_TABLES[1:]]
            for done in writes:
                done.result()  # the first failure ends the run before `runs` is written
            ignored = {
                f"{r['table']} ({r['reason']})": int(r["rows"]) for r in ignored_rows.result() if r["rows"]
            }
            totals, rollout = summed.result(), viewed.result()
            statuses = totals.pop("statuses")
            log.info(
                "planned %d applications: %s", sum(statuses.values()),
                ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())),
            )  # fmt: skip
            # Two attempts of one run id at once must not complete a run whose tables come from both: each
            # table's history is read once all are written (side by side: each is a short driver job).
            checks = [
                pool.submit(check_sole_writer, spark, config.output_location(table), writer)
                for table in RUN_TABLES
            ]
            for done in checks:
                done.result()
        write_run_rows(
            runs_row(spark, run_id, planned_at_ms, snapshot.versions, statuses, rollout),
            config.output_location("runs"),
            writer,
        )
        log.info("wrote runs: run %s complete", run_id)
    finally:
        planned.unpersist()
        prepared.release()
    return RunSummary(
        run_id=run_id,
        planned_at_ms=planned_at_ms,
        statuses=statuses,
        input_versions=dict(snapshot.versions),
        ignored_rows=ignored,
        output=config.output_path or ", ".join(str(config.output_location(t)) for t in (*RUN_TABLES, "runs")),
        seconds=time.perf_counter() - started,
        rollout=rollout,
        **totals,
    )


PROGRESS_INTERVAL_S = 30.0


@contextmanager
def progress_lines(line: Callable[[], str], interval_s: float | None = None) -> Iterator[None]:
    """Log `line()` every `interval_s` seconds while the block runs (a long stage is never silent)."""
    stop = threading.Event()
    every = PROGRESS_INTERVAL_S if interval_s is None else interval_s

    def report() -> None:
        while not stop.wait(every):
            log.info("%s", line())

    reporter = threading.Thread(target=report, name="fleet-assignor-progress", daemon=True)
    reporter.start()
    try:
        yield
    finally:
        stop.set()
        reporter.join()


def _totals(results: DataFrame) -> dict:
    rows = (
        results.groupBy("status")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.sum("num_tasks").alias("tasks"),
            F.sum("active_moves").alias("active"),
            F.sum("standby_moves").alias("standby"),
        )
        .collect()
    )
    return {
        "statuses": {r["status"]: int(r["n"]) for r in rows},
        "num_tasks": sum(int(r["tasks"] or 0) for r in rows),
        "active_moves": sum(int(r["active"] or 0) for r in rows),
        "standby_moves": sum(int(r["standby"] or 0) for r in rows),
    }


# ------------------------------------------------------------------------------------------ command line


def parse_args(argv: Sequence[str]) -> tuple[JobConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(prog="fleet-assignor plan", description=__doc__.split("\n\n")[0])
    parser.add_argument("--input-path", help="directory holding the input Delta tables DIR/<table>")
    parser.add_argument("--output-path", help="directory for the output Delta tables DIR/<table>")
    parser.add_argument("--run-id", help="run id (default: derived from the planning instant)")
    parser.add_argument("--assignor", help="assignor for every application (overrides the per-app choice)")
    parser.add_argument("--conf", help="TOML settings file (default: conf/defaults.toml)")
    parser.add_argument(
        "--as-of-version", action="append", default=[], metavar="N|TABLE=N",
        help="read the inputs (or one table) at a Delta version; repeatable",
    )  # fmt: skip
    parser.add_argument("--planned-at", help="planning instant: epoch ms or ISO-8601 (default: now)")
    parser.add_argument("--grouped-map", choices=[k.value for k in GroupedMapKind], help="override the conf")
    parser.add_argument("--shuffle-partitions", type=int, help="spark.sql.shuffle.partitions for the run")
    parser.add_argument("--master", help="Spark master for a local session (default local[*])")
    parser.add_argument(
        "--fail-on-risk", action="store_true",
        help="exit 3 after the run completes when any application's rollout raised a risk flag",
    )  # fmt: skip
    args = parser.parse_args(list(argv))
    config = load_conf_file(args.conf)
    config = replace(
        config,
        input_path=args.input_path,
        output_path=args.output_path,
        run_id=args.run_id,
        assignor=args.assignor,
        as_of_versions=parse_versions(args.as_of_version),
        planned_at_ms=parse_instant_ms(args.planned_at) if args.planned_at else None,
        grouped_map=GroupedMapKind.parse(args.grouped_map) if args.grouped_map else config.grouped_map,
        shuffle_partitions=(
            args.shuffle_partitions if args.shuffle_partitions is not None else config.shuffle_partitions
        ),
        master=args.master,
        fail_on_risk=args.fail_on_risk,
    )
    return config, args


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0 when the run completed; 2, with one line on stderr, when it could not (a setting, an input
    table, a write): per-application problems never fail the run, they are rows of `assignment_results`.
    With --fail-on-risk, 3 when the run completed but an application's rollout raised a risk flag."""
    configure_logging()
    try:
        config, _ = parse_args(sys.argv[1:] if argv is None else argv)
        check_assignors(config)  # before Spark starts: a job that cannot plan anything writes nothing
        spark = get_or_create_session("fleet-assignor-plan", master=config.master)
        summary = run_job(spark, config)
    except (ConfigError, SchemaDriftError, InputTableError, ConcurrentWriteError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        log.debug("the run failed", exc_info=True)
        print(f"error: the run failed: {one_line(e)}", file=sys.stderr)
        return 2
    print(summary.text())
    if config.fail_on_risk and summary.rollout.flagged:
        risks = ", ".join(f"{n} {r}" for r, n in sorted(summary.rollout.risk_counts.items()))
        print(
            f"error: run {summary.run_id} completed, but {summary.rollout.flagged} applications' rollouts "
            f"are flagged ({risks}): --fail-on-risk",
            file=sys.stderr,
        )
        return RISK_EXIT_CODE
    return 0


# A completed run whose plan needs a person's review (--fail-on-risk): distinct from 2, a run that failed.
RISK_EXIT_CODE = 3


# Loggers of libraries the job drives: their INFO lines (py4j's "Closing down clientserver connection", one
# per Python-JVM connection) drown the job's own progress lines.
QUIET_LOGGERS = ("py4j", "py4j.clientserver", "py4j.java_gateway", "pyspark", "urllib3", "matplotlib")


def configure_logging() -> None:
    """The job's own logger (`fleet_assignor.*`) at INFO, every third-party logger at WARNING."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("fleet_assignor").setLevel(logging.INFO)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def one_line(error: BaseException) -> str:
    """An exception as one line: its type and the first line of its message (a JVM trace cut off)."""
    java = getattr(error, "java_exception", None)  # py4j's Py4JJavaError: the JVM exception says what
    text = (str(java.toString()) if java is not None else str(error)).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


if __name__ == "__main__":
    sys.exit(main())
