"""The pure-Python half of the grouped map (no Spark): compact JSON -> scenario -> output rows, the path ->
row-key mapping, and POLICY.md §4/§5 statuses (ASSIGNOR_FAILED keeps the previous plan with an immediate
follow-up; INVALID_ASSIGNMENT writes no plan rows)."""

from __future__ import annotations

import gc
import json
import sys
import types

import pyarrow as pa
import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    BaseTaskAssignor,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
)
from fleet_assignor.jobs.grouped import WORKER_GC_THRESHOLD, arrow_function, pandas_function, rows_table
from fleet_assignor.jobs.plan_rows import COLUMNS, PlanSettings, plan_application
from fleet_assignor.jobs.scenario_shape import describe_path, invalid_input_detail, shape_application
from fleet_assignor.schemas.contract import KIND_COLUMNS

NOW = 1_767_225_600_000
P1, P2 = str(ProcessId.of(1)), str(ProcessId.of(2))


def compact(**overrides) -> str:
    """What jobs.prepare builds for a two-client app with a stateful 0_0 (end sum 100) and stateless 0_1."""
    obj = {
        "app_id": "a",
        "configs": {"num_standby_replicas": 1},
        "tasks": [
            {"id": "0_0", "stores": ["s"], "end_sum": 100, "partitions": [
                {"topic": "cl", "partition": 0, "source": False, "changelog": True, "racks": []}]},
            {"id": "0_1", "stores": [], "partitions": [
                {"topic": "in", "partition": 1, "source": True, "changelog": False, "racks": []}]},
        ],
        "clients": [
            {"process_id": P1, "consumers": [{"id": "c1", "prev_active": ["0_0"], "prev_standby": []}],
             "rack": None, "tags": {}, "lags": {"0_0": -2}},
            {"process_id": P2, "consumers": [{"id": "c2", "prev_active": ["0_1"], "prev_standby": []}],
             "rack": None, "tags": {}, "lags": {"0_0": 60}},
        ],
        "lags_computed": True,
    }  # fmt: skip
    obj.update(overrides)
    return json.dumps(obj)


class FailingAssignor(BaseTaskAssignor):
    def assign(self, application_state):
        raise RuntimeError("boom from the assignor")


class DoubleActiveAssignor(BaseTaskAssignor):
    def assign(self, application_state):
        task = TaskId.parse("0_1")
        return TaskAssignment.of(
            [KafkaStreamsAssignment.of(pid, [AssignedTask.active(task)]) for pid in application_state.clients]
        )


@pytest.fixture(autouse=True)
def custom_assignors(monkeypatch):
    module = types.ModuleType("fleet_test_assignors")
    module.FailingAssignor = FailingAssignor
    module.DoubleActiveAssignor = DoubleActiveAssignor
    monkeypatch.setitem(sys.modules, "fleet_test_assignors", module)


def _kinds(rows):
    return [r["kind"] for r in rows]


def test_ok_app_gives_result_assignment_client_and_transition_rows():
    rows = plan_application("a", compact(), PlanSettings(now_ms=NOW))
    assert _kinds(rows)[0] == "RESULT"
    result = rows[0]
    assert (result["status"], result["error"], result["num_tasks"], result["num_stateful_tasks"]) == (
        "OK", "NONE", 2, 1,
    )  # fmt: skip
    clients = {r["process_id"]: r for r in rows if r["kind"] == "CLIENT"}
    assert set(clients) == {P1, P2}
    actives = sorted(t for r in clients.values() for t in r["active_tasks"])
    assert actives == ["0_0", "0_1"]
    threads = {
        (r["consumer_client_id"], r["task_id"], r["task_type"]) for r in rows if r["kind"] == "ASSIGNMENT"
    }
    assert ("c1", "0_0", "ACTIVE") in threads  # caught-up owner keeps its stateful task
    transitions = {
        (r["process_id"], r["task_id"]): r["transition"] for r in rows if r["kind"] == "TRANSITION"
    }
    assert transitions[(P1, "0_0")] == "KEEP_ACTIVE"


def test_assignor_that_raises_keeps_previous_plan_with_immediate_followup():
    settings = PlanSettings(now_ms=NOW, assignor="fleet_test_assignors:FailingAssignor")
    rows = plan_application("a", compact(), settings)
    result = rows[0]
    assert result["status"] == "ASSIGNOR_FAILED" and result["error"] == "NONE"
    assert "boom from the assignor" in result["error_detail"]
    assert result["probing_rebalance"] is True
    clients = {r["process_id"]: r for r in rows if r["kind"] == "CLIENT"}
    assert clients[P1]["active_tasks"] == ["0_0"] and clients[P2]["active_tasks"] == ["0_1"]
    assert {r["followup_rebalance_deadline_ms"] for r in clients.values()} == {NOW}
    assert any(r["kind"] == "TRANSITION" for r in rows)


def test_invalid_assignment_writes_only_the_result_row():
    settings = PlanSettings(now_ms=NOW, assignor="fleet_test_assignors:DoubleActiveAssignor")
    rows = plan_application("a", compact(), settings)
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_ASSIGNMENT"
    assert rows[0]["error"] == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    assert rows[0]["num_tasks"] == 2  # metrics are still reported


def test_row_problems_give_one_invalid_input_row_without_planning():
    rows = plan_application(
        "a", compact(problems=["tasks row (task_id=null): task_id is null"]), PlanSettings(NOW)
    )
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"] == "tasks row (task_id=null): task_id is null"
    assert rows[0].get("num_tasks") is None and rows[0].get("duration_ms") is None


def test_scenario_error_path_is_named_as_table_row_and_column():
    bad_config = compact(configs={"max_warmup_replicas": 0})
    rows = plan_application("a", bad_config, PlanSettings(NOW))
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"].startswith("applications row (app_id=a), column max_warmup_replicas: ")
    assert "(scenario path configs.max_warmup_replicas)" in rows[0]["error_detail"]
    unknown = plan_application("a", compact(), PlanSettings(NOW, assignor="nope"))
    assert unknown[0]["status"] == "INVALID_INPUT" and "nope" in unknown[0]["error_detail"]


def test_describe_path_maps_back_to_rows():
    scenario = shape_application("a", compact()).scenario
    assert describe_path(scenario, "clients[1].threads") == f"client_subscriptions rows of (process_id={P2})"
    assert describe_path(scenario, "clients[0].consumers[0].prev_active[0]") == (
        f"client_subscriptions row (process_id={P1}, consumer_client_id=c1)"
    )
    assert describe_path(scenario, "clients[0].tags") == (
        f"client_subscriptions rows of (process_id={P1}), column client_tags"
    )
    assert describe_path(scenario, "clients[1].lags.0_0") == f"task_offsets rows of (process_id={P2})"
    assert describe_path(scenario, "tasks[1].id") == "tasks row (task_id=0_1)"
    assert describe_path(scenario, "configs.assignor") == "applications row (app_id=a), column assignor"
    assert describe_path(scenario, "$") == "application (app_id=a)"


def test_clients_without_state_get_the_real_end_sum_when_no_lag_implies_it():
    # Only -2 and a partial lag are reported: the largest lag (60) is not the end sum (100).
    scenario = shape_application("a", compact()).scenario
    lags = {c["process_id"]: c["lags"] for c in scenario["clients"]}
    assert lags[P1] == {"0_0": -2} and lags[P2] == {"0_0": 60}
    third = json.loads(compact())
    third["clients"].append(
        {
            "process_id": str(ProcessId.of(3)),
            "consumers": [{"id": "c3"}],
            "rack": None,
            "tags": {},
            "lags": {},
        }
    )
    shaped = shape_application("a", json.dumps(third)).scenario
    assert shaped["clients"][2]["lags"] == {"0_0": 100}
    assert shaped["clients"][1]["lags"] == {"0_0": 60}


def test_no_clients_and_no_tasks_are_problems():
    assert "no clients" in shape_application("a", compact(clients=[])).problems[0]
    assert "no topology rows" in shape_application("a", compact(tasks=[])).problems[0]


def test_problem_detail_is_capped():
    detail = invalid_input_detail(tuple(f"p{i:02d}" for i in range(25)))
    assert detail.startswith("p00; p01") and detail.endswith("... and 5 more")


def test_arrow_output_holds_every_value_of_every_kind_of_row():
    """The grouped map's Arrow table holds every value of every row, in the rows' order, and nulls where a
    kind fills nothing."""
    rows = plan_application("a", compact(), PlanSettings(now_ms=NOW))
    rows += plan_application(
        "b", compact(app_id="b"), PlanSettings(now_ms=NOW, assignor="fleet_test_assignors:FailingAssignor")
    )
    rows += plan_application("c", compact(clients=[]), PlanSettings(now_ms=NOW))
    assert {r["kind"] for r in rows} == {"RESULT", "ASSIGNMENT", "CLIENT", "TRANSITION"}
    assert {r["status"] for r in rows if r["kind"] == "RESULT"} == {"OK", "ASSIGNOR_FAILED", "INVALID_INPUT"}

    # A row holds only columns its kind fills: a key that is no column would be dropped on the way to Arrow.
    for row in rows:
        assert set(row) <= set(KIND_COLUMNS[row["kind"]]), row["kind"]

    full_rows = [{column: row.get(column) for column in COLUMNS} for row in rows]
    assert rows_table(rows).to_pylist() == full_rows


def test_arrow_output_is_one_record_batch_per_call():
    """pyspark writes every record batch a grouped-map call returns as its own Arrow message, at a cost per
    batch that outweighs small applications' planning: the per-kind tables leave as one batch."""
    rows = plan_application("a", compact(), PlanSettings(now_ms=NOW))
    assert len({r["kind"] for r in rows}) > 1
    batches = rows_table(rows).to_batches()
    assert len(batches) == 1 and batches[0].num_rows == len(rows)


def test_a_grouped_map_call_raises_the_workers_gc_threshold_and_never_lowers_it():
    before = gc.get_threshold()
    table = pa.table({"app_id": ["a"], "scenario": [compact()]})
    try:
        gc.set_threshold(700, 10, 10)  # Python's default
        assert arrow_function(PlanSettings(now_ms=NOW))(table).num_rows > 1
        assert gc.get_threshold() == WORKER_GC_THRESHOLD
        gc.set_threshold(700, 10, 10)
        assert len(pandas_function(PlanSettings(now_ms=NOW))(table.to_pandas())) > 1
        assert gc.get_threshold() == WORKER_GC_THRESHOLD
        higher = (WORKER_GC_THRESHOLD[0] * 2, 20, 20)
        gc.set_threshold(*higher)
        arrow_function(PlanSettings(now_ms=NOW))(table)
        assert gc.get_threshold() == higher
    finally:
        gc.set_threshold(*before)


def test_input_that_cannot_even_be_shaped_is_one_invalid_input_row():
    rows = plan_application("a", "{not json", PlanSettings(NOW))
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"].startswith("could not be shaped: JSONDecodeError")


def test_a_custom_assignor_outside_the_allowlist_is_invalid_input():
    rows = plan_application("a", compact(configs={"assignor": "fleet_test_assignors:FailingAssignor"}),
                            PlanSettings(NOW))  # fmt: skip
    assert _kinds(rows) == ["RESULT"] and rows[0]["status"] == "INVALID_INPUT"
    assert "not allowed by the job's configuration" in rows[0]["error_detail"]
    assert rows[0]["assignor"] == "fleet_test_assignors:FailingAssignor"
    allowed = PlanSettings(NOW, allowed_assignors=frozenset({"fleet_test_assignors:FailingAssignor"}))
    rows = plan_application(
        "a", compact(configs={"assignor": "fleet_test_assignors:FailingAssignor"}), allowed
    )
    assert rows[0]["status"] == "ASSIGNOR_FAILED"


def test_an_application_whose_rows_arrow_cannot_hold_gets_one_error_row_and_the_others_their_plan(
    monkeypatch,
):
    import fleet_assignor.jobs.grouped as grouped

    real = grouped.plan_application

    def oversized(app_id, compact_json, settings):
        rows = real(app_id, compact_json, settings)
        if app_id == "bad":
            rows[0]["num_clients"] = 1 << 40  # an int column
        return rows

    monkeypatch.setattr(grouped, "plan_application", oversized)
    table = grouped.planned_table(
        [("good", compact()), ("bad", compact()), ("good2", compact())], PlanSettings(NOW)
    )
    rows = table.to_pylist()
    bad = [r for r in rows if r["app_id"] == "bad"]
    assert len(bad) == 1 and bad[0]["status"] == "INVALID_INPUT"
    assert bad[0]["error_detail"].startswith("could not be written: ")

    def timeless(rows):
        return [{k: v for k, v in r.items() if k != "duration_ms"} for r in rows]

    good = [r for r in rows if r["app_id"] == "good"]
    assert len(good) > 1
    assert timeless(good) == timeless(rows_table(real("good", compact(), PlanSettings(NOW))).to_pylist())
    assert [r["app_id"] for r in rows if r["kind"] == "RESULT"] == ["good", "bad", "good2"]
