"""What the arithmetic experiments claim and what they measure: the claims' vocabulary, the runs of
each paper's experiment, and the measured curves, cascades and kept attention lines.

Plain data, shared by the experiments (:mod:`validation.experiments.arithmetic`) and their report
(:mod:`validation.reports.arithmetic`), so that neither imports the other's module for its types.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass

from validation.config import ValidationError

GENERALIZES, FAILS = "generalizes", "does not generalize"


DOWNWARD = "generalizes downward, not upward"
"""Xu et al.'s claim for absolute positions, and for a modulus that divides no power of 10: right on
fewer digits than trained (every shorter bin kept) and wrong beyond (collapsed). Plain "does not
generalize" reads only the longer lengths."""


DECLINES = "declines"
"""A claim that accuracy falls beyond the training range without saying how far (kept: no)."""


ABOVE = "above "
"""A comparative claim, ``ABOVE + variant``: beyond the training range, every bin is above that
variant's on the same task."""


CASCADES_ABOVE = "on cascades longer than in training, above "
"""A comparative claim, ``CASCADES_ABOVE + task``: on sums whose longest carry cascade is longer
than any training input can have, the carry-cascade probe's mean accuracy is above that task's
(same variant). Sabbaghi et al.'s complexity-balanced distribution against the plain one."""


@dataclass(frozen=True)
class Run:
    """One (task, variant) of an experiment and what the paper claims it does beyond the
    training range."""

    task: str
    variant: str
    claimed: str


@dataclass(frozen=True)
class Experiment:
    """One paper's central claim and the runs that test it (``cpu_runs``: the subset the cpu
    preset trains; None: all of them)."""

    name: str
    reference: str
    claim: str
    all_runs: tuple[Run, ...]
    cpu_runs: tuple[Run, ...] | None = None

    def runs(self, preset: str) -> tuple[Run, ...]:
        return self.cpu_runs if preset == "cpu" and self.cpu_runs is not None else self.all_runs

    def restricted(self, preset: str, chosen: Collection[str]) -> "Experiment":
        """This experiment with only the runs named ``TASK:VARIANT`` in ``chosen`` (under
        ``preset``): several processes can then share one GPU, each training its own runs.

        >>> from validation.experiments.arithmetic import EXPERIMENTS
        >>> [r.variant for r in EXPERIMENTS["xu"].restricted("cpu", ["xu_addition:rpe"]).runs("cpu")]
        ['rpe']
        >>> EXPERIMENTS["xu"].restricted("cpu", ["xu_addition:upe"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        validation.config.ValidationError: experiment 'xu' has no run xu_addition:upe under the cpu preset (its runs: xu_addition:ape, xu_mod50_addition:ape, ..., xu_addition:rpe)
        """
        runs = self.runs(preset)
        names = [f"{r.task}:{r.variant}" for r in runs]
        unknown = [name for name in chosen if name not in names]
        if unknown:
            raise ValidationError(f"experiment {self.name!r} has no run {', '.join(unknown)} under the {preset} "
                                  f"preset (its runs: {', '.join(names)})")
        kept = tuple(r for r, name in zip(runs, names) if name in chosen)
        return dataclasses.replace(self, all_runs=kept, cpu_runs=kept)


@dataclass(frozen=True)
class Curve:
    """Accuracy of one (task, variant) at each number of digits, mean over its counted seeds; for
    Xu et al.'s tasks also the share of inputs answered as if their operands were truncated to
    the trained digits (None elsewhere)."""

    task: str
    variant: str
    model: str
    seeds: int
    trained: tuple[int, int]
    """The numbers of digits trained on (Xu et al.'s D_n: n alone)."""
    lengths: tuple[int, ...]
    accuracy: tuple[float, ...]
    truncated: tuple[float, ...] | None


@dataclass(frozen=True)
class Cascades:
    """Accuracy of one (task, variant) by the length of the longest carry cascade of the input, on
    inputs of the first bin beyond the training range (``digits``), the same number per cascade
    length (Sabbaghi et al.'s analysis, which tests 40-digit sums of every cascade length).
    ``trained``: the longest cascade a training input can have (its number of digits)."""

    task: str
    variant: str
    digits: tuple[int, int]
    trained: int
    lengths: tuple[int, ...]
    accuracy: tuple[float, ...]
    count: int


@dataclass(frozen=True)
class Kept:
    """The attention lines one ABC seed trained with, per head (``family offset``)."""

    task: str
    variant: str
    seed: int
    self_lines: tuple[tuple[str, ...], ...]
    cross_lines: tuple[tuple[str, ...], ...]
