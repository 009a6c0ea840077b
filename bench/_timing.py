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
