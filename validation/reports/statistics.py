"""The statistics behind every conclusion of a report: intervals, outcomes decided from them, and
named tests for comparisons of two conditions (all from scipy.stats).

An accuracy on a length bin is a proportion of ``examples`` test inputs, so one seed's value gets a
binomial interval (:func:`wilson`). Across seeds, the mean gets a Student t interval over the
seeds' values, never narrower than the Wilson interval of the seeds' inputs pooled: two seeds at
1.000 and 1.000 have no spread, but 800 inputs still leave the mean between 0.995 and 1
(:func:`mean_interval`). A row's outcome is then read from the intervals against the thresholds
(:func:`decide`): a bin whose interval straddles a threshold makes the row ``inconclusive``.

>>> wilson(400, 400).low > 0.99, round(wilson(200, 400).low, 3)
(True, 0.451)
>>> decide([wilson(400, 400), wilson(390, 400), wilson(380, 400)]).value
'kept'
>>> decide([wilson(400, 400), wilson(330, 400), wilson(300, 400)]).value
'in between'
>>> decide([wilson(400, 400), wilson(330, 400), wilson(285, 400)]).value  # 0.713 [0.666, 0.755]
'inconclusive'
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Iterator, Sequence

from validation.config import LEARNED

CONFIDENCE = 0.95
"""The two-sided confidence of every interval in the reports."""


KEPT = 0.8
"""Every bin beyond training at least this: the accuracy is kept."""


COLLAPSED = 0.7
"""The longest bin at most this: the accuracy collapsed."""


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided interval at ``confidence``, and how it was computed."""

    estimate: float
    low: float
    high: float
    method: str
    confidence: float = CONFIDENCE

    def __post_init__(self) -> None:
        if not self.low <= self.estimate <= self.high:
            raise ValueError(f"interval [{self.low}, {self.high}] does not hold its estimate {self.estimate}")

    def to_json(self) -> dict:
        """The interval's fields by name.

        >>> point(0.5).to_json()
        {'estimate': 0.5, 'low': 0.5, 'high': 0.5, 'method': 'published, no interval', 'confidence': 1.0}
        """
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "method": self.method,
                "confidence": self.confidence}

    def text(self, digits: int = 3) -> str:
        """``0.950 [0.921, 0.970]``."""
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def at_least(self, threshold: float) -> bool:
        """Entirely at or above ``threshold``."""
        return self.low >= threshold

    def below(self, threshold: float) -> bool:
        """Entirely below ``threshold``."""
        return self.high < threshold

    def at_most(self, threshold: float) -> bool:
        """Entirely at or below ``threshold``."""
        return self.high <= threshold

    def above(self, threshold: float) -> bool:
        """Entirely above ``threshold``."""
        return self.low > threshold


def point(value: float, method: str = "published, no interval") -> Interval:
    """A value with no known uncertainty (a published number whose test size and seeds are not given)."""
    return Interval(value, value, value, method, 1.0)


@functools.lru_cache(maxsize=None)
def _quantile(confidence: float, df: int | None = None) -> float:
    """The two-sided critical value: normal (``df`` None) or Student t with ``df`` degrees of freedom."""
    from scipy.stats import norm, t

    level = 0.5 + confidence / 2
    return float(norm.ppf(level) if df is None else t.ppf(level, df))


def wilson(successes: int, examples: int, confidence: float = CONFIDENCE) -> Interval:
    """The Wilson score interval of ``successes`` of ``examples``.

    >>> wilson(0, 400).text()
    '0.000 [0.000, 0.010]'
    """
    if examples <= 0 or not 0 <= successes <= examples:
        raise ValueError(f"need 0 <= successes <= examples and examples > 0, not {successes} of {examples}")
    z = _quantile(confidence)
    p, n = successes / examples, examples
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(p, max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p)), f"Wilson, {examples} inputs",
                    confidence)


def successes(accuracy: float, examples: int) -> int:
    """The number of exact inputs behind an accuracy measured on ``examples`` inputs."""
    return int(round(accuracy * examples))


def mean_interval(values: Sequence[float], examples: int, confidence: float = CONFIDENCE) -> Interval:
    """The mean over seeds of accuracies each measured on ``examples`` inputs: a Student t interval
    over the seeds, widened to the Wilson interval of all their inputs pooled (one seed: that
    seed's Wilson interval alone).

    >>> mean_interval([1.0, 1.0], 400).text()
    '1.000 [0.995, 1.000]'
    >>> mean_interval([0.55, 0.73, 1.0], 200).text()
    '0.760 [0.197, 1.000]'
    """
    if not values:
        raise ValueError("no seeds to average")
    counts = [successes(v, examples) for v in values]
    pooled = wilson(sum(counts), examples * len(counts), confidence)
    if len(values) == 1:
        return Interval(values[0], min(pooled.low, values[0]), max(pooled.high, values[0]),
                        f"one seed, Wilson, {examples} inputs", confidence)
    mean = statistics.fmean(values)
    half = _quantile(confidence, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    low, high = max(0.0, min(mean - half, pooled.low)), min(1.0, max(mean + half, pooled.high))
    return Interval(mean, min(low, mean), max(high, mean),
                    f"t over {len(values)} seeds, at least the pooled Wilson ({examples} inputs each)", confidence)


class Outcome(enum.Enum):
    KEPT = "kept"
    COLLAPSED = "collapsed"
    BETWEEN = "in between"
    NOT_LEARNED = "not learned"
    INCONCLUSIVE = "inconclusive"
    TRIVIAL = "trivial"
    """The test cannot tell: the best constant answer alone passes the bins the outcome rests on."""


def decide(bins: Sequence[Interval], trained: int = 0, *, learned: float = LEARNED, kept: float = KEPT,
           collapsed: float = COLLAPSED, baseline: Sequence[float] | None = None) -> Outcome:
    """The outcome of a row from its bins' intervals (``trained``: the training bin's index).

    Not learned: the training bin entirely below ``learned``. Otherwise, once the training bin is
    entirely at or above it: kept when every other bin is entirely at or above ``kept``; collapsed
    when the longest is entirely at or below ``collapsed``; in between when some bin is entirely
    below ``kept`` and the longest entirely above ``collapsed``. Anything else (an interval across a
    threshold) is inconclusive.

    ``baseline``: per bin, the accuracy of the best constant answer
    (:mod:`validation.data.baseline`). A bin the constant answer alone passes (the training bin at
    ``learned``, another at ``kept``) tells nothing and is left out; where the training bin is such a
    bin, or every other bin is, the outcome is trivial. Every bin left is then above its baseline
    whenever it passes, so no row at its baseline is kept.

    >>> decide([point(1.0), point(0.26), point(0.0)]).value, decide([point(0.5), point(0.5)]).value
    ('collapsed', 'not learned')
    >>> decide([wilson(360, 400), wilson(400, 400)]).value  # 0.9, but the interval reaches below it
    'inconclusive'
    >>> decide([point(1.0), point(1.0), point(1.0)], baseline=(0.91, 0.99, 1.0)).value
    'trivial'
    >>> decide([point(1.0), point(1.0), point(0.2)], baseline=(0.5, 0.99, 0.5)).value  # the middle bin says nothing
    'collapsed'
    """
    if not bins:
        raise ValueError("no bins")
    if baseline is not None and len(baseline) != len(bins):
        raise ValueError(f"{len(baseline)} baselines for {len(bins)} bins")
    training = bins[trained]
    if baseline is not None and baseline[trained] >= learned:
        return Outcome.TRIVIAL
    if training.below(learned):
        return Outcome.NOT_LEARNED
    if not training.at_least(learned):
        return Outcome.INCONCLUSIVE
    others = [b for k, b in enumerate(bins) if k != trained and (baseline is None or baseline[k] < kept)]
    if not others:
        told = baseline is not None and len(bins) > 1
        return Outcome.TRIVIAL if told else Outcome.INCONCLUSIVE
    longest = others[-1]
    if all(b.at_least(kept) for b in others):
        return Outcome.KEPT
    if longest.at_most(collapsed):
        return Outcome.COLLAPSED
    if any(b.below(kept) for b in others) and longest.above(collapsed):
        return Outcome.BETWEEN
    return Outcome.INCONCLUSIVE


def allowed_values(bins: Sequence[Interval],
                   thresholds: Sequence[float] = (COLLAPSED, KEPT, LEARNED)) -> Iterator[tuple[float, ...]]:
    """Every way the bins' intervals allow the true accuracies to fall against the thresholds: one
    tuple of values (one per bin) for each combination of the regions the thresholds cut the
    intervals into. A conclusion that holds for every tuple holds whatever the accuracies are
    inside their intervals; one that holds for some and not others is inconclusive.

    >>> [values for values in allowed_values([point(1.0), Interval(0.8, 0.739, 0.850, "Wilson")])]
    [(1.0, 0.739), (1.0, 0.8), (1.0, 0.825)]
    """
    def representatives(interval: Interval) -> list[float]:
        cuts = sorted({interval.low, interval.high, *(t for t in thresholds if interval.low < t < interval.high)})
        values = sorted(cuts + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])])
        regions: dict[tuple[bool, ...], float] = {}
        for v in values:
            regions.setdefault(tuple(v < t for t in thresholds) + tuple(v <= t for t in thresholds), v)
        return list(regions.values())

    choices = [representatives(b) for b in bins]
    yield from itertools.product(*choices)


@dataclass(frozen=True)
class Comparison:
    """A named test of whether condition A is better than condition B (one-sided), on ``seeds``
    values each; ``p_value`` is None where the test could not be run (a single seed: untested)."""

    test: str
    p_value: float | None
    seeds: tuple[int, int]
    statistic: float | None = None

    @property
    def tested(self) -> bool:
        return self.p_value is not None

    def significant(self, level: float = 0.05) -> bool:
        return self.p_value is not None and self.p_value < level

    def text(self) -> str:
        """``Mann-Whitney U, 5 vs 5 seeds, p = 0.004``, or why there is no test."""
        if self.p_value is None:
            return f"{self.test}: untested"
        return f"{self.test}, {self.seeds[0]} vs {self.seeds[1]} seeds, p = {self.p_value:.3g}"


def compare_seeds(a: Sequence[float], b: Sequence[float]) -> Comparison:
    """Whether accuracies ``a`` (one per seed) are larger than ``b``: the exact one-sided
    Mann-Whitney U test; with a single seed on either side, untested.

    >>> compare_seeds([0.99, 0.98, 0.97, 0.99, 1.0], [0.5, 0.6, 0.55, 0.4, 0.52]).p_value < 0.01
    True
    >>> compare_seeds([1.0], [0.2]).text()
    'single seed: untested'
    """
    from scipy.stats import mannwhitneyu

    seeds = (len(a), len(b))
    if min(seeds) < 2:
        return Comparison("single seed", None, seeds)
    found = mannwhitneyu(a, b, alternative="greater", method="exact")
    return Comparison("Mann-Whitney U (one-sided, exact)", float(found.pvalue), seeds, float(found.statistic))


def compare_counts(a: tuple[int, int], b: tuple[int, int]) -> Comparison:
    """Whether the proportion ``a = (successes, examples)`` is larger than ``b``'s, on inputs pooled
    within one seed each: Fisher's exact test, one-sided (seeds (1, 1): it speaks to this pair of
    runs, not to the training's variance across seeds).

    >>> round(compare_counts((190, 200), (150, 200)).p_value, 8) < 1e-6
    True
    """
    from scipy.stats import fisher_exact

    table = [[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]]
    statistic, p_value = fisher_exact(table, alternative="greater")
    return Comparison("Fisher's exact (one-sided, inputs of one run each)", float(p_value), (1, 1), float(statistic))


__all__ = ["CONFIDENCE", "LEARNED", "KEPT", "COLLAPSED", "Interval", "point", "wilson", "successes",
           "mean_interval", "Outcome", "decide", "Comparison", "compare_seeds", "compare_counts"]
