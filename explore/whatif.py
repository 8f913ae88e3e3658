"""What-if planning: apply a change to copies of scenario dicts, plan both, report the difference.

The caller's scenarios (and the run's real input tables) are never modified: every change returns a new
dict. Changes are small frozen dataclasses so a notebook can list them, print them and reuse them.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from fleet_assignor.explore.compare import assignment_diff, compare_runs
from fleet_assignor.explore.planning import FleetPlan, plan_fleet

WHAT_IF_NAMESPACE = uuid.UUID("6f1d0c1e-2a57-4f0b-9a53-6b3f2b8f7a10")


class Change:
    """A change to one application's scenario; `apply` returns a modified deep copy."""

    def apply(self, scenario: Mapping) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:
        return repr(self)


@dataclass(frozen=True)
class AddClients(Change):
    """`count` new KafkaStreams clients with no previous tasks and no local state (lag = full changelog)."""

    count: int
    threads: int = 1
    rack: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)

    def apply(self, scenario: Mapping) -> dict:
        result = copy.deepcopy(dict(scenario))
        clients = result.setdefault("clients", [])
        taken = {c["process_id"] for c in clients}
        for process_id in new_process_ids(str(result.get("app_id")), taken, self.count):
            client = {
                "process_id": process_id,
                "threads": self.threads,
                "prev_active": [],
                "prev_standby": [],
                "lags": {},
                "rack": self.rack,
                "tags": dict(self.tags),
            }
            clients.append(client)
        return result


@dataclass(frozen=True)
class RemoveClients(Change):
    """The clients with these process ids leave the group (their previous tasks go with them)."""

    process_ids: tuple[str, ...]

    def apply(self, scenario: Mapping) -> dict:
        result = copy.deepcopy(dict(scenario))
        gone = set(self.process_ids)
        result["clients"] = [c for c in result.get("clients") or [] if c["process_id"] not in gone]
        return result


@dataclass(frozen=True)
class LoseRack(Change):
    """A rack (availability zone) is lost: its clients leave the group and, with `brokers`, its broker
    replicas disappear from every partition's replica racks (a partition left with none has unknown racks)."""

    rack: str
    brokers: bool = True

    def apply(self, scenario: Mapping) -> dict:
        result = copy.deepcopy(dict(scenario))
        result["clients"] = [c for c in result.get("clients") or [] if c.get("rack") != self.rack]
        if self.brokers:
            for task in result.get("tasks") or []:
                for partition in task.get("partitions") or []:
                    partition["racks"] = [r for r in partition.get("racks") or [] if r != self.rack]
        return result


@dataclass(frozen=True)
class SetConfig(Change):
    """Set one `configs` key (scenario.md): e.g. `num_standby_replicas`, `rack_aware_assignment_strategy`."""

    key: str
    value: object

    def apply(self, scenario: Mapping) -> dict:
        result = copy.deepcopy(dict(scenario))
        result.setdefault("configs", {})[self.key] = copy.deepcopy(self.value)
        return result


def set_standby_replicas(count: int) -> SetConfig:
    return SetConfig("num_standby_replicas", count)


def set_assignor(name: str) -> SetConfig:
    return SetConfig("assignor", name)


def new_process_ids(app_id: str, taken: Iterable[str], count: int) -> list[str]:
    """`count` UUIDs derived from the app id (uuid5: the same what-if gives the same ids), not in `taken`."""
    taken = set(taken)
    ids: list[str] = []
    serial = 0
    while len(ids) < count:
        candidate = str(uuid.uuid5(WHAT_IF_NAMESPACE, f"{app_id}/added-client/{serial}"))
        serial += 1
        if candidate not in taken:
            ids.append(candidate)
            taken.add(candidate)
    return ids


def apply_changes(
    scenarios: Iterable[Mapping], changes: Sequence[Change], *, apps: Iterable[str] | None = None
) -> list[dict]:
    """Copies of the scenarios with the changes applied in order (only to `apps` when given)."""
    selected = None if apps is None else set(apps)
    changed = []
    for scenario in scenarios:
        current = copy.deepcopy(dict(scenario))
        if selected is None or current.get("app_id") in selected:
            for change in changes:
                current = change.apply(current)
        changed.append(current)
    return changed


@dataclass(frozen=True, eq=False)
class WhatIf:
    """The baseline plan, the plan with the changes, and their comparison (compare_runs columns)."""

    changes: tuple[Change, ...]
    baseline: FleetPlan
    changed: FleetPlan
    comparison: pd.DataFrame

    def diff(self, app_id: str, *, only_changed: bool = True) -> pd.DataFrame:
        """Per task of one app: active / standbys in the baseline (`_a`) and with the change (`_b`)."""
        return assignment_diff(self.baseline.frames, self.changed.frames, app_id, only_changed=only_changed)


def what_if(
    scenarios: Mapping | Iterable[Mapping],
    changes: Change | Sequence[Change],
    *,
    now_ms: int,
    assignor: str | None = None,
    apps: Iterable[str] | None = None,
) -> WhatIf:
    """Plan the scenarios as they are and with `changes` applied (to `apps` only, if given), with the same
    planning instant and assignor override, and compare. One scenario dict is a fleet of one."""
    fleet = [scenarios] if isinstance(scenarios, Mapping) else list(scenarios)
    change_list = (changes,) if isinstance(changes, Change) else tuple(changes)
    changed_scenarios = apply_changes(fleet, change_list, apps=apps)
    baseline = plan_fleet(fleet, now_ms=now_ms, assignor=assignor, run_id="baseline")
    changed = plan_fleet(changed_scenarios, now_ms=now_ms, assignor=assignor, run_id="what-if")
    return WhatIf(change_list, baseline, changed, compare_runs(baseline.frames, changed.frames))


def compare_assignors(
    scenarios: Mapping | Iterable[Mapping], a: str, b: str, *, now_ms: int
) -> tuple[FleetPlan, FleetPlan, pd.DataFrame]:
    """Plan the same scenarios with assignor `a` and with `b`; return both plans and compare_runs(a, b)."""
    fleet = [scenarios] if isinstance(scenarios, Mapping) else list(scenarios)
    plan_a = plan_fleet(fleet, now_ms=now_ms, assignor=a, run_id=a)
    plan_b = plan_fleet(fleet, now_ms=now_ms, assignor=b, run_id=b)
    return plan_a, plan_b, compare_runs(plan_a.frames, plan_b.frames)
