"""The plan follower (follower/, issue 24) on a live classic-protocol application: three Kafka Streams
instances run with `task.assignor.class=fleet.follower.PlanFollowingAssignor`; the fleet job plans them from a
collected snapshot with an assignor Kafka does not have (tests/live/rotating_assignor.py); after an instance
restarts, the live assignment is the plan. An instance added after the snapshot makes the plan mismatch the
members: the application falls back to Kafka's StickyTaskAssignor and logs why."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fleet_assignor.jobs.collect import collect
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.live_cluster import REPO_ROOT, DemoApp, check_not_older_than_sources
from fleet_assignor.jobs.plan_assignments import run_job
from tests.live.conftest import APP_RACKS, wait_stable

# Soak: three Streams instances restarted and one added, each rebalance awaited (100-300 s here).
pytestmark = [pytest.mark.kafka_live, pytest.mark.spark, pytest.mark.soak]

APP = "live-follow"
RUN = "follow-1"
FOLLOWER = REPO_ROOT / "follower" / "target"
FOLLOWER_JAR = FOLLOWER / "fleet-plan-follower-1.0.jar"
ROTATING = "fleet_assignor.tests.live.rotating_assignor:RotatingAssignor"
FALLBACK = "falling back to org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor: "
LOG4J = """\
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = ERR
logger.follower.name = fleet.follower
logger.follower.level = info
"""


def _live_assignment(rows) -> dict[str, tuple[list[str], list[str]]]:
    out: dict[str, tuple[set[str], set[str]]] = {}
    for row in rows.tables["client_subscriptions"]:
        active, standby = out.setdefault(row["process_id"], (set(), set()))
        active.update(row["prev_active_tasks"] or [])
        standby.update(row["prev_standby_tasks"] or [])
    return {pid: (sorted(a), sorted(s)) for pid, (a, s) in out.items()}


def _planned(spark, outputs: str) -> dict[str, tuple[list[str], list[str]]]:
    rows = (
        spark.read.format("delta")
        .load(f"{outputs}/client_assignments")
        .where(f"run_id = '{RUN}' AND app_id = '{APP}'")
        .collect()
    )
    return {r["process_id"]: (sorted(r["active_tasks"]), sorted(r["standby_tasks"])) for r in rows}


def _wait_log(log: Path, needle: str, after: int, timeout_s: float = 90.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")[after:]
        for line in text.splitlines():
            if needle in line:
                return line
        time.sleep(0.5)
    raise AssertionError(f"no line with {needle!r} in {log} within {timeout_s} s:\n{text[-3000:]}")


def test_the_application_follows_the_plan_then_falls_back_on_a_new_member(
    spark, kafka_cluster, tmp_path_factory
):
    assert FOLLOWER_JAR.is_file(), f"{FOLLOWER_JAR} missing: run `make setup` (make follower)"
    check_not_older_than_sources(FOLLOWER_JAR, REPO_ROOT / "follower")
    started = time.monotonic()
    work = tmp_path_factory.mktemp(APP)
    inputs, outputs = str(work / "inputs"), str(work / "outputs")
    (work / "log4j2.properties").write_text(LOG4J)
    app = DemoApp(
        APP,
        kafka_cluster.bootstrap,
        work / "app",
        instances=3,
        standbys=1,
        produce=2000,
        racks=APP_RACKS,
        streams_configs={
            "task.assignor.class": "fleet.follower.PlanFollowingAssignor",
            "fleet.assignor.plan.path": outputs,
            "fleet.assignor.input.path": inputs,
            "fleet.assignor.max.plan.age.ms": "900000",
            "fleet.assignor.max.input.staleness.ms": "900000",
        },
        extra_classpath=[str(FOLLOWER_JAR), str(FOLLOWER / "lib" / "*")],
        jvm_options=[f"-Dlog4j2.configurationFile={work / 'log4j2.properties'}"],
    )
    log = work / "app" / "stderr.log"
    try:
        app.wait_running(range(3))
        # No plan yet: the first rebalances fell back, saying why.
        line = _wait_log(log, f"fleet plan follower: {APP}: {FALLBACK}", 0)
        assert "TableNotFoundException" in line or "no complete run" in line, line

        _, before = wait_stable(kafka_cluster.bootstrap, APP, 3)
        result = collect(kafka_cluster.bootstrap, inputs, groups=APP, spark=spark, timeout_ms=15_000)
        config = JobConfig(
            input_path=inputs,
            output_path=outputs,
            run_id=RUN,
            assignor=ROTATING,
            as_of_versions=dict(result.versions),
        )
        summary = run_job(spark, config)
        planned_s = time.monotonic() - started
        plan = _planned(spark, outputs)
        assert set(plan) == set(_live_assignment(before)), summary.text()
        assert plan != _live_assignment(before), "the rotated plan must differ from what Kafka assigned"

        # A rebalance: instance 2 restarts (same state directory, so the same process id).
        mark = len(log.read_text(errors="replace"))
        app.stop_instance(2)
        app.start_instance(2)
        app.wait_running(range(3))
        followed = _wait_log(log, f"fleet plan follower: {APP}: following run {RUN} ", mark)
        # the inputs' time is the snapshot's (applications.snapshot_at_ms under fleet.assignor.input.path)
        assert "inputs collected " in followed and "3 clients" in followed, followed
        deadline = time.monotonic() + 120
        while True:
            _, now = wait_stable(kafka_cluster.bootstrap, APP, 3)
            live = _live_assignment(now)
            if live == plan or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert live == plan
        followed_s = time.monotonic() - started

        # An instance added after the snapshot: the plan names other members, the application falls back.
        mark = len(log.read_text(errors="replace"))
        app.start_instance(3)
        line = _wait_log(log, f"fleet plan follower: {APP}: {FALLBACK}", mark)
        _, grown = wait_stable(kafka_cluster.bootstrap, APP, 4)
        (added,) = set(_live_assignment(grown)) - set(plan)
        why = f"run {RUN} was planned for other members: live but not planned [{added}], planned but not live"
        assert why in line, line
        elapsed = time.monotonic() - started
        print(
            f"\n{APP}: snapshot planned at {planned_s:.0f} s, plan live at {followed_s:.0f} s, fell back by "
            f"{elapsed:.0f} s:\n  {followed}\n  {line}"
        )
    finally:
        app.stop()
