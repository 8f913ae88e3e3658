"""Plans and assigns run with Python's cyclic garbage collector paused.

Planning makes many short-lived objects and next to no reference cycles: reference counting frees nearly
all of them, and each pass of the cyclic collector only walks objects that are still alive. At Python's
default threshold (700 allocations) it ran dozens of times in one big plan: half of the whole plan at
6,000 tasks x 2 clients with streams_sticky, a tenth of the broker assignor's own call at 1,000 clients.

So the collector is off while a plan or a built-in assignor's `assign` runs (nested calls and calls in
several threads keep it off until the last one ends). On the way out it is on again and the collection
the paused allocations made due runs before the call returns: the collector starts it itself at the next
allocation (reading the counts here is one), choosing the generation as it always does, and
`collect_what_is_due` runs it if it has not started. That collection is paid inside the call, not left to
whoever allocates next. A collector that was off before stays off, and one disabled by a threshold of 0
is not run.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

_lock = threading.Lock()
_running = 0  # the calls inside a pause now, in all threads
_enabled_before = False  # whether the first of them found the collector on


def _enter() -> None:
    global _running, _enabled_before
    with _lock:
        if _running == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _running += 1


def _leave() -> None:
    global _running
    with _lock:
        _running -= 1
        resume = _running == 0 and _enabled_before
        if resume:
            gc.enable()
    if resume:
        collect_what_is_due()


def collect_what_is_due() -> int | None:
    """Run the collection the allocation counts call for, if any; the generation collected (None: none
    was due). A generation is due when its count is over its threshold; the young one must be for any
    collection to run, and then the oldest due one is collected (with the younger ones), without the
    collector's own extra condition for a full collection (so never later than it would run one)."""
    thresholds, counts = gc.get_threshold(), gc.get_count()
    if thresholds[0] <= 0 or counts[0] <= thresholds[0]:
        return None
    generation = next(g for g in (2, 1, 0) if g == 0 or (thresholds[g] > 0 and counts[g] > thresholds[g]))
    gc.collect(generation)
    return generation


def collector_paused(call: Callable[_P, _R]) -> Callable[_P, _R]:
    """``call`` with the cyclic collector paused for its duration (module docstring)."""

    @wraps(call)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _enter()
        try:
            return call(*args, **kwargs)
        finally:
            _leave()

    return paused
