"""The cyclic collector paused while plans and assigns run (assignor.gc_pause)."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from fleet_assignor.assignor.gc_pause import collect_what_is_due, collector_paused
from fleet_assignor.assignor.registry import BUILTIN_ASSIGNORS, load_assignor
from fleet_assignor.assignor.scenario import load_scenario
from tests.scenario_generator import generate_scenario


class _Node:
    """An object that can be in a reference cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref:
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    return weakref.ref(first)


@pytest.fixture
def collector():
    """The collector on, at the given thresholds; put back as it was after the test."""
    was, thresholds = gc.isenabled(), gc.get_threshold()
    gc.enable()
    yield
    gc.set_threshold(*thresholds)
    (gc.enable if was else gc.disable)()


def test_paused_inside_resumed_after_and_the_answer_passes_through(collector):
    seen = []
    assert collector_paused(lambda x: seen.append(gc.isenabled()) or x * 2)(21) == 42
    assert seen == [False]
    assert gc.isenabled()


def test_an_exception_passes_through_and_the_collector_is_resumed(collector):
    def broken():
        raise KeyError("x")

    with pytest.raises(KeyError):
        collector_paused(broken)()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector):
    gc.disable()
    collector_paused(lambda: None)()
    assert not gc.isenabled()


def test_nested_calls_resume_only_when_the_outermost_ends(collector):
    seen = []

    @collector_paused
    def inner():
        seen.append(gc.isenabled())

    @collector_paused
    def outer():
        inner()
        seen.append(gc.isenabled())

    outer()
    assert seen == [False, False]
    assert gc.isenabled()


def test_calls_in_two_threads_keep_it_off_until_both_end(collector):
    entered, release = threading.Event(), threading.Event()

    @collector_paused
    def long_call():
        entered.set()
        release.wait(10)

    thread = threading.Thread(target=long_call)
    thread.start()
    assert entered.wait(10)
    seen = []
    collector_paused(lambda: seen.append(gc.isenabled()))()
    assert seen == [False]
    assert not gc.isenabled()  # the other call still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_cycle_made_while_paused_is_collected_on_the_way_out_when_due(collector):
    gc.collect()
    gc.set_threshold(50, 10, 10)

    @collector_paused
    def make_garbage_and_allocate(kept):
        watched = _cycle()
        kept.extend([] for _ in range(200))  # tracked objects, kept: the young generation becomes due
        return watched

    kept: list[list] = []
    watched = make_garbage_and_allocate(kept)
    assert watched() is None


def test_nothing_is_collected_on_the_way_out_when_nothing_is_due(collector):
    gc.collect()
    gc.set_threshold(1_000_000, 10, 10)
    watched = collector_paused(_cycle)()
    assert watched() is not None  # left to the next collection the program's allocations start
    gc.collect()
    assert watched() is None


def test_the_oldest_due_generation_is_collected(collector):
    gc.disable()  # the counts below are set by hand, not by automatic collections
    gc.set_threshold(1_000_000, 1, 1)
    gc.collect(0)
    gc.collect(0)  # generation 1 is over its threshold
    assert collect_what_is_due() is None  # the young generation is not due: nothing else counts
    gc.collect()
    gc.set_threshold(10, 1, 1_000_000)
    gc.collect(0)
    gc.collect(0)  # two young collections since the last of generation 1: over its threshold of 1
    kept = [[] for _ in range(100)]
    assert collect_what_is_due() == 1
    assert gc.get_count()[1] == 0
    kept += [[] for _ in range(100)]
    assert collect_what_is_due() == 0  # generation 1 is not due any more: only the young one
    gc.set_threshold(0, 1, 1)
    kept += [[] for _ in range(100)]
    assert collect_what_is_due() is None  # a threshold of 0 turns automatic collection off


@pytest.mark.parametrize("name", sorted(BUILTIN_ASSIGNORS))
def test_a_built_in_assign_runs_without_collections_but_the_one_due_at_its_end(name, collector):
    state = load_scenario(generate_scenario(3), now_ms=0).application_state
    assignor = load_assignor(name)
    this_thread = threading.get_ident()
    starts: list[int] = []

    def record(phase, info):
        # A collection runs in the thread whose allocation started it: other threads' do not count.
        if phase == "start" and threading.get_ident() == this_thread:
            starts.append(info["generation"])

    gc.set_threshold(20, 10, 10)  # without the pause, a collection every 20 allocations
    gc.collect()  # counts from 0: the few allocations before the pause start none
    gc.callbacks.append(record)
    try:
        assignor.assign(state)
    finally:
        gc.callbacks.remove(record)
    assert len(starts) <= 1
