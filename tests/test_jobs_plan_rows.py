"""The pure-Python half of the grouped map (no Spark): compact JSON -> scenario -> output rows, the path ->
row-key mapping, and POLICY.md §4/§5 statuses (ASSIGNOR_FAILED keeps the previous plan with an immediate
follow-up; INVALID_ASSIGNMENT writes no plan rows)."""

from __future__ import annotations

import json
import sys
import types

import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    BaseTaskAssignor,
    KafkaStreamsAssignment,
    TaskAssignment,
    TaskId,
)
from fleet_assignor.jobs.plan_rows import PlanSettings, plan_application
from tests.fixtures import JOBS_NOW, P1, P2, FailingAssignor, compact


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
    rows = plan_application("a", compact(), PlanSettings(now_ms=JOBS_NOW))
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
    settings = PlanSettings(now_ms=JOBS_NOW, assignor="fleet_test_assignors:FailingAssignor")
    rows = plan_application("a", compact(), settings)
    result = rows[0]
    assert result["status"] == "ASSIGNOR_FAILED" and result["error"] == "NONE"
    assert "boom from the assignor" in result["error_detail"]
    assert result["probing_rebalance"] is True
    clients = {r["process_id"]: r for r in rows if r["kind"] == "CLIENT"}
    assert clients[P1]["active_tasks"] == ["0_0"] and clients[P2]["active_tasks"] == ["0_1"]
    assert {r["followup_rebalance_deadline_ms"] for r in clients.values()} == {JOBS_NOW}
    assert any(r["kind"] == "TRANSITION" for r in rows)


def test_invalid_assignment_writes_only_the_result_row():
    settings = PlanSettings(now_ms=JOBS_NOW, assignor="fleet_test_assignors:DoubleActiveAssignor")
    rows = plan_application("a", compact(), settings)
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_ASSIGNMENT"
    assert rows[0]["error"] == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    assert rows[0]["num_tasks"] == 2  # metrics are still reported


def test_row_problems_give_one_invalid_input_row_without_planning():
    rows = plan_application(
        "a", compact(problems=["tasks row (task_id=null): task_id is null"]), PlanSettings(JOBS_NOW)
    )
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"] == "tasks row (task_id=null): task_id is null"
    assert rows[0].get("num_tasks") is None and rows[0].get("duration_ms") is None


def test_scenario_error_path_is_named_as_table_row_and_column():
    bad_config = compact(configs={"max_warmup_replicas": 0})
    rows = plan_application("a", bad_config, PlanSettings(JOBS_NOW))
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"].startswith("applications row (app_id=a), column max_warmup_replicas: ")
    assert "(scenario path configs.max_warmup_replicas)" in rows[0]["error_detail"]
    unknown = plan_application("a", compact(), PlanSettings(JOBS_NOW, assignor="nope"))
    assert unknown[0]["status"] == "INVALID_INPUT" and "nope" in unknown[0]["error_detail"]


@pytest.mark.parametrize("consumer", [5, [1], "", None])
def test_an_entry_of_the_wrong_type_is_named_by_its_row_not_raised(consumer):
    # The check rejects the entry; naming its row must not trip over it (it used to raise AttributeError,
    # which fails the grouped map's whole call).
    scenario = json.loads(compact())
    scenario["clients"][0]["consumers"] = [consumer]
    rows = plan_application("a", json.dumps(scenario), PlanSettings(JOBS_NOW))
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_INPUT"
    row_key = f"client_subscriptions row (process_id={P1}, consumer_client_id="
    assert rows[0]["error_detail"].startswith(row_key)
    assert rows[0]["error_detail"].endswith("(scenario path clients[0].consumers[0])")


def test_input_that_cannot_even_be_shaped_is_one_invalid_input_row():
    rows = plan_application("a", "{not json", PlanSettings(JOBS_NOW))
    assert _kinds(rows) == ["RESULT"]
    assert rows[0]["status"] == "INVALID_INPUT"
    assert rows[0]["error_detail"].startswith("could not be shaped: JSONDecodeError")


def test_a_custom_assignor_outside_the_allowlist_is_invalid_input():
    rows = plan_application("a", compact(configs={"assignor": "fleet_test_assignors:FailingAssignor"}),
                            PlanSettings(JOBS_NOW))  # fmt: skip
    assert _kinds(rows) == ["RESULT"] and rows[0]["status"] == "INVALID_INPUT"
    assert "not allowed by the job's configuration" in rows[0]["error_detail"]
    assert rows[0]["assignor"] == "fleet_test_assignors:FailingAssignor"
    allowed = PlanSettings(JOBS_NOW, allowed_assignors=frozenset({"fleet_test_assignors:FailingAssignor"}))
    rows = plan_application(
        "a", compact(configs={"assignor": "fleet_test_assignors:FailingAssignor"}), allowed
    )
    assert rows[0]["status"] == "ASSIGNOR_FAILED"
