"""Counter-based random numbers (tasks.keyed_random) against a plain-Python reference of the hash,
and as random numbers: uniform, unbiased in range, and independent across counters and keys."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tasks.keyed_random import Draws, hash_words, integers, uniform

MASK = 0xFFFFFFFF


def reference_hash(words: list[int]) -> int:
    """lowbias32 chained over the words, with Python's unbounded integers (Wellons' constants)."""
    h = 0x9E3779B9
    for word in words:
        x = (h ^ word) & MASK
        x ^= x >> 16
        x = (x * 0x7FEB352D) & MASK
        x ^= x >> 15
        x = (x * 0x846CA68B) & MASK
        x ^= x >> 16
        h = x
    return h


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, MASK), min_size=1, max_size=6))
def test_the_tensor_hash_is_the_reference_on_any_words(words):
    as_tensors = [torch.tensor([w]) for w in words]
    assert int(hash_words(words)) == reference_hash(words)
    assert int(hash_words(as_tensors)[0]) == reference_hash(words)
    mixed = [words[0], *as_tensors[1:]]  # ints hashed on the host, then tensors
    assert int(hash_words(mixed).flatten()[0]) == reference_hash(words)


def test_uniform_numbers_are_uniform_and_independent():
    counter = torch.arange(200_000)
    u = uniform([11, 4, counter]).numpy()
    assert ((0 <= u) & (u < 1)).all()
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    assert abs(stats.pearsonr(u[:-1], u[1:]).statistic) < 0.01  # neighbours
    other = uniform([12, 4, counter]).numpy()
    assert abs(stats.pearsonr(u, other).statistic) < 0.01  # another key
    bits = np.array([(hash_words([11, 4, counter]).numpy() >> k) & 1 for k in range(32)])
    assert np.abs(bits.mean(axis=1) - 0.5).max() < 0.005  # every bit fair


@pytest.mark.parametrize("high", [2, 3, 7, 10, 26, 150, 1_000_003])
def test_integers_are_uniform_in_their_range(high):
    values = integers(high, [5, torch.arange(120_000)]).numpy()
    assert values.min() >= 0 and values.max() < high
    if high <= 150:
        counts = np.bincount(values, minlength=high)
        assert stats.chisquare(counts).pvalue > 1e-4
    else:
        assert stats.kstest(values / high, "uniform").pvalue > 1e-4


def test_draws_are_pure_functions_of_key_example_lane_and_place():
    draws = Draws((3, 4), torch.arange(10, 20))
    again = Draws((3, 4), torch.arange(0, 30))
    assert torch.equal(draws.integers(2, 0, 9, width=5), again.integers(2, 0, 9, width=5)[10:20])
    assert torch.equal(draws.uniform(1, width=7)[:, :5], draws.uniform(1, width=5))  # wider rows, same places
    assert not torch.equal(draws.uniform(1), draws.uniform(2))  # lanes apart
    assert not torch.equal(draws.uniform(1), draws.again().uniform(1))  # rejection rounds apart
    assert torch.equal(draws.subset(torch.tensor([2, 5])).uniform(3), draws.uniform(3)[[2, 5]])
    high = torch.arange(1, 31)  # a bound per example, inclusive
    drawn = again.integers(0, 1, high)
    assert ((drawn >= 1) & (drawn <= high)).all() and drawn[0] == 1
