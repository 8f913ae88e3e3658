"""The exploration API over frames shaped as tables.md's outputs, built by hand for a tiny application.

Application `app-a`: clients PF (f000..., which sorts FIRST in Kafka's signed order), P1, P2; tasks 0_0, 0_1
(stateless) and 1_0, 1_1 (stateful, changelog `cl`). Every expected value below is worked out by hand from
the tables in this file and the definitions of scenario.md / tables.md.
"""

from __future__ import annotations

import pandas as pd
import pytest

from fleet_assignor import explore
from fleet_assignor.explore.frames import RunFrames

PF = "f0000000-0000-0000-0000-000000000000"
P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"
TS = pd.Timestamp("2026-01-01T00:00:00Z")


def clients_frame():
    return pd.DataFrame(
        [
            ("app-a", P1, "r1", {"zone": "a"}, ["c1a", "c1b"], 2, ["0_0", "0_1"], ["1_0"]),
            ("app-a", P2, "r2", {"zone": "b"}, ["c2a"], 1, ["1_0"], []),
            ("app-a", PF, "r1", {"zone": "a"}, ["cfa"], 1, [], []),
        ],
        columns=list(explore.frames.CLIENTS_COLUMNS),
    )


def partitions_frame():
    rows = [
        ("0_0", "in", 0, True, False, ["r1"]),
        ("0_1", "in", 1, True, False, ["r2"]),
        ("1_0", "in2", 0, True, False, ["r1", "r2"]),
        ("1_0", "cl", 0, False, True, ["r2"]),
        ("1_1", "in2", 1, True, False, ["r2"]),
        ("1_1", "cl", 1, False, True, ["r1"]),
    ]
    return pd.DataFrame([("app-a", *r) for r in rows], columns=list(explore.frames.TASK_PARTITIONS_COLUMNS))


def result_row(run_id, app_id, status="OK", error="NONE", **metrics):
    row = dict.fromkeys(explore.frames.RESULTS_COLUMNS)
    row.update(
        run_id=run_id, app_id=app_id, status=status, error=error, planned_at=TS, assignor="high_availability"
    )
    row.update(metrics)
    return row


def make_run(run_id="run-1", p2_standby_extra=False) -> RunFrames:
    assignments = [
        (P1, "c1a", "0_0", "ACTIVE", False),
        (P1, "c1b", "1_0", "ACTIVE", False),
        (P1, "c1b", "1_1", "STANDBY", False),
        (P2, "c2a", "1_1", "ACTIVE", False),
        (P2, "c2a", "1_0", "STANDBY", False),
        (PF, "cfa", "0_1", "ACTIVE", False),
        (PF, "cfa", "1_1", "STANDBY", True),
    ]
    clients = [
        (P1, ["0_0", "1_0"], ["1_1"]),
        (P2, ["1_1"], ["1_0"]),
        (PF, ["0_1"], ["1_1"]),
    ]
    transitions = [
        (P1, "0_0", "KEEP_ACTIVE", 0),
        (P1, "0_1", "CLOSE", 0),
        (P1, "1_0", "PROMOTE_STANDBY", 0),
        (P1, "1_1", "CREATE_STANDBY", 300),
        (P2, "1_0", "DEMOTE_ACTIVE", 0),
        (P2, "1_1", "CREATE_ACTIVE", 500),
        (PF, "0_1", "CREATE_ACTIVE", 0),
        (PF, "1_1", "CREATE_WARMUP", 800),
    ]
    results = [
        result_row(
            run_id,
            "app-a",
            active_moves=2,
            standby_moves=1,
            warmups=1,
            max_tasks_per_thread=1.0,
            min_tasks_per_thread=1.0,
            cross_rack_cost=1,
            restore_lag=500,
            probing_rebalance=True,
        ),
        result_row(run_id, "app-bad", status="INVALID_INPUT", error=None),
    ]
    return RunFrames.of(
        run_id,
        results=pd.DataFrame(results),
        assignments=pd.DataFrame(
            [(run_id, "app-a", *a) for a in assignments], columns=list(explore.frames.ASSIGNMENTS_COLUMNS)
        ),
        client_assignments=pd.DataFrame(
            [(run_id, "app-a", *c, None) for c in clients],
            columns=list(explore.frames.CLIENT_ASSIGNMENTS_COLUMNS),
        ),
        transitions=pd.DataFrame(
            [(run_id, "app-a", *t) for t in transitions], columns=list(explore.frames.TRANSITIONS_COLUMNS)
        ),
        clients=clients_frame(),
        task_partitions=partitions_frame(),
    )


@pytest.fixture
def run():
    return make_run()


def test_client_load_counts_roles_per_client_in_signed_process_order(run):
    load = explore.client_load(run, "app-a")
    assert list(load["process_id"]) == [PF, P1, P2]
    assert list(load["active"]) == [1, 2, 1]
    assert list(load["standby"]) == [0, 1, 1]  # warmups apart
    assert list(load["warmup"]) == [1, 0, 0]
    assert list(load["num_threads"]) == [1, 2, 1]
    assert list(load["active_per_thread"]) == [1.0, 1.0, 1.0]
    assert list(load["rack_id"]) == ["r1", "r1", "r2"]


def test_thread_load_per_consumer(run):
    load = explore.thread_load(run, "app-a")
    rows = {(r.process_id, r.consumer_client_id): (r.active, r.standby, r.warmup) for r in load.itertuples()}
    assert rows == {
        (PF, "cfa"): (1, 0, 1),
        (P1, "c1a"): (1, 0, 0),
        (P1, "c1b"): (1, 1, 0),
        (P2, "c2a"): (1, 1, 0),
    }
    assert list(load["process_id"]) == [PF, P1, P1, P2]


def test_thread_load_lists_idle_threads_from_the_inputs(run):
    clients = clients_frame()
    clients.loc[clients["process_id"] == P2, "consumers"] = pd.Series([["c2a", "c2b"]], index=[1])
    with_idle = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments,
        client_assignments=run.client_assignments,
        transitions=run.transitions,
        clients=clients,
        task_partitions=run.task_partitions,
    )
    load = explore.thread_load(with_idle, "app-a")
    idle = load[(load["process_id"] == P2) & (load["consumer_client_id"] == "c2b")]
    assert idle[["active", "standby", "warmup"]].values.tolist() == [[0, 0, 0]]


def test_moves_name_previous_and_new_owner_and_match_the_metric_counts(run):
    moves = explore.moves(run, "app-a")
    active = moves[moves["role"] == "ACTIVE"]
    assert active[["task_id", "from_process_id", "to_process_id", "transition"]].values.tolist() == [
        ["0_1", P1, PF, "CREATE_ACTIVE"],
        ["1_0", P2, P1, "PROMOTE_STANDBY"],
    ]
    assert moves[moves["role"] == "STANDBY"][["task_id", "to_process_id"]].values.tolist() == [["1_1", P1]]
    assert moves[moves["role"] == "WARMUP"][["task_id", "to_process_id"]].values.tolist() == [["1_1", PF]]
    counts = explore.move_counts(run, "app-a")
    result = run.result("app-a")
    assert counts == {
        "ACTIVE": result["active_moves"],
        "STANDBY": result["standby_moves"],
        "WARMUP": result["warmups"],
    }


def test_a_previous_active_left_unassigned_is_a_move_to_no_client(run):
    transitions = run.transitions[run.transitions["task_id"] != "0_1"]  # nobody runs 0_1 any more
    changed = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments,
        client_assignments=run.client_assignments,
        transitions=transitions,
        clients=run.clients,
        task_partitions=run.task_partitions,
    )
    moves = explore.moves(changed, "app-a")
    row = moves[(moves["role"] == "ACTIVE") & (moves["task_id"] == "0_1")].iloc[0]
    assert row["from_process_id"] == P1 and row["to_process_id"] is None


def test_standby_spread_across_racks_and_tags(run):
    spread = explore.standby_spread(run, "app-a").set_index("task_id")
    assert list(spread.index) == ["1_0", "1_1"]
    assert spread.loc["1_0", "active_process_id"] == P1
    assert spread.loc["1_0", ["num_standbys", "num_warmups", "distinct_racks", "distinct_zone"]].tolist() == [
        1,
        0,
        2,
        2,
    ]
    assert spread.loc["1_1", ["num_standbys", "num_warmups", "distinct_racks", "distinct_zone"]].tolist() == [
        1,
        1,
        2,
        2,
    ]
    assert spread["standbys_on_active_rack"].tolist() == [0, 0]


def test_standby_on_the_active_rack_is_flagged():
    run = make_run()
    clients = clients_frame()
    clients.loc[clients["process_id"] == P2, "rack_id"] = "r1"
    moved = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments,
        client_assignments=run.client_assignments,
        transitions=run.transitions,
        clients=clients,
        task_partitions=run.task_partitions,
    )
    spread = explore.standby_spread(moved, "app-a").set_index("task_id")
    assert spread.loc["1_0", "standbys_on_active_rack"] == 1
    assert spread.loc["1_0", "distinct_racks"] == 1


def test_rack_traffic_before_and_after_sums_to_the_cost_metric(run):
    traffic = explore.rack_traffic(run, "app-a")
    assert traffic[["process_id", "before", "after"]].values.tolist() == [[PF, 0, 1], [P1, 2, 0], [P2, 0, 0]]
    assert explore.rack_traffic_totals(run, "app-a") == (2, run.result("app-a")["cross_rack_cost"])
    fleet = explore.fleet_rack_traffic(run)
    assert fleet.values.tolist() == [["app-a", 2, 1]]


def test_rack_traffic_is_unknown_when_a_client_has_no_rack():
    run = make_run()
    clients = clients_frame()
    clients.loc[clients["process_id"] == P2, "rack_id"] = None
    unknown = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments,
        client_assignments=run.client_assignments,
        transitions=run.transitions,
        clients=clients,
        task_partitions=run.task_partitions,
    )
    assert explore.rack_traffic_totals(unknown, "app-a") == (None, None)


def test_restore_lag_lists_only_restoring_actives(run):
    lag = explore.restore_lag(run, "app-a")
    assert lag.values.tolist() == [[P2, "1_1", "CREATE_ACTIVE", 500]]
    per_client = explore.restore_lag_per_client(run, "app-a")
    assert per_client.values.tolist() == [[PF, 0, 0], [P1, 0, 0], [P2, 1, 500]]


def test_fleet_summary_and_errors_by_type(run):
    summary = explore.fleet_summary(run)
    assert list(summary["app_id"]) == ["app-a", "app-bad"]
    assert summary.loc[0, "imbalance"] == 0.0
    errors = explore.errors_by_type(run)
    assert errors.values.tolist() == [["INVALID_INPUT", "NONE", 1], ["OK", "NONE", 1]]


def test_analyses_needing_inputs_say_so():
    run = make_run()
    bare = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments,
        client_assignments=run.client_assignments,
        transitions=run.transitions,
    )
    with pytest.raises(explore.MissingInputsError, match="input_dir"):
        explore.moves(bare, "app-a")
    assert explore.client_load(bare, "app-a")["active"].tolist() == [1, 2, 1]


def test_unknown_application_is_a_clear_error(run):
    with pytest.raises(KeyError, match="app-zzz"):
        explore.client_load(run, "app-zzz")


def test_transition_counts_per_client_and_per_app(run):
    counts = explore.transition_counts(run, "app-a").set_index("process_id")
    assert counts.loc[P1, ["KEEP_ACTIVE", "CLOSE", "PROMOTE_STANDBY", "CREATE_STANDBY"]].tolist() == [
        1,
        1,
        1,
        1,
    ]
    assert counts.loc[P2, ["DEMOTE_ACTIVE", "CREATE_ACTIVE"]].tolist() == [1, 1]
    assert counts.loc[PF, ["CREATE_ACTIVE", "CREATE_WARMUP", "KEEP_STANDBY"]].tolist() == [1, 1, 0]
    per_app = explore.transition_counts(run)
    assert per_app.set_index("app_id").loc["app-a"].sum() == 8
    assert explore.fleet_transition_totals(run).to_dict()["CREATE_ACTIVE"] == 2
    rows = explore.task_transitions(run, "app-a", P2)
    assert rows[["task_id", "transition"]].values.tolist() == [
        ["1_0", "DEMOTE_ACTIVE"],
        ["1_1", "CREATE_ACTIVE"],
    ]


def test_compare_runs_and_assignment_diff():
    a = make_run("run-1")
    b_assign = a.assignments.copy()
    b_assign["run_id"] = "run-2"
    # In run-2, 0_1 runs on P2 instead of PF.
    b_assign.loc[b_assign["task_id"].eq("0_1") & b_assign["task_type"].eq("ACTIVE"), ["process_id"]] = P2
    results = a.results.copy()
    results["run_id"] = "run-2"
    results.loc[results["app_id"] == "app-a", "active_moves"] = 3
    clients = a.client_assignments.copy()
    clients["run_id"] = "run-2"
    b = RunFrames.of(
        "run-2",
        results=results,
        assignments=b_assign,
        client_assignments=clients,
        transitions=a.transitions.assign(run_id="run-2"),
    )
    comparison = explore.compare_runs(a, b).set_index("app_id")
    assert comparison.loc["app-a", "actives_differ"] == 1
    assert comparison.loc["app-a", "active_moves_delta"] == 1
    assert comparison.loc["app-a", "standbys_differ"] == 0
    diff = explore.assignment_diff(a, b, "app-a", only_changed=True)
    assert diff[["task_id", "active_a", "active_b"]].values.tolist() == [["0_1", PF, P2]]


def test_spark_like_frames_are_converted():
    class FakeSparkFrame:
        def __init__(self, pdf):
            self.pdf = pdf

        def toPandas(self):
            return self.pdf

    run = make_run()
    converted = RunFrames.of(
        run.run_id,
        results=FakeSparkFrame(run.results),
        assignments=FakeSparkFrame(run.assignments),
        client_assignments=FakeSparkFrame(run.client_assignments),
        transitions=FakeSparkFrame(run.transitions),
    )
    assert explore.client_load(converted, "app-a")["active"].tolist() == [1, 2, 1]
    with pytest.raises(TypeError, match="pandas or Spark"):
        explore.as_pandas([1, 2])


def test_transition_counts_of_a_run_without_transitions():
    run = make_run()
    empty = RunFrames.of(
        run.run_id,
        results=run.results,
        assignments=run.assignments.iloc[0:0],
        client_assignments=run.client_assignments.iloc[0:0],
        transitions=run.transitions.iloc[0:0],
    )
    assert list(explore.transition_counts(empty).columns) == ["app_id", *explore.TRANSITION_KINDS]
    assert explore.transition_counts(empty).empty
    assert explore.fleet_transition_totals(empty).sum() == 0
