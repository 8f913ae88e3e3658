"""Our HighAvailabilityTaskAssignor against Kafka's own answers (POLICY.md §1): for every example scenario,
the same active and standby sets per client (Kafka's standby lists include warmups) and the same
probing-rebalance decision as `tests/data/scenarios/kafka/example-*.high_availability.json`.

Where the rack optimizer runs, POLICY.md §1/§4 allow other optima (ties, exact balance_subtopology
capacities): there the per-client active and standby counts must be Kafka's and the cross-rack cost no
higher. Examples with a rack strategy are compared once `assignor.rack` exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_assignor.assignor import high_availability
from fleet_assignor.assignor.high_availability import HighAvailabilityTaskAssignor
from fleet_assignor.assignor.metrics import ClientTasks, cross_rack_cost
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.assignor.task_id import TaskId
from tests.conftest import SCENARIOS_DIR

SCENARIOS = SCENARIOS_DIR
EXAMPLES = sorted(SCENARIOS.glob("example-*.json"))


def test_examples_are_present():
    assert len(EXAMPLES) >= 6, f"expected the shared example scenarios under {SCENARIOS}"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_same_assignment_as_kafka(path: Path):
    kafka = json.loads((SCENARIOS / "kafka" / f"{path.stem}.high_availability.json").read_text())
    scenario = load_scenario(json.loads(path.read_text()), source=str(path), now_ms=1_700_000_000_000)
    result = HighAvailabilityTaskAssignor().assign(scenario.application_state)

    ours = {
        str(a.process_id()): (sorted(map(str, a.active_tasks())), sorted(map(str, a.standby_tasks())))
        for a in result
    }
    theirs = {e["process_id"]: (sorted(e["active"]), sorted(e["standby"])) for e in kafka["assignment"]}
    probing = any(a.followup_rebalance_deadline() is not None for a in result)
    assert probing == kafka["probing_rebalance"]
    state = scenario.application_state
    rack_assignor = high_availability._rack_assignor_for(state)
    if rack_assignor is not None and rack_assignor.can_enable_rack_awareness():
        assert _counts(ours) == _counts(theirs)
        ours_cost = cross_rack_cost(scenario, {a.process_id(): ClientTasks.of(a) for a in result})
        assert ours_cost <= cross_rack_cost(scenario, _client_tasks(theirs))
    else:
        assert ours == theirs


def _counts(per_client: dict) -> dict:
    return {p: (len(active), len(standby)) for p, (active, standby) in per_client.items()}


def _client_tasks(per_client: dict) -> dict:
    return {
        ProcessId.parse(p): ClientTasks(
            frozenset(map(TaskId.parse, active)), frozenset(map(TaskId.parse, standby))
        )
        for p, (active, standby) in per_client.items()
    }
