"""Property tests: on random valid application states, fallback_prior and standby placement give assignments
that validate to NONE, never put two replicas of a task on one client, and are identical on rerun."""

from __future__ import annotations

import uuid
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fleet_assignor.assignor.standby as standby_module
import fleet_assignor.assignor.task_assignment_utils as utils_module
from fleet_assignor.assignor import (
    AssignedTask,
    AssignmentConfigs,
    AssignmentError,
    ConstrainedPrioritySet,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
)
from fleet_assignor.assignor.fallback import FallbackPriorTaskAssignor, legacy_client_states
from fleet_assignor.assignor.standby import assign_standby_replicas
from fleet_assignor.assignor.task_assignment_utils import default_standby_task_assignment
from fleet_assignor.assignor.validation import validate_task_assignment
from tests.fixtures import app_state, stateful_task, stateless_task, streams_state

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TAG_KEYS = ("zone", "cluster")


@st.composite
def application_states(draw):
    """1-6 clients (any UUIDs, so signed order matters), 1-3 subtopologies of 1-5 partitions each stateful or
    not, overlapping previous owners, optional zone/cluster tags, 0-3 standbys."""
    subtopologies = draw(st.integers(1, 3))
    infos = []
    for sub in range(subtopologies):
        has_changelog = draw(st.booleans())
        for part in range(draw(st.integers(1, 5))):
            task = TaskId(sub, part)
            infos.append(stateful_task(task) if has_changelog else stateless_task(task))
    tasks = [info.id for info in infos]
    changelog_tasks = [info.id for info in infos if info.has_changelog]
    uuids = draw(st.lists(st.integers(0, (1 << 128) - 1), min_size=1, max_size=6, unique=True))
    clients = []
    for value in uuids:
        previous_active = draw(st.lists(st.sampled_from(tasks), max_size=4, unique=True))
        standby_pool = [t for t in changelog_tasks if t not in previous_active]
        previous_standby = (
            draw(st.lists(st.sampled_from(standby_pool), max_size=3, unique=True)) if standby_pool else []
        )
        tags = {key: draw(st.sampled_from(["a", "b", "c"])) for key in TAG_KEYS if draw(st.booleans())}
        clients.append(
            streams_state(
                ProcessId.of(uuid.UUID(int=value)),
                draw(st.integers(1, 3)),
                previous_active=previous_active,
                previous_standby=previous_standby,
                tags=tags,
            )
        )
    tag_config = draw(st.sampled_from([(), ("zone",), ("zone", "cluster")]))
    configs = AssignmentConfigs(0, 1, draw(st.integers(0, 3)), 60_000, tag_config)
    return app_state(infos, clients, configs, draw(st.integers(0, 2**41)))


def snapshot(assignments) -> list[tuple]:
    return [
        (
            str(a.process_id()),
            [str(t) for t in a.active_tasks()],
            [str(t) for t in a.standby_tasks()],
            a.followup_rebalance_deadline(),
        )
        for a in assignments
    ]


def assert_one_replica_per_client_and_listed_once(assignments) -> None:
    pids = [a.process_id() for a in assignments]
    assert len(pids) == len(set(pids))
    for a in assignments:
        tasks = a.active_tasks() + a.standby_tasks()
        assert len(tasks) == len(set(tasks))


def expected_standbys(state, holders_as_active: int) -> int:
    return min(state.assignment_configs().num_standby_replicas, len(state.clients) - holders_as_active)


@PROPERTY_SETTINGS
@given(application_states())
def test_fallback_prior_is_valid_complete_and_repeatable(state):
    assignment = FallbackPriorTaskAssignor().assign(state)
    result = validate_task_assignment(state, assignment)
    assert result.error is AssignmentError.NONE, result.detail
    assert result.unassigned == ()
    assert_one_replica_per_client_and_listed_once(assignment)
    actives = Counter(t for a in assignment for t in a.active_tasks())
    assert set(actives) == set(state.all_tasks()) and set(actives.values()) == {1}
    for task, info in state.all_tasks().items():
        standbys = sum(task in a.standby_tasks() for a in assignment)
        assert standbys == (expected_standbys(state, 1) if info.has_changelog else 0)
    deadlines = [a.followup_rebalance_deadline() for a in assignment]
    assert deadlines[0] == state.now_ms + state.configs.probing_rebalance_interval_ms
    assert deadlines[1:] == [None] * (len(deadlines) - 1)
    assert snapshot(assignment) == snapshot(FallbackPriorTaskAssignor().assign(state))


@st.composite
def states_with_actives(draw):
    """An application state plus a random active placement: some tasks may be left without an active."""
    state = draw(application_states())
    pids = list(state.clients)
    placement = {t: draw(st.one_of(st.none(), st.sampled_from(pids))) for t in state.all_tasks()}
    return state, placement


def kip924_actives(state, placement) -> dict[ProcessId, KafkaStreamsAssignment]:
    return {
        pid: KafkaStreamsAssignment.of(
            pid, [AssignedTask.active(t) for t, owner in placement.items() if owner == pid]
        )
        for pid in state.clients
        if pid in placement.values()
    }


@PROPERTY_SETTINGS
@given(states_with_actives())
def test_default_standby_task_assignment_is_valid_keeps_actives_and_is_repeatable(drawn):
    state, placement = drawn
    assignments = default_standby_task_assignment(state, kip924_actives(state, placement))
    assert list(assignments) == list(state.clients)
    result = validate_task_assignment(state, TaskAssignment.of(assignments))
    assert result.error is AssignmentError.NONE, result.detail
    assert_one_replica_per_client_and_listed_once(assignments.values())
    for task, info in state.all_tasks().items():
        owner = placement[task]
        assert [pid for pid, a in assignments.items() if task in a.active_tasks()] == (
            [owner] if owner else []
        )
        standbys = sum(task in a.standby_tasks() for a in assignments.values())
        assert standbys == (expected_standbys(state, 1 if owner else 0) if info.has_changelog else 0)
    again = default_standby_task_assignment(state, kip924_actives(state, placement))
    assert snapshot(assignments.values()) == snapshot(again.values())


@PROPERTY_SETTINGS
@given(states_with_actives())
def test_legacy_standby_replicas_fill_every_stateful_task_and_are_repeatable(drawn):
    state, placement = drawn

    def run():
        clients = legacy_client_states(state)
        for task, owner in placement.items():
            if owner is not None:
                clients[owner].assign_active(task)
        stateful = [t for t in state.stateful_task_ids() if placement[t] is not None]
        assign_standby_replicas(clients, stateful, state.configs)
        return clients, stateful

    clients, stateful = run()
    for task in stateful:
        holders = [c for c in clients.values() if c.has_standby(task)]
        assert len(holders) == expected_standbys(state, 1)
        assert not any(c.has_active(task) for c in holders)
    for task in state.all_tasks():
        if task not in stateful:
            assert not any(c.has_standby(task) for c in clients.values())
    rerun, _ = run()
    assert [(c.active_tasks, c.standby_tasks) for c in clients.values()] == [
        (c.active_tasks, c.standby_tasks) for c in rerun.values()
    ]


class _ReferencePrioritySet(ConstrainedPrioritySet):
    """The model's heap-based ConstrainedPrioritySet, the reference `LeastLoadedClients` must agree with;
    offering every client is offering each of the view's clients."""

    def __init__(self, view) -> None:
        super().__init__(lambda client, task: not view.holds(client, task), view.load)
        self._view = view

    def offer_every_client(self) -> None:
        self.offer_all(self._view.client_ids())

    def poll(self, task, extra=None, excluded=()):
        if not excluded:
            return super().poll(task, extra)
        return super().poll(task, lambda client: client not in excluded and (extra is None or extra(client)))


def _reference_priority_set(view):
    return _ReferencePrioritySet(view)


def _reference_place_by_load(view, tasks, num_standby_replicas):
    """Least-loaded placement as the model states it: poll the priority set once per standby, assign, re-offer
    (`place_standbys_by_load` reduces this loop to one sorted list)."""
    if num_standby_replicas <= 0:
        return
    clients = _reference_priority_set(view)
    clients.offer_all(view.client_ids())
    for task in sorted(tasks) if isinstance(tasks, (set, frozenset)) else list(tasks):
        for _ in range(num_standby_replicas):
            client = clients.poll(task)
            if client is None:
                break
            view.assign_standby(client, task)
            clients.offer(client)


@PROPERTY_SETTINGS
@given(states_with_actives())
def test_least_loaded_clients_answers_as_the_constrained_priority_set(drawn):
    state, placement = drawn

    def legacy_and_kip924():
        clients = legacy_client_states(state)
        for task, owner in placement.items():
            if owner is not None:
                clients[owner].assign_active(task)
        stateful = [t for t in state.stateful_task_ids() if placement[t] is not None]
        assign_standby_replicas(clients, stateful, state.configs)
        legacy = [(pid, c.standby_tasks) for pid, c in clients.items()]
        kip924 = default_standby_task_assignment(state, kip924_actives(state, placement))
        return legacy, snapshot(kip924.values())

    ours = legacy_and_kip924()
    original = standby_module.LeastLoadedClients, standby_module.place_standbys_by_load
    standby_module.LeastLoadedClients = _reference_priority_set
    standby_module.place_standbys_by_load = utils_module.place_standbys_by_load = _reference_place_by_load
    try:
        reference = legacy_and_kip924()
    finally:
        standby_module.LeastLoadedClients, standby_module.place_standbys_by_load = original
        utils_module.place_standbys_by_load = original[1]
    assert ours == reference
