"""task_transitions (tables.md): every transition kind and the restore_lag rules."""

from __future__ import annotations

from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.transitions import TransitionKind, task_transition_columns, task_transitions
from tests.scenario_generator import generate_scenarios

LOW = "00000000-0000-0000-0000-000000000001"
HIGH = "80000000-0000-0000-0000-000000000001"  # signed order: before LOW
GONE = "00000000-0000-0000-0000-000000000002"


def _task(task_id: str, changelog: bool = True) -> dict:
    partitions = [{"topic": "in", "partition": int(task_id[2:]), "source": True}]
    if changelog:
        partitions.append({"topic": "cl", "partition": int(task_id[2:]), "changelog": True})
    return {"id": task_id, "stores": ["s"] if changelog else [], "partitions": partitions}


def scenario():
    return load_scenario(
        {
            "tasks": [_task(f"0_{p}") for p in range(8)] + [_task("1_0", changelog=False)],
            "clients": [
                {
                    "process_id": LOW,
                    "threads": 1,
                    "prev_active": ["0_0", "0_1", "0_7", "1_0"],
                    "prev_standby": ["0_2", "0_3", "0_7"],  # 0_7 in both: counts as previous active
                    "lags": {
                        "0_0": -2,
                        "0_1": -2,
                        "0_2": 5,
                        "0_3": 0,
                        "0_4": -3,
                        "0_5": 30,
                        "0_6": 70,
                        "0_7": -2,
                    },
                },
                {"process_id": HIGH, "threads": 1, "prev_active": [], "lags": {"0_4": 100}},
                {"process_id": GONE, "threads": 1, "prev_active": ["0_5"], "prev_standby": ["0_6"]},
            ],
        }
    )


def rows(result_assignment):
    return [
        (str(x.process_id), str(x.task_id), x.transition.value, x.restore_lag)
        for x in task_transitions(scenario(), {"assignment": result_assignment})
    ]


def test_every_transition_kind_with_its_restore_lag():
    got = rows(
        [
            {
                "process_id": LOW,
                "active": ["0_0", "0_2", "0_4", "1_0"],
                "standby": ["0_1", "0_3", "0_5", "0_6"],
                "warmup": ["0_6"],
            },
            {"process_id": HIGH, "active": [], "standby": ["0_0"], "warmup": []},
        ]
    )
    assert got == [
        # HIGH sorts first (signed ProcessId order); no state for 0_0: its lag is the end sum (0)
        (HIGH, "0_0", "CREATE_STANDBY", 0),
        (LOW, "0_0", "KEEP_ACTIVE", 0),  # -2 -> 0
        (LOW, "0_1", "DEMOTE_ACTIVE", 0),
        (LOW, "0_2", "PROMOTE_STANDBY", 5),
        (LOW, "0_3", "KEEP_STANDBY", 0),
        (LOW, "0_4", "CREATE_ACTIVE", 100),  # -3 -> the end-offset sum (HIGH reported 100)
        (LOW, "0_5", "CREATE_STANDBY", 30),
        (LOW, "0_6", "CREATE_WARMUP", 70),
        (LOW, "0_7", "CLOSE", 0),  # previously active (and standby): closed, nothing to restore
        (LOW, "1_0", "KEEP_ACTIVE", 0),  # no changelog
        # a client missing from the result closes everything it had
        (GONE, "0_5", "CLOSE", 0),
        (GONE, "0_6", "CLOSE", 0),
    ]


def test_a_previous_standby_that_becomes_a_warmup_keeps_its_state_and_an_active_demoted_to_warmup():
    got = rows([{"process_id": LOW, "active": [], "standby": ["0_0", "0_2"], "warmup": ["0_0", "0_2"]}])
    low = {task: (kind, lag) for pid, task, kind, lag in got if pid == LOW}
    assert low["0_2"] == ("KEEP_STANDBY", 5)
    assert low["0_0"] == ("DEMOTE_ACTIVE", 0)
    assert low["0_1"] == ("CLOSE", 0)


def test_transitions_cover_each_client_task_pair_once():
    got = rows([{"process_id": LOW, "active": ["0_4"], "standby": ["0_4"]}])  # an invalid result: active wins
    pairs = [(pid, task) for pid, task, _, _ in got]
    assert len(pairs) == len(set(pairs))
    assert (LOW, "0_4", "CREATE_ACTIVE", 100) in got


def test_as_row_and_kinds():
    (first, *_) = task_transitions(scenario(), {"assignment": []})
    assert first.as_row() == {"process_id": LOW, "task_id": "0_0", "transition": "CLOSE", "restore_lag": 0}
    assert {k.value for k in TransitionKind} == {
        "KEEP_ACTIVE", "CREATE_ACTIVE", "PROMOTE_STANDBY", "KEEP_STANDBY", "CREATE_STANDBY", "CREATE_WARMUP",
        "DEMOTE_ACTIVE", "CLOSE",
    }  # fmt: skip


def test_a_bare_application_state_gives_the_same_transitions():
    result = {"assignment": [{"process_id": LOW, "active": ["0_4", "0_6"], "standby": ["0_5"], "warmup": []}]}
    loaded = scenario()
    assert task_transitions(loaded.application_state, result) == task_transitions(loaded, result)
    transitions = task_transitions(loaded.application_state, result)
    lags = {str(x.task_id): x.restore_lag for x in transitions if str(x.process_id) == LOW}
    assert (lags["0_4"], lags["0_5"], lags["0_6"]) == (100, 30, 70)


def test_a_plan_result_gives_the_same_transitions_as_its_result_object():
    # The fleet job hands `plan`'s PlanResult over directly; the CLI and the explorer use the result object.
    kinds = set()
    for raw in generate_scenarios(range(40)):
        loaded = load_scenario(raw, now_ms=1_700_000_000_000)
        planned = plan(loaded)
        from_result = task_transitions(loaded, planned)
        assert from_result == task_transitions(loaded, planned.as_dict())
        kinds |= {t.transition for t in from_result}
    # The generated scenarios reach warmups, promotions and closes, so every role mapping is compared.
    assert {TransitionKind.CREATE_WARMUP, TransitionKind.PROMOTE_STANDBY, TransitionKind.CLOSE} <= kinds


def test_the_columns_are_the_transitions_rows_column_by_column():
    # The fleet job writes the columns; the explorer and the CLI the objects' rows: the same values.
    for raw in generate_scenarios(range(40, 70)):
        loaded = load_scenario(raw, now_ms=1_700_000_000_000)
        planned = plan(loaded)
        for result in (planned, planned.as_dict()):
            rows = [t.as_row() for t in task_transitions(loaded, result)]
            columns = task_transition_columns(loaded, result)
            assert list(columns) == list(rows[0])
            assert [
                dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)
            ] == rows
