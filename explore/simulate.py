"""Multi-round simulation: feed each plan back as the next rebalance's previous assignment.

Between two rounds the clients carry the plan out: every active runs (lag -2, caught up by definition),
every standby and warmup restores `catch_up_per_round` records of its lag (None = fully caught up), and a
client that dropped a task is taken to have discarded its state (lag = the full changelog). The changelogs
themselves are frozen at the first round's end offsets. The simulation stops at the first plan that asks
for no follow-up (converged) or after `max_rounds`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from fleet_assignor.schemas import contract
from fleet_assignor.schemas.contract import changelog_tasks, scenario_consumers

RUNNING_ACTIVE_LAG = contract.RUNNING_ACTIVE
UNKNOWN_LAG = contract.UNKNOWN
# Per changelog task: its end-offset sum as scenario.md infers it.
end_offset_sums = contract.scenario_end_sums

__all__ = [
    "Round",
    "Simulation",
    "changelog_tasks",
    "current_lag",
    "end_offset_sums",
    "next_scenario",
    "simulate",
]


@dataclass(frozen=True, eq=False)
class Round:
    """One rebalance of the simulation: the scenario planned and the planner's result object."""

    number: int
    now_ms: int
    scenario: dict
    result: dict

    @property
    def probing_rebalance(self) -> bool:
        return bool(self.result.get("probing_rebalance"))


@dataclass(frozen=True, eq=False)
class Simulation:
    rounds: tuple[Round, ...]
    converged: bool

    @property
    def probing_rebalances(self) -> int:
        """Follow-up (probing) rebalances requested before the plan converged (or in all, if it did not)."""
        return sum(r.probing_rebalance for r in self.rounds)

    def summary(self) -> pd.DataFrame:
        """One row per round: moves, warmups, restore lag, whether a probing rebalance follows."""
        rows = []
        for r in self.rounds:
            metrics = r.result.get("metrics") or {}
            rows.append(
                {
                    "round": r.number,
                    "now_ms": r.now_ms,
                    "status": r.result.get("status"),
                    "active_moves": metrics.get("active_moves"),
                    "standby_moves": metrics.get("standby_moves"),
                    "warmups": metrics.get("warmups"),
                    "restore_lag": metrics.get("restore_lag"),
                    "probing_rebalance": r.probing_rebalance,
                }
            )
        return pd.DataFrame(rows)


def current_lag(client: Mapping, task: str, end_sum: int) -> int:
    """A client's lag for a task as the planner reads it (-2 running, -3 and no state = the end sum)."""
    _, prev_active, _ = scenario_consumers(client)
    lags = client.get("lags") or {}
    if task not in lags:
        return RUNNING_ACTIVE_LAG if task in prev_active else end_sum
    lag = int(lags[task])
    return end_sum if lag == UNKNOWN_LAG else lag


def next_scenario(
    scenario: Mapping, result: Mapping, *, end_sums: Mapping[str, int], catch_up_per_round: int | None
) -> dict:
    """The scenario of the next rebalance after the clients carried `result` out (see module docstring).

    Clients keep their racks, tags and consumers; each consumer's history is what the plan gave it.
    """
    nxt = copy.deepcopy(dict(scenario))
    planned = {c["process_id"]: c for c in result.get("assignment") or []}
    clients = []
    for client in nxt.get("clients") or []:
        plan = planned.get(client["process_id"], {"active": [], "standby": [], "consumers": {}})
        consumer_ids, _, _ = scenario_consumers(client)
        owned = plan.get("consumers") or {}
        updated = {
            k: v
            for k, v in client.items()
            if k not in ("prev_active", "prev_standby", "consumers", "threads")
        }
        updated["consumers"] = [
            {
                "id": cid,
                "prev_active": list((owned.get(cid) or {}).get("active") or []),
                "prev_standby": list((owned.get(cid) or {}).get("standby") or []),
            }
            for cid in consumer_ids
        ]
        updated["lags"] = _lags_after(client, plan, end_sums, catch_up_per_round)
        clients.append(updated)
    nxt["clients"] = clients
    return nxt


def _lags_after(
    client: Mapping, plan: Mapping, end_sums: Mapping[str, int], rate: int | None
) -> dict[str, int]:
    actives = set(plan.get("active") or [])
    standbys = set(plan.get("standby") or [])
    lags = {}
    for task, end_sum in end_sums.items():
        if task in actives:
            lags[task] = RUNNING_ACTIVE_LAG
        elif task in standbys:
            before = max(current_lag(client, task, end_sum), 0)  # a demoted active starts caught up
            lags[task] = 0 if rate is None else max(before - rate, 0)
        else:
            lags[task] = end_sum
    return lags


def simulate(
    scenario: Mapping,
    *,
    now_ms: int,
    max_rounds: int = 10,
    catch_up_per_round: int | None = None,
    assignor: str | None = None,
) -> Simulation:
    """Plan, carry out, replan... until a plan requests no follow-up rebalance or `max_rounds` plans.

    The next round happens at the earliest follow-up deadline of the plan (the probing interval after a
    probing plan, at once after an assignor failure).
    """
    from fleet_assignor.assignor.planner import plan_scenario

    if max_rounds < 1:
        raise ValueError("max_rounds must be at least 1")
    if catch_up_per_round is not None and catch_up_per_round < 0:
        raise ValueError("catch_up_per_round must be >= 0 or None")
    end_sums = end_offset_sums(scenario)
    current, now = copy.deepcopy(dict(scenario)), now_ms
    rounds: list[Round] = []
    for number in range(1, max_rounds + 1):
        result = plan_scenario(copy.deepcopy(current), assignor=assignor, now_ms=now)
        rounds.append(Round(number, now, current, result))
        if not result.get("probing_rebalance"):
            return Simulation(tuple(rounds), converged=True)
        current = next_scenario(current, result, end_sums=end_sums, catch_up_per_round=catch_up_per_round)
        now = _next_rebalance_ms(result, now)
    return Simulation(tuple(rounds), converged=False)


def _next_rebalance_ms(result: Mapping, now_ms: int) -> int:
    deadlines = [
        c["followup_rebalance_deadline_ms"]
        for c in result.get("assignment") or []
        if c.get("followup_rebalance_deadline_ms") is not None
    ]
    return max(min(deadlines), now_ms) if deadlines else now_ms
