"""assignor.task_assignor: the KIP-924 protocol a custom assignor is checked against, and the base class
whose hooks the planner calls."""

from __future__ import annotations

from typing import ClassVar

import pytest

from fleet_assignor.assignor import AssignedTask, KafkaStreamsAssignment, TaskAssignment
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.task_assignor import BaseTaskAssignor, TaskAssignor
from tests.fixtures import TASK_0_0, app_state, stateful_task, streams_state

PID = "00000000-0000-0000-0000-000000000001"


class _OnlyAssign:
    def assign(self, application_state):
        return TaskAssignment.of([])


class _Recording(BaseTaskAssignor):
    """Puts every task active on the first client and records the hooks the planner calls."""

    calls: ClassVar[list] = []

    def configure(self, configs):
        super().configure(configs)
        _Recording.calls.append(("configure", dict(configs)))

    def assign(self, application_state):
        first = sorted(application_state.kafka_streams_states(False))[0]
        tasks = [AssignedTask.active(t) for t in sorted(application_state.all_tasks())]
        return TaskAssignment.of([KafkaStreamsAssignment.of(first, tasks)])

    def on_assignment_computed(self, assignment, application_state, error):
        _Recording.calls.append(("computed", len(assignment.assignment()), error))


def test_anything_with_assign_is_a_task_assignor():
    assert isinstance(_OnlyAssign(), TaskAssignor)
    assert isinstance(BaseTaskAssignor(), TaskAssignor)
    assert not isinstance(object(), TaskAssignor)


def test_the_base_keeps_a_copy_of_its_configs():
    given = {"k": "v"}
    assignor = BaseTaskAssignor()
    assignor.configure(given)
    given["k"] = "changed"
    assert assignor.configs == {"k": "v"}


def test_the_base_hooks_do_nothing_and_assign_must_be_implemented():
    assignor = BaseTaskAssignor()
    state = app_state([stateful_task(TASK_0_0)], [streams_state(1)])
    assert assignor.on_assignment_computed(TaskAssignment.of([]), state, AssignmentError.NONE) is None
    with pytest.raises(NotImplementedError, match=r"^$"):
        assignor.assign(state)


def test_the_planner_calls_configure_assign_then_on_assignment_computed(monkeypatch):
    monkeypatch.setattr(_Recording, "calls", [])
    scenario = load_scenario(
        {
            "tasks": [{"id": "0_0"}],
            "clients": [{"process_id": PID, "threads": 1}],
            "configs": {"assignor_configs": {"mode": "x"}},
        }
    )
    result = plan(scenario, assignor=f"{__name__}:_Recording")
    assert result.status.value == "OK"
    assert _Recording.calls == [("configure", {"mode": "x"}), ("computed", 1, AssignmentError.NONE)]
