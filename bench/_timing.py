"""Timing helpers shared by the bench modules (not a benchmark: run.py skips it)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``, collecting garbage before each
    so one run's leftovers are not charged to the next."""
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class TickLag:
    """How late a periodic timer fires: each lag is the gap between two ticks minus the
    period (what an event loop owes a 10 ms timer while it is busy elsewhere)."""

    def __init__(self, period_s: float) -> None:
        self.period_s = period_s
        self.lags: list[float] = []
        self._last = 0.0

    def tick(self) -> None:
        now = time.perf_counter()
        if self._last:
            self.lags.append(max(0.0, now - self._last - self.period_s))
        self._last = now


def percentile(values: list[float], q: float) -> float:
    """The value at rank ``int(n * q)`` of the sorted values (capped at the last)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
