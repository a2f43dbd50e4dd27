"""The statistics of the reports (validation.reports.statistics), against references written out here:
Wilson's formula, coverage by simulation, the outcome rule's error rates by simulation, and the
two tests against brute-force enumerations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validation.reports.statistics import COLLAPSED, KEPT, LEARNED, Outcome, compare_counts, compare_seeds, decide, mean_interval, point, wilson

@settings(deadline=None)
@given(st.integers(1, 3000), st.data())
def test_wilson_is_scipys(n, data):
    """Against scipy's own Wilson interval (binomtest), computed another way."""
    from scipy.stats import binomtest

    k = data.draw(st.integers(0, n))
    reference = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    interval = wilson(k, n)
    assert interval.low == pytest.approx(min(float(reference.low), k / n), abs=1e-9)
    assert interval.high == pytest.approx(max(float(reference.high), k / n), abs=1e-9)


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_wilson_covers_the_true_accuracy_about_95_percent_of_the_time(p):
    rng = np.random.default_rng(0)
    draws = rng.binomial(400, p, size=2000)
    covered = np.mean([wilson(int(k), 400).low <= p <= wilson(int(k), 400).high for k in draws])
    assert 0.93 <= covered <= 0.975


def test_mean_interval_holds_the_pooled_wilson_and_the_t_interval():
    values = [0.95, 0.97, 0.99, 0.96, 0.98]
    interval = mean_interval(values, 400)
    pooled = wilson(sum(round(v * 400) for v in values), 2000)
    assert interval.low <= pooled.low and interval.high >= pooled.high
    half = 2.7764451051977987 * np.std(values, ddof=1) / math.sqrt(5)  # t(0.975, 4)
    assert interval.low <= np.mean(values) - half + 1e-12 and interval.high >= min(1.0, np.mean(values) + half) - 1e-12
    one = mean_interval([0.9], 400)
    assert (one.low, one.high) == (wilson(360, 400).low, wilson(360, 400).high) and "one seed" in one.method
    split = mean_interval([0.55, 0.73, 1.0], 200)  # seeds that disagree: the mean says little
    assert split.low < 0.3 and split.high == 1.0
    with pytest.raises(ValueError):
        mean_interval([], 400)


def test_outcomes_of_clear_rows_and_of_rows_across_a_threshold():
    sure = lambda k: wilson(k, 2000)  # noqa: E731
    assert decide([sure(2000), sure(1990), sure(1950)]) is Outcome.KEPT
    assert decide([sure(2000), sure(500), sure(0)]) is Outcome.COLLAPSED
    assert decide([sure(2000), sure(1500), sure(1500)]) is Outcome.BETWEEN
    assert decide([sure(1000), sure(1000), sure(1000)]) is Outcome.NOT_LEARNED
    # each of these has one interval across a threshold: never kept, collapsed or not learned
    assert decide([sure(1800), sure(2000), sure(2000)]) is Outcome.INCONCLUSIVE  # 0.9 trained
    assert decide([sure(2000), sure(1600), sure(2000)]) is Outcome.INCONCLUSIVE  # 0.8 on a bin
    assert decide([sure(2000), sure(1500), sure(1400)]) is Outcome.INCONCLUSIVE  # 0.7 on the longest
    # Xu et al.'s training bin is the second: the first bin is outside training
    assert decide([sure(1000), sure(2000), sure(1990)], trained=1) is Outcome.BETWEEN


def simulated_rate(true_bins, outcome, examples=400, seeds=5, trials=1500, seed=0):
    """How often rows drawn from ``true_bins`` (binomial per seed and bin) are called ``outcome``."""
    rng = np.random.default_rng(seed)
    called = 0
    for _ in range(trials):
        values = rng.binomial(examples, true_bins, size=(seeds, len(true_bins))) / examples
        bins = [mean_interval(list(values[:, k]), examples) for k in range(len(true_bins))]
        called += decide(bins) is outcome
    return called / trials


def test_the_rule_rarely_calls_a_row_on_the_wrong_side_of_a_threshold():
    """The error rates docs/validation.md states: a row whose true accuracy is on a threshold's
    wrong side is called kept, collapsed or learned in at most about 2.5% of draws (one side of a
    95% interval), here with 5 seeds of 400 inputs and seed-to-seed spread only binomial."""
    assert simulated_rate([1.0, KEPT - 0.005, 0.95], Outcome.KEPT) <= 0.04
    assert simulated_rate([1.0, 0.9, COLLAPSED + 0.005], Outcome.COLLAPSED) <= 0.04
    assert simulated_rate([LEARNED - 0.005, 0.95, 0.95], Outcome.KEPT) <= 0.04
    # and rows clearly on one side are called so almost always
    assert simulated_rate([1.0, 0.9, 0.88], Outcome.KEPT) >= 0.95
    assert simulated_rate([1.0, 0.3, 0.1], Outcome.COLLAPSED) >= 0.99


def test_published_points_read_with_the_same_rule():
    assert decide([point(1.0), point(0.968), point(0.847)]) is Outcome.KEPT
    assert decide([point(1.0), point(0.83), point(0.621)]) is Outcome.COLLAPSED
    assert decide([point(0.5), point(0.5)]) is Outcome.NOT_LEARNED


def mann_whitney_by_enumeration(a, b):
    """P(U >= observed) over every way of choosing which len(a) of the pooled values are 'a'."""
    def u(xs, ys):
        return sum((x > y) + 0.5 * (x == y) for x in xs for y in ys)

    pooled = list(a) + list(b)
    observed = u(a, b)
    splits = list(itertools.combinations(range(len(pooled)), len(a)))
    at_least = sum(u([pooled[i] for i in chosen], [pooled[i] for i in range(len(pooled)) if i not in chosen])
                   >= observed - 1e-12 for chosen in splits)
    return at_least / len(splits)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=5, unique=True),
       st.lists(st.integers(1001, 2000), min_size=0, max_size=5, unique=True), st.data())
def test_mann_whitney_is_the_enumeration(a_ints, b_extra, data):
    b_ints = data.draw(st.lists(st.integers(0, 1000).filter(lambda v: v not in a_ints), min_size=2, max_size=5,
                                unique=True))
    a, b = [v / 1000 for v in a_ints], [v / 1000 for v in b_ints]
    found = compare_seeds(a, b)
    assert found.p_value == pytest.approx(mann_whitney_by_enumeration(a, b), abs=1e-9)
    assert "5 vs" not in found.text() or found.seeds[0] == 5


def test_single_seeds_are_untested():
    found = compare_seeds([0.99], [0.2, 0.3])
    assert not found.tested and not found.significant() and found.text() == "single seed: untested"


def test_fisher_is_the_hypergeometric_tail():
    from math import comb

    a, b = (18, 20), (11, 20)
    total, successes = 40, a[0] + b[0]
    tail = sum(comb(successes, k) * comb(total - successes, 20 - k) for k in range(a[0], min(20, successes) + 1))
    assert compare_counts(a, b).p_value == pytest.approx(tail / comb(total, 20), rel=1e-9)
