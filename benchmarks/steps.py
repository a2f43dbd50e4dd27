"""Timing of optimizer steps, shared by the training benchmarks."""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch


def timing_arguments(parser: argparse.ArgumentParser, *, steps: int, warmup: int, repeats: int = 3) -> None:
    """Add the flags every step timing takes: ``--device``, ``--steps``, ``--warmup``, ``--repeats``."""
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=steps, help="steps per timing")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed steps before the timings")
    parser.add_argument("--repeats", type=int, default=repeats, help="timings; their median is quoted")


def steps_per_second(group, steps: int, warmup: int, repeats: int) -> float:
    """Optimizer steps per second of a :class:`validation.training.group.SeedGroup`: the median of
    ``repeats`` timings of ``steps`` steps, after ``warmup`` untimed ones; on a GPU each timing
    waits for the device to finish."""
    for _ in range(warmup):
        group.train_step()
    return steps / statistics.median(time_steps(group, steps) for _ in range(repeats))


def time_steps(group, steps: int) -> float:
    """Seconds that ``steps`` optimizer steps of ``group`` take (on a GPU, until it finishes)."""
    cuda = group.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(group.device)
    start = time.perf_counter()
    for _ in range(steps):
        group.train_step()
    if cuda:
        torch.cuda.synchronize(group.device)
    return time.perf_counter() - start


TIMED_SET = 4_096
"""Examples in the fixed training set of a timed group whose plan trains epochs over one (the set's
size does not change a step's cost, and building 500,000 examples would dominate the timing)."""


def streamed_group(plan, variant, device: str, seeds: int = 1, step: str | None = None):
    """A :class:`validation.training.group.SeedGroup` of ``seeds`` seeds of ``plan``'s model, batches
    and sampler, stepping as ``step`` says (None: the default on ``device``), for as many steps as a
    timing takes: a plan over a fixed training set gets one of :data:`TIMED_SET` examples."""
    from validation.training.group import SeedGroup

    train = plan.train
    if train.epochs:
        train = dataclasses.replace(train, train_size=min(train.train_size or TIMED_SET, TIMED_SET), epochs=10**6)
    config = dataclasses.replace(train, steps=10**6, eval_every=10**6, test_size=1)
    return SeedGroup(plan.task, variant, plan.model, config, seeds=tuple(range(seeds)), device=device, step=step)
