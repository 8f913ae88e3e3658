"""The Spark-free table contract: the tables of docs/tables.md, the statuses and lag rules, and the
conversions (typed result -> output rows, scenario <-> input rows) that the job and the explorer share."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace

import pandas as pd
import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan, plan_scenario
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.task_id import TaskId
from fleet_assignor.assignor.transitions import task_transitions
from fleet_assignor.jobs.plan_rows import PlanSettings, plan_application
from fleet_assignor.schemas import contract
from fleet_assignor.schemas.contract import (
    INPUT_TABLES,
    OUTPUT_TABLES,
    assignment_rows,
    client_assignment_rows,
    client_lag,
    input_rows_to_scenarios,
    reported_offset,
    result_row,
    scenario_to_input_rows,
    transition_rows,
)
from tests.conftest import SCENARIOS_DIR
from tests.scenario_generator import DEFAULT_KNOBS, UNUSUAL_SHAPES, Knobs, generate_scenario

NOW = 1_700_000_000_000
EXAMPLES = sorted(SCENARIOS_DIR.glob("example-*.json"))
ASSIGNORS = ("high_availability", "sticky", "fallback_prior")


def _example(path) -> dict:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------------------------ tables


def test_importing_the_contract_needs_no_spark():
    code = (
        "import sys; import fleet_assignor.schemas.contract as c; c.scenario_to_input_rows([]); "
        "print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_table_of_tables_md_with_its_columns_in_order():
    columns = {name: t.column_names for name, t in {**INPUT_TABLES, **OUTPUT_TABLES}.items()}
    assert columns == {
        "applications": (
            "app_id", "cluster_id", "assignor", "acceptable_recovery_lag", "max_warmup_replicas",
            "num_standby_replicas", "probing_rebalance_interval_ms", "rack_aware_assignment_strategy",
            "rack_aware_traffic_cost", "rack_aware_non_overlap_cost", "rack_aware_assignment_tags",
            "assignor_configs",
        ),
        "tasks": ("app_id", "task_id", "state_stores", "source_partitions", "changelog_partitions"),
        "client_subscriptions": (
            "app_id", "process_id", "consumer_client_id", "rack_id", "client_tags", "host_info",
            "prev_active_tasks", "prev_standby_tasks",
        ),
        "task_offsets": ("app_id", "process_id", "consumer_client_id", "task_id", "offset_sum"),
        "changelog_end_offsets": ("app_id", "topic", "partition", "end_offset"),
        "partition_racks": ("cluster_id", "topic", "partition", "replica_racks"),
        "assignment_results": (
            "run_id", "app_id", "assignor", "status", "error", "error_detail", "probing_rebalance",
            "num_clients", "num_threads", "num_tasks", "num_stateful_tasks", "active_moves",
            "standby_moves", "warmups", "unassigned_tasks", "max_tasks_per_thread", "min_tasks_per_thread",
            "cross_rack_cost", "restore_lag", "planned_at", "duration_ms",
        ),
        "assignments": (
            "run_id", "app_id", "process_id", "consumer_client_id", "task_id", "task_type", "is_warmup",
        ),
        "client_assignments": (
            "run_id", "app_id", "process_id", "active_tasks", "standby_tasks", "followup_rebalance_deadline",
        ),
        "task_transitions": ("run_id", "app_id", "process_id", "task_id", "transition", "restore_lag"),
        "rollout": (
            "run_id", "app_id", "assignor", "rack_aware", "tasks", "stateful_tasks", "active_moves",
            "standby_moves", "warmup_moves", "active_moves_fraction", "standby_moves_fraction",
            "warmup_moves_fraction", "restore_records", "active_balance_per_thread_before",
            "active_balance_per_thread_after", "active_balance_per_client_before",
            "active_balance_per_client_after", "standby_balance_per_thread_before",
            "standby_balance_per_thread_after", "standby_balance_per_client_before",
            "standby_balance_per_client_after", "cross_rack_before", "cross_rack_after", "probing_rebalances",
            "total_active_moves", "total_standby_moves", "total_warmup_moves", "catch_up_per_round",
            "estimated_duration_ms", "converged", "rounds_simulated", "truncated", "stop_reason",
            "simulation_ms", "risks",
        ),
        "runs": (
            "run_id", "planned_at", "status", "input_versions", "num_applications", "num_ok",
            "num_invalid_input", "num_invalid_assignment", "num_assignor_failed", "completed_at",
            "rollout_totals", "risk_counts", "worst_applications",
        ),
    }  # fmt: skip
    # `runs` is written last: it marks the run complete.
    assert list(OUTPUT_TABLES)[-1] == "runs"
    assert contract.PLAN_TABLE_NAMES == (
        "assignment_results",
        "assignments",
        "client_assignments",
        "task_transitions",
        "rollout",
    )


def test_types_are_tables_md_s_spark_sql_types():
    assert contract.TASKS.column("source_partitions").type.simple_string == (
        "array<struct<topic:string,partition:int>>"
    )
    assert contract.APPLICATIONS.column("assignor_configs").type.simple_string == "map<string,string>"
    assert contract.RUNS.column("input_versions").type.simple_string == "map<string,bigint>"
    assert contract.TASK_OFFSETS.column("offset_sum").type.simple_string == "bigint"
    assert contract.CLIENT_ASSIGNMENTS.column("followup_rebalance_deadline").type.simple_string == "timestamp"
    with pytest.raises(KeyError, match="table tasks has no column 'nope'"):
        contract.TASKS.column("nope")


def test_only_the_keys_our_writer_fills_are_not_nullable_and_outputs_are_partitioned_by_run():
    not_nullable = {
        (t.name, c.name) for t in (*INPUT_TABLES.values(), *OUTPUT_TABLES.values()) for c in t.columns
        if not c.nullable
    }  # fmt: skip
    assert not_nullable == {("applications", "app_id"), ("runs", "run_id")}
    assert {t.partition_column for t in OUTPUT_TABLES.values()} == {"run_id"}
    assert {t.partition_column for t in INPUT_TABLES.values()} == {None}


def test_application_config_columns_follow_the_applications_table():
    assert contract.APPLICATIONS.column_names[2:] == contract.APPLICATION_CONFIG_COLUMNS
    assert {
        "acceptable_recovery_lag", "max_warmup_replicas", "num_standby_replicas",
        "probing_rebalance_interval_ms", "rack_aware_traffic_cost", "rack_aware_non_overlap_cost",
    } == contract.INTEGER_CONFIG_COLUMNS  # fmt: skip


def test_planned_rows_kinds_fill_only_columns_of_the_grouped_map_frame():
    planned = set(contract.PLANNED_ROWS.column_names)
    for kind, columns in contract.KIND_COLUMNS.items():
        assert set(columns) <= planned, kind
    # RESULT rows carry every result column but the two the job adds.
    result = set(contract.ASSIGNMENT_RESULTS.column_names) - {"run_id", "planned_at"}
    assert result <= set(contract.KIND_COLUMNS[contract.ROW_RESULT])


def test_arrow_schema_keeps_types_and_nullability():
    import pyarrow as pa

    schema = contract.arrow_schema(contract.APPLICATIONS)
    assert schema.field("app_id").nullable is False
    assert schema.field("max_warmup_replicas").type == pa.int32()
    assert schema.field("assignor_configs").type == pa.map_(pa.string(), pa.string())
    tasks = contract.arrow_schema(contract.TASKS)
    element = tasks.field("changelog_partitions").type.value_type
    assert element == pa.struct([pa.field("topic", pa.string()), pa.field("partition", pa.int32())])


# ------------------------------------------------------------------------------- statuses and lag rules


def test_statuses_in_the_order_of_the_runs_counts_and_what_is_rolled_out():
    assert contract.STATUSES == ("OK", "INVALID_INPUT", "INVALID_ASSIGNMENT", "ASSIGNOR_FAILED")
    assert {"OK", "ASSIGNOR_FAILED"} == contract.ROLLED_OUT
    assert (contract.COMPLETE, contract.NO_ERROR) == ("COMPLETE", "NONE")
    assert (contract.RUNNING_ACTIVE, contract.UNKNOWN) == (-2, -3)


@pytest.mark.parametrize(
    ("offsets", "previous_active", "computed", "lag"),
    [
        ([-2, 40], False, True, -2),  # any consumer saying -2 wins
        ([-3], False, True, -3),
        ([40, 30], False, True, 60),  # the largest offset: end sum 100 - 40
        ([140], False, True, 100),  # above the end sum: corrupted, the whole changelog
        (None, True, True, -2),  # a previous active that reports nothing runs it
        (None, False, True, 100),  # no state
        (None, False, False, -3),  # no end offsets: unknown
        ([40], False, False, -3),
        ([-2], False, False, -2),
    ],
)
def test_client_lag_follows_tables_md(offsets, previous_active, computed, lag):
    assert client_lag(offsets, previous_active, 100, computed) == lag


def test_reported_offset_inverts_client_lag_where_a_row_is_written():
    assert [reported_offset(lag, 100) for lag in (-2, -3, 0, 60, 99, 100, 150)] == [
        -2, -3, 100, 40, 1, None, None,
    ]  # fmt: skip
    for lag in (0, 60, 99):
        assert client_lag([reported_offset(lag, 100)], False, 100, True) == lag


def test_a_previous_active_reports_even_the_whole_changelog():
    # Without a row a previous active runs the task (-2): a lag of the whole changelog needs offset 0.
    assert [reported_offset(lag, 100, previous_active=True) for lag in (-2, -3, 0, 60, 100)] == [
        -2, -3, 100, 40, 0,
    ]  # fmt: skip
    for lag in (-3, 0, 60, 100):
        assert client_lag([reported_offset(lag, 100, True)], True, 100, True) == lag
    # The whole changelog is the largest lag reported: here the previous active's own.
    scenario = {
        "app_id": "restoring",
        "tasks": [{"id": "0_0", "stores": ["s"], "partitions": [
            {"topic": "in", "partition": 0, "source": True},
            {"topic": "s-changelog", "partition": 0, "changelog": True},
        ]}],
        "clients": [
            {"process_id": "00000000-0000-0000-0000-000000000001", "threads": 1, "prev_active": ["0_0"],
             "lags": {"0_0": 500}},
            {"process_id": "00000000-0000-0000-0000-000000000002", "threads": 1, "lags": {"0_0": 20}},
        ],
    }  # fmt: skip
    (rebuilt,) = input_rows_to_scenarios(scenario_to_input_rows(scenario))
    assert [c["lags"] for c in rebuilt["clients"]] == [{"0_0": 500}, {"0_0": 20}]


def test_end_sums_saturate_and_inferred_ones_are_the_largest_lag():
    assert contract.end_offset_sum([2**62, 2**62, 5]) == 2**63 - 1
    assert contract.inferred_end_sum([None, -2, 7, 3]) == 7
    assert contract.inferred_end_sum([-3, None]) == 0
    lags = [{"0_0": None, "0_1": -3}, {"0_0": -2, "0_1": 7}, {"0_0": 7, "0_1": 3}, {"0_2": -2}]
    sums = contract.inferred_end_sums(lags)
    assert {t: sums.get(t, 0) for t in ("0_0", "0_1", "0_2")} == {
        t: contract.inferred_end_sum(c.get(t) for c in lags) for t in ("0_0", "0_1", "0_2")
    }


# ------------------------------------------------------------------------------------ result -> rows


def _planned(path, assignor="high_availability"):
    loaded = load_scenario(_example(path), now_ms=NOW)
    return loaded, plan(loaded, assignor=assignor)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_rows_of_a_typed_result_say_what_its_result_object_says(path):
    loaded, planned = _planned(path)
    obj = planned.as_dict()
    row = result_row(planned, app_id="a")
    assert row["app_id"] == "a"
    assert (row["assignor"], row["status"], row["error"], row["error_detail"]) == (
        obj["assignor"], obj["status"], obj["error"], obj["error_detail"],
    )  # fmt: skip
    assert row["unassigned_tasks"] == obj["unassigned"]
    assert row["probing_rebalance"] is obj["probing_rebalance"]
    assert {m: row[m] for m in contract.METRIC_COLUMNS} == {
        m: obj["metrics"][m] for m in contract.METRIC_COLUMNS
    }
    assert isinstance(row["max_tasks_per_thread"], float) and row["duration_ms"] == obj["elapsed_ms"]

    expected = []
    for client in obj["assignment"]:
        for consumer, tasks in client["consumers"].items():
            expected += [(client["process_id"], consumer, t, "ACTIVE", False) for t in tasks["active"]]
            expected += [
                (client["process_id"], consumer, t, "STANDBY", t in client["warmup"])
                for t in tasks["standby"]
            ]
    got = [
        (r["process_id"], r["consumer_client_id"], r["task_id"], r["task_type"], r["is_warmup"])
        for r in assignment_rows(planned)
    ]
    assert got == expected

    clients = client_assignment_rows(planned, run_id="r")
    deadlines = "followup_rebalance_deadline_ms"
    got_clients = [(c["process_id"], c["active_tasks"], c["standby_tasks"], c[deadlines]) for c in clients]
    assert got_clients == [
        (c["process_id"], c["active"], c["standby"], c[deadlines]) for c in obj["assignment"]
    ]
    assert all(c["run_id"] == "r" for c in clients)

    transitions = transition_rows(task_transitions(loaded, planned), app_id="a")
    assert transitions == [{"app_id": "a", **t.as_row()} for t in task_transitions(loaded, obj)]


def test_each_consumers_assignment_rows_come_in_task_order_whatever_order_its_split_gives():
    """A custom assignor may hand its own split over consumers (an assignment object with
    `consumer_tasks()`) in any order; the rows list each consumer's actives, then its standbys, each in
    task order, as the result object does."""
    from fleet_assignor.assignor.distribution import ConsumerTasks

    planned = plan(load_scenario(generate_scenario(3), now_ms=NOW), assignor="sticky")
    shuffled = tuple(
        replace(
            client,
            consumers={
                consumer: ConsumerTasks(tuple(reversed(tasks.active)), tuple(reversed(tasks.standby)))
                for consumer, tasks in client.consumers.items()
            },
        )
        for client in planned.clients
    )
    assert any(len(tasks.active) > 1 for c in shuffled for tasks in c.consumers.values())
    assert assignment_rows(replace(planned, clients=shuffled)) == assignment_rows(planned)


def _as_tables_say(scenario: dict) -> dict:
    """The scenario with each consumer's history as the contract writes it into `client_subscriptions`
    (the client's previous tasks on its first consumer when the scenario gives them per client)."""
    rows = scenario_to_input_rows(scenario)["client_subscriptions"]
    clients = []
    for client in scenario["clients"]:
        consumers = [
            {"id": r["consumer_client_id"], "prev_active": r["prev_active_tasks"],
             "prev_standby": r["prev_standby_tasks"]}
            for r in rows if r["process_id"] == client["process_id"]
        ]  # fmt: skip
        rest = {
            k: v
            for k, v in client.items()
            if k not in ("consumers", "threads", "prev_active", "prev_standby")
        }
        clients.append({**rest, "consumers": consumers})
    return {**scenario, "clients": clients}


def _compact(scenario: dict) -> str:
    """What jobs.prepare builds for an application whose tables say this scenario."""
    clients = [
        {"process_id": c["process_id"], "consumers": c["consumers"], "lags": c.get("lags") or {},
         "rack": c.get("rack"), "tags": c.get("tags") or {}}
        for c in _as_tables_say(scenario)["clients"]
    ]  # fmt: skip
    tasks = [
        {"id": t["id"], "stores": t.get("stores") or [], "partitions": t["partitions"]}
        for t in scenario["tasks"]
    ]
    return json.dumps({"configs": scenario.get("configs") or {}, "tasks": tasks, "clients": clients})


def _without(row: dict, *columns: str) -> dict:
    return {k: v for k, v in row.items() if k not in columns}


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_the_explorer_and_the_job_write_the_same_rows_for_the_same_plan(assignor):
    # The examples, and generated scenarios with warnings (stale task ids, a task in both previous lists).
    generated = [generate_scenario(seed) for seed in range(40)]
    warned = [
        s for s in generated if s.get("lags_computed", True) and load_scenario(_as_tables_say(s)).warnings
    ][:6]
    assert len(warned) == 6
    scenarios = [_example(p) for p in EXAMPLES] + warned
    frames = explore.plan_fleet(
        map(_as_tables_say, scenarios), now_ms=NOW, assignor=assignor, run_id="r"
    ).frames
    job = [
        row
        for s in scenarios
        for row in plan_application(s["app_id"], _compact(s), PlanSettings(now_ms=NOW, assignor=assignor))
    ]

    def of(kind):
        return [_without(r, "kind", "duration_ms") for r in job if r["kind"] == kind]

    def explored(frame, *drop):
        # A frame holds a null of a numeric column as NaN.
        return [
            {
                k: None if isinstance(v, float) and v != v else v
                for k, v in _without(r, "run_id", "duration_ms", *drop).items()
            }
            for r in frame.to_dict("records")
        ]

    def key(row):
        return json.dumps(row, sort_keys=True, default=str)

    assert sorted(of("RESULT"), key=key) == sorted(explored(frames.results, "planned_at"), key=key)
    assert sorted(of("ASSIGNMENT"), key=key) == sorted(explored(frames.assignments), key=key)
    assert sorted(of("TRANSITION"), key=key) == sorted(explored(frames.transitions), key=key)
    clients = explored(frames.client_assignments)
    for client in clients:
        deadline = client.pop("followup_rebalance_deadline")
        client["followup_rebalance_deadline_ms"] = None if pd.isna(deadline) else deadline.value // 1_000_000
    assert sorted(of("CLIENT"), key=key) == sorted(clients, key=key)
    assert len(of("ASSIGNMENT")) > 50
    assert sum("client_subscriptions row" in (r["error_detail"] or "") for r in of("RESULT")) >= 3


# ---------------------------------------------------------------------------- scenario <-> input rows


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_scenario_written_as_rows_reads_back_as_the_same_application(path):
    original = _example(path)
    rows = scenario_to_input_rows(original)
    assert set(rows) == set(INPUT_TABLES)
    for table, table_rows in rows.items():
        for row in table_rows:
            assert set(row) == set(INPUT_TABLES[table].column_names), table
    (rebuilt,) = input_rows_to_scenarios(rows)
    assert rebuilt["app_id"] == original["app_id"]
    assert rebuilt["configs"] == {k: v for k, v in (original.get("configs") or {}).items() if v is not None}
    ids = [t["id"] for t in original["tasks"]]
    assert [t["id"] for t in rebuilt["tasks"]] == sorted(ids, key=lambda t: TaskId.parse(t).sort_key)
    # The rebuilt scenario is the tables' normal form: written and read again, it comes back unchanged.
    assert input_rows_to_scenarios(scenario_to_input_rows(rebuilt)) == [rebuilt]
    # And it plans exactly the same, whichever assignor (tables hold previous tasks per consumer, so the
    # original is compared in that form: its consumers' share of the tasks depends on it).
    for assignor in ASSIGNORS:
        a = plan_scenario(_as_tables_say(original), now_ms=NOW, assignor=assignor)
        b = plan_scenario(rebuilt, now_ms=NOW, assignor=assignor)
        assert _without(a, "elapsed_ms") == _without(b, "elapsed_ms"), assignor


# Random scenarios of every shape the generator draws (stale ids, conflicting owners, sentinel lags, consumers
# with their own history, partial racks, tags), for the round trip below.
ROUND_TRIP_KNOBS = {
    "default": DEFAULT_KNOBS,
    "racks_and_tags": Knobs(racks=True, tags=True, strategies=("min_traffic", "balance_subtopology")),
    "consumer_history": Knobs(consumer_history_share=0.9),
    **{name: replace(DEFAULT_KNOBS, **overrides) for name, (overrides, _) in UNUSUAL_SHAPES.items()},
}
ROUND_TRIP_SEEDS = range(40)
_CLIENT_PATH = re.compile(r"^clients\[\d+\](\.consumers\[\d+\])?\.?")


def _warnings(detail: str | None) -> list[str]:
    """error_detail's parts without their client's place in the scenario: the tables' reading orders the
    clients by process id and their consumers by id, so the same warning names another index."""
    return sorted(_CLIENT_PATH.sub("", part) for part in (detail or "").split("; ") if part)


@pytest.mark.parametrize("knobs", sorted(ROUND_TRIP_KNOBS))
def test_random_scenarios_written_as_rows_plan_the_same(knobs):
    """A scenario written as input rows and read back plans exactly as the scenario (whose consumers hold
    their previous tasks as the rows do), whatever the assignor. Not comparable: `"lags_computed": false`,
    which rows say only as a changelog partition without an end offset (so not at all for an application
    without changelogs), and which then keep no end sums of the lags the scenario still gives."""
    compared = 0
    for seed in ROUND_TRIP_SEEDS:
        scenario = generate_scenario(seed, ROUND_TRIP_KNOBS[knobs])
        if not scenario.get("lags_computed", True):
            continue
        (rebuilt,) = input_rows_to_scenarios(scenario_to_input_rows(scenario))
        for assignor in (*ASSIGNORS, "streams_sticky"):
            want = plan_scenario(_as_tables_say(scenario), now_ms=NOW, assignor=assignor)
            got = plan_scenario(rebuilt, now_ms=NOW, assignor=assignor)
            assert _warnings(got["error_detail"]) == _warnings(want["error_detail"]), (seed, assignor)
            assert _without(got, "elapsed_ms", "error_detail") == _without(
                want, "elapsed_ms", "error_detail"
            ), (seed, assignor)
            compared += 1
    assert compared >= 4 * len(ROUND_TRIP_SEEDS) * 3 // 4


def test_rows_of_several_scenarios_merge_table_by_table():
    a, b = (_example(p) for p in EXAMPLES[:2])
    merged = contract.merge_input_rows(scenario_to_input_rows(a), scenario_to_input_rows(b))
    assert merged == scenario_to_input_rows([a, b])
    rebuilt = input_rows_to_scenarios(merged, apps=[b["app_id"]])
    assert [s["app_id"] for s in rebuilt] == [b["app_id"]]


def test_input_rows_from_a_dataframe_reader_nan_and_arrays_read_as_nulls_and_lists():
    import numpy as np

    nan = float("nan")
    tables = {
        "applications": [{"app_id": "a", "cluster_id": nan, "num_standby_replicas": 1.0,
                          "rack_aware_assignment_tags": np.array(["zone"]),
                          "assignor_configs": [("k", "v")]}],
        "tasks": [{"app_id": "a", "task_id": "0_0", "state_stores": np.array(["s"]),
                   "source_partitions": None, "changelog_partitions": [("cl", np.int32(0))]}],
        "client_subscriptions": [{"app_id": "a", "process_id": "00000000-0000-0000-0000-000000000001",
                                  "consumer_client_id": "c", "rack_id": "", "client_tags": None,
                                  "prev_active_tasks": np.array(["0_0"]), "prev_standby_tasks": None}],
        "task_offsets": [{"app_id": "a", "process_id": "x", "task_id": "0_0", "offset_sum": nan}],
    }  # fmt: skip
    (scenario,) = input_rows_to_scenarios(tables)
    assert scenario["configs"] == {
        "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"], "assignor_configs": {"k": "v"},
    }  # fmt: skip
    assert scenario["tasks"][0]["partitions"] == [
        {"topic": "cl", "partition": 0, "source": False, "changelog": True, "racks": []}
    ]
    (client,) = scenario["clients"]
    assert client["rack"] is None and client["tags"] == {}
    # no end offsets at all: lags cannot be computed, but a previous active runs its task
    assert scenario["lags_computed"] is False and client["lags"] == {"0_0": -2}
