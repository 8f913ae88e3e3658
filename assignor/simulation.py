"""Multi-round rollout simulation: each plan is carried out and fed back as the next rebalance's input.

One implementation for the notebook's ``explore.simulate`` and the fleet job's rollout report, on typed
objects (the next round's `Scenario` is derived from the plan, never re-parsed from a dict).

The contract (unchanged from the first, dict-based version): between two rounds the clients carry the plan
out. Every active runs (lag -2, caught up by definition); every standby and warmup restores
``catch_up_per_round`` records of its lag (None = fully caught up; a demoted active starts caught up); a
client that dropped a task is taken to have discarded its state (lag = the whole changelog). The
changelogs themselves are frozen at the first round's end-offset sums. Each next round happens at the
earliest follow-up deadline of the plan (the probing interval after a probing plan, at once after an
assignor failure). The simulation stops at the first plan that asks for no follow-up (converged), or
before a replan that a bound forbids (`SimulationLimits`: rounds, replanned tasks, wall time).

Each round's scenario is exactly what `load_scenario` would build from the carried-out assignment written
by hand (consumers with their new history, every changelog task's lag), so planning it equals planning
that hand-written scenario (tests/test_explore_simulate.py).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from fleet_assignor.assignor.distribution import ConsumerTasks
from fleet_assignor.assignor.planner import ClientResult, PlanResult, plan
from fleet_assignor.assignor.scenario import LATEST_OFFSET, UNKNOWN_OFFSET, ConsumerHistory, Scenario
from fleet_assignor.assignor.state import ApplicationState, KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId

_NO_TASKS: frozenset[TaskId] = frozenset()
_NO_CONSUMER_TASKS = ConsumerTasks()
_NO_LAGS: Mapping[TaskId, int] = MappingProxyType({})


class StopReason(enum.Enum):
    """Why the simulation ended."""

    CONVERGED = "CONVERGED"  # the last plan asks for no follow-up rebalance
    MAX_ROUNDS = "MAX_ROUNDS"  # max_rounds plans and the last still asks for one
    REPLAN_BUDGET = "REPLAN_BUDGET"  # the next replan would exceed max_replanned_tasks
    TIME_BUDGET = "TIME_BUDGET"  # the wall-time budget was spent before the next replan


@dataclass(frozen=True, slots=True)
class SimulatedRound:
    """One rebalance: the scenario planned (its ``now_ms`` is the round's instant) and the plan."""

    number: int
    scenario: Scenario
    result: PlanResult

    @property
    def now_ms(self) -> int:
        return self.scenario.now_ms

    @property
    def probing_rebalance(self) -> bool:
        return self.result.probing_rebalance


@dataclass(frozen=True, slots=True)
class RolloutSimulation:
    rounds: tuple[SimulatedRound, ...]  # at least one
    stop_reason: StopReason
    end_offset_sums: Mapping[TaskId, int]  # the frozen changelogs: the first round's end-offset sums
    catch_up_per_round: int | None
    elapsed_ms: float  # wall time spent, the first plan included when the simulation made it

    @property
    def converged(self) -> bool:
        return self.stop_reason is StopReason.CONVERGED

    @property
    def truncated(self) -> bool:
        """A bound (`SimulationLimits`) ended the simulation while the last plan still asks a follow-up."""
        return not self.converged

    @property
    def probing_rebalances(self) -> int:
        """Follow-up rebalances requested before the plan converged (or in all, if it did not)."""
        return sum(r.probing_rebalance for r in self.rounds)

    @property
    def first(self) -> SimulatedRound:
        return self.rounds[0]

    @property
    def last(self) -> SimulatedRound:
        return self.rounds[-1]


@dataclass(frozen=True, slots=True)
class SimulationLimits:
    """Bounds on the follow-up rounds of one application (the first plan is always there).

    ``max_replanned_tasks`` is a deterministic cost bound: a replan costs the application's task count, and
    the replans of one simulation may add up to at most this many (None = unbounded), so a big application
    gets fewer follow-up rounds than a small one and the same inputs always simulate the same rounds.
    ``time_budget_ms`` is a wall-time safety net (None = none): once the simulation has spent more, it
    stops before the next replan, so its figures then depend on the machine.
    """

    max_rounds: int = 10
    max_replanned_tasks: int | None = None
    time_budget_ms: float | None = None

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be at least 1, got {self.max_rounds}")
        if self.max_replanned_tasks is not None and self.max_replanned_tasks < 0:
            raise ValueError(f"max_replanned_tasks must be >= 0 or None, got {self.max_replanned_tasks}")
        if self.time_budget_ms is not None and self.time_budget_ms < 0:
            raise ValueError(f"time_budget_ms must be >= 0 or None, got {self.time_budget_ms}")

    def stop_before_replan(self, rounds: int, replanned_tasks: int, elapsed_ms: float) -> StopReason | None:
        """Why not to plan round ``rounds + 1`` of a plan that asks a follow-up (None: go on).
        ``replanned_tasks``: what the replans so far plus this one would add up to."""
        if rounds >= self.max_rounds:
            return StopReason.MAX_ROUNDS
        if self.max_replanned_tasks is not None and replanned_tasks > self.max_replanned_tasks:
            return StopReason.REPLAN_BUDGET
        if self.time_budget_ms is not None and elapsed_ms > self.time_budget_ms:
            return StopReason.TIME_BUDGET
        return None


UNBOUNDED_BUT_ROUNDS = SimulationLimits()  # the default 10 rounds, no task or time budget


def simulate_rollout(
    scenario: Scenario,
    first: PlanResult | None = None,
    *,
    catch_up_per_round: int | None,
    limits: SimulationLimits = UNBOUNDED_BUT_ROUNDS,
    assignor: str | None = None,
    allowed_assignors: Collection[str] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> RolloutSimulation:
    """Plan, carry out, replan... (module docstring). ``first``: the plan of ``scenario`` already made
    (the job's), reused as round 1, so an application whose plan asks no follow-up is never replanned.

    ``assignor`` and ``allowed_assignors`` are `plan`'s, used for every replan; ``clock`` returns seconds.
    """
    if catch_up_per_round is not None and catch_up_per_round < 0:
        raise ValueError(f"catch_up_per_round must be >= 0 or None, got {catch_up_per_round}")
    started = clock()
    if first is None:
        first = plan(scenario, assignor=assignor, allowed_assignors=allowed_assignors)
    end_sums = scenario.end_offset_sums
    rounds = [SimulatedRound(1, scenario, first)]
    replan_cost = len(scenario.application_state.tasks)

    def finish(reason: StopReason) -> RolloutSimulation:
        elapsed_ms = (clock() - started) * 1000.0
        return RolloutSimulation(tuple(rounds), reason, end_sums, catch_up_per_round, elapsed_ms)

    while rounds[-1].probing_rebalance:
        stop = limits.stop_before_replan(len(rounds), len(rounds) * replan_cost, (clock() - started) * 1000.0)
        if stop is not None:
            return finish(stop)
        last = rounds[-1]
        nxt = next_round_scenario(
            last.scenario,
            last.result.clients,
            end_sums=end_sums,
            catch_up_per_round=catch_up_per_round,
            now_ms=next_rebalance_ms(last.result, last.now_ms),
        )
        result = plan(nxt, assignor=assignor, allowed_assignors=allowed_assignors)
        rounds.append(SimulatedRound(last.number + 1, nxt, result))
    return finish(StopReason.CONVERGED)


def next_rebalance_ms(result: PlanResult, now_ms: int) -> int:
    """The earliest follow-up deadline of the plan, never before ``now_ms`` (an overdue one is now)."""
    asked = (c.followup_rebalance_deadline_ms for c in result.clients)
    deadlines = [d for d in asked if d is not None]
    return max(min(deadlines), now_ms) if deadlines else now_ms


# --- carrying a plan out --------------------------------------------------------------------------------


def current_lags(
    client: KafkaStreamsState | None, tasks: Iterable[TaskId], end_sums: Mapping[TaskId, int]
) -> dict[TaskId, int]:
    """Records the client is behind on each changelog task of ``tasks`` (a task without one is left out): 0
    where it runs the task (-2, or no lag given for a task it ran), the whole changelog where its offset is
    unknown (-3), where it has no state for the task, and on a client the scenario does not know."""
    behind = {}
    if client is None:
        for task in tasks:
            end_sum = end_sums.get(task)
            if end_sum is not None:
                behind[task] = end_sum
        return behind
    lags = client.task_lags or _NO_LAGS
    ran = client.previous_active_tasks
    for task in tasks:
        end_sum = end_sums.get(task)
        if end_sum is None:
            continue
        lag = lags.get(task)
        if lag is None:
            behind[task] = 0 if task in ran else end_sum
        elif lag == LATEST_OFFSET:
            behind[task] = 0
        else:
            behind[task] = end_sum if lag == UNKNOWN_OFFSET else lag
    return behind


def lags_after_round(
    client: KafkaStreamsState,
    planned: ClientResult | None,
    end_sums: Mapping[TaskId, int],
    catch_up_per_round: int | None,
) -> dict[TaskId, int]:
    """The lags the client reports at the next rebalance, having carried out ``planned``: every changelog
    task, in ``end_sums``' order."""
    lags = dict(end_sums)  # a task dropped (or never held): no state
    if planned is None:
        return lags
    active = planned.tasks.active
    standby = planned.tasks.standby - active  # warmups included
    if catch_up_per_round is None:
        for task in standby:
            if task in lags:
                lags[task] = 0
    else:
        for task, lag in current_lags(client, standby, end_sums).items():
            lags[task] = max(lag - catch_up_per_round, 0)
    for task in active:
        if task in lags:
            lags[task] = LATEST_OFFSET
    return lags


def next_round_scenario(
    scenario: Scenario,
    planned: Iterable[ClientResult],
    *,
    end_sums: Mapping[TaskId, int],
    catch_up_per_round: int | None,
    now_ms: int,
) -> Scenario:
    """The scenario of the next rebalance after the clients carried ``planned`` out (module docstring).

    Clients keep their racks, tags, host info and consumers; each consumer's history is what the plan gave
    it. A client the plan does not mention got nothing. ``end_sums`` are the frozen changelogs."""
    by_pid = {c.process_id: c for c in planned}
    raw_lags = {
        pid: lags_after_round(client, by_pid.get(pid), end_sums, catch_up_per_round)
        for pid, client in scenario.application_state.clients.items()
    }
    consumers = {
        pid: _consumers_after(scenario.consumers[pid], by_pid.get(pid))
        for pid in scenario.application_state.clients
    }
    clients = {
        pid: _client_after(client, consumers[pid], raw_lags[pid], scenario.lags_computed)
        for pid, client in scenario.application_state.clients.items()
    }
    state = scenario.application_state
    return replace(
        scenario,
        application_state=ApplicationState(state.tasks, MappingProxyType(clients), state.configs, now_ms),
        end_offset_sums=MappingProxyType(dict(end_sums)),  # the changelogs do not grow
        consumers=MappingProxyType(consumers),
        warnings=(),  # the carried-out scenario names only known tasks: nothing to warn about
    )


def _consumers_after(
    consumers: tuple[ConsumerHistory, ...], planned: ClientResult | None
) -> tuple[ConsumerHistory, ...]:
    owned: Mapping[str, ConsumerTasks] = planned.consumers if planned is not None else {}
    result = []
    for consumer in consumers:
        tasks = owned.get(consumer.consumer_id, _NO_CONSUMER_TASKS)
        result.append(
            ConsumerHistory(consumer.consumer_id, frozenset(tasks.active), frozenset(tasks.standby), True)
        )
    return tuple(result)


def _client_after(
    client: KafkaStreamsState,
    consumers: tuple[ConsumerHistory, ...],
    raw_lags: Mapping[TaskId, int],
    lags_computed: bool,
) -> KafkaStreamsState:
    prev_active = _NO_TASKS.union(*(c.prev_active for c in consumers))
    prev_standby = _NO_TASKS.union(*(c.prev_standby for c in consumers)) - prev_active
    # Without end offsets only running actives know where they stand (as load_scenario reads such lags).
    lags = (
        raw_lags
        if lags_computed
        else {t: lag if lag == LATEST_OFFSET else UNKNOWN_OFFSET for t, lag in raw_lags.items()}
    )
    return replace(
        client,
        previous_active_tasks=prev_active,
        previous_standby_tasks=prev_standby,
        consumer_previous_stateful_tasks=MappingProxyType(
            {c.consumer_id: c.prev_active | c.prev_standby for c in consumers}
        ),
        task_lags=MappingProxyType(dict(lags)),
    )
