"""assignor.sticky.active_counts: the bound on previous actives kept for loads within [low, high], the
counts that reach it, and re-choosing the counts only when that is no worse in spread and in moves."""

from __future__ import annotations

from fractions import Fraction

from fleet_assignor.assignor import AssignmentConfigs
from fleet_assignor.assignor.sticky.active_counts import (
    _CountSearch,
    _repick_if_better,
    improve_active_counts,
)
from fleet_assignor.assignor.sticky.state import ACTIVE, StickyState
from tests.fixtures import TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3, app_state, stateless_task, streams_state

TASKS = (TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3)


def _state(*clients) -> StickyState:
    return StickyState(app_state([stateless_task(t) for t in TASKS], clients, AssignmentConfigs()))


def test_loads_between_lists_every_reachable_load_once():
    search = _CountSearch([1, 2], [0, 0], 3)
    assert search.loads_between(Fraction(1, 2), Fraction(1)) == [Fraction(1, 2), Fraction(1)]
    assert search.average == Fraction(1)


def test_kept_within_is_the_bound_and_minus_one_when_no_counts_fit():
    search = _CountSearch([1, 1], [3, 0], 4)  # client 0 owned three of the four tasks
    assert search.kept_within(Fraction(1), Fraction(3)) == 3  # counts (3, 1)
    assert search.kept_within(Fraction(2), Fraction(2)) == 2  # counts (2, 2)
    assert search.kept_within(Fraction(3), Fraction(3)) == -1  # 6 tasks needed, 4 exist
    assert search.kept_within(Fraction(1, 2), Fraction(1, 2)) == -1  # no integer count in [0.5, 0.5]


def test_counts_within_fill_the_owners_first_then_the_least_loaded():
    search = _CountSearch([1, 1], [3, 0], 4)
    assert search.counts_within(Fraction(1), Fraction(3), 3) == [3, 1]
    assert search.counts_within(Fraction(1), Fraction(3), 2) == [2, 2]  # no need to keep more: even out


def test_the_narrowest_spread_that_keeps_as_many():
    search = _CountSearch([1, 1], [3, 0], 4)
    lows = search.loads_between(search.average - 2, search.average)
    assert search.most_kept(lows, Fraction(2)) == 3
    assert search.narrowest_spread(lows, Fraction(2), 3) == (Fraction(2), Fraction(1))
    assert search.narrowest_spread(lows, Fraction(2), 2) == (Fraction(0), Fraction(2))


def test_counts_change_when_more_previous_actives_stay_at_no_wider_spread():
    """Counts (1, 3), spread 2, one previous active kept; (3, 1) has the same spread and keeps three."""
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]), streams_state(2))
    for j, client in enumerate([0, 1, 1, 1]):
        state.place(j, client, ACTIVE)
    assert improve_active_counts(state) is True
    assert state.active_count == [3, 1]
    assert state.active_owner == [0, 0, 0, 1]


def test_counts_stay_when_nothing_is_better_on_both():
    """(2, 2) keeps two with spread 0; keeping three needs spread 2: worse on one count, so no change."""
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]), streams_state(2))
    for j, client in enumerate([0, 0, 1, 1]):
        state.place(j, client, ACTIVE)
    assert improve_active_counts(state) is False
    assert state.active_owner == [0, 0, 1, 1]


def test_one_client_has_no_other_counts():
    state = _state(streams_state(1))
    for j in range(len(TASKS)):
        state.place(j, 0, ACTIVE)
    assert improve_active_counts(state) is False


def test_a_trial_re_pick_that_is_no_better_leaves_the_very_placement_it_found():
    """Counts (2, 2) with 0_0 and 0_2 on their owner: (1, 3) narrows the spread but moves two previous
    actives instead of one, so it is undone, back to the same tasks (a re-pick for (2, 2) would keep 0_1
    instead of 0_2 there); (3, 1) moves none, so it stays."""
    state = _state(streams_state(1, previous_active=[TASK_0_0, TASK_0_1, TASK_0_2]), streams_state(2, 2))
    for j, client in enumerate([0, 1, 0, 1]):
        state.place(j, client, ACTIVE)
    assert _repick_if_better(state, [1, 3]) is False
    assert state.active_owner == [0, 1, 0, 1]
    assert _repick_if_better(state, [2, 2]) is False  # as good, not better
    assert state.active_owner == [0, 1, 0, 1]
    assert _repick_if_better(state, [3, 1]) is True
    assert state.active_owner == [0, 0, 0, 1]
