"""`collect` against a real KRaft broker and real Kafka Streams applications (one on each rebalance
protocol), then `plan` on what was collected (issue 20's end-to-end acceptance)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.jobs.collect import collect, read_snapshot
from fleet_assignor.jobs.config import JobConfig
from fleet_assignor.jobs.delta_io import read_inputs
from fleet_assignor.jobs.live_cluster import free_ports
from fleet_assignor.jobs.live_snapshot import STREAMS_GROUP_CONFIGS
from fleet_assignor.jobs.plan_assignments import run_job
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES
from tests.live.conftest import APP_RACKS, CLASSIC_APP, PLAIN_GROUPS, STREAMS_APP, wait_stable

pytestmark = [pytest.mark.kafka_live, pytest.mark.spark]

PLANNED_AT_MS = 1_800_000_000_000
REPO_ROOT = Path(__file__).resolve().parents[2]
# Kafka Streams' classic assignor does not put its rack-aware tags on the wire: the file says them.
APP_CONFIGS = {CLASSIC_APP: {"rack_aware_assignment_tags": ["zone"]}}


@pytest.fixture(scope="module")
def live(spark, kafka_cluster, classic_app, streams_app, tmp_path_factory):
    """Both applications stable; one collect; the applications' own view of their tasks; one plan run."""
    bootstrap = kafka_cluster.bootstrap
    for attempt in range(3):
        _, before_classic = wait_stable(bootstrap, CLASSIC_APP, 3, app_configs=APP_CONFIGS)
        _, before_streams = wait_stable(bootstrap, STREAMS_APP, 2)
        out = str(tmp_path_factory.mktemp("collected"))
        result = collect(bootstrap, out, spark=spark, app_configs=APP_CONFIGS, timeout_ms=15_000)
        views = {CLASSIC_APP: classic_app.threads(), STREAMS_APP: streams_app.threads()}
        stable = all(
            [r for r in result.rows.tables["client_subscriptions"] if r["app_id"] == app]
            == before.tables["client_subscriptions"]
            for app, before in ((CLASSIC_APP, before_classic), (STREAMS_APP, before_streams))
        )
        if stable:
            break
        print(f"attempt {attempt}: an assignment changed while collecting; again")
    plan_out = str(tmp_path_factory.mktemp("planned"))
    config = JobConfig(
        input_path=out,
        output_path=plan_out,
        run_id="live-1",
        planned_at_ms=PLANNED_AT_MS,
        as_of_versions=dict(result.versions),
    )
    summary = run_job(spark, config)
    print(result.text())
    print(summary.text())
    for row in _read(spark, plan_out, "assignment_results").collect():
        print(
            row["app_id"],
            row["assignor"],
            row["status"],
            "active moves",
            row["active_moves"],
            row["error_detail"],
        )
    return {"result": result, "out": out, "plan_out": plan_out, "summary": summary, "views": views}


def _read(spark, base: str, table: str):
    return spark.read.format("delta").load(f"{base}/{table}")


def test_collected_tables_pass_the_schema_and_input_checks(spark, live):
    result = live["result"]
    assert sorted(result.rows.collected) == [CLASSIC_APP, STREAMS_APP]
    locations = {name: JobConfig(input_path=live["out"]).input_location(name) for name in INPUT_TABLES}
    read_inputs(spark, locations, {})  # raises SchemaDriftError on any drift
    results = _read(spark, live["plan_out"], "assignment_results").where(F.col("run_id") == "live-1")
    statuses = {r["app_id"]: (r["status"], r["error_detail"]) for r in results.collect()}
    assert statuses[CLASSIC_APP][0] == "OK", statuses
    assert statuses[STREAMS_APP][0] == "OK", statuses
    assert live["summary"].statuses.get("INVALID_INPUT", 0) == 0
    runs = _read(spark, live["plan_out"], "runs").where(F.col("run_id") == "live-1").first()
    assert dict(runs["input_versions"]) == result.versions


def test_plain_consumer_groups_are_skipped_and_the_streams_groups_collected(live):
    """Real KafkaConsumer groups on the broker (no Kafka Streams), on either group protocol, are reported as
    skipped with the reason, and the same collect still collects both Streams applications."""
    rows = live["result"].rows
    skipped = {s.group_id: s.reason for s in rows.skipped}
    # A classic consumer group: DescribeGroups says its assignor (the consumer's default, range).
    assert skipped[PLAIN_GROUPS["classic"]] == "not a Kafka Streams group (assignor protocol 'range')"
    # A KIP-848 consumer group: the group listing says its type.
    assert skipped[PLAIN_GROUPS["consumer"]].startswith("not a Kafka Streams group (group type Consumer"), (
        skipped
    )
    assert {CLASSIC_APP, STREAMS_APP} <= set(rows.collected)
    assert not set(PLAIN_GROUPS.values()) & {r["app_id"] for r in rows.tables["applications"]}


def test_collect_snapshot_is_one_new_version_per_table(spark, live, kafka_cluster):
    """A second collect adds exactly one version to every table and replaces the rows (no duplicates)."""
    before = live["result"].versions
    again = collect(
        kafka_cluster.bootstrap, live["out"], spark=spark, app_configs=APP_CONFIGS, timeout_ms=15_000
    )
    assert {t: v - 1 for t, v in again.versions.items()} == before
    rows = _read(spark, live["out"], "client_subscriptions")
    assert rows.count() == rows.select("app_id", "consumer_client_id").distinct().count() == 5


@pytest.mark.parametrize("app_id", [CLASSIC_APP, STREAMS_APP])
def test_previous_assignment_is_what_the_applications_run(spark, live, app_id):
    """Each consumer's previous tasks as collected from the group equal the tasks the Streams client itself
    reports running (KafkaStreams#metadataForLocalThreads), and the decoded rack, tags and process id are
    the instance's."""
    rows = {
        r["consumer_client_id"]: r
        for r in _read(spark, live["out"], "client_subscriptions").where(F.col("app_id") == app_id).collect()
    }
    seen = set()
    for instance in live["views"][app_id]:
        for thread in instance["threads"]:
            row = rows[thread["consumer_client_id"]]
            seen.add(thread["consumer_client_id"])
            assert sorted(row["prev_active_tasks"]) == thread["active"]
            assert sorted(row["prev_standby_tasks"]) == thread["standby"]
            assert row["rack_id"] == instance["rack"] == APP_RACKS[instance["instance"]]
            assert dict(row["client_tags"]) == {
                "zone": instance["rack"],
                "instance": f"i{instance['instance']}",
            }
            assert row["process_id"] in thread["consumer_client_id"]  # Streams' default client id holds it
            assert row["host_info"] == f"127.0.0.1:{7000 + instance['instance']}"
    assert seen == set(rows)


@pytest.mark.parametrize("app_id", [CLASSIC_APP, STREAMS_APP])
def test_topology_offsets_and_racks(spark, live, app_id):
    """The demo topology: words (4 partitions) re-keyed into a repartition topic, counted into the logged
    store "counts", clicks (3 partitions) on their own: 11 tasks, the 4 count tasks with the changelog."""
    tasks = {
        r["task_id"]: r for r in _read(spark, live["out"], "tasks").where(F.col("app_id") == app_id).collect()
    }
    stateful = sorted(t for t, r in tasks.items() if r["changelog_partitions"])
    assert len(tasks) == 11
    assert len(stateful) == 4
    changelog = f"{app_id}-counts-changelog"
    for task_id in stateful:
        row = tasks[task_id]
        part = int(task_id.split("_")[1])
        assert [(c["topic"], c["partition"]) for c in row["changelog_partitions"]] == [(changelog, part)]
        assert list(row["state_stores"]) == ["counts"]
        assert [(s["topic"], s["partition"]) for s in row["source_partitions"]] == [
            (f"{app_id}-by-word-repartition", part)
        ]
    sources = {s["topic"] for r in tasks.values() for s in r["source_partitions"]}
    assert sources == {f"{app_id}.words", f"{app_id}.clicks", f"{app_id}-by-word-repartition"}
    ends = _read(spark, live["out"], "changelog_end_offsets").where(F.col("app_id") == app_id).collect()
    assert sorted((r["topic"], r["partition"]) for r in ends) == [(changelog, p) for p in range(4)]
    assert sum(r["end_offset"] for r in ends) > 0  # records were produced and counted
    racks = _read(spark, live["out"], "partition_racks").where(F.col("topic") == changelog).collect()
    assert sorted(r["partition"] for r in racks) == list(range(4))
    assert all(list(r["replica_racks"]) == ["rack-a"] for r in racks)  # the one broker's rack
    app = _read(spark, live["out"], "applications").where(F.col("app_id") == app_id).first()
    assert app["num_standby_replicas"] == 1
    assert app["cluster_id"] == live["result"].rows.cluster_id


def test_configs_say_where_they_came_from(spark, live, kafka_cluster):
    apps = {r["app_id"]: r for r in _read(spark, live["out"], "applications").collect()}
    group_configs = read_snapshot(kafka_cluster.bootstrap, groups=STREAMS_APP)["groups"][0]["configs"]
    classic, streams = dict(apps[CLASSIC_APP]["config_sources"]), dict(apps[STREAMS_APP]["config_sources"])
    assert classic["num_standby_replicas"] == "inferred"
    assert classic["rack_aware_assignment_tags"] == "app_configs"
    assert (
        classic["acceptable_recovery_lag"] == "default"
        and apps[CLASSIC_APP]["acceptable_recovery_lag"] is None
    )
    assert streams["num_standby_replicas"] == "cluster"  # the group config the application set
    # What the broker returns for the group is "cluster", the rest Kafka's defaults.
    for name, column in STREAMS_GROUP_CONFIGS.items():
        assert streams[column] == ("cluster" if name in group_configs else "default"), name
    assert (apps[CLASSIC_APP]["group_protocol"], apps[STREAMS_APP]["group_protocol"]) == (
        "classic",
        "streams",
    )


def test_high_availability_keeps_the_classic_groups_actives(spark, live):
    """Kafka's HighAvailabilityTaskAssignor made the live assignment inside the Streams clients; on the
    stable, caught-up group ours keeps every active where it is."""
    row = (
        _read(spark, live["plan_out"], "assignment_results")
        .where((F.col("run_id") == "live-1") & (F.col("app_id") == CLASSIC_APP))
        .first()
    )
    assert row["assignor"] == "high_availability"
    if row["active_moves"]:
        previous = _read(spark, live["out"], "client_subscriptions").where(F.col("app_id") == CLASSIC_APP)
        planned = _read(spark, live["plan_out"], "client_assignments").where(F.col("app_id") == CLASSIC_APP)
        pytest.fail(
            f"{row['active_moves']} active moves\nprevious: {[r.asDict() for r in previous.collect()]}\n"
            f"planned: {[r.asDict() for r in planned.collect()]}\nviews: {live['views'][CLASSIC_APP]}"
        )
    assert row["num_clients"] == 3 and row["num_tasks"] == 11


def test_kafka_and_ours_agree_on_the_snapshot(live, kafka_oracle):
    """The snapshot as Kafka's own HighAvailabilityTaskAssignor would see it (the oracle) and as ours sees it
    gives the same assignment: lags, racks, tags and topology are what Kafka would have been given."""
    from fleet_assignor.explore.input_scenarios import load_scenarios

    scenarios = load_scenarios(live["out"], versions=live["result"].versions)
    assert [s["app_id"] for s in scenarios] == [CLASSIC_APP, STREAMS_APP]
    for scenario in scenarios:
        ours = plan_scenario(scenario, now_ms=PLANNED_AT_MS)
        (kafka,) = kafka_oracle.run([scenario], "high_availability", now_ms=PLANNED_AT_MS)

        def sets(result):
            return {
                a["process_id"]: (sorted(a["active"]), sorted(a["standby"])) for a in result["assignment"]
            }

        assert sets(ours) == sets(kafka), scenario["app_id"]


def test_unreachable_bootstrap_is_one_error_and_writes_nothing(tmp_path):
    (port,) = free_ports(1)
    out = tmp_path / "tables"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleet_assignor.jobs.cli",
            "collect",
            "--bootstrap-servers",
            f"127.0.0.1:{port}",
            "--output-path",
            str(out),
            "--timeout-ms",
            "3000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        env=env,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"127.0.0.1:{port}" in lines[0], lines
    assert elapsed < 60
    assert not out.exists()


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SASL_PLAINTEXT"])
def test_admin_config_passes_through_and_no_secret_is_printed(
    kafka_cluster, classic_app, streams_app, tmp_path, protocol
):
    """Client properties reach the Admin client (SASL against a PLAINTEXT listener fails to connect), and
    neither the snapshot nor the helper's messages ever contain a property value."""
    from fleet_assignor.jobs.collect import CollectError
    from fleet_assignor.jobs.live_cluster import app_classpath, java_executable

    secret = "n0t-to-be-logged-9f3a"
    config = tmp_path / "client.properties"
    config.write_text(
        f"security.protocol={protocol}\nsasl.mechanism=PLAIN\nssl.truststore.password={secret}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="fleet" password="{secret}";\n'
    )
    command = [java_executable(), "-cp", app_classpath(), "fleet.live.Snapshot"]
    command += ["--bootstrap-servers", kafka_cluster.bootstrap, "--admin-config", str(config)]
    done = subprocess.run([*command, "--timeout-ms", "5000"], capture_output=True, text=True, timeout=120)
    assert secret not in done.stdout and secret not in done.stderr
    if protocol == "PLAINTEXT":
        assert done.returncode == 0, done.stderr
        assert {g["group_id"] for g in json.loads(done.stdout)["groups"]} >= {CLASSIC_APP, STREAMS_APP}
    else:
        # Kafka's own client logs the failed handshake; the helper's last line says why it stopped.
        assert done.returncode == 3 and done.stderr.splitlines()[-1].startswith("error: "), done.stderr
        assert "authentication" in done.stderr.lower() or "sasl" in done.stderr.lower()
        with pytest.raises(CollectError, match=r"cannot read the cluster at .* within 5000 ms") as raised:
            read_snapshot(kafka_cluster.bootstrap, admin_config=str(config), timeout_ms=5000)
        assert secret not in str(raised.value)
