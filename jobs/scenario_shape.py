"""From the compact per-application JSON built in Spark (jobs.prepare) to the scenario dict of scenario.md
(a scenario JSON path back to the table row it came from: `schemas.contract.describe_path`). Pure Python:
runs inside the grouped map.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fleet_assignor.schemas.contract import APPLICATION_CONFIG_COLUMNS, inferred_end_sums

# The scenario's config keys are the `applications` columns (tables.md); nulls are left out so that the
# scenario loader applies the same defaults as a null column.
CONFIG_KEYS = APPLICATION_CONFIG_COLUMNS
MAX_PROBLEMS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class AppInput:
    """One application as the grouped map sees it: its scenario, or why it cannot have one."""

    app_id: str
    scenario: dict[str, Any]
    problems: tuple[str, ...]  # INVALID_INPUT reasons found on the rows, each naming table and row key


def shape_application(app_id: str, compact_json: str) -> AppInput:
    """Build the scenario dict of one application from the compact JSON of jobs.prepare."""
    compact = json.loads(compact_json)
    problems = list(compact.get("problems") or [])
    tasks = [_task(t) for t in compact.get("tasks") or []]
    clients = sorted((_client(c) for c in compact.get("clients") or []), key=lambda c: c["process_id"])
    if not clients:
        problems.append("client_subscriptions: no rows for this application (no clients)")
    elif not tasks:
        problems.append(
            "tasks: no rows for this application (no topology rows; an empty plan would revoke every task)"
        )
    lags_computed = bool(compact.get("lags_computed", True))
    if lags_computed:
        _anchor_end_sums(compact.get("tasks") or [], clients)
    scenario: dict[str, Any] = {
        "app_id": app_id,
        "configs": _configs(compact.get("configs") or {}),
        "tasks": tasks,
        "clients": clients,
    }
    if not lags_computed:
        scenario["lags_computed"] = False
    return AppInput(app_id, scenario, tuple(sorted(problems)))


def _configs(raw: dict[str, Any]) -> dict[str, Any]:
    configs = {key: raw[key] for key in CONFIG_KEYS if raw.get(key) is not None}
    if "assignor_configs" in configs:
        configs["assignor_configs"] = dict(sorted(configs["assignor_configs"].items()))
    return configs


def _task(raw: dict[str, Any]) -> dict[str, Any]:
    stores = raw.get("stores") or []
    return {
        "id": raw["id"],
        "stateful": bool(stores),
        "stores": stores,
        # Already in the scenario's form (jobs.prepare builds topic, partition, source, changelog, racks,
        # none of them null): passed on as parsed, not copied, as a fleet has millions of them.
        "partitions": raw.get("partitions") or [],
    }


def _client(raw: dict[str, Any]) -> dict[str, Any]:
    consumers = raw.get("consumers") or []  # id, prev_active, prev_standby: the scenario's form already
    client: dict[str, Any] = {
        "process_id": raw["process_id"],
        "threads": len(consumers),
        "consumers": consumers,
        "lags": dict(raw.get("lags") or {}),
        "rack": raw.get("rack"),
        "tags": dict(sorted((raw.get("tags") or {}).items())),
    }
    if raw.get("host_info") is not None:
        client["host_info"] = raw["host_info"]
    return client


def _anchor_end_sums(compact_tasks: list[dict[str, Any]], clients: list[dict[str, Any]]) -> None:
    """Make the scenario's implied end-offset sums the real ones.

    A scenario gives a client with no state for a task no lag entry and takes the task's end-offset sum as
    the largest non-negative lag reported (scenario.md). Spark leaves such clients out to keep the frame
    small; where the largest reported lag is not the real end sum, the clients without an entry get the
    end sum written out, which is what their lag is."""
    inferred = inferred_end_sums(c["lags"] for c in clients)
    for task in compact_tasks:
        end_sum = task.get("end_sum")
        if end_sum is None:
            continue
        task_id = task["id"]
        if inferred.get(task_id, 0) == end_sum:
            continue
        for client in clients:
            client["lags"].setdefault(task_id, end_sum)


def invalid_input_detail(problems: tuple[str, ...]) -> str:
    """error_detail for row problems: every problem, sorted, the first MAX_PROBLEMS_SHOWN of them."""
    shown = list(problems[:MAX_PROBLEMS_SHOWN])
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more")
    return "; ".join(shown)
