"""`streams_sticky` against the broker itself: on a real KRaft broker (Kafka 4.4.0) the group coordinator
assigns the streams-protocol application's tasks with its StickyTaskAssignor. Planned from a snapshot of
that group, ours must give every member exactly the target assignment the broker reports for it.

The snapshot is taken when the group is stable (every member at its target), so the previous assignment the
plan starts from is the broker's own target: the broker's assignor keeps such an assignment as it is, and so
must ours, member by member. The broker keys members by member id, which the input tables do not carry (a
consumer there is its client id): the per-member check renames the consumers to their member ids, as the
broker's HashMap of members orders them by that id; the per-client check plans the scenario as collected.
"""

from __future__ import annotations

import pandas as pd
import pytest

from fleet_assignor.assignor.planner import plan_scenario
from fleet_assignor.explore.input_scenarios import scenarios_from_tables
from tests.live.conftest import STREAMS_APP, wait_stable

pytestmark = pytest.mark.kafka_live

NOW_MS = 1_800_000_000_000


@pytest.fixture(scope="module")
def stable_streams_group(kafka_cluster, streams_app):
    """(the group as the snapshot describes it, the application's scenario as collected)."""
    snapshot, rows = wait_stable(kafka_cluster.bootstrap, STREAMS_APP, 2)
    (group,) = [g for g in snapshot["groups"] if g["group_id"] == STREAMS_APP]
    tables = {name: pd.DataFrame(table) for name, table in rows.tables.items()}
    (scenario,) = scenarios_from_tables(tables, apps=[STREAMS_APP])
    return group, scenario


def _broker_targets(group: dict) -> dict[str, tuple[list[str], list[str]]]:
    """member id -> (target actives, target standbys with warm-ups), as the coordinator reports them."""
    return {
        m["member_id"]: (
            sorted(m["target_assignment"]["active"]),
            sorted(m["target_assignment"]["standby"] + m["target_assignment"]["warmup"]),
        )
        for m in group["members"]
    }


def _renamed_to_member_ids(scenario: dict, group: dict) -> dict:
    member_of = {m["client_id"]: m["member_id"] for m in group["members"]}
    renamed = {**scenario, "clients": []}
    for client in scenario["clients"]:
        consumers = [
            {**c, "id": member_of[c["id"]]} if isinstance(c, dict) else member_of[c]
            for c in client["consumers"]
        ]
        renamed["clients"].append({**client, "consumers": consumers})
    return renamed


def test_the_broker_ran_its_sticky_assignor_with_a_standby(stable_streams_group):
    group, scenario = stable_streams_group
    assert group["assignor_name"] == "sticky"
    assert scenario["configs"]["num_standby_replicas"] == 1
    assert any(targets[1] for targets in _broker_targets(group).values())


def test_streams_sticky_gives_every_member_the_brokers_target(stable_streams_group):
    group, scenario = stable_streams_group
    result = plan_scenario(_renamed_to_member_ids(scenario, group), assignor="streams_sticky", now_ms=NOW_MS)
    assert result["status"] == "OK", result["error_detail"]
    planned = {
        member: (sorted(tasks["active"]), sorted(tasks["standby"]))
        for client in result["assignment"]
        for member, tasks in client["consumers"].items()
    }
    assert planned == _broker_targets(group)


def test_streams_sticky_gives_every_client_the_brokers_target_as_collected(stable_streams_group):
    group, scenario = stable_streams_group
    result = plan_scenario(scenario, assignor="streams_sticky", now_ms=NOW_MS)
    by_process: dict[str, tuple[set[str], set[str]]] = {}
    for m in group["members"]:
        active, standby = by_process.setdefault(m["process_id"], (set(), set()))
        active.update(m["target_assignment"]["active"])
        standby.update(m["target_assignment"]["standby"] + m["target_assignment"]["warmup"])
    planned = {c["process_id"]: (set(c["active"]), set(c["standby"])) for c in result["assignment"]}
    assert planned == by_process
    # The group is at its target, so the previous assignment is that target: nothing moves.
    assert (result["metrics"]["active_moves"], result["metrics"]["standby_moves"]) == (0, 0)
