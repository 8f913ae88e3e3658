"""The one saturation rule and the instant range every output reader can hold."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest

from fleet_assignor.assignor.limits import (
    MAX_INSTANT_MS,
    MAX_LONG,
    MIN_INSTANT_MS,
    deadline_after,
    is_instant,
    saturating_add,
)


def test_max_instant_is_the_last_millisecond_a_nanosecond_timestamp_holds():
    assert MAX_INSTANT_MS * 1_000_000 <= MAX_LONG < (MAX_INSTANT_MS + 1) * 1_000_000
    # Readers converting to nanoseconds (pandas' default) hold it.
    series = pd.to_datetime(
        pd.Series([datetime.fromtimestamp(MAX_INSTANT_MS / 1000, timezone.utc)]), utc=True
    )
    assert series.iloc[0].value == MAX_INSTANT_MS * 1_000_000


@pytest.mark.parametrize(
    "now, interval, expected",
    [
        (1_000, 600_000, 601_000),
        (MAX_INSTANT_MS - 5, 5, MAX_INSTANT_MS),
        (MAX_INSTANT_MS - 5, 6, MAX_INSTANT_MS),
        (1_767_225_600_000, MAX_LONG, MAX_INSTANT_MS),
        (1_767_225_600_000, 10**16, MAX_INSTANT_MS),
    ],
)
def test_deadlines_saturate_at_the_last_instant(now, interval, expected):
    assert deadline_after(now, interval) == expected


def test_saturating_add_caps_at_a_long():
    assert saturating_add(MAX_LONG, 1) == MAX_LONG
    assert saturating_add(MAX_LONG - 1, 1) == MAX_LONG
    assert saturating_add(2, 3) == 5


@pytest.mark.parametrize(
    "value, ok",
    [(MIN_INSTANT_MS, True), (MAX_INSTANT_MS, True), (-1, False), (MAX_INSTANT_MS + 1, False),
     (True, False), (1.0, False), ("5", False), (None, False)],
)  # fmt: skip
def test_is_instant(value, ok):
    assert is_instant(value) is ok
