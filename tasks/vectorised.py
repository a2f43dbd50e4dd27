"""Vectorised samplers of training batches: a task's training examples drawn a batch at a time in a
handful of numpy operations, instead of example by example in Python.

A sampler draws ``count`` examples for the length window [low, high] with the distribution of
the task's own sampling (length, input, answer and training offset); its random stream is
another, so a run that uses it draws other examples than one that does not (the training
config says which: ``TrainConfig.sampler``). ``tests/test_vectorised_batches.py`` checks every
drawn example against the task's reference answer and the distributions against the Python
samplers'.

>>> import numpy as np
>>> drawn = untied_bits(np.random.default_rng(0), 4, 1, 5, offset_room=lambda lengths: 150 - lengths)
>>> drawn.inputs.shape[0], bool((drawn.answers[:, 0] == (2 * drawn.inputs.clip(0).sum(1) > drawn.lengths)).all())
(4, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

PAD = -1
"""The id of a place past an input's or an answer's end."""

CANDIDATES = 16
"""Inputs a rejection sampler draws at once per example still to draw."""

Room = Callable[[np.ndarray], np.ndarray]
"""Per example, from the input lengths, the largest training offset (offsets are uniform in
[0, room])."""


@dataclass(frozen=True)
class Drawn:
    """A batch of drawn examples: ``inputs[b, :lengths[b]]`` index the task's symbols,
    ``answers[b, :answer_lengths[b]]`` its outputs (:data:`PAD` beyond), ``offsets[b]`` the
    position offset example b is trained at."""

    inputs: np.ndarray
    lengths: np.ndarray
    answers: np.ndarray
    answer_lengths: np.ndarray
    offsets: np.ndarray


def _lengths(rng: np.random.Generator, count: int, low: int, high: int) -> np.ndarray:
    """Lengths uniform in [low, high], as ``Task.draw_length`` draws them."""
    return rng.integers(low, high + 1, size=count)


def _offsets(rng: np.random.Generator, lengths: np.ndarray, room: Room) -> np.ndarray:
    return rng.integers(0, np.maximum(room(lengths), 0) + 1)


def _within(lengths: np.ndarray) -> np.ndarray:
    """Where each row's places are inside its length."""
    return np.arange(int(lengths.max(initial=0)))[None, :] < lengths[:, None]


def _arranged(rng: np.random.Generator, lengths: np.ndarray, ones: np.ndarray) -> np.ndarray:
    """Rows of ``lengths[b]`` bits with ``ones[b]`` ones in uniformly random places (PAD beyond)."""
    within = _within(lengths)
    keys = np.where(within, rng.random(within.shape), 2.0)
    ranks = keys.argsort(axis=1).argsort(axis=1)  # a uniformly random order of each row's places
    return np.where(within, (ranks < ones[:, None]).astype(np.int64), PAD)


def _untied_ones(rng: np.random.Generator, lengths: np.ndarray) -> np.ndarray:
    """Per row, a count of ones uniform in 0..lengths[b] but never lengths[b] / 2 (the Python
    sampler redraws a tied count)."""
    ones = rng.integers(0, lengths + 1)
    while (tied := 2 * ones == lengths).any():
        ones[tied] = rng.integers(0, lengths[tied] + 1)
    return ones


def _single(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return values[:, None].astype(np.int64), np.ones(len(values), dtype=np.int64)


def untied_bits(rng: np.random.Generator, count: int, low: int, high: int, *, offset_room: Room) -> Drawn:
    """bin_majority: L bits whose count of ones is uniform in 0..L but never L/2; the majority bit."""
    lengths = _lengths(rng, count, low, high)
    ones = _untied_ones(rng, lengths)
    inputs = _arranged(rng, lengths, ones)
    return Drawn(inputs, lengths, *_single(2 * ones > lengths), _offsets(rng, lengths, offset_room))


def interleaved_majorities(rng: np.random.Generator, count: int, low: int, high: int, *, offset_room: Room,
                           period: int = 3) -> Drawn:
    """bin_majority_interleave: a length drawn in [low, high] rounded to a multiple of ``period``
    (and nudged back into the window, as ``tasks.algorithmic._interleave_length`` does), then
    ``period`` interleaved streams of untied bits; each stream's majority bit."""
    low = max(period, low)
    streams = np.round(rng.integers(low, high + 1, size=count) / period).astype(np.int64)
    streams -= streams * period > high
    streams += streams * period < low
    lengths = streams * period
    inputs = np.full((count, int(lengths.max())), PAD, dtype=np.int64)
    answers = np.zeros((count, period), dtype=np.int64)
    for k in range(period):
        ones = _untied_ones(rng, streams)
        bits = _arranged(rng, streams, ones)
        inputs[:, k::period][:, :bits.shape[1]] = bits
        answers[:, k] = 2 * ones > streams
    return Drawn(inputs, lengths, answers, np.full(count, period), _offsets(rng, lengths, offset_room))


def binary_sums(rng: np.random.Generator, count: int, low: int, high: int, *, offset_room: Room) -> Drawn:
    """addition: ``a + b =`` in binary, L symbols in all, the first operand's width uniform in
    1..L-3, each operand a 1 and random bits (or one random bit); the sum's bits. Symbols: 0, 1,
    +, =. ``offset_room`` receives the length of the whole sequence (``<bos>``, input, sum,
    ``<eos>``)."""
    lengths = _lengths(rng, count, low, high)
    if int(lengths.max(initial=0)) > 63:
        raise ValueError("binary operands beyond 61 bits are drawn by the Python sampler")
    first = rng.integers(1, lengths - 3 + 1)
    second = lengths - 2 - first
    column = np.arange(int(lengths.max()))[None, :]
    bits = rng.integers(0, 2, size=(count, column.shape[1]))
    in_first, in_second = column < first[:, None], (column > first[:, None]) & (column < lengths[:, None] - 1)
    leading = (column == 0) & (first[:, None] > 1) | (column == first[:, None] + 1) & (second[:, None] > 1)
    bits = np.where(leading, 1, bits)
    inputs = np.where(in_first | in_second, bits, PAD)
    inputs = np.where(column == first[:, None], 2, inputs)
    inputs = np.where(column == lengths[:, None] - 1, 3, inputs)
    weight_first = np.where(in_first, first[:, None] - 1 - column, 0)
    weight_second = np.where(in_second, lengths[:, None] - 2 - column, 0)
    total = ((bits * in_first) << weight_first).sum(axis=1) + ((bits * in_second) << weight_second).sum(axis=1)
    widths = np.maximum(1, (total[:, None] >= (1 << np.arange(63, dtype=np.int64))[None, :]).sum(axis=1))
    place = np.arange(int(widths.max()))[None, :]
    answers = np.where(place < widths[:, None], (total[:, None] >> np.maximum(widths[:, None] - 1 - place, 0)) & 1,
                       PAD)
    offsets = _offsets(rng, lengths, lambda n: offset_room(1 + n + widths + 1))
    return Drawn(inputs, lengths, answers, widths, offsets)


def parity_bits(rng: np.random.Generator, count: int, low: int, high: int, *, offset_room: Room) -> Drawn:
    """parity: L bits whose count of ones is uniform in 0..L; its parity (outputs e, o)."""
    lengths = _lengths(rng, count, low, high)
    ones = rng.integers(0, lengths + 1)
    inputs = _arranged(rng, lengths, ones)
    return Drawn(inputs, lengths, *_single(ones % 2), _offsets(rng, lengths, offset_room))


def unique_majority(rng: np.random.Generator, count: int, low: int, high: int, *, symbols: int,
                    offset_room: Room) -> Drawn:
    """majority: L symbols uniform and independent, redrawn until one is strictly the most common;
    that symbol."""
    lengths = _lengths(rng, count, low, high)
    within = _within(lengths)
    inputs = np.full(within.shape, PAD, dtype=np.int64)
    pending, candidates = np.arange(count), 1
    while len(pending):
        # The Python sampler redraws an input until its most common symbol is unique (for two
        # symbols of 26, one draw in 26): each row still to draw draws CANDIDATES inputs at once
        # after the first round and keeps the first that passes, which is the same rejection sampling.
        rows = np.repeat(within[pending], candidates, axis=0)
        drawn = np.where(rows, rng.integers(0, symbols, size=rows.shape), PAD)
        counts = _counts(drawn, rows, symbols)
        unique = ((counts == counts.max(axis=1)[:, None]).sum(axis=1) == 1).reshape(len(pending), candidates)
        passed = unique.any(axis=1)
        first = unique.argmax(axis=1)
        chosen = drawn.reshape(len(pending), candidates, -1)[np.arange(len(pending)), first]
        inputs[pending[passed]] = chosen[passed]
        pending, candidates = pending[~passed], CANDIDATES
    answers = _counts(inputs, within, symbols).argmax(axis=1)
    return Drawn(inputs, lengths, *_single(answers), _offsets(rng, lengths, offset_room))


def _counts(ids: np.ndarray, within: np.ndarray, symbols: int) -> np.ndarray:
    """Per row, how many times each symbol occurs within the row's length."""
    rows = np.nonzero(within)[0]
    return np.bincount(rows * symbols + ids[within], minlength=len(ids) * symbols).reshape(len(ids), symbols)


def independent_copy(rng: np.random.Generator, count: int, low: int, high: int, *, symbols: int,
                     offset_room: Room) -> Drawn:
    """repeat_copy: L symbols uniform and independent; the same L symbols."""
    lengths = _lengths(rng, count, low, high)
    within = _within(lengths)
    inputs = np.where(within, rng.integers(0, symbols, size=within.shape), PAD)
    return Drawn(inputs, lengths, inputs, lengths, _offsets(rng, lengths, offset_room))


def distinct_symbols(rng: np.random.Generator, count: int, low: int, high: int, *, symbols: int,
                     offset_room: Room, sort: bool = False) -> Drawn:
    """unique_copy and sort: L distinct symbols in uniformly random order (an ordered sample
    without replacement); the same symbols, or (``sort``) the symbols in their own order."""
    if high > symbols:
        raise ValueError(f"{high} distinct symbols cannot be drawn from {symbols}")
    lengths = _lengths(rng, count, low, high)
    within = _within(lengths)
    order = rng.random((count, symbols)).argsort(axis=1)[:, :within.shape[1]]
    inputs = np.where(within, order, PAD)
    answers = np.where(within, np.sort(np.where(within, order, symbols), axis=1), PAD) if sort else inputs
    return Drawn(inputs, lengths, answers, lengths, _offsets(rng, lengths, offset_room))


__all__ = ["PAD", "Drawn", "binary_sums", "distinct_symbols", "independent_copy", "interleaved_majorities",
           "parity_bits", "unique_majority", "untied_bits"]
