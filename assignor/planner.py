"""Planning one application: scenario in, result object out (scenario.md), the same for the CLI and the
fleet job.

The assignor, built-in or custom, is used only through the KIP-924 `TaskAssignor` protocol (POLICY.md §4):
``configure(assignor_configs)``, ``assign(application_state)``, validation, then
``on_assignment_computed``. An assignor that raises keeps the previous assignment and asks every client for
an immediate follow-up rebalance (status ``ASSIGNOR_FAILED``).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Collection, ItemsView, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet_assignor.assignor.assignment import (
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    TaskIdsByRole,
    task_ids_by_role_of,
)
from fleet_assignor.assignor.distribution import ConsumerTasks, distribute_client_tasks
from fleet_assignor.assignor.errors import AssignmentError
from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.gc_pause import collector_paused
from fleet_assignor.assignor.limits import instant_range_text, is_instant
from fleet_assignor.assignor.metrics import (
    AssignmentMetrics,
    ClientTasks,
    compute_metrics,
    metrics_of_clients,
)
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.registry import (
    FALLBACK_PRIOR,
    HIGH_AVAILABILITY,
    UnknownAssignorError,
    load_assignor,
)
from fleet_assignor.assignor.scenario import Scenario, ScenarioError, load_scenario
from fleet_assignor.assignor.state import KafkaStreamsState
from fleet_assignor.assignor.task_assignment_utils import identity_assignment
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids
from fleet_assignor.assignor.validation import lists_each_client_in_order, validate_task_assignment

EXTERNAL = "external"
LAGS_NOT_COMPUTED_NOTE = (
    "lags_computed is false (changelog end offsets unknown): high_availability ran as fallback_prior, "
    "as Kafka does"
)


class PlanStatus(enum.Enum):
    """tables.md statuses a result object can have (INVALID_INPUT never produces one)."""

    OK = "OK"
    INVALID_ASSIGNMENT = "INVALID_ASSIGNMENT"
    ASSIGNOR_FAILED = "ASSIGNOR_FAILED"


@dataclass(frozen=True, slots=True)
class ClientResult:
    """One client's row of the result: its tasks, their spread over its consumers, its follow-up."""

    process_id: ProcessId
    tasks: ClientTasks
    consumers: Mapping[str, ConsumerTasks]
    followup_rebalance_deadline_ms: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "process_id": str(self.process_id),
            "active": _texts(self.tasks.active),
            "standby": _texts(self.tasks.standby),
            "warmup": _texts(self.tasks.warmup),
            "consumers": {
                consumer: {"active": _texts(tasks.active), "standby": _texts(tasks.standby)}
                for consumer, tasks in self.consumers.items()
            },
            "followup_rebalance_deadline_ms": self.followup_rebalance_deadline_ms,
        }


class ConsumersOnDemand(Mapping[str, ConsumerTasks]):
    """A client's tasks per consumer (`distribute_client_tasks`), worked out when first read: the rollout
    simulation reads only the rounds' tasks and metrics, and a round's split only to carry it out into the
    next round, so its last round is never split."""

    __slots__ = ("_shares", "_source")

    def __init__(
        self, client: KafkaStreamsState, active: Iterable[TaskId], standby: Iterable[TaskId]
    ) -> None:
        self._source: tuple[KafkaStreamsState, Iterable[TaskId], Iterable[TaskId]] | None = (
            client,
            active,
            standby,
        )
        self._shares: dict[str, ConsumerTasks] | None = None

    def _split(self) -> dict[str, ConsumerTasks]:
        if self._shares is None:
            assert self._source is not None
            self._shares, self._source = distribute_client_tasks(*self._source), None
        return self._shares

    def __getitem__(self, consumer: str) -> ConsumerTasks:
        return self._split()[consumer]

    def __iter__(self) -> Iterator[str]:
        return iter(self._split())

    def __len__(self) -> int:
        return len(self._split())

    def items(self) -> ItemsView[str, ConsumerTasks]:
        return self._split().items()

    def __repr__(self) -> str:
        return repr(self._split())


# ``ClientResult(...)`` built through its slots (`frozen`): one per client of every plan.
_client_result: Callable[[ProcessId, ClientTasks, Mapping[str, ConsumerTasks], int | None], ClientResult] = (
    builder(ClientResult)
)


@dataclass(frozen=True, slots=True)
class PlanResult:
    assignor: str
    status: PlanStatus
    clients: tuple[ClientResult, ...]  # sorted by process id as text
    error: AssignmentError
    error_detail: str | None
    unassigned: tuple[TaskId, ...]
    metrics: AssignmentMetrics
    elapsed_ms: float
    task_assignment: TaskAssignment  # what the assignor returned (or the identity one when it failed)

    @property
    def probing_rebalance(self) -> bool:
        return any(c.followup_rebalance_deadline_ms is not None for c in self.clients)

    def as_dict(self) -> dict[str, Any]:
        """The result object, keys in scenario.md's order."""
        return {
            "assignor": self.assignor,
            "status": self.status.value,
            "assignment": [client.as_dict() for client in self.clients],
            "probing_rebalance": self.probing_rebalance,
            "error": self.error.name,
            "error_detail": self.error_detail,
            "unassigned": _texts(self.unassigned),
            "metrics": self.metrics.as_dict(),
            "elapsed_ms": self.elapsed_ms,
        }


def _texts(tasks: Iterable[TaskId]) -> list[str]:
    return [str(t) for t in sorted_task_ids(tasks)]


def _join(parts: Iterable[str | None]) -> str | None:
    text = "; ".join(p for p in parts if p)
    return text or None


# --- choosing and running the assignor --------------------------------------------------------------------


def choose_assignor(scenario: Scenario, override: str | None) -> tuple[str, str, str | None]:
    """(name to run, JSON path naming where it came from, note for error_detail).

    Without end offsets the HA assignor cannot weigh lags; Kafka then runs the fallback assignor instead
    (assignors.md §2 step 4), and so do we, saying so.
    """
    if override is not None:
        name, path = override, "--assignor"
    else:
        name, path = scenario.assignor, "configs.assignor"
    if not scenario.lags_computed and name == HIGH_AVAILABILITY:
        return FALLBACK_PRIOR, path, LAGS_NOT_COMPUTED_NOTE
    return name, path, None


def _as_task_assignment(returned: object) -> TaskAssignment:
    if isinstance(returned, TaskAssignment):
        assignments = returned
    elif isinstance(returned, (Mapping, list, tuple)):
        assignments = TaskAssignment.of(returned)
        if not all(isinstance(a, KafkaStreamsAssignment) for a in assignments):
            raise TypeError(
                f"assign() returned a {type(returned).__name__} of other than KafkaStreamsAssignment"
            )
    else:
        raise TypeError(f"assign() returned {type(returned).__name__}, not a TaskAssignment")
    for assignment in assignments:
        deadline = assignment.followup_rebalance_deadline()
        if deadline is not None and not is_instant(deadline):
            raise ValueError(
                f"assign() gave client {assignment.process_id()} the follow-up deadline {deadline!r}: "
                f"not an instant within {instant_range_text()}"
            )
    return assignments


def _failure_message(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _failed_assignment(scenario: Scenario) -> TaskAssignment:
    """POLICY.md §4: keep the previous assignment, and every client rebalances again at once."""
    now = scenario.now_ms
    return TaskAssignment.of(
        a.with_followup_rebalance(now) for a in identity_assignment(scenario.application_state).values()
    )


# --- the result ---------------------------------------------------------------------------------------------


def _merged_clients(task_assignment: TaskAssignment) -> dict[ProcessId, tuple[ClientTasks, int | None]]:
    """Per client, every task it was given in any of its assignment objects (a client listed twice shows
    both), with the last follow-up deadline given."""
    merged: dict[ProcessId, tuple[ClientTasks, int | None]] = {}
    for assignment in task_assignment:
        pid = assignment.process_id()
        tasks = ClientTasks.of(assignment)
        earlier = merged.get(pid)
        if earlier is None:  # the usual case: each client listed once, its sets taken as they are
            merged[pid] = (tasks, assignment.followup_rebalance_deadline())
            continue
        before, deadline = earlier
        merged[pid] = (
            ClientTasks(
                before.active | tasks.active, before.standby | tasks.standby, before.warmup | tasks.warmup
            ),
            assignment.followup_rebalance_deadline()
            if assignment.followup_rebalance_deadline() is not None
            else deadline,
        )
    return merged


def _assignor_splits(task_assignment: TaskAssignment) -> dict[ProcessId, Mapping[str, ConsumerTasks]]:
    """Per client, the split over its consumers the assignor gives with its answer (an assignment object with
    ``consumer_tasks()``: the broker-side `streams_sticky`, whose broker assigns per member, and
    `high_availability` for a one-consumer client, whose share it has in order already)."""
    splits = {}
    for assignment in task_assignment:
        split = _assignor_split(assignment)
        if split is not None:
            splits[assignment.process_id()] = split
    return splits


def _assignor_split(assignment: KafkaStreamsAssignment) -> Mapping[str, ConsumerTasks] | None:
    consumer_tasks = getattr(assignment, "consumer_tasks", None)
    return consumer_tasks() if callable(consumer_tasks) else None


def _results_in_client_order(
    scenario: Scenario, task_assignment: TaskAssignment, roles: Sequence[TaskIdsByRole], valid: bool
) -> tuple[tuple[ClientResult, ...], AssignmentMetrics]:
    """`_client_results` and the metrics of an answer that lists each client once, in the state's order
    (`lists_each_client_in_order`): there is nothing to merge, and each client's state is read by place.
    ``roles``: each assignment's task ids by role, as validation read them; ``valid``: validation found no
    problem."""
    results = []
    rows = []
    clients = scenario.application_state.clients.values()
    for client, assignment, by_role in zip(clients, task_assignment, roles, strict=True):
        tasks = ClientTasks.of_roles(by_role)
        split = _assignor_split(assignment)
        consumers = split or ConsumersOnDemand(client, tasks.active, tasks.standby)
        results.append(
            _client_result(client.process_id, tasks, consumers, assignment.followup_rebalance_deadline())
        )
        rows.append((client, tasks))
    metrics = metrics_of_clients(scenario, rows, each_active_once=valid)
    return tuple(sorted(results, key=_process_id_text)), metrics


def _process_id_text(result: ClientResult) -> str:
    return str(result.process_id)


def _client_results(
    scenario: Scenario,
    merged: Mapping[ProcessId, tuple[ClientTasks, int | None]],
    splits: Mapping[ProcessId, Mapping[str, ConsumerTasks]],
) -> tuple[ClientResult, ...]:
    results = []
    for pid, (tasks, deadline) in merged.items():
        client = scenario.client(pid)
        if client is None:
            consumers: Mapping[str, ConsumerTasks] = {}
        else:
            # The client's own id object: its text is the input's, whichever spelling an assignor used.
            pid = client.process_id
            consumers = splits.get(pid) or ConsumersOnDemand(client, tasks.active, tasks.standby)
        results.append(_client_result(pid, tasks, consumers, deadline))
    return tuple(sorted(results, key=_process_id_text))


def _build_result(
    scenario: Scenario,
    assignor: str,
    status: PlanStatus,
    task_assignment: TaskAssignment,
    error: AssignmentError,
    detail: str | None,
    unassigned: tuple[TaskId, ...],
    elapsed_ms: float,
    roles: Sequence[TaskIdsByRole] | None = None,
    *,
    valid: bool,
) -> PlanResult:
    """``roles``: each assignment's `task_ids_by_role()` if the caller read them (None: read here);
    ``valid``: validation found no problem in ``task_assignment`` (for a failed assignor, whose ``error``
    is NONE whatever the previous assignment's problems, it is the kept assignment's own validation)."""
    if lists_each_client_in_order(scenario.application_state, task_assignment):
        if roles is None:
            roles = task_ids_by_role_of(task_assignment)
        clients, metrics = _results_in_client_order(scenario, task_assignment, roles, valid)
    else:
        merged = _merged_clients(task_assignment)
        clients = _client_results(scenario, merged, _assignor_splits(task_assignment))
        metrics = compute_metrics(scenario, {pid: tasks for pid, (tasks, _) in merged.items()})
    return PlanResult(
        assignor=assignor,
        status=status,
        clients=clients,
        error=error,
        error_detail=detail,
        unassigned=unassigned,
        metrics=metrics,
        elapsed_ms=round(elapsed_ms, 3),
        task_assignment=task_assignment,
    )


def plan(
    scenario: Scenario, *, assignor: str | None = None, allowed_assignors: Collection[str] | None = None
) -> PlanResult:
    """Run the chosen assignor on a loaded scenario; raise `ScenarioError` for an unusable assignor name.

    `allowed_assignors`: the custom ``module:Class`` names that may be imported (None: any). Runs with the
    cyclic garbage collector paused (`gc_pause`)."""
    return _plan(scenario, assignor, allowed_assignors)


@collector_paused
def _plan(scenario: Scenario, assignor: str | None, allowed_assignors: Collection[str] | None) -> PlanResult:
    name, path, note = choose_assignor(scenario, assignor)
    try:
        instance = load_assignor(name, allowed_assignors)
    except UnknownAssignorError as e:
        raise ScenarioError(path, str(e)) from None
    state = scenario.application_state

    started = time.perf_counter()
    failure: BaseException | None = None
    try:
        configure = getattr(instance, "configure", None)
        if callable(configure):
            configure(dict(scenario.assignor_configs))
        task_assignment = _as_task_assignment(instance.assign(state))
        # Read once for validation and the result: an assignment without precomputed sets builds them.
        # The result then shows what was validated (KIP-924's callback below is told, not asked).
        roles = task_ids_by_role_of(task_assignment)
        validation = validate_task_assignment(state, task_assignment, roles=roles)
        on_computed = getattr(instance, "on_assignment_computed", None)
        if callable(on_computed):
            on_computed(task_assignment, state, validation.error)
    except Exception as e:
        failure = e
    elapsed_ms = (time.perf_counter() - started) * 1000.0

    if failure is not None:
        task_assignment = _failed_assignment(scenario)
        kept = validate_task_assignment(state, task_assignment)
        return _build_result(
            scenario, name, PlanStatus.ASSIGNOR_FAILED, task_assignment, AssignmentError.NONE,
            _join([_failure_message(failure), note, *scenario.warnings]), kept.unassigned, elapsed_ms,
            valid=kept.is_valid,
        )  # fmt: skip
    status = PlanStatus.OK if validation.is_valid else PlanStatus.INVALID_ASSIGNMENT
    return _build_result(
        scenario, name, status, task_assignment, validation.error,
        _join([validation.detail, note, *scenario.warnings]), validation.unassigned, elapsed_ms, roles,
        valid=validation.is_valid,
    )  # fmt: skip


def plan_scenario(
    obj: object, *, assignor: str | None = None, now_ms: int, source: str = "<scenario>"
) -> dict:
    """The result object of planning one scenario dict (scenario.md); `ScenarioError` for unusable input."""
    scenario = load_scenario(obj, source=source, now_ms=now_ms)
    return plan(scenario, assignor=assignor).as_dict()


# --- checking an assignment made elsewhere ---------------------------------------------------------------


def _parse_task_list(raw: object, path: str) -> list[TaskId]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ScenarioError(path, "must be a list of task ids")
    tasks = []
    for j, text in enumerate(raw):
        try:
            tasks.append(TaskId.parse(text))
        except ValueError as e:
            raise ScenarioError(f"{path}[{j}]", str(e)) from None
    return tasks


def parse_external_assignment(obj: object) -> TaskAssignment:
    """An ``{"assignment": [{"process_id", "active", "standby", "warmup"?}]}`` object as flat rows.

    Each row becomes its own one-task assignment object, so validation sees every duplicate the file has
    (a task listed twice, or active and standby on one client) instead of having them merged away.
    """
    if not isinstance(obj, dict):
        raise ScenarioError("$", "an assignment file must be a JSON object")
    entries = obj.get("assignment")
    if not isinstance(entries, list):
        raise ScenarioError("assignment", "must be a list of {process_id, active, standby, warmup?} objects")
    assignments: list[KafkaStreamsAssignment] = []
    for i, entry in enumerate(entries):
        path = f"assignment[{i}]"
        if not isinstance(entry, dict):
            raise ScenarioError(path, "must be an object")
        try:
            pid = ProcessId.parse(entry.get("process_id"))  # type: ignore[arg-type]  # parse checks str
        except ValueError as e:
            raise ScenarioError(f"{path}.process_id", str(e)) from None
        active = _parse_task_list(entry.get("active"), f"{path}.active")
        standby = _parse_task_list(entry.get("standby"), f"{path}.standby")
        warmup = _parse_task_list(entry.get("warmup"), f"{path}.warmup")
        # Warmups are listed among the standbys too: one row each, flagged.
        rows = [AssignedTask.active(t) for t in active]
        rows += [AssignedTask.warmup(t) if t in warmup else AssignedTask.standby(t) for t in standby]
        rows += [AssignedTask.warmup(t) for t in warmup if t not in standby]
        assignments.append(KafkaStreamsAssignment(pid))
        assignments += [KafkaStreamsAssignment.of(pid, [row]) for row in rows]
    return TaskAssignment.of(assignments)


def evaluate_assignment(
    scenario: Scenario, task_assignment: TaskAssignment, *, assignor: str = EXTERNAL
) -> PlanResult:
    """Validation and metrics of an assignment computed elsewhere (``fleet-assignor app validate``)."""
    started = time.perf_counter()
    validation = validate_task_assignment(scenario.application_state, task_assignment)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    status = PlanStatus.OK if validation.is_valid else PlanStatus.INVALID_ASSIGNMENT
    return _build_result(
        scenario, assignor, status, task_assignment, validation.error,
        _join([validation.detail, *scenario.warnings]), validation.unassigned, elapsed_ms,
        valid=validation.is_valid,
    )  # fmt: skip


def validate_scenario_assignment(
    scenario_obj: object, assignment_obj: object, *, source: str = "<scenario>"
) -> dict:
    """The result object (assignor ``external``) for an assignment file checked against a scenario."""
    scenario = load_scenario(scenario_obj, source=source)
    return evaluate_assignment(scenario, parse_external_assignment(assignment_obj)).as_dict()
