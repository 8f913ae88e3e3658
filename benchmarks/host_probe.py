"""How fast the host runs plain Python at the moment, recorded beside the benchmarks' absolute times.

On the shared 2-core development machine the same code and inputs have read ~30% apart in CPU time between
hours of one day (2026-11-27: `bench_grouped` 1.77 ms per application at 10:59, 2.30 ms at 12:45), so a
figure alone cannot tell whether a change or the hour moved it. The probe is a fixed workload that runs
none of fleet-assignor's code (hashing, sorting, dict updates, as the planning does); two runs' figures
compare after each is divided by its own probe.
"""

from __future__ import annotations

import random
import time

PROBE_REPEAT = 5


def host_probe_ms(repeat: int = PROBE_REPEAT) -> float:
    """The best CPU ms of ``repeat`` runs of the fixed workload (the best: the least disturbed by whatever
    else runs, while a slower host slows every run)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        _workload()
        best = min(best, (time.process_time() - started) * 1000.0)
    return round(best, 2)


def _workload() -> int:
    rng = random.Random(7)
    values = [rng.random() for _ in range(100_000)]
    values.sort()
    buckets: dict[int, int] = {}
    for i, value in enumerate(values):
        key = hash((int(value * 1000), i % 7))
        buckets[key] = buckets.get(key, 0) + i
    return len(buckets)


if __name__ == "__main__":
    print(host_probe_ms())
