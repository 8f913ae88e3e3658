"""The rollout report: what putting one application's plan into effect will cost (issue 22, docs/rollout.md).

Spark-free: the fleet job calls `rollout_report` once per planned application with the `Scenario` and
`PlanResult` it already has. The follow-up rounds come from `assignor.simulation` (the notebook's
simulation too); an application whose plan asks no follow-up, which is most of them, is never replanned.

Restore model: every task a client restores (an active placed on a client behind on it, a standby or a
warmup catching up) restores at ``restore_records_per_second`` on its own, in parallel with the others, so
one probing interval catches a warmup up by rate x interval records.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from fleet_assignor.assignor.frozen import slot_setters
from fleet_assignor.assignor.limits import MAX_LONG
from fleet_assignor.assignor.metrics import ClientTasks, cross_rack_cost, every_client_has_a_rack
from fleet_assignor.assignor.planner import PlanResult
from fleet_assignor.assignor.scenario import Scenario
from fleet_assignor.assignor.simulation import (
    RolloutSimulation,
    SimulatedRound,
    SimulationLimits,
    StopReason,
    current_lags,
    simulate_rollout,
)
from fleet_assignor.assignor.task_id import TaskId

# --- settings -------------------------------------------------------------------------------------------


def _require_number(name: str, value: object, minimum: float, *, integer: bool = False) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (integer and not isinstance(value, int))
        or not math.isfinite(value)
    ):
        raise ValueError(f"{name} must be {'an integer' if integer else 'a number'}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


@dataclass(frozen=True, slots=True)
class RolloutThresholds:
    """When a risk flag is raised: each flag fires when its value is strictly above its threshold.

    The defaults are what an operator approving a rollout by hand would want to look at twice.
    """

    # More than half of the application's tasks change client as active over the whole rollout.
    most_tasks_move_fraction: float = 0.5
    # More than 100 million changelog records restored in all (about 3 hours of one task's restore at the
    # default rate; spread over many tasks it is less, but it is the broker and disk load to expect).
    max_restore_records: int = 100_000_000
    # The plan is fully in effect more than an hour after it is first handed out (six default probing
    # intervals).
    max_rollout_ms: int = 3_600_000
    # Balance (max - min tasks per thread over the clients) may get this much worse before it is flagged:
    # 0 flags any worsening.
    active_balance_tolerance: float = 0.0
    standby_balance_tolerance: float = 0.0
    # Cross-rack partitions may grow by this many before it is flagged.
    rack_traffic_tolerance: int = 0

    def __post_init__(self) -> None:
        _require_number("most_tasks_move_fraction", self.most_tasks_move_fraction, 0)
        _require_number("max_restore_records", self.max_restore_records, 0, integer=True)
        _require_number("max_rollout_ms", self.max_rollout_ms, 0, integer=True)
        _require_number("active_balance_tolerance", self.active_balance_tolerance, 0)
        _require_number("standby_balance_tolerance", self.standby_balance_tolerance, 0)
        _require_number("rack_traffic_tolerance", self.rack_traffic_tolerance, 0, integer=True)


@dataclass(frozen=True, slots=True)
class RolloutSettings:
    """What every application of one run shares (the conf file's ``[rollout]`` table)."""

    # Records one task restores per second (changelog read and state-store write); sets the catch-up per
    # probing interval and the time to restore what the last plan still needs.
    restore_records_per_second: float = 10_000.0
    # Plans per application, the first (the job's own) included: bounds the replans of a plan that keeps
    # asking for follow-ups.
    max_rounds: int = 10
    # Each follow-up round replans the application, which costs about what its first plan did. The
    # replans of one application may add up to this many tasks (a replan counts the application's task
    # count): a 10-task application gets up to 3 follow-up rounds, a 15-task one 2, one of up to 30 tasks
    # 1, a bigger one none (stop_reason REPLAN_BUDGET; its totals are then lower bounds). On the synthetic
    # fleet, where over half the applications ask for follow-ups, 30 keeps the report under half of the
    # planning time (benchmarks/bench_rollout.py); None = no bound. Deterministic, unlike the time budget.
    max_replanned_tasks: int | None = 30
    # Wall time per application, a safety net for what the task budget does not foresee; None (the
    # default: the same inputs must give the same rows on any machine) = none. A report cut short by it says
    # so (stop_reason TIME_BUDGET): its figures then depend on the machine.
    time_budget_ms: float | None = None
    thresholds: RolloutThresholds = RolloutThresholds()

    def __post_init__(self) -> None:
        _require_number("restore_records_per_second", self.restore_records_per_second, 1e-9)
        _require_number("max_rounds", self.max_rounds, 1, integer=True)
        if self.max_replanned_tasks is not None:
            _require_number("max_replanned_tasks", self.max_replanned_tasks, 0, integer=True)
        if self.time_budget_ms is not None:
            _require_number("time_budget_ms", self.time_budget_ms, 0)

    @property
    def limits(self) -> SimulationLimits:
        return SimulationLimits(self.max_rounds, self.max_replanned_tasks, self.time_budget_ms)

    def catch_up_per_round(self, probing_rebalance_interval_ms: int) -> int:
        """Records a standby or warmup restores between two probing rebalances."""
        return min(int(self.restore_records_per_second * probing_rebalance_interval_ms / 1000), MAX_LONG)

    def restore_ms(self, records: int) -> int:
        return math.ceil(records * 1000 / self.restore_records_per_second)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> RolloutSettings:
        """Settings from a conf table: the fields above, ``thresholds`` a table of `RolloutThresholds`'s;
        an unknown key or a bad value is a ValueError naming it."""
        values = dict(_known_keys(raw, cls, "rollout"))
        if "thresholds" in values:
            thresholds = _known_keys(values["thresholds"], RolloutThresholds, "rollout.thresholds")
            values["thresholds"] = RolloutThresholds(**thresholds)
        return cls(**values)


def _known_keys(raw: object, kind: type, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a table, got {raw!r}")
    known = [f.name for f in fields(kind)]
    for key in raw:
        if key not in known:
            raise ValueError(f"{where}.{key}: unknown key (known: {', '.join(known)})")
    return raw


# --- the report -----------------------------------------------------------------------------------------


class Risk(enum.Enum):
    MOST_TASKS_MOVE = "most_tasks_move"  # total active moves / tasks > most_tasks_move_fraction
    LARGE_RESTORE = "large_restore"  # restore_records > max_restore_records
    SLOW_ROLLOUT = "slow_rollout"  # estimated_duration_ms > max_rollout_ms
    NOT_CONVERGED = "not_converged"  # still asking for follow-ups after max_rounds plans
    ACTIVE_BALANCE_WORSE = "active_balance_worse"  # per-thread active spread grew beyond the tolerance
    STANDBY_BALANCE_WORSE = "standby_balance_worse"  # per-thread standby spread grew beyond the tolerance
    RACK_TRAFFIC_WORSE = "rack_traffic_worse"  # cross-rack partitions grew beyond the tolerance


@dataclass(frozen=True, slots=True)
class RiskFlag:
    """A raised flag, with the figure that raised it and the threshold it is above."""

    risk: Risk
    value: float
    threshold: float

    @property
    def name(self) -> str:
        return self.risk.value

    def as_row(self) -> dict[str, Any]:
        return {"name": self.name, "value": float(self.value), "threshold": float(self.threshold)}


@dataclass(frozen=True, slots=True)
class Balance:
    """Spread of one kind of task over the clients: max - min per thread and per client."""

    per_thread: float
    per_client: int


@dataclass(frozen=True, slots=True)
class RolloutReport:
    """One application's rollout (docs/rollout.md). "The plan" is the job's plan (round 1); "after" is the
    last simulated plan, the one in effect once no follow-up remains."""

    tasks: int
    stateful_tasks: int  # tasks with a changelog
    # the plan's moves versus the previous assignment, and as a fraction of `tasks` (0 without tasks)
    active_moves: int
    standby_moves: int
    warmup_moves: int
    active_moves_fraction: float
    standby_moves_fraction: float
    warmup_moves_fraction: float
    restore_records: int  # changelog records restored until the last plan is fully in effect
    # max - min over the clients of actives (standbys) per thread and per client; "after" leaves the last
    # plan's warmups out (transient), "before" cannot tell the previous ones from standbys
    active_balance_per_thread_before: float
    active_balance_per_thread_after: float
    active_balance_per_client_before: int
    active_balance_per_client_after: int
    standby_balance_per_thread_before: float
    standby_balance_per_thread_after: float
    standby_balance_per_client_before: int
    standby_balance_per_client_after: int
    cross_rack_before: int | None  # None when a rack is unknown
    cross_rack_after: int | None  # the last plan's warmups left out
    probing_rebalances: int  # follow-up rebalances the simulated plans asked for
    total_active_moves: int  # over all simulated plans
    total_standby_moves: int
    total_warmup_moves: int
    catch_up_per_round: int  # records a warmup restores per probing interval (rate x interval)
    estimated_duration_ms: int  # first plan to the last one, plus the last one's restore
    converged: bool
    rounds_simulated: int
    truncated: bool
    stop_reason: StopReason
    simulation_ms: float  # wall time of the report (machine-dependent, like duration_ms)
    risks: tuple[RiskFlag, ...] = ()

    @property
    def total_moves(self) -> int:
        return self.total_active_moves + self.total_standby_moves + self.total_warmup_moves

    def risk(self, risk: Risk) -> RiskFlag | None:
        return next((flag for flag in self.risks if flag.risk is risk), None)

    def as_row(self) -> dict[str, Any]:
        """The ``rollout`` table's columns: the fields, the stop reason as text, risks as a list of
        {name, value, threshold}."""
        row = dict(zip(_REPORT_FIELDS, _report_values(self), strict=True))
        row["stop_reason"] = self.stop_reason.value
        row["risks"] = [flag.as_row() for flag in self.risks]
        return row


def rollout_report(
    scenario: Scenario,
    planned: PlanResult,
    settings: RolloutSettings | None = None,
    *,
    assignor: str | None = None,
    allowed_assignors: Collection[str] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> RolloutReport:
    """The rollout report of ``planned``, the plan of ``scenario``; ``assignor`` and ``allowed_assignors``
    as given to `plan` (the follow-up rounds replan with them)."""
    settings = settings or RolloutSettings()
    interval = scenario.application_state.configs.probing_rebalance_interval_ms
    simulation = simulate_rollout(
        scenario,
        planned,
        catch_up_per_round=settings.catch_up_per_round(interval),
        limits=settings.limits,
        assignor=assignor,
        allowed_assignors=allowed_assignors,
        clock=clock,
    )
    report = report_of(simulation, settings)
    # The report was just made here and is not yet handed out: its risks filled in place (`frozen`), not
    # through `replace`, which rebuilds all 31 fields.
    _SET_RISKS(report, assess_risks(report, simulation, settings))
    return report


_REPORT_FIELDS = tuple(f.name for f in fields(RolloutReport))
_report_values = attrgetter(*_REPORT_FIELDS)
(_SET_RISKS,) = slot_setters(RolloutReport, ["risks"])


def report_of(simulation: RolloutSimulation, settings: RolloutSettings) -> RolloutReport:
    """The report's figures (risks left empty: `assess_risks`)."""
    first, last = simulation.first, simulation.last
    metrics = first.result.metrics
    tasks = metrics.num_tasks
    warmup_moves = [new_warmups(r) for r in simulation.rounds]
    active_before, standby_before = previous_balances(first.scenario)
    active_after, standby_after = planned_balances(last)
    last_behind = still_behind(simulation)
    return RolloutReport(
        tasks=tasks,
        stateful_tasks=metrics.num_stateful_tasks,
        active_moves=metrics.active_moves,
        standby_moves=metrics.standby_moves,
        warmup_moves=warmup_moves[0],
        active_moves_fraction=fraction(metrics.active_moves, tasks),
        standby_moves_fraction=fraction(metrics.standby_moves, tasks),
        warmup_moves_fraction=fraction(warmup_moves[0], tasks),
        restore_records=restore_records(simulation, last_behind),
        active_balance_per_thread_before=active_before.per_thread,
        active_balance_per_thread_after=active_after.per_thread,
        active_balance_per_client_before=active_before.per_client,
        active_balance_per_client_after=active_after.per_client,
        standby_balance_per_thread_before=standby_before.per_thread,
        standby_balance_per_thread_after=standby_after.per_thread,
        standby_balance_per_client_before=standby_before.per_client,
        standby_balance_per_client_after=standby_after.per_client,
        cross_rack_before=previous_cross_rack(first.scenario),
        cross_rack_after=kept_cross_rack(last),
        probing_rebalances=simulation.probing_rebalances,
        total_active_moves=sum(r.result.metrics.active_moves for r in simulation.rounds),
        total_standby_moves=sum(r.result.metrics.standby_moves for r in simulation.rounds),
        total_warmup_moves=sum(warmup_moves),
        catch_up_per_round=simulation.catch_up_per_round or 0,
        estimated_duration_ms=estimated_duration_ms(simulation, last_behind, settings),
        converged=simulation.converged,
        rounds_simulated=len(simulation.rounds),
        truncated=simulation.truncated,
        stop_reason=simulation.stop_reason,
        simulation_ms=round(simulation.elapsed_ms, 3),
    )


def fraction(count: int, tasks: int) -> float:
    return count / tasks if tasks else 0.0


# --- moves, restore, time ------------------------------------------------------------------------------


def new_warmups(round_: SimulatedRound) -> int:
    """Warmups on a client that held the task in neither role before the round (a warmup kept from the
    round before is the same warmup, still catching up)."""
    count = 0
    for planned in round_.result.clients:
        client = round_.scenario.client(planned.process_id)
        held = client.previous_active_tasks | client.previous_standby_tasks if client else frozenset()
        count += len(planned.tasks.warmup - held)
    return count


def behind_by_role(round_: SimulatedRound, end_sums: Mapping[TaskId, int]) -> tuple[list[int], list[int]]:
    """What each changelog task the round's plan places is behind on its client: the actives', and the
    standbys' and warmups'."""
    active_lags: list[int] = []
    standby_lags: list[int] = []
    for planned in round_.result.clients:
        client = round_.scenario.client(planned.process_id)
        active = planned.tasks.active
        active_lags += current_lags(client, active, end_sums).values()
        standby_lags += current_lags(client, planned.tasks.standby - active, end_sums).values()
    return active_lags, standby_lags


def still_behind(simulation: RolloutSimulation) -> list[int]:
    """What each changelog task the last plan places is behind on its client."""
    active_lags, standby_lags = behind_by_role(simulation.last, simulation.end_offset_sums)
    return active_lags + standby_lags


def restore_records(simulation: RolloutSimulation, last_behind: list[int]) -> int:
    """Records restored over the rounds: an active restores all it is behind before it runs, a standby or
    warmup catches up by at most the per-round amount between rounds; and the last plan's tasks restore
    everything they are still behind (``last_behind``), which is what "fully in effect" takes."""
    catch_up = simulation.catch_up_per_round
    total = 0
    for round_ in simulation.rounds[:-1]:
        active_lags, standby_lags = behind_by_role(round_, simulation.end_offset_sums)
        total += sum(active_lags)
        total += sum(standby_lags) if catch_up is None else sum(min(lag, catch_up) for lag in standby_lags)
    return min(total + sum(last_behind), MAX_LONG)


def estimated_duration_ms(
    simulation: RolloutSimulation, last_behind: list[int], settings: RolloutSettings
) -> int:
    """From the first plan to the last one (the probing intervals in between), plus the time the last
    plan's slowest task takes to restore what it is behind (tasks restore in parallel)."""
    rounds_ms = simulation.last.now_ms - simulation.first.now_ms
    return min(rounds_ms + settings.restore_ms(max(last_behind, default=0)), MAX_LONG)


# --- balance and racks -----------------------------------------------------------------------------------


def previous_balances(scenario: Scenario) -> tuple[Balance, Balance]:
    """The spread of the actives and of the standbys the clients held before the plan."""
    clients = scenario.application_state.clients.values()
    threads = [c.num_processing_threads for c in clients]
    return (
        balance(threads, [len(c.previous_active_tasks) for c in clients]),
        balance(threads, [len(c.previous_standby_tasks) for c in clients]),
    )


def planned_balances(round_: SimulatedRound) -> tuple[Balance, Balance]:
    """The spread of the actives and of the standbys the round's plan gives the clients to keep: warmups
    are left out, they go once caught up (a converged plan has none; one cut short by a bound may). A
    client the plan does not list holds none."""
    planned = {c.process_id: c.tasks for c in round_.result.clients}
    clients = round_.scenario.application_state.clients.values()
    threads = [c.num_processing_threads for c in clients]
    tasks = [planned.get(c.process_id) for c in clients]
    return (
        balance(threads, [len(t.active) if t else 0 for t in tasks]),
        balance(threads, [len(t.standby - t.warmup) if t else 0 for t in tasks]),
    )


def balance(threads: list[int], counts: list[int]) -> Balance:
    """Max - min over the clients (``counts[i]`` on a client of ``threads[i]`` threads), per thread (clients
    without threads left out) and per client."""
    per_thread = [count / n for count, n in zip(counts, threads, strict=True) if n]
    return Balance(spread(per_thread), int(spread(counts)))


def spread(values: list[float] | list[int]) -> float:
    return float(max(values) - min(values)) if values else 0.0


def kept_cross_rack(round_: SimulatedRound) -> int | None:
    """Cross-rack partitions of what the round's plan keeps (its warmups left out, as in the balance)."""
    if not any(c.tasks.warmup for c in round_.result.clients):
        return round_.result.metrics.cross_rack_cost  # the same count, already made
    if not every_client_has_a_rack(round_.scenario):
        return None  # known before the kept tasks are listed
    kept = {
        c.process_id: ClientTasks(c.tasks.active, c.tasks.standby - c.tasks.warmup)
        for c in round_.result.clients
    }
    return cross_rack_cost(round_.scenario, kept)


def previous_cross_rack(scenario: Scenario) -> int | None:
    """Cross-rack partitions of the previous assignment, counted as the plan's are."""
    if not every_client_has_a_rack(scenario):
        return None  # known before the previous tasks are listed
    previous = {
        pid: ClientTasks(c.previous_active_tasks, c.previous_standby_tasks)
        for pid, c in scenario.application_state.clients.items()
    }
    return cross_rack_cost(scenario, previous)


# --- risks -------------------------------------------------------------------------------------------------


def assess_risks(
    report: RolloutReport, simulation: RolloutSimulation, settings: RolloutSettings
) -> tuple[RiskFlag, ...]:
    """Every flag whose value is above its threshold, in `Risk` order."""
    limits = settings.thresholds
    candidates = [
        RiskFlag(
            Risk.MOST_TASKS_MOVE,
            fraction(report.total_active_moves, report.tasks),
            limits.most_tasks_move_fraction,
        ),
        RiskFlag(Risk.LARGE_RESTORE, report.restore_records, limits.max_restore_records),
        RiskFlag(Risk.SLOW_ROLLOUT, report.estimated_duration_ms, limits.max_rollout_ms),
        *not_converged_flags(simulation, settings),
        RiskFlag(
            Risk.ACTIVE_BALANCE_WORSE,
            report.active_balance_per_thread_after,
            report.active_balance_per_thread_before + limits.active_balance_tolerance,
        ),
        RiskFlag(
            Risk.STANDBY_BALANCE_WORSE,
            report.standby_balance_per_thread_after,
            report.standby_balance_per_thread_before + limits.standby_balance_tolerance,
        ),
        *rack_traffic_flags(report, limits),
    ]
    return tuple(flag for flag in candidates if flag.value > flag.threshold)


def not_converged_flags(simulation: RolloutSimulation, settings: RolloutSettings) -> list[RiskFlag]:
    """The plans asked for more follow-up rebalances than the ``max_rounds - 1`` that ``max_rounds`` plans
    can follow. A simulation cut short by the task or time budget raises no flag: that is the report's
    cost bound, not the plan's risk (its ``truncated`` and ``stop_reason`` say so, and the durations and
    totals are then lower bounds, which the other flags still read)."""
    if simulation.stop_reason is not StopReason.MAX_ROUNDS:
        return []
    return [RiskFlag(Risk.NOT_CONVERGED, simulation.probing_rebalances, settings.max_rounds - 1)]


def rack_traffic_flags(report: RolloutReport, limits: RolloutThresholds) -> list[RiskFlag]:
    if report.cross_rack_before is None or report.cross_rack_after is None:
        return []  # unknown racks: nothing to compare
    return [
        RiskFlag(
            Risk.RACK_TRAFFIC_WORSE,
            report.cross_rack_after,
            report.cross_rack_before + limits.rack_traffic_tolerance,
        )
    ]
