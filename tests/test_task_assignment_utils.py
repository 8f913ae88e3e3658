"""TaskAssignmentUtils equivalents: Kafka's TaskAssignmentUtilsTest (assignors.md §11.5) ported, plus
RackAwareOptimizationParams, the standby move predicate and the POLICY.md fixes that live here."""

from __future__ import annotations

import uuid

import pytest

from fleet_assignor.assignor import (
    AssignedTask,
    AssignedTaskType,
    AssignmentConfigs,
    AssignmentError,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
    rack,
)
from fleet_assignor.assignor.task_assignment_utils import (
    AllowAllStandbyMoves,
    ClientTagSpreadPredicate,
    RackAwareOptimizationParams,
    default_standby_task_assignment,
    identity_assignment,
    standby_move_predicate,
    validate_task_assignment,
)
from tests.fixtures import (
    PID_1,
    PID_2,
    PID_3,
    PID_4,
    PID_5,
    TASK_0_0,
    TASK_0_1,
    TASK_0_2,
    TASK_0_3,
    TASK_0_4,
    TASK_0_5,
    TASK_1_1,
    app_state,
    kafka_assignment,
    pid,
    stateful_task,
    stateless_task,
    streams_state,
)


def configs(strategy: str = "none", standbys: int = 1, tags: tuple[str, ...] = ()) -> AssignmentConfigs:
    """Kafka's test configs: lag 0, 1 warmup, n standbys, 60 s, tags, traffic cost 100, non-overlap 1."""
    return AssignmentConfigs(0, 1, standbys, 60_000, tags, 100, 1, strategy)


def task_ids(assignments, n: int) -> set[TaskId]:
    return set(assignments[pid(n)].tasks())


# --- §11.5 ported ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_optimize_active_task_simple(strategy):
    state = app_state(
        [stateful_task(TASK_0_0, ["rack-2"]), stateful_task(TASK_0_1, ["rack-1"])],
        [streams_state(1, 1, rack="rack-1"), streams_state(2, 1, rack="rack-2")],
        configs(strategy),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0]),
        PID_2: kafka_assignment(2, active=[TASK_0_1]),
    }
    for _ in range(2):  # the second round must not shift anything
        rack.optimize_rack_aware_active_tasks(RackAwareOptimizationParams.of(state), assignments)
        assert len(assignments) == 2
        assert task_ids(assignments, 1) == {TASK_0_1}
        assert task_ids(assignments, 2) == {TASK_0_0}


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_optimize_standby_tasks_basic(strategy):
    state = app_state(
        [stateful_task(TASK_0_0, ["rack-2"]), stateful_task(TASK_0_1, ["rack-3"])],
        [streams_state(n, 2, rack=f"rack-{n}") for n in (1, 2, 3)],
        configs(strategy),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0, TASK_0_1]),
        PID_2: kafka_assignment(2, standby=[TASK_0_1]),
        PID_3: kafka_assignment(3, standby=[TASK_0_0]),
    }
    rack.optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(state), assignments)
    assert len(assignments) == 3
    assert task_ids(assignments, 1) == {TASK_0_0, TASK_0_1}
    assert task_ids(assignments, 2) == {TASK_0_0}
    assert task_ids(assignments, 3) == {TASK_0_1}


def test_should_assign_standby_tasks_with_client_tags():
    state = app_state(
        [stateful_task(TASK_0_0)],
        [streams_state(n, 2, tags={"az": az}) for n, az in ((1, "1"), (2, "1"), (3, "2"), (4, "3"))],
        configs("none", 2, ("az",)),
    )
    assignments = {PID_1: kafka_assignment(1, active=[TASK_0_0])}
    result = default_standby_task_assignment(state, assignments)
    assert result is assignments
    assert len(assignments) == 4
    assert assignments[PID_1].tasks() == {TASK_0_0: AssignedTask.active(TASK_0_0)}
    assert task_ids(assignments, 2) == set()
    assert assignments[PID_3].tasks() == {TASK_0_0: AssignedTask.standby(TASK_0_0)}
    assert assignments[PID_4].tasks() == {TASK_0_0: AssignedTask.standby(TASK_0_0)}


def test_should_assign_standby_tasks_by_client_load():
    state = app_state(
        [stateful_task(TASK_0_0)]
        + [stateless_task(t) for t in (TASK_0_1, TASK_0_2, TASK_0_3, TASK_0_4, TASK_0_5)],
        [streams_state(n, 5) for n in range(1, 6)],
        configs("none", 3),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0, TASK_0_1, TASK_0_2]),
        PID_2: kafka_assignment(2, active=[TASK_0_3, TASK_0_4, TASK_0_5]),
    }
    default_standby_task_assignment(state, assignments)
    assert len(assignments) == 5
    assert task_ids(assignments, 2) == {TASK_0_3, TASK_0_4, TASK_0_5}
    for n in (3, 4, 5):
        assert assignments[pid(n)].tasks() == {TASK_0_0: AssignedTask.standby(TASK_0_0)}


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_not_violate_client_tags_assignment_during_standby_optimization(strategy):
    state = app_state(
        [stateful_task(TASK_0_0, ["r1"]), stateful_task(TASK_0_1, ["r1"])],
        [
            streams_state(n, 2, rack="r1", tags={"az": az})
            for n, az in ((1, "1"), (2, "2"), (3, "3"), (4, "2"))
        ],
        configs(strategy, 2, ("az",)),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0], standby=[TASK_0_1]),
        PID_2: kafka_assignment(2, active=[TASK_0_1], standby=[TASK_0_0]),
        PID_3: kafka_assignment(3, standby=[TASK_0_0, TASK_0_1]),
        PID_4: kafka_assignment(4),
    }
    rack.optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(state), assignments)
    assert len(assignments) == 4
    for n in (1, 2, 3):
        assert task_ids(assignments, n) == {TASK_0_0, TASK_0_1}
    assert task_ids(assignments, 4) == set()


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_optimize_standby_tasks_with_multiple_racks(strategy):
    # despite its name, Kafka's test runs the active optimizer on an explicit task set
    state = app_state(
        [
            stateful_task(TASK_0_0, ["rack-1", "rack-2"]),
            stateful_task(TASK_0_1, ["rack-2", "rack-3"]),
            stateful_task(TASK_0_2, ["rack-3", "rack-4"]),
        ],
        [streams_state(n, 2, rack=f"rack-{n}") for n in (1, 2, 3)],
        configs(strategy),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0]),
        PID_2: kafka_assignment(2, active=[TASK_0_1]),
        PID_3: kafka_assignment(3, active=[TASK_0_2]),
    }
    params = RackAwareOptimizationParams.of(state).for_tasks({TASK_0_0, TASK_0_1, TASK_0_2})
    rack.optimize_rack_aware_active_tasks(params, assignments)
    assert len(assignments) == 3
    assert task_ids(assignments, 1) == {TASK_0_0}
    assert task_ids(assignments, 2) == {TASK_0_1}
    assert task_ids(assignments, 3) == {TASK_0_2}


def test_should_correctly_return_identity_assignment():
    three = (TASK_0_0, TASK_0_1, TASK_0_2)
    state = app_state(
        [stateful_task(t) for t in three],
        [
            streams_state(1, 5, previous_active=three),
            streams_state(2, 5, previous_standby=three),
            *(streams_state(n, 5) for n in (3, 4, 5)),
        ],
        configs(),
    )
    assignments = identity_assignment(state)
    assert list(assignments) == [PID_1, PID_2, PID_3, PID_4, PID_5]
    assert {t: a.type for t, a in assignments[PID_1].tasks().items()} == dict.fromkeys(
        three, AssignedTaskType.ACTIVE
    )
    assert {t: a.type for t, a in assignments[PID_2].tasks().items()} == dict.fromkeys(
        three, AssignedTaskType.STANDBY
    )
    for n in (3, 4, 5):
        assert task_ids(assignments, n) == set()
    assert all(a.followup_rebalance_deadline() is None for a in assignments.values())


def test_validate_task_assignment():
    state = app_state([stateless_task(TASK_1_1)], [streams_state(1, 5), streams_state(2, 5)], configs())

    def check(*assignments: KafkaStreamsAssignment) -> AssignmentError:
        return validate_task_assignment(state, TaskAssignment.of(assignments)).error

    assert check(kafka_assignment(1, active=[TASK_1_1]), kafka_assignment(2)) is AssignmentError.NONE
    assert check(kafka_assignment(1, active=[TASK_1_1])) is AssignmentError.MISSING_PROCESS_ID
    random_client = ProcessId.of(uuid.UUID("3f1b6d2e-9c4a-4e7b-8f10-2a5c6d7e8f90"))
    assert (
        check(kafka_assignment(1, active=[TASK_1_1]), kafka_assignment(2), kafka_assignment(random_client))
        is AssignmentError.UNKNOWN_PROCESS_ID
    )
    assert (
        check(kafka_assignment(1, active=[TASK_1_1]), kafka_assignment(2, active=[TaskId(13, 13)]))
        is AssignmentError.UNKNOWN_TASK_ID
    )
    assert (
        check(kafka_assignment(1, active=[TASK_1_1]), kafka_assignment(2, active=[TASK_1_1]))
        is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
    )


# --- POLICY.md §4 fixes and §3 orders -------------------------------------------------------------------
def test_fix_default_standby_with_client_tags_and_zero_replicas_places_none():
    """Kafka's tag path is a do-while: with num_standby_replicas = 0 every eligible task got a standby."""
    state = app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1)],
        [streams_state(n, 2, tags={"az": str(n)}) for n in (1, 2, 3)],
        configs("none", 0, ("az",)),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0]),
        PID_2: kafka_assignment(2, active=[TASK_0_1]),
    }
    default_standby_task_assignment(state, assignments)
    assert all(a.standby_tasks() == [] for a in assignments.values())
    assert list(assignments) == [PID_1, PID_2, PID_3]


def test_fix_standby_move_predicate_checks_the_real_destination():
    """Kafka hands the source state as the destination, so its tag check always passes. Ours refuses a move
    that would put the standby in the zone of the active."""
    state = app_state(
        [stateful_task(TASK_0_0)],
        [
            streams_state(1, tags={"zone": "z1"}),
            streams_state(2, tags={"zone": "z2"}),
            streams_state(3, tags={"zone": "z1"}),
            streams_state(4, tags={"zone": "z3"}),
        ],
        configs("min_traffic", 1, ("zone",)),
    )
    states = state.kafka_streams_states(False)
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0]),
        PID_2: kafka_assignment(2, standby=[TASK_0_0]),
        PID_3: kafka_assignment(3),
        PID_4: kafka_assignment(4),
    }
    predicate = standby_move_predicate(state)
    assert isinstance(predicate, ClientTagSpreadPredicate)
    assert not predicate.can_move_standby_task(states[PID_2], states[PID_3], TASK_0_0, assignments)
    assert predicate.can_move_standby_task(states[PID_2], states[PID_4], TASK_0_0, assignments)
    # Kafka's call, (source, source), would allow the bad move:
    assert predicate.can_move_standby_task(states[PID_2], states[PID_2], TASK_0_0, assignments)


def test_standby_move_predicate_without_tags_allows_everything():
    state = app_state([stateful_task(TASK_0_0)], [streams_state(1), streams_state(2)], configs())
    predicate = standby_move_predicate(state)
    assert isinstance(predicate, AllowAllStandbyMoves)
    states = state.kafka_streams_states(False)
    assert predicate.can_move_standby_task(states[PID_1], states[PID_2], TASK_0_0, {})


def test_default_standby_visits_tasks_in_task_id_order_and_weighs_tasks_per_thread():
    """Kafka iterates a HashSet; we go in TaskId order: 0_0 takes the lightest client first (POLICY.md §3).
    Client 3 has 1 task on 4 threads (0.25 per thread), client 2 none: 0_0 -> 2, then 0_1 -> 3 (0.25 < 1)."""
    state = app_state(
        [stateful_task(TASK_0_0), stateful_task(TASK_0_1), stateless_task(TASK_0_2)],
        [streams_state(1, 1), streams_state(2, 1), streams_state(3, 4)],
        configs("none", 1),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_1, TASK_0_0]),
        PID_3: kafka_assignment(3, active=[TASK_0_2]),
    }
    default_standby_task_assignment(state, assignments)
    assert assignments[PID_2].standby_tasks() == [TASK_0_0]
    assert assignments[PID_3].standby_tasks() == [TASK_0_1]
    assert list(assignments) == [PID_1, PID_2, PID_3]


def test_default_standby_skips_tasks_without_changelog_and_keeps_actives():
    state = app_state(
        [stateful_task(TASK_0_0), stateless_task(TASK_0_1)],
        [streams_state(1), streams_state(2), streams_state(3)],
        configs("none", 2),
    )
    assignments = {
        PID_1: kafka_assignment(1, active=[TASK_0_0]),
        PID_2: kafka_assignment(2, active=[TASK_0_1]),
    }
    default_standby_task_assignment(state, assignments)
    assert assignments[PID_1].tasks() == {TASK_0_0: AssignedTask.active(TASK_0_0)}
    assert assignments[PID_2].tasks() == {
        TASK_0_1: AssignedTask.active(TASK_0_1),
        TASK_0_0: AssignedTask.standby(TASK_0_0),
    }
    assert assignments[PID_3].standby_tasks() == [TASK_0_0]


def test_identity_assignment_keeps_only_tasks_the_application_still_has():
    gone = TaskId(5, 0)
    state = app_state(
        [stateful_task(TASK_0_0), stateless_task(TASK_0_1)],
        [
            streams_state(1, previous_active=[TASK_0_0, gone]),
            streams_state(2, previous_standby=[TASK_0_0, gone]),
        ],
        configs(),
    )
    assignments = identity_assignment(state)
    assert set(assignments[PID_1].tasks()) == {TASK_0_0}
    assert set(assignments[PID_2].tasks()) == {TASK_0_0}
    result = validate_task_assignment(state, TaskAssignment.of(assignments))
    assert result.error is AssignmentError.NONE
    assert result.unassigned == (TASK_0_1,)


# --- RackAwareOptimizationParams -------------------------------------------------------------------------
def _params_state():
    stateful_with_store_only = stateful_task(TASK_0_2)
    return app_state(
        [stateful_task(TASK_0_1), stateless_task(TASK_0_0), stateful_with_store_only],
        [streams_state(1)],
        configs(),
    )


def test_params_of_overrides_nothing_and_optimizes_every_task_present():
    state = _params_state()
    params = RackAwareOptimizationParams.of(state)
    assert params.application_state is state
    assert params.traffic_cost_override is None
    assert params.non_overlap_cost_override is None
    assert params.tasks_to_optimize is None


def test_params_for_stateful_and_stateless_tasks_select_by_state_store_sorted():
    params = RackAwareOptimizationParams.of(_params_state())
    assert params.for_stateful_tasks().tasks_to_optimize == (TASK_0_1, TASK_0_2)
    assert params.for_stateless_tasks().tasks_to_optimize == (TASK_0_0,)


def test_params_for_tasks_and_overrides_return_new_objects():
    params = RackAwareOptimizationParams.of(_params_state())
    derived = (
        params.for_tasks([TASK_0_2, TASK_0_0]).with_traffic_cost_override(7).with_non_overlap_cost_override(3)
    )
    assert derived.tasks_to_optimize == (TASK_0_0, TASK_0_2)
    assert (derived.traffic_cost_override, derived.non_overlap_cost_override) == (7, 3)
    assert params.tasks_to_optimize is None and params.traffic_cost_override is None
    with pytest.raises(AttributeError, match="cannot assign to field 'traffic_cost_override'"):
        derived.traffic_cost_override = 1  # frozen
