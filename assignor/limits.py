"""The valid range of every number the planner reads or writes, and the one rule for arithmetic that could
leave a 64-bit column: it saturates.

Ranges (README "Valid ranges", docs/tables.md):

* counts and settings stored as `int` columns (`max_warmup_replicas`, `num_standby_replicas`, rack costs,
  partitions): 0 or 1 .. 2^31-1, as Kafka's int configs;
* lags, offsets, `acceptable_recovery_lag`, `probing_rebalance_interval_ms`: .. 2^63-1 (Kafka's longs);
* `threads` of a scenario client without a consumer list: 1 .. MAX_GENERATED_THREADS;
* instants (the planning instant, follow-up deadlines): MIN_INSTANT_MS .. MAX_INSTANT_MS, the range of a
  nanosecond timestamp (pandas, Arrow's default conversions), so every reader of the outputs can hold them.
  A deadline computed past the end saturates at MAX_INSTANT_MS: a probing interval that long means "not in
  any reader's lifetime", and an overflow must never sink the run.
"""

from __future__ import annotations

MAX_LONG = (1 << 63) - 1
MAX_INT = (1 << 31) - 1
MIN_INSTANT_MS = 0  # 1970-01-01T00:00:00.000Z
MAX_INSTANT_MS = MAX_LONG // 1_000_000  # 2262-04-11T23:47:16.854Z: the last millisecond in nanoseconds
# A scenario client given by its thread count gets that many consumers made up: a count near 2^31 would
# exhaust memory before anything could be reported. (The tables list consumers row by row instead.)
MAX_GENERATED_THREADS = 100_000


def saturating_add(a: int, b: int, cap: int = MAX_LONG) -> int:
    """a + b, at most `cap` (both non-negative)."""
    total = a + b
    return cap if total > cap else total


def deadline_after(now_ms: int, interval_ms: int) -> int:
    """The follow-up deadline `interval_ms` after the planning instant, saturated at MAX_INSTANT_MS."""
    return saturating_add(now_ms, interval_ms, MAX_INSTANT_MS)


def is_instant(value: object) -> bool:
    """An int (not a bool) within MIN_INSTANT_MS .. MAX_INSTANT_MS."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and MIN_INSTANT_MS <= value <= MAX_INSTANT_MS
    )


def instant_range_text() -> str:
    return f"{MIN_INSTANT_MS} .. {MAX_INSTANT_MS} ms (1970-01-01T00:00:00.000Z .. 2262-04-11T23:47:16.854Z)"
