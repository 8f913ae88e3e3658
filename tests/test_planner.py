"""Planning one application: assignor choice, the KIP-924 protocol calls, statuses, the result object."""

from __future__ import annotations

import gc
import re
import sys
import types

import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    AssignmentError,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskAssignmentException,
)
from fleet_assignor.assignor.planner import (
    LAGS_NOT_COMPUTED_NOTE,
    evaluate_assignment,
    parse_external_assignment,
    plan,
    plan_scenario,
    validate_scenario_assignment,
)
from fleet_assignor.assignor.scenario import ScenarioError, load_scenario

P_LOW = "00000000-0000-0000-0000-000000000001"
P_NEG = "80000000-0000-0000-0000-000000000002"  # first in signed ProcessId order, last as text
MODULE = "planner_test_assignors"
CALLS: list[tuple] = []
GC_ENABLED: list[bool] = []  # whether the cyclic collector ran inside AllOnFirst.assign


def _first_client(state):
    return next(iter(state.kafka_streams_states(False)))


class AllOnFirst:
    """Every task active on the first client in ProcessId order; records the protocol calls."""

    def configure(self, configs):
        CALLS.append(("configure", dict(configs)))

    def assign(self, state):
        CALLS.append(("assign", state.now_ms))
        GC_ENABLED.append(gc.isenabled())
        first = _first_client(state)
        return TaskAssignment.of(
            KafkaStreamsAssignment.of(
                pid, [AssignedTask.active(t) for t in state.all_tasks()] if pid == first else []
            )
            for pid in state.kafka_streams_states(False)
        )

    def on_assignment_computed(self, assignment, state, error):
        CALLS.append(("on_assignment_computed", len(assignment), error))


class Raising:
    def assign(self, state):
        raise TaskAssignmentException("no way to place the tasks")


class RaisingValueError:
    def assign(self, state):
        raise ValueError("something else broke")


class ReturnsNone:
    def assign(self, state):
        return None


class RaisingInCallback(AllOnFirst):
    def on_assignment_computed(self, assignment, state, error):
        raise RuntimeError("callback failed")


class ActiveTwice(AllOnFirst):
    def assign(self, state):
        return TaskAssignment.of(
            KafkaStreamsAssignment.of(pid, [AssignedTask.active(t) for t in state.all_tasks()])
            for pid in state.kafka_streams_states(False)
        )


class ReturnsAMapping:
    """A dict of assignments, one with a follow-up, and no task at all."""

    def assign(self, state):
        first = _first_client(state)
        return {
            pid: KafkaStreamsAssignment(pid).with_followup_rebalance(state.now_ms + 5)
            if pid == first
            else KafkaStreamsAssignment(pid)
            for pid in state.kafka_streams_states(False)
        }


class DeadlineOf(AllOnFirst):
    """Every client asks for a follow-up at DEADLINE (set by the test)."""

    DEADLINE: object = 0

    def assign(self, state):
        return TaskAssignment.of(a.with_followup_rebalance(self.DEADLINE) for a in super().assign(state))


class ForeignSpelling(AllOnFirst):
    """Builds its own ProcessIds from the canonical text instead of using the state's."""

    def assign(self, state):
        return TaskAssignment.of(
            KafkaStreamsAssignment.of(ProcessId.parse(pid.canonical), list(a.tasks().values()))
            for pid, a in ((a.process_id(), a) for a in super().assign(state))
        )


@pytest.fixture(autouse=True)
def custom_assignors(monkeypatch):
    module = types.ModuleType(MODULE)
    for cls in (
        AllOnFirst,
        Raising,
        RaisingValueError,
        ReturnsNone,
        RaisingInCallback,
        ActiveTwice,
        ReturnsAMapping,
        DeadlineOf,
        ForeignSpelling,
    ):
        setattr(module, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, MODULE, module)
    CALLS.clear()
    GC_ENABLED.clear()


def _task(task_id: str, changelog: bool) -> dict:
    partitions = [{"topic": "in", "partition": int(task_id[2:]), "source": True}]
    if changelog:
        partitions.append({"topic": "cl", "partition": int(task_id[2:]), "changelog": True})
    return {"id": task_id, "stores": ["s"] if changelog else [], "partitions": partitions}


def scenario_dict(assignor: str | None = f"{MODULE}:AllOnFirst") -> dict:
    return {
        "app_id": "app",
        "configs": {"acceptable_recovery_lag": 100, "assignor": assignor, "assignor_configs": {"k": "v"}},
        "tasks": [_task("0_0", True), _task("0_1", True), _task("1_0", False)],
        "clients": [
            {
                "process_id": P_LOW,
                "consumers": ["c1", "c2"],
                "prev_active": ["0_0"],
                "prev_standby": ["0_1"],
                "lags": {"0_0": -2, "0_1": 20},
            },
            {
                "process_id": P_NEG,
                "consumers": [{"id": "n1", "prev_active": ["0_1"]}, {"id": "n2"}],
                "lags": {"0_1": -2, "0_0": 1000},
            },
        ],
    }


def without_elapsed(result: dict) -> dict:
    assert isinstance(result["elapsed_ms"], float) and result["elapsed_ms"] == round(result["elapsed_ms"], 3)
    return {k: v for k, v in result.items() if k != "elapsed_ms"}


def test_a_custom_assignor_result_in_full():
    result = plan_scenario(scenario_dict(), now_ms=1000)
    assert list(result) == [
        "assignor", "status", "assignment", "probing_rebalance", "error", "error_detail", "unassigned",
        "metrics", "elapsed_ms",
    ]  # fmt: skip
    assert without_elapsed(result) == {
        "assignor": f"{MODULE}:AllOnFirst",
        "status": "OK",
        "assignment": [  # by process id as text
            {
                "process_id": P_LOW,
                "active": [],
                "standby": [],
                "warmup": [],
                "consumers": {"c1": {"active": [], "standby": []}, "c2": {"active": [], "standby": []}},
                "followup_rebalance_deadline_ms": None,
            },
            {
                "process_id": P_NEG,
                "active": ["0_0", "0_1", "1_0"],
                "standby": [],
                "warmup": [],
                # n1 keeps 0_1 (its state), n2 takes 0_0, the stateless 1_0 goes to the first at the minimum
                "consumers": {
                    "n1": {"active": ["0_1", "1_0"], "standby": []},
                    "n2": {"active": ["0_0"], "standby": []},
                },
                "followup_rebalance_deadline_ms": None,
            },
        ],
        "probing_rebalance": False,
        "error": "NONE",
        "error_detail": None,
        "unassigned": [],
        "metrics": {
            "active_moves": 1,  # 0_0 left P_LOW
            "standby_moves": 0,
            "warmups": 0,
            "cross_rack_cost": None,  # no racks known
            "restore_lag": 1000,  # P_NEG is 1000 behind on 0_0, more than 100
            "max_tasks_per_thread": 1.5,
            "min_tasks_per_thread": 0.0,
            "num_clients": 2,
            "num_threads": 4,
            "num_tasks": 3,
            "num_stateful_tasks": 2,
        },
    }
    assert list(result["assignment"][0]) == [
        "process_id", "active", "standby", "warmup", "consumers", "followup_rebalance_deadline_ms",
    ]  # fmt: skip


def test_the_protocol_calls_configure_assign_then_on_assignment_computed():
    plan_scenario(scenario_dict(), now_ms=77)
    assert CALLS == [
        ("configure", {"k": "v"}),
        ("assign", 77),
        ("on_assignment_computed", 2, AssignmentError.NONE),
    ]


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("Raising", "no way to place the tasks"),
        ("RaisingValueError", "something else broke"),
        ("ReturnsNone", "assign() returned NoneType, not a TaskAssignment"),
        ("RaisingInCallback", "callback failed"),
    ],
)
def test_an_assignor_that_fails_keeps_the_previous_assignment_and_asks_for_an_immediate_rebalance(
    name, detail
):
    result = plan_scenario(scenario_dict(f"{MODULE}:{name}"), now_ms=5000)
    assert result["status"] == "ASSIGNOR_FAILED"
    assert result["error"] == "NONE"
    assert result["error_detail"] == detail
    assert result["probing_rebalance"] is True
    by_client = {a["process_id"]: a for a in result["assignment"]}
    assert set(by_client) == {P_LOW, P_NEG}
    assert (by_client[P_LOW]["active"], by_client[P_LOW]["standby"]) == (["0_0"], ["0_1"])
    assert (by_client[P_NEG]["active"], by_client[P_NEG]["standby"]) == (["0_1"], [])  # from n1's history
    assert all(a["followup_rebalance_deadline_ms"] == 5000 for a in result["assignment"])
    assert result["unassigned"] == ["1_0"]  # identity: the stateless 1_0 ran nowhere before
    assert result["metrics"]["active_moves"] == 0


def test_a_failed_assignor_keeping_a_task_active_twice_counts_its_moves_over_both_clients():
    """The kept previous assignment is not checked by validation's error (NONE for a failed assignor), so its
    metrics cannot assume each task active once: both clients ran 0_0 before and keep running it, so
    nothing moved (a count that assumed one active per task would find three kept of two)."""
    obj = scenario_dict(f"{MODULE}:Raising")
    obj["clients"][1]["consumers"][0]["prev_active"] = ["0_1", "0_0"]
    result = plan_scenario(obj, now_ms=5000)
    assert result["status"] == "ASSIGNOR_FAILED"
    assert result["error"] == "NONE"
    by_client = {a["process_id"]: a["active"] for a in result["assignment"]}
    assert by_client == {P_LOW: ["0_0"], P_NEG: ["0_0", "0_1"]}
    assert result["metrics"]["active_moves"] == 0


def test_an_invalid_assignment_is_reported_as_returned():
    result = plan_scenario(scenario_dict(f"{MODULE}:ActiveTwice"), now_ms=0)
    assert result["status"] == "INVALID_ASSIGNMENT"
    assert result["error"] == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    assert result["error_detail"].count("ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES") == 3
    assert all(a["active"] == ["0_0", "0_1", "1_0"] for a in result["assignment"])
    assert CALLS[-1] == ("on_assignment_computed", 2, AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES)


def test_unassigned_tasks_are_not_an_error_and_a_mapping_result_is_accepted():
    result = plan_scenario(scenario_dict(f"{MODULE}:ReturnsAMapping"), now_ms=10)
    assert result["status"] == "OK"
    assert result["unassigned"] == ["0_0", "0_1", "1_0"]
    assert result["probing_rebalance"] is True
    deadlines = {a["process_id"]: a["followup_rebalance_deadline_ms"] for a in result["assignment"]}
    assert deadlines == {P_NEG: 15, P_LOW: None}


def test_the_override_beats_the_configured_assignor_which_beats_the_default():
    assert plan_scenario(scenario_dict(), assignor="fallback_prior", now_ms=0)["assignor"] == "fallback_prior"
    assert plan_scenario(scenario_dict(), now_ms=0)["assignor"] == f"{MODULE}:AllOnFirst"
    assert plan_scenario(scenario_dict(None), now_ms=0)["assignor"] == "high_availability"


def test_unknown_assignors_are_unusable_input_naming_where_the_name_came_from():
    with pytest.raises(ScenarioError, match="unknown assignor 'magic'") as raised:
        plan_scenario(scenario_dict("magic"), now_ms=0)
    assert raised.value.path == "configs.assignor"
    assert "unknown assignor 'magic'" in raised.value.reason
    with pytest.raises(ScenarioError, match=r"^--assignor: ") as raised:
        plan_scenario(scenario_dict(), assignor=f"{MODULE}:Nope", now_ms=0)
    assert raised.value.path == "--assignor"


def test_without_lags_high_availability_runs_as_fallback_prior_and_says_why():
    obj = scenario_dict(None)
    obj["lags_computed"] = False
    result = plan_scenario(obj, now_ms=0)
    assert result["assignor"] == "fallback_prior"
    assert result["error_detail"] == LAGS_NOT_COMPUTED_NOTE
    assert result["status"] == "OK"
    overridden = plan_scenario(obj, assignor="high_availability", now_ms=0)
    assert overridden["assignor"] == "fallback_prior"


def test_without_lags_a_custom_assignor_still_runs():
    obj = scenario_dict()
    obj["lags_computed"] = False
    result = plan_scenario(obj, now_ms=0)
    assert result["assignor"] == f"{MODULE}:AllOnFirst"
    assert result["error_detail"] is None


def test_input_warnings_go_into_error_detail_after_the_problems():
    obj = scenario_dict(f"{MODULE}:ActiveTwice")
    obj["clients"][0]["prev_active"].append("5_5")
    detail = plan_scenario(obj, now_ms=0)["error_detail"]
    assert detail.startswith("ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES")
    assert detail.endswith("; clients[0].prev_active[1]: unknown task 5_5 dropped")


def test_an_application_without_tasks_plans_to_empty_assignments():
    obj = scenario_dict("fallback_prior")
    obj["tasks"] = []
    obj["clients"][0]["prev_active"] = obj["clients"][0]["prev_standby"] = []
    obj["clients"][0]["lags"] = obj["clients"][1]["lags"] = {}
    obj["clients"][1]["consumers"] = ["n1", "n2"]
    result = plan_scenario(obj, now_ms=0)
    assert result["status"] == "OK"
    assert all(a["active"] == [] and a["standby"] == [] for a in result["assignment"])
    assert result["unassigned"] == []
    assert result["metrics"]["num_tasks"] == 0


def test_fallback_deadlines_follow_the_planning_instant_and_reruns_are_identical():
    obj = scenario_dict("fallback_prior")
    first = without_elapsed(plan_scenario(obj, now_ms=1_000))
    assert first == without_elapsed(plan_scenario(obj, now_ms=1_000))
    later = without_elapsed(plan_scenario(obj, now_ms=2_000))
    deadlines = [a["followup_rebalance_deadline_ms"] for a in first["assignment"]]
    # fallback_prior always asks for a follow-up, on the smallest ProcessId (P_NEG, listed last as text)
    assert deadlines == [None, 601_000]
    assert [a["followup_rebalance_deadline_ms"] for a in later["assignment"]] == [None, 602_000]


def test_unusable_input_raises_scenario_error():
    obj = scenario_dict()
    obj["clients"] = []
    with pytest.raises(ScenarioError, match=r"^clients: no clients$"):
        plan_scenario(obj, now_ms=0)


# --- assignments computed elsewhere -------------------------------------------------------------------------


def external(*entries: dict) -> dict:
    return {"assignment": list(entries), "validation_error": "ignored"}


def test_an_external_assignment_is_checked_row_by_row():
    result = validate_scenario_assignment(
        scenario_dict(),
        external(
            {"process_id": P_LOW, "active": ["0_0", "0_0"], "standby": ["0_1"]},
            {"process_id": P_NEG, "active": ["0_1"], "standby": ["0_1", "1_0"], "warmup": ["0_1"]},
        ),
    )
    assert result["assignor"] == "external"
    assert result["status"] == "INVALID_ASSIGNMENT"
    assert result["error"] == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    problems = result["error_detail"].split("; ")
    assert [p.split(":")[0] for p in problems] == [
        "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES",  # 0_0 listed twice on P_LOW
        "ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS",  # 0_1 on P_NEG
        "INVALID_STANDBY_TASK",  # 1_0 has no changelog
    ]
    neg = next(a for a in result["assignment"] if a["process_id"] == P_NEG)
    assert (neg["active"], neg["standby"], neg["warmup"]) == (["0_1"], ["0_1", "1_0"], ["0_1"])
    assert result["metrics"]["warmups"] == 1


def test_an_external_assignment_with_unknown_clients_and_tasks_and_a_missing_client():
    other = "00000000-0000-0000-0000-0000000000ff"
    result = validate_scenario_assignment(
        scenario_dict(),
        external(
            {"process_id": P_LOW, "active": ["0_0", "0_1", "1_0", "7_7"], "standby": []},
            {"process_id": other, "active": [], "standby": []},
        ),
    )
    assert result["error"] == "MISSING_PROCESS_ID"
    assert [p.split(":")[0] for p in result["error_detail"].split("; ")] == [
        "MISSING_PROCESS_ID", "UNKNOWN_PROCESS_ID", "UNKNOWN_TASK_ID",
    ]  # fmt: skip
    unknown = next(a for a in result["assignment"] if a["process_id"] == other)
    assert unknown["consumers"] == {}


def test_a_valid_external_assignment_is_ok():
    scenario = load_scenario(scenario_dict())
    parsed = parse_external_assignment(
        external(
            {"process_id": P_LOW, "active": ["0_0", "1_0"], "standby": []},
            {"process_id": P_NEG.upper(), "active": ["0_1"], "standby": ["0_0"], "warmup": ["0_0"]},
        )
    )
    result = evaluate_assignment(scenario, parsed).as_dict()
    assert (result["status"], result["error"], result["error_detail"], result["unassigned"]) == (
        "OK",
        "NONE",
        None,
        [],
    )
    assert result["metrics"]["active_moves"] == 0
    assert result["metrics"]["warmups"] == 1
    assert [a["process_id"] for a in result["assignment"]] == [P_LOW, P_NEG]


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ([], "$"),
        ({}, "assignment"),
        ({"assignment": [1]}, "assignment[0]"),
        ({"assignment": [{"process_id": "nope", "active": []}]}, "assignment[0].process_id"),
        ({"assignment": [{"process_id": P_LOW, "active": ["0_0", "x"]}]}, "assignment[0].active[1]"),
        ({"assignment": [{"process_id": P_LOW, "standby": "0_0"}]}, "assignment[0].standby"),
    ],
)
def test_an_unusable_external_assignment_names_the_field(obj, path):
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: ")) as raised:
        parse_external_assignment(obj)
    assert raised.value.path == path


def test_the_parsed_rows_keep_duplicates():
    parsed = parse_external_assignment(
        external({"process_id": P_LOW, "active": ["0_0", "0_0"], "standby": ["0_0"]})
    )
    assert sorted(t.type.value for a in parsed for t in a.tasks().values()) == ["ACTIVE", "ACTIVE", "STANDBY"]
    assert {a.process_id() for a in parsed} == {ProcessId.parse(P_LOW)}


@pytest.mark.parametrize("deadline", [-1, 9_223_372_036_855, 1 << 63, -(1 << 63)])
def test_a_follow_up_deadline_outside_the_instant_range_is_an_assignor_failure(monkeypatch, deadline):
    monkeypatch.setattr(DeadlineOf, "DEADLINE", deadline)
    result = plan_scenario(scenario_dict(f"{MODULE}:DeadlineOf"), now_ms=5000)
    assert result["status"] == "ASSIGNOR_FAILED"
    assert (
        f"the follow-up deadline {deadline!r}: not an instant within 0 .. 9223372036854 ms"
        in (result["error_detail"])
    )
    assert all(a["followup_rebalance_deadline_ms"] == 5000 for a in result["assignment"])


def test_a_follow_up_deadline_at_the_last_instant_is_kept(monkeypatch):
    monkeypatch.setattr(DeadlineOf, "DEADLINE", 9_223_372_036_854)
    result = plan_scenario(scenario_dict(f"{MODULE}:DeadlineOf"), now_ms=5000)
    assert result["status"] == "OK"
    assert {a["followup_rebalance_deadline_ms"] for a in result["assignment"]} == {9_223_372_036_854}


@pytest.mark.parametrize("assignor", ["fallback_prior", "high_availability"])
def test_a_probing_interval_past_the_last_instant_saturates_the_deadline(assignor):
    obj = scenario_dict(assignor)
    obj["configs"]["probing_rebalance_interval_ms"] = (1 << 63) - 1
    obj["configs"]["num_standby_replicas"] = 1
    obj["clients"][1]["lags"]["0_0"] = 10**12  # far behind: HA places a warmup and probes
    result = plan_scenario(obj, now_ms=1_767_225_600_000)
    deadlines = {a["followup_rebalance_deadline_ms"] for a in result["assignment"]} - {None}
    assert deadlines == {9_223_372_036_854}


def test_output_process_ids_keep_the_input_spelling_whichever_the_assignor_used():
    obj = scenario_dict(f"{MODULE}:ForeignSpelling")
    upper = P_NEG.upper()
    obj["clients"][1]["process_id"] = upper
    result = plan_scenario(obj, now_ms=0)
    assert result["status"] == "OK", result["error_detail"]
    assert sorted(a["process_id"] for a in result["assignment"]) == sorted([P_LOW, upper])


@pytest.mark.parametrize("enabled_before", [True, False])
def test_a_plan_runs_with_the_collector_paused_and_leaves_it_as_it_was(enabled_before):
    was = gc.isenabled()
    try:
        (gc.enable if enabled_before else gc.disable)()
        plan_scenario(scenario_dict(), now_ms=1000)
        assert GC_ENABLED == [False]
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()


def test_a_failing_assignor_leaves_the_collector_on():
    assert gc.isenabled()
    result = plan_scenario(scenario_dict(f"{MODULE}:RaisingValueError"), now_ms=0)
    assert result["status"] == "ASSIGNOR_FAILED"
    assert gc.isenabled()


@pytest.mark.parametrize("seed", range(12))
def test_results_read_by_place_are_the_merged_results(seed, monkeypatch):
    """An answer listing the state's own ids in its order gives the result the merging path gives, for
    every built-in assignor, first and second rounds."""
    from fleet_assignor.assignor import planner
    from fleet_assignor.assignor.validation import lists_each_client_in_order
    from tests.scenario_generator import generate_scenario, next_round

    first = generate_scenario(seed)
    read_by_place = 0
    for assignor in ("high_availability", "sticky", "fallback_prior", "streams_sticky"):
        rounds = [first]
        rounds.append(next_round(first, plan_scenario(first, assignor=assignor, now_ms=0)))
        for scenario_dict in rounds:
            scenario = load_scenario(scenario_dict, now_ms=0)
            result = plan(scenario, assignor=assignor)
            read_by_place += lists_each_client_in_order(scenario.application_state, result.task_assignment)
            by_place = result.as_dict()
            with monkeypatch.context() as patched:
                patched.setattr(planner, "lists_each_client_in_order", lambda *_: False)
                merged = plan(scenario, assignor=assignor).as_dict()
            by_place.pop("elapsed_ms"), merged.pop("elapsed_ms")
            assert by_place == merged
    assert read_by_place > 0


def test_the_split_over_consumers_is_worked_out_when_first_read_and_equals_the_distribution(monkeypatch):
    """A plan's split of each client's tasks over its consumers (`ConsumersOnDemand`) is made only when read
    (the rollout simulation's last round never reads it), once per client, and is what
    `distribute_client_tasks` gives; the result compares and prints as with a plain dict."""
    import fleet_assignor.assignor.planner as planner
    from fleet_assignor.assignor.distribution import distribute_client_tasks

    made = []
    monkeypatch.setattr(
        planner, "distribute_client_tasks", lambda *args: made.append(args) or distribute_client_tasks(*args)
    )
    scenario = load_scenario(scenario_dict("sticky"), now_ms=0)
    result = plan(scenario)
    assert made == []
    for client in result.clients:
        state = scenario.application_state.clients[client.process_id]
        expected = distribute_client_tasks(state, client.tasks.active, client.tasks.standby)
        assert dict(client.consumers.items()) == expected and list(client.consumers) == list(expected)
        assert client.consumers == expected and repr(client.consumers) == repr(expected)
        assert client.consumers.get("no such consumer") is None and len(client.consumers) == len(expected)
    assert len(made) == 2  # each of the two clients' split made once, however often read
    assert result.as_dict() == plan(scenario).as_dict() | {"elapsed_ms": result.elapsed_ms}
