"""assignor.errors: the AssignmentError precedence (POLICY.md §5) and what the exceptions carry."""

from __future__ import annotations

from fleet_assignor.assignor import AssignedTask, KafkaStreamsAssignment, TaskAssignment
from fleet_assignor.assignor.errors import (
    AssignmentError,
    ConfigException,
    LagsNotComputedError,
    NoLagForTaskError,
    TaskAssignmentException,
)
from fleet_assignor.assignor.validation import validate_task_assignment
from tests.fixtures import TASK_0_0, TASK_0_1, app_state, pid, stateful_task, streams_state


def test_values_are_the_names_the_result_object_prints():
    assert [error.value for error in AssignmentError] == [error.name for error in AssignmentError]
    assert AssignmentError("UNKNOWN_TASK_ID") is AssignmentError.UNKNOWN_TASK_ID


def test_precedence_is_declaration_order_with_none_first():
    ranked = sorted(AssignmentError, key=lambda error: error.precedence)
    assert ranked == list(AssignmentError)
    assert ranked[0] is AssignmentError.NONE
    assert AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES.precedence < (
        AssignmentError.UNKNOWN_TASK_ID.precedence
    )


def test_the_validator_reports_the_problem_of_highest_precedence_whatever_the_order():
    """A task active twice (precedence 1) and an unknown task (precedence 6): the first wins, listed in
    either order."""
    state = app_state([stateful_task(TASK_0_0)], [streams_state(1), streams_state(2)])
    unknown = AssignedTask.active(TASK_0_1)
    twice = [
        KafkaStreamsAssignment.of(pid(1), [AssignedTask.active(TASK_0_0), unknown]),
        KafkaStreamsAssignment.of(pid(2), [AssignedTask.active(TASK_0_0)]),
    ]
    for order in (twice, twice[::-1]):
        result = validate_task_assignment(state, TaskAssignment.of(order))
        assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES


def test_config_exception_names_config_value_and_reason():
    error = ConfigException("num_standby_replicas", -1, "must be >= 0")
    assert (error.config, error.value, error.reason) == ("num_standby_replicas", -1, "must be >= 0")
    assert str(error) == "invalid value -1 for configuration num_standby_replicas: must be >= 0"
    assert isinstance(error, ValueError)


def test_the_errors_are_the_builtin_kinds_callers_catch():
    """The planner turns any Exception of an assignor into ASSIGNOR_FAILED; lag lookups are caught as
    KeyError (a missing entry) or RuntimeError (a misuse)."""
    assert issubclass(NoLagForTaskError, KeyError)
    assert issubclass(LagsNotComputedError, RuntimeError)
    assert issubclass(TaskAssignmentException, Exception)
    assert not issubclass(TaskAssignmentException, (ValueError, KeyError))
