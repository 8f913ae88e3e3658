"""Rack-aware optimization of the sticky assignment (assignors.md §7.4, §7.6; POLICY.md §4).

The KIP-924 optimizers of `assignor.rack` run on the actives (stateful and stateless in separate passes)
and on the standbys, with the sticky assignor's own default costs where the configs leave them unset
(POLICY.md §4). After the active passes, two actives swap clients where that gives a previous active back
to its owner at no higher traffic cost (`give_back_previous_actives`), one of our deliberate improvements
over Kafka's sticky assignor (POLICY.md §3).
"""

from __future__ import annotations

from collections.abc import Callable

from fleet_assignor.assignor.configs import RackAwareStrategy
from fleet_assignor.assignor.rack import (
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
)
from fleet_assignor.assignor.rack.costs import PartitionScope, RemoteCounts
from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState
from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams

# The KIP-924 sticky assignor's default rack costs (assignors.md §1.8).
STATEFUL_TRAFFIC_COST = 1
STATEFUL_NON_OVERLAP_COST = 10
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


def _rack_strategy_set(state: StickyState) -> bool:
    """The optimizers return at once under strategy `none` (assignors.md §8.5 step 2): skip the round trip
    through assignment maps then."""
    strategy = state.application_state.assignment_configs().rack_aware_assignment_strategy
    return strategy is not RackAwareStrategy.NONE


def optimize_actives_for_racks(state: StickyState) -> None:
    if not _rack_strategy_set(state):
        return
    configs = state.application_state.assignment_configs()
    params = RackAwareOptimizationParams.of(state.application_state)
    stateful = (
        params.for_stateful_tasks()
        .with_traffic_cost_override(_or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST))
        .with_non_overlap_cost_override(_or(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST))
    )
    stateless = (
        params.for_stateless_tasks()
        .with_traffic_cost_override(STATELESS_TRAFFIC_COST)
        .with_non_overlap_cost_override(STATELESS_NON_OVERLAP_COST)
    )
    assignments = state.assignment_map()
    results = (
        optimize_rack_aware_active_tasks(stateful, assignments),
        optimize_rack_aware_active_tasks(stateless, assignments),
    )
    state.reload(assignments)
    if any(result.enabled for result in results):
        give_back_previous_actives(state)


def give_back_previous_actives(state: StickyState) -> None:
    """After the rack optimizers: swap two actives between clients when that puts a previous active back on
    its previous owner without raising the cross-rack traffic cost.

    The optimizers charge the non-overlap cost against the assignment they are given, not against the
    previous one, and the stateless pass charges none: they may move a previous active off its owner where
    an equally cheap placement would keep it. A swap exchanges task a (on client x, not its own) with task b
    on a's previous owner y that y did not own, so both clients keep their counts (and, under
    balance_subtopology, their count per subtopology); each swap keeps one more previous active (two if x
    owned b), so this ends.
    """
    saved = _traffic_saved_by_swap(state)
    strategy = state.application_state.assignment_configs().rack_aware_assignment_strategy
    balance = strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY
    owners = state.prev_owners
    changed = True
    while changed:
        changed = False
        for a in range(len(state.tasks)):
            x = state.active_owner[a]
            if x < 0 or not owners[a] or x in owners[a]:
                continue
            swap = _best_give_back_swap(state, a, x, saved, balance)
            if swap is not None:
                b, y = swap
                state.move_active(a, x, y)
                state.move_active(b, y, x)
                changed = True


SwapSaving = Callable[[int, int, int, int], int]


def _traffic_saved_by_swap(state: StickyState) -> SwapSaving:
    """saved(a, x, b, y): the traffic cost saved when task a moves from client x to y and task b from y
    to x.

    Stateful and stateless actives are optimized in separate passes with their own traffic costs: a swap
    must not raise the two passes' traffic cost together (each partition weighted by its pass's cost), so a
    stateful-for-stateless trade never buys a move with dearer stateful traffic."""
    states = state.application_state.kafka_streams_states(False)
    racks = [states[pid].rack_id for pid in state.pids]
    info = state.application_state.all_tasks()
    remote = RemoteCounts(info, PartitionScope.ALL)
    configs = state.application_state.assignment_configs()
    tasks = state.tasks
    stateful_cost = _or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST)
    weight = [stateful_cost if info[t].is_stateful else STATELESS_TRAFFIC_COST for t in tasks]

    def cost(j: int, i: int) -> int:
        return remote.count(tasks[j], racks[i])

    def saved(a: int, x: int, b: int, y: int) -> int:
        return weight[a] * (cost(a, x) - cost(a, y)) + weight[b] * (cost(b, y) - cost(b, x))

    return saved


def _best_give_back_swap(
    state: StickyState, a: int, x: int, saved: SwapSaving, balance: bool
) -> tuple[int, int] | None:
    """(b, y): task a goes back to its previous owner y, which hands x task b that y did not own (of a's
    subtopology under ``balance``). Preferred: a b that x owned (two previous actives back), then the
    largest saving, then the smaller b, then y."""
    tasks, owners = state.tasks, state.prev_owners
    best = None
    for y in owners[a]:
        for b, role in state.roles[y].items():
            if role is not ACTIVE or y in owners[b]:
                continue
            if balance and tasks[b].subtopology != tasks[a].subtopology:
                continue
            saving = saved(a, x, b, y)
            if saving < 0:
                continue
            key = (-(x in owners[b]), -saving, b, y)
            if best is None or key < best:
                best = key
    return None if best is None else (best[2], best[3])


def optimize_standbys_for_racks(state: StickyState) -> None:
    configs = state.application_state.assignment_configs()
    if configs.num_standby_replicas <= 0 or not _rack_strategy_set(state):
        return
    params = (
        RackAwareOptimizationParams.of(state.application_state)
        .with_traffic_cost_override(_or(configs.rack_aware_traffic_cost, STATEFUL_TRAFFIC_COST))
        .with_non_overlap_cost_override(_or(configs.rack_aware_non_overlap_cost, STATEFUL_NON_OVERLAP_COST))
    )
    assignments = state.assignment_map()
    optimize_rack_aware_standby_tasks(params, assignments)
    state.reload(assignments)


def _or(value: int | None, default: int) -> int:
    return default if value is None else value
