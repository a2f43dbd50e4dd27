"""Timing of optimizer steps, shared by the training benchmarks."""

from __future__ import annotations

import statistics
import time

import torch


def steps_per_second(group, steps: int, warmup: int, repeats: int) -> float:
    """Optimizer steps per second of a :class:`validation.train.SeedGroup`: the median of
    ``repeats`` timings of ``steps`` steps, after ``warmup`` untimed ones; on a GPU each timing
    waits for the device to finish."""
    cuda = group.device.type == "cuda"
    for _ in range(warmup):
        group.train_step()
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize(group.device)
        start = time.perf_counter()
        for _ in range(steps):
            group.train_step()
        if cuda:
            torch.cuda.synchronize(group.device)
        times.append(time.perf_counter() - start)
    return steps / statistics.median(times)
