"""Vectorised samplers of training batches: a task's training examples drawn a batch at a time as
tensor operations on any device (a GPU's included), instead of example by example in Python.

A sampler draws one example per entry of its :class:`tasks.keyed_random.Draws` for the length
window [low, high], with the distribution of the task's own sampling (length, input and answer;
the training offset is drawn beside it from the task's :class:`tasks.types.UniformOffset`). Its
numbers are keyed by the example's index in its seed's stream, so a batch is the same on every
device, whatever was drawn before it, and a rejection round redraws only the examples it
rejected. ``tests/test_vectorised_batches.py`` checks every drawn example against the task's
reference answer and the distributions against the Python samplers'.

>>> import torch
>>> from tasks.keyed_random import Draws
>>> drawn = untied_bits(Draws((0,), torch.arange(4)), 1, 5)
>>> drawn.inputs.shape[0], bool((drawn.answers[:, 0] == (2 * drawn.inputs.clip(0).sum(1) > drawn.lengths)).all())
(4, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from .keyed_random import Draws

PAD = -1
"""The id of a place past an input's or an answer's end."""

CANDIDATES = 16
"""Inputs a rejection sampler draws at once per example still to draw."""

# The lanes of an example's random numbers: each quantity drawn for an example reads its own.
LENGTH, COUNT, PLACES, SYMBOLS, OFFSET, SIDE, SECOND = range(7)


@dataclass(frozen=True)
class Drawn:
    """A batch of drawn examples: ``inputs[b, :lengths[b]]`` index the task's symbols,
    ``answers[b, :answer_lengths[b]]`` its outputs (:data:`PAD` beyond); ``measured[b]``, where
    given, the example's length in the task's own unit (digits, for arithmetic), else its input
    length. All are int64 tensors on the draws' device."""

    inputs: "torch.Tensor"
    lengths: "torch.Tensor"
    answers: "torch.Tensor"
    answer_lengths: "torch.Tensor"
    measured: "torch.Tensor | None" = None
    answer_start: int | None = None
    """Aligned tasks only: the token position (``<bos>`` at 0) of the first output, the others
    after it (the format's outputs sit under input positions; ``answers`` index the outputs)."""


def _lengths(draws: "Draws", low: int, high: int) -> "torch.Tensor":
    """Lengths uniform in [low, high], as ``Task.draw_length`` draws them."""
    return draws.integers(LENGTH, low, high)


def _within(lengths: "torch.Tensor") -> "torch.Tensor":
    """Where each row's places are inside its length."""
    import torch

    width = int(lengths.max()) if lengths.numel() else 0
    return torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]


def random_keys(draws: "Draws", lane: int, width: int) -> "torch.Tensor":
    """Per row, ``width`` distinct random sort keys: 32 random bits per place, the place below them
    breaking the ties of equal bits (which leaves a bias below width^2 / 2^33 per row)."""
    import torch

    from .keyed_random import hash_words

    bits = hash_words(draws._words(lane, width), draws.device)
    return bits * width + torch.arange(width, device=draws.device)


def random_order(draws: "Draws", lane: int, width: int) -> "torch.Tensor":
    """Per row, a uniformly random order of the places 0..width-1."""
    return random_keys(draws, lane, width).argsort(dim=1)


def _arranged(draws: "Draws", lane: int, lengths: "torch.Tensor", ones: "torch.Tensor") -> "torch.Tensor":
    """Rows of ``lengths[b]`` bits with ``ones[b]`` ones in uniformly random places (PAD beyond): the
    places of a row's ``ones[b]`` smallest keys, those past its length keyed after every other."""
    import torch

    within = _within(lengths)
    keys = random_keys(draws, lane, within.shape[1]) + (~within).long() * (1 << 50)
    ranks = keys.argsort(dim=1).argsort(dim=1)
    return torch.where(within, (ranks < ones[:, None]).long(), PAD)


def _untied_ones(draws: "Draws", lane: int, lengths: "torch.Tensor") -> "torch.Tensor":
    """Per row, a count of ones uniform in 0..lengths[b] but never lengths[b] / 2 (the Python
    sampler redraws a tied count: this is the distribution it ends with, drawn at once)."""
    even = lengths % 2 == 0
    count = draws.integers(lane, 0, lengths - even.long())
    return count + (even & (2 * count >= lengths)).long()


def _single(values: "torch.Tensor") -> tuple["torch.Tensor", "torch.Tensor"]:
    import torch

    return values[:, None].long(), torch.ones(len(values), dtype=torch.int64, device=values.device)


def untied_bits(draws: "Draws", low: int, high: int) -> Drawn:
    """bin_majority: L bits whose count of ones is uniform in 0..L but never L/2; the majority bit."""
    lengths = _lengths(draws, low, high)
    ones = _untied_ones(draws, COUNT, lengths)
    inputs = _arranged(draws, PLACES, lengths, ones)
    return Drawn(inputs, lengths, *_single(2 * ones > lengths))


def interleaved_majorities(draws: "Draws", low: int, high: int, *, period: int = 3) -> Drawn:
    """bin_majority_interleave: a length drawn in [low, high] rounded to a multiple of ``period``
    (half to even, as numpy rounds, and nudged back into the window, as
    ``tasks.algorithmic._interleave_length`` does), then ``period`` interleaved streams of untied
    bits; each stream's majority bit."""
    import torch

    low = max(period, low)
    streams = torch.round(draws.integers(LENGTH, low, high) / period).long()
    streams -= (streams * period > high).long()
    streams += (streams * period < low).long()
    lengths = streams * period
    width = int(lengths.max()) if len(lengths) else 0
    inputs = torch.full((draws.count, width), PAD, dtype=torch.int64, device=draws.device)
    answers = torch.zeros((draws.count, period), dtype=torch.int64, device=draws.device)
    for k in range(period):
        ones = _untied_ones(draws, COUNT + 10 * (k + 1), streams)
        bits = _arranged(draws, PLACES + 10 * (k + 1), streams, ones)
        inputs[:, k::period][:, :bits.shape[1]] = bits
        answers[:, k] = (2 * ones > streams).long()
    return Drawn(inputs, lengths, answers, torch.full_like(lengths, period))


def binary_sums(draws: "Draws", low: int, high: int) -> Drawn:
    """addition: ``a + b =`` in binary, L symbols in all, the first operand's width uniform in
    1..L-3, each operand a 1 and random bits (or one random bit); the sum's bits. Symbols: 0, 1,
    +, =."""
    import torch

    lengths = _lengths(draws, low, high)
    if int(lengths.max()) > 63:
        raise ValueError("binary operands beyond 61 bits are drawn by the Python sampler")
    first = draws.integers(COUNT, 1, lengths - 3)
    second = lengths - 2 - first
    column = torch.arange(int(lengths.max()), device=draws.device)[None, :]
    bits = draws.integers(PLACES, 0, 1, width=column.shape[1])
    in_first, in_second = column < first[:, None], (column > first[:, None]) & (column < lengths[:, None] - 1)
    leading = (column == 0) & (first[:, None] > 1) | (column == first[:, None] + 1) & (second[:, None] > 1)
    bits = torch.where(leading, 1, bits)
    inputs = torch.where(in_first | in_second, bits, PAD)
    inputs = torch.where(column == first[:, None], 2, inputs)
    inputs = torch.where(column == lengths[:, None] - 1, 3, inputs)
    weight_first = torch.where(in_first, first[:, None] - 1 - column, 0)
    weight_second = torch.where(in_second, lengths[:, None] - 2 - column, 0)
    total = ((bits * in_first) << weight_first).sum(dim=1) + ((bits * in_second) << weight_second).sum(dim=1)
    powers = torch.ones(1, dtype=torch.int64, device=draws.device) << torch.arange(63, device=draws.device)
    widths = (total[:, None] >= powers[None, :]).sum(dim=1).clamp(min=1)
    place = torch.arange(int(widths.max()), device=draws.device)[None, :]
    shift = (widths[:, None] - 1 - place).clamp(min=0)
    answers = torch.where(place < widths[:, None], (total[:, None] >> shift) & 1, PAD)
    return Drawn(inputs, lengths, answers, widths)


def parity_bits(draws: "Draws", low: int, high: int) -> Drawn:
    """parity: L bits whose count of ones is uniform in 0..L; its parity (outputs e, o)."""
    lengths = _lengths(draws, low, high)
    ones = draws.integers(COUNT, 0, lengths)
    inputs = _arranged(draws, PLACES, lengths, ones)
    return Drawn(inputs, lengths, *_single(ones % 2))


def unique_majority(draws: "Draws", low: int, high: int, *, symbols: int) -> Drawn:
    """majority: L symbols uniform and independent, redrawn until one is strictly the most common;
    that symbol. Each round draws :data:`CANDIDATES` inputs for every example still to draw and
    keeps the first that passes (the same rejection sampling as the Python sampler's)."""
    import torch

    lengths = _lengths(draws, low, high)
    within = _within(lengths)
    width = within.shape[1]
    inputs = torch.full(within.shape, PAD, dtype=torch.int64, device=draws.device)
    pending = torch.arange(draws.count, device=draws.device)
    rounds = draws
    while len(pending):
        rows = within[pending]
        # candidate c's place j is numbered c * 2^16 + j: an example's numbers do not depend on its batch
        candidate = torch.arange(CANDIDATES, device=draws.device)[:, None]
        places = (candidate << 16) + torch.arange(width, device=draws.device)
        drawn = rounds.subset(pending).integers(SYMBOLS, 0, symbols - 1, width=places.flatten())
        drawn = drawn.view(len(pending), CANDIDATES, width)
        drawn = torch.where(rows[:, None, :], drawn, PAD)
        counts = _counts(drawn.reshape(-1, width), rows.repeat_interleave(CANDIDATES, dim=0), symbols)
        unique = ((counts == counts.max(dim=1, keepdim=True).values).sum(dim=1) == 1).view(len(pending), CANDIDATES)
        passed = unique.any(dim=1)
        first = unique.long().argmax(dim=1)
        chosen = drawn[torch.arange(len(pending), device=draws.device), first]
        inputs[pending[passed]] = chosen[passed]
        pending, rounds = pending[~passed], rounds.again()
    answers = _counts(inputs, within, symbols).argmax(dim=1)
    return Drawn(inputs, lengths, *_single(answers))


def _counts(ids: "torch.Tensor", within: "torch.Tensor", symbols: int) -> "torch.Tensor":
    """Per row, how many times each symbol occurs within the row's length."""
    import torch

    counts = torch.zeros((len(ids), symbols), dtype=torch.int64, device=ids.device)
    return counts.scatter_add_(1, ids.clamp(min=0), within.long())


def independent_copy(draws: "Draws", low: int, high: int, *, symbols: int) -> Drawn:
    """repeat_copy: L symbols uniform and independent; the same L symbols."""
    import torch

    lengths = _lengths(draws, low, high)
    within = _within(lengths)
    inputs = torch.where(within, draws.integers(SYMBOLS, 0, symbols - 1, width=within.shape[1]), PAD)
    return Drawn(inputs, lengths, inputs, lengths)


def distinct_symbols(draws: "Draws", low: int, high: int, *, symbols: int,
                     sort: bool = False) -> Drawn:
    """unique_copy and sort: L distinct symbols in uniformly random order (an ordered sample
    without replacement); the same symbols, or (``sort``) the symbols in their own order."""
    import torch

    if high > symbols:
        raise ValueError(f"{high} distinct symbols cannot be drawn from {symbols}")
    lengths = _lengths(draws, low, high)
    within = _within(lengths)
    order = random_order(draws, SYMBOLS, symbols)[:, :within.shape[1]]
    inputs = torch.where(within, order, PAD)
    answers = torch.where(within, torch.where(within, order, symbols).sort(dim=1).values, PAD) if sort else inputs
    return Drawn(inputs, lengths, answers, lengths)


# ---------------------------------------------------------------- Duan et al.'s formats


def _digits_exactly(draws: "Draws", lane: int, digits: "torch.Tensor", width: int) -> "torch.Tensor":
    """Per row, the digits (most significant first, in ``width`` places, the row's ``digits[b]``
    last) of a number uniform among those with exactly ``digits[b]`` digits (0-9 for one digit):
    a leading digit in 1..9, the rest in 0..9, as ``tasks.arithmetic.common.digits_exactly``."""
    import torch

    place = torch.arange(width, device=draws.device)[None, :] - (width - digits[:, None])  # 0 = leading digit
    free = draws.integers(lane, 0, 9, width=width)
    leading = draws.integers(lane + 100, 1, 9)[:, None]
    return torch.where((place == 0) & (digits[:, None] > 1), leading, free) * (place >= 0)


def _value(digit_rows: "torch.Tensor") -> "torch.Tensor":
    """The numbers whose digits (most significant first) are the rows (at most 18 digits)."""
    import torch

    if digit_rows.shape[1] > 18:
        raise ValueError("numbers beyond 18 digits are drawn by the Python sampler")
    powers = 10 ** torch.arange(digit_rows.shape[1] - 1, -1, -1, device=digit_rows.device)
    return (digit_rows * powers).sum(dim=1)


def _reversed_digits(values: "torch.Tensor", widths: "torch.Tensor") -> "torch.Tensor":
    """Per row, ``values[b]`` zero-padded to ``widths[b]`` digits, least significant first (PAD beyond)."""
    import torch

    place = torch.arange(int(widths.max()), device=values.device)[None, :]
    digits = (values[:, None] // 10 ** place.clamp(max=18)) % 10
    return torch.where(place < widths[:, None], digits, PAD)


def _packed(parts: list[tuple["torch.Tensor", "torch.Tensor"]], width: int) -> "torch.Tensor":
    """Rows made of consecutive parts: each part is (ids (rows x columns, right-aligned to its
    row's count), counts), placed one after another, PAD beyond."""
    import torch

    rows = parts[0][0].shape[0]
    out = torch.full((rows, width), PAD, dtype=torch.int64, device=parts[0][0].device)
    start = torch.zeros(rows, dtype=torch.int64, device=out.device)
    column = torch.arange(width, device=out.device)[None, :]
    for ids, counts in parts:
        span = ids.shape[1]
        place = column - start[:, None] + (span - counts[:, None])  # the part's own column
        inside = (column >= start[:, None]) & (column < (start + counts)[:, None])
        out = torch.where(inside, ids.gather(1, place.clamp(0, span - 1)), out)
        start = start + counts
    return out


def duan_successor(draws: "Draws", low: int, high: int) -> Drawn:
    """duan_successor: n uniform in [low, high], x uniform with exactly n digits; x + 1 reversed
    in n + 1 digits."""
    lengths = _lengths(draws, low, high)
    width = int(lengths.max())
    digits = _digits_exactly(draws, PLACES, lengths, width)
    answers = _reversed_digits(_value(digits) + 1, lengths + 1)
    return Drawn(_packed([(digits, lengths)], width), lengths, answers, lengths + 1)


def duan_addition(draws: "Draws", low: int, high: int) -> Drawn:
    """duan_addition: Xu et al.'s D_n pair (one operand with exactly n digits, the other below
    10^n, either first with equal chance), ``a + b`` zero-padded to n digits each; the sum reversed
    in n + 1 digits. Symbols: the digits, then ``+`` (id 10)."""
    import torch

    digits = _lengths(draws, low, high)
    width = int(digits.max())
    exact = _digits_exactly(draws, PLACES, digits, width)
    below = draws.integers(SECOND, 0, 9, width=width) * (torch.arange(width, device=draws.device)[None, :]
                                                        >= width - digits[:, None])
    swap = draws.integers(SIDE, 0, 1)[:, None].bool()
    a, b = torch.where(swap, below, exact), torch.where(swap, exact, below)
    plus = torch.full((draws.count, 1), 10, dtype=torch.int64, device=draws.device)
    ones = torch.ones_like(digits)
    inputs = _packed([(a, digits), (plus, ones), (b, digits)], 2 * width + 1)
    answers = _reversed_digits(_value(a) + _value(b), digits + 1)
    return Drawn(inputs, 2 * digits + 1, answers, digits + 1, digits)


def duan_parity(draws: "Draws", low: int, high: int) -> Drawn:
    """duan_parity_scratchpad: n bits uniform and independent; their prefix XORs in input order."""
    import torch

    lengths = _lengths(draws, low, high)
    within = _within(lengths)
    bits = draws.integers(PLACES, 0, 1, width=within.shape[1]) * within
    inputs = torch.where(within, bits, PAD)
    answers = torch.where(within, bits.cumsum(dim=1) % 2, PAD)
    return Drawn(inputs, lengths, answers, lengths)


def duan_times_one(draws: "Draws", low: int, high: int) -> Drawn:
    """duan_n_times_1: a uniform with exactly n digits, d uniform in 0..9, ``a * d``; the product
    reversed in n + 1 digits. Symbols: the digits, then ``*`` (id 10)."""
    import torch

    digits = _lengths(draws, low, high)
    width = int(digits.max())
    a = _digits_exactly(draws, PLACES, digits, width)
    d = draws.integers(SECOND, 0, 9)
    times = torch.full((draws.count, 1), 10, dtype=torch.int64, device=draws.device)
    ones = torch.ones_like(digits)
    inputs = _packed([(a, digits), (times, ones), (d[:, None], ones)], width + 2)
    answers = _reversed_digits(_value(a) * d, digits + 1)
    return Drawn(inputs, digits + 2, answers, digits + 1, digits)


# ---------------------------------------------------------------- Xu et al.'s format


def xu_operation(draws: "Draws", low: int, high: int, *, multiply: bool, modulus: int | None, width: int = 20,
                 out_width: int = 21) -> Drawn:
    """Xu et al.'s D_n: n uniform in [low, high], one operand with exactly n digits and the other
    below 10^n (either first with equal chance), both zero-padded to ``width`` digits around the
    operator, then ``=``; the result (modulo ``modulus``) zero-padded to ``out_width`` digits,
    reversed, then ``;``. Symbols: the digits, the operator (id 10), ``=`` (11); outputs: the
    digits, ``;`` (10). Operands of at most 9 digits (their product fits int64)."""
    import torch

    digits = _lengths(draws, low, high)
    if int(digits.max()) > 9:
        raise ValueError("Xu et al.'s operands beyond 9 digits are drawn by the Python sampler")
    exact = _digits_exactly(draws, PLACES, digits, width)
    below = draws.integers(SECOND, 0, 9, width=width) * (torch.arange(width, device=draws.device)[None, :]
                                                         >= width - digits[:, None])
    swap = draws.integers(SIDE, 0, 1)[:, None].bool()
    a, b = torch.where(swap, below, exact), torch.where(swap, exact, below)
    column = lambda symbol: torch.full((draws.count, 1), symbol, dtype=torch.int64, device=draws.device)  # noqa: E731
    inputs = torch.cat([a, column(10), b, column(11)], dim=1)
    x, y = _value(a[:, -18:]), _value(b[:, -18:])
    value = x * y if multiply else x + y
    if modulus:
        value = value % modulus
    answers = torch.cat([_reversed_digits(value, torch.full_like(digits, out_width)), column(10)], dim=1)
    return Drawn(inputs, torch.full_like(digits, inputs.shape[1]), answers, torch.full_like(digits, out_width + 1),
                 digits)


# ---------------------------------------------------------------- Sabbaghi et al.'s aligned format


def _left_padded(values: "torch.Tensor", width: int, pad: int) -> "torch.Tensor":
    """Per row, ``values[b]``'s digits right-aligned in ``width`` places (most significant first,
    no leading zeros, 0 as one digit), ``pad`` before them: ``tasks.arithmetic.common.left_padded``."""
    import torch

    place = torch.arange(width - 1, -1, -1, device=values.device)[None, :]  # the power of ten of each place
    digits = (values[:, None] // 10 ** place.clamp(max=18)) % 10
    shown = (values[:, None] >= 10 ** place.clamp(max=18)) | (place == 0)
    return torch.where(shown, digits, pad)


def _below_power(draws: "Draws", lane: int, digits: "torch.Tensor", width: int) -> "torch.Tensor":
    """Per row, a number uniform in [0, 10^digits[b]) (its digits drawn one by one, as
    ``tasks.arithmetic.common.below_power``)."""
    import torch

    place = torch.arange(width - 1, -1, -1, device=draws.device)[None, :]
    free = draws.integers(lane, 0, 9, width=width) * (place < digits[:, None])
    return (free * 10 ** place.clamp(max=18)).sum(dim=1)


def sabbaghi_addition(draws: "Draws", low: int, high: int, *, width: int) -> Drawn:
    """Sabbaghi et al.'s addition, uniform operands: n uniform in [low, high], a and b uniform in
    [0, 10^n), each left-padded with ``<pad>`` to ``width`` around ``+``; the sum, left-padded to
    width + 1, under the ``+`` and the second operand. Symbols: the digits, ``+`` (10), ``<pad>``
    (11); outputs: the digits, ``<pad>`` (10)."""
    import torch

    digits = _lengths(draws, low, high)
    if int(digits.max()) > 17:
        raise ValueError("operands beyond 17 digits are drawn by the Python sampler")
    a, b = _below_power(draws, PLACES, digits, width), _below_power(draws, SECOND, digits, width)
    plus = torch.full((draws.count, 1), 10, dtype=torch.int64, device=draws.device)
    inputs = torch.cat([_left_padded(a, width, 11), plus, _left_padded(b, width, 11)], dim=1)
    answers = _left_padded(a + b, width + 1, 10)
    shown = lambda v: torch.maximum(torch.ones_like(v), (v[:, None] >= 10 ** torch.arange(  # noqa: E731
        18, device=draws.device)[None, :]).sum(dim=1))
    measured = torch.maximum(shown(a), shown(b))
    return Drawn(inputs, torch.full_like(digits, 2 * width + 1), answers, torch.full_like(digits, width + 1),
                 measured, answer_start=1 + width)


def sabbaghi_multiplication(draws: "Draws", low: int, high: int, *, multiplier: int, width: int) -> Drawn:
    """Sabbaghi et al.'s multiplication: a ``multiplier``-digit multiplier with exactly that many
    digits (0-9 for one), ``*``, and a multiplicand uniform in [0, 10^n), n uniform in [low, high],
    left-padded with ``<pad>`` to ``width``; the product, left-padded to width + multiplier, under
    the last positions. Symbols: the digits, ``*`` (10), ``<pad>`` (11); outputs: the digits,
    ``<pad>`` (10)."""
    import torch

    digits = _lengths(draws, low, high)
    m = _digits_exactly(draws, COUNT, torch.full_like(digits, multiplier), multiplier)
    a = _below_power(draws, PLACES, digits, width)
    times = torch.full((draws.count, 1), 10, dtype=torch.int64, device=draws.device)
    inputs = torch.cat([m, times, _left_padded(a, width, 11)], dim=1)
    size = width + multiplier
    answers = _left_padded(_value(m) * a, size, 10)
    measured = torch.maximum(torch.ones_like(a), (a[:, None] >= 10 ** torch.arange(18, device=draws.device)[None, :])
                             .sum(dim=1))
    length = multiplier + 1 + width
    return Drawn(inputs, torch.full_like(digits, length), answers, torch.full_like(digits, size), measured,
                 answer_start=length + 1 - size)


__all__ = ["Drawn", "PAD", "binary_sums", "distinct_symbols", "duan_addition", "duan_parity", "duan_successor",
           "duan_times_one", "independent_copy", "interleaved_majorities", "parity_bits", "random_keys",
           "random_order", "sabbaghi_addition", "sabbaghi_multiplication", "unique_majority", "untied_bits",
           "xu_operation"]
