"""Multi-round simulation on scenario dicts: feed each plan back as the next rebalance's previous assignment.

The notebook's view of `fleet_assignor.assignor.simulation` (one implementation, shared with the fleet
job's rollout report); each round is shown as the scenario dict and result object it stands for. The
semantics are that module's: between two rounds the clients carry the plan out: every active runs (lag -2,
caught up by definition), every standby and warmup restores `catch_up_per_round` records of its lag
(None = fully caught up), and a client that dropped a task is taken to have discarded its state (lag = the
full changelog). The changelogs themselves are frozen at the first round's end offsets. The simulation
stops at the first plan that asks for no follow-up (converged) or after `max_rounds`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from fleet_assignor.assignor.distribution import ConsumerTasks
from fleet_assignor.assignor.metrics import ClientTasks
from fleet_assignor.assignor.planner import ClientResult
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.scenario import UNKNOWN_OFFSET, Scenario, load_scenario
from fleet_assignor.assignor.simulation import SimulationLimits, next_round_scenario, simulate_rollout
from fleet_assignor.assignor.task_id import TaskId
from fleet_assignor.schemas.contract import changelog_tasks, scenario_end_sums

__all__ = ["Round", "Simulation", "changelog_tasks", "end_offset_sums", "next_scenario", "simulate"]


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


# Per changelog task: its end-offset sum as scenario.md infers it (the contract's rule, one implementation).
end_offset_sums = scenario_end_sums


def next_scenario(
    scenario: Mapping, result: Mapping, *, end_sums: Mapping[str, int], catch_up_per_round: int | None
) -> dict:
    """The scenario of the next rebalance after the clients carried `result` out (see module docstring).

    Clients keep their racks, tags and consumers; each consumer's history is what the plan gave it.
    """
    loaded = load_scenario(scenario)
    nxt = next_round_scenario(
        loaded,
        [_client_result(entry) for entry in result.get("assignment") or []],
        end_sums={TaskId.parse(task): int(end) for task, end in end_sums.items()},
        catch_up_per_round=catch_up_per_round,
        now_ms=loaded.now_ms,
    )
    return scenario_dict(scenario, nxt)


def _client_result(entry: Mapping) -> ClientResult:
    """A result object's client entry, typed (what the plan gave the client and each of its consumers)."""

    def tasks(values: list[str] | None) -> frozenset[TaskId]:
        return frozenset(TaskId.parse(t) for t in values or [])

    consumers = {
        cid: ConsumerTasks(tuple(tasks(owned.get("active"))), tuple(tasks(owned.get("standby"))))
        for cid, owned in (entry.get("consumers") or {}).items()
    }
    return ClientResult(
        ProcessId.parse(entry["process_id"]),
        ClientTasks(tasks(entry.get("active")), tasks(entry.get("standby")), tasks(entry.get("warmup"))),
        consumers,
        entry.get("followup_rebalance_deadline_ms"),
    )


def scenario_dict(original: Mapping, scenario: Scenario) -> dict:
    """``original`` with each client's history and lags replaced by ``scenario``'s (a carried-out round):
    every other key (racks, tags, host info, configs, tasks) as written."""
    nxt = copy.deepcopy(dict(original))
    clients = []
    for client in nxt.get("clients") or []:
        pid = ProcessId.parse(client["process_id"])
        state = scenario.application_state.clients[pid]
        updated = {
            k: v
            for k, v in client.items()
            if k not in ("prev_active", "prev_standby", "consumers", "threads", "lags")
        }
        updated["consumers"] = [
            {
                "id": c.consumer_id,
                "prev_active": _texts(c.prev_active),
                "prev_standby": _texts(c.prev_standby),
            }
            for c in scenario.consumers[pid]
        ]
        updated["lags"] = {
            # An unknown lag (lags not computed) is shown as the whole changelog, which reads back the same
            # and keeps the frozen end-offset sums inferable from the dict.
            str(task): scenario.end_offset_sums[task] if lag == UNKNOWN_OFFSET else lag
            for task, lag in (state.task_lags or {}).items()
        }
        clients.append(updated)
    nxt["clients"] = clients
    return nxt


def _texts(tasks: frozenset[TaskId]) -> list[str]:
    return [str(t) for t in sorted(tasks)]


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
    original = copy.deepcopy(dict(scenario))
    simulation = simulate_rollout(
        load_scenario(original, now_ms=now_ms),
        catch_up_per_round=catch_up_per_round,
        limits=SimulationLimits(max_rounds=max_rounds),
        assignor=assignor,
    )
    rounds = tuple(
        Round(
            r.number,
            r.now_ms,
            copy.deepcopy(original) if r.number == 1 else scenario_dict(original, r.scenario),
            r.result.as_dict(),
        )
        for r in simulation.rounds
    )
    return Simulation(rounds, converged=simulation.converged)
