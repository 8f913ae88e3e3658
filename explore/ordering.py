"""Deterministic row order for every frame the exploration API returns.

Clients sort in Kafka's signed ProcessId order and tasks in TaskId order (POLICY.md §2-3), never in text
or hash order, so a notebook shows the same table on every machine and every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import pandas as pd

from fleet_assignor.assignor import ProcessId, TaskId

PROCESS_COLUMNS = ("process_id", "from_process_id", "to_process_id", "active_process_id")
TASK_COLUMNS = ("task_id",)


@lru_cache(maxsize=65536)
def task_key(task: str) -> tuple[str, int, int]:
    """TaskId order as a plain tuple (named topologies first by name; unnamed ids have an empty name)."""
    parsed = TaskId.parse(task)
    return (parsed.topology_name or "", parsed.subtopology, parsed.partition)


def process_key(process: str | None) -> tuple[int, int, int]:
    """Signed ProcessId order; a missing id (no client) sorts last."""
    if process is None or (isinstance(process, float) and pd.isna(process)):
        return (1, 0, 0)
    return _process_key(process)


@lru_cache(maxsize=65536)
def _process_key(process: str) -> tuple[int, int, int]:
    return (0, *ProcessId.parse(process).sort_key)


def sorted_tasks(tasks: Iterable[str]) -> list[str]:
    """Task ids in TaskId order, duplicates removed."""
    return sorted(set(tasks), key=task_key)


def sorted_processes(processes: Iterable[str]) -> list[str]:
    """Process ids in signed ProcessId order, duplicates removed."""
    return sorted(set(processes), key=process_key)


def _column_key(column: str, values: pd.Series) -> pd.Series:
    if column in TASK_COLUMNS:
        return values.map(lambda v: task_key(v) if isinstance(v, str) else ("\uffff", 0, 0))
    if column in PROCESS_COLUMNS:
        return values.map(process_key)
    return values


def sort_frame(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Sort by `by`, with process and task columns in Kafka's order; a fresh 0..n-1 index."""
    columns = [c for c in by if c in frame.columns]
    if frame.empty or not columns:
        return frame.reset_index(drop=True)
    keys = [list(_column_key(c, frame[c])) for c in columns]
    order = sorted(range(len(frame)), key=lambda i: tuple(_nullable(k[i]) for k in keys))
    return frame.iloc[order].reset_index(drop=True)


def _nullable(value: object) -> tuple:
    """Nulls last, comparable with anything."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return (1, ())
    return (0, value)
