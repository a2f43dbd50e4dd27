"""Wall-clock timing shared by the benchmarks."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeats: int) -> float:
    """Seconds ``fn()`` takes: the median of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
