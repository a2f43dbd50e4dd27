"""Sabbaghi et al. (arXiv 2406.01895): encoder-only, outputs in parallel. Operands left-padded
with ``<pad>`` to the same width, least significant digits aligned; the output sits under the last
positions (format ALIGNED). Also the carry cascades by which the paper measures complexity."""

from __future__ import annotations

import functools

import numpy as np

from .. import anchors, vectorised
from ..types import Anchor, Format, Labels, Task
from .common import DIGITS, PAD, below_power, digit_count, digits_exactly, left_padded

SABBAGHI = "Sabbaghi et al. 2024, Explicitly Encoding Structural Symmetry (arXiv 2406.01895)"

_ENCODER = ("no program: the model is an encoder with bidirectional attention and the carry into an output "
            "digit comes from less significant digits to its right; C-RASP and Limit Transformers are causal, "
            "so Huang et al.'s theory does not apply to this format (Sabbaghi et al. instead encode the "
            "translation symmetry with relative or uniform positional encodings)")


def longest_cascade(a: int, b: int) -> int:
    """The longest carry cascade of a + b: a digit position that generates a carry (digit sum >= 10)
    and the run of positions after it that pass it on (digit sum 9). 0 when nothing carries.

    >>> longest_cascade(5, 5), longest_cascade(95, 5), longest_cascade(9995, 5), longest_cascade(12, 34)
    (1, 2, 4, 0)
    """
    sums = []
    while a or b:
        sums.append(a % 10 + b % 10)
        a, b = a // 10, b // 10
    return max(_cascade_runs(sums), default=0)


def cascade_pair(n: int, cascade: int, rng: np.random.Generator) -> tuple[int, int]:
    """Two operands below 10^n drawn uniformly among those whose longest carry cascade is exactly
    ``cascade`` (0 to n): uniform digit pairs conditioned on the cascade, as Sabbaghi et al. select
    training samples by their complexity.

    A cascade of that length is placed at a uniform start (a pair summing to 10 or more, then pairs
    summing to 9), every other pair is uniform, and the draw is kept when the longest cascade is
    ``cascade``, with probability 1 / (the number of cascades of that length it has), since each of
    them could have been the one placed. Conditioning on no carry at all is plain rejection.

    >>> rng = np.random.default_rng(0)
    >>> all(longest_cascade(*cascade_pair(6, c, rng)) == c for c in range(7))
    True
    """
    if not 0 <= cascade <= n:
        raise ValueError(f"a cascade of {cascade} digits does not fit {n}-digit operands")
    while True:
        a_digits, b_digits = rng.integers(0, 10, size=n), rng.integers(0, 10, size=n)  # least significant first
        if cascade:
            start = int(rng.integers(0, n - cascade + 1))
            while a_digits[start] + b_digits[start] < 10:
                a_digits[start], b_digits[start] = rng.integers(0, 10, size=2)
            a_digits[start + 1:start + cascade] = rng.integers(0, 10, size=cascade - 1)
            b_digits[start + 1:start + cascade] = 9 - a_digits[start + 1:start + cascade]
        runs = _cascade_runs(a_digits + b_digits)
        if max(runs, default=0) != cascade:
            continue
        placements = runs.count(cascade) if cascade else 1
        if placements == 1 or rng.random() < 1 / placements:
            return (sum(int(d) * 10 ** k for k, d in enumerate(a_digits)),
                    sum(int(d) * 10 ** k for k, d in enumerate(b_digits)))


def _cascade_runs(sums) -> list[int]:
    """Per digit position (least significant first), the length of the carry cascade running
    through it (0 where none does), from the digit sums."""
    runs, run = [], 0
    for total in sums:
        run = 1 if total >= 10 else (run + 1 if total == 9 and run else 0)
        runs.append(run)
    return runs


def aligned_x(a: int, b: int, width: int) -> tuple[str, ...]:
    """Sabbaghi et al.'s addition input: a and b left-padded with ``<pad>`` to ``width``, around '+'.

    >>> aligned_x(12, 345, 4)
    ('<pad>', '<pad>', '1', '2', '+', '<pad>', '3', '4', '5')
    """
    return (*left_padded(a, width), "+", *left_padded(b, width))


def cascade_x(cascade: int, digits: tuple[int, int], width: int, rng: np.random.Generator) -> tuple[str, ...]:
    """An addition input (:func:`aligned_x`) whose longest carry cascade is exactly ``cascade`` and
    whose longer operand has ``digits[0]`` to ``digits[1]`` digits: :func:`cascade_pair` for n uniform
    among the lengths that hold the cascade, drawn again when both operands are shorter than
    ``digits[0]``. Sabbaghi et al. test accuracy against complexity this way, at a fixed length.

    >>> x = cascade_x(7, (6, 10), 20, np.random.default_rng(0))
    >>> a, b = (int("".join(t for t in part if t != PAD)) for part in (x[:20], x[21:]))
    >>> longest_cascade(a, b), 6 <= max(len(str(a)), len(str(b))) <= 10
    (7, True)
    """
    low, high = digits
    if not 0 <= cascade <= high or not 1 <= low <= high <= width:
        raise ValueError(f"a carry cascade of {cascade} digits in operands of {low}-{high} digits padded to {width}: "
                         f"expected 0 <= cascade <= {high} and 1 <= {low} <= {high} <= {width}")
    while True:
        n = int(rng.integers(max(low, cascade), high + 1))
        a, b = cascade_pair(n, cascade, rng)
        if max(digit_count(a), digit_count(b)) >= low:
            return aligned_x(a, b, width)


TRAINING_DISTRIBUTIONS = {"uniform": 0.0, "balanced": 1.0, "mixed": 0.5}
"""Sabbaghi et al.'s training distributions for addition: the share of training inputs drawn with a
longest carry cascade uniform in [0, n] (the others are uniform operands)."""


def distribution_of(task_name: str) -> str:
    """The training distribution of a Sabbaghi et al. addition task, from its name.

    >>> distribution_of("sabbaghi_addition_mixed"), distribution_of("sabbaghi_addition")
    ('mixed', 'uniform')
    """
    suffix = task_name.removeprefix("sabbaghi_addition").removeprefix("_")
    return suffix if suffix in TRAINING_DISTRIBUTIONS else "uniform"


def sabbaghi_tasks(width: int = 50, multiplier: int = 3, multiplicand_width: int = 20,
                   distribution: str = "uniform") -> list[Task]:
    """Pad-aligned addition (operands padded to ``width``) and multiplication by a ``multiplier``-digit
    multiplier (named ``sabbaghi_multiplication``, or ``sabbaghi_multiplication_<k>`` for k digits
    other than 3).

    ``distribution`` (:data:`TRAINING_DISTRIBUTIONS`): how the addition task draws its training
    lengths (up to 5 digits). ``balanced``: with a longest carry cascade uniform in [0, n]
    (Sabbaghi et al.'s complexity-balanced distribution; name ``sabbaghi_addition_balanced``);
    ``mixed``: each input from either distribution with equal chance (``sabbaghi_addition_mixed``).
    Longer inputs are drawn as usual.
    """
    if distribution not in TRAINING_DISTRIBUTIONS:
        raise ValueError(f"training distribution {distribution!r}: expected one of "
                         f"{', '.join(TRAINING_DISTRIBUTIONS)}")
    share = TRAINING_DISTRIBUTIONS[distribution]

    def number(tokens) -> int:
        return int("".join(t for t in tokens if t != PAD) or "0")

    train_digits = min(5, width)

    def add_sample(n, rng):
        # no coin is drawn when every input is balanced, so that task's stream stays as it was stored
        if n <= train_digits and share and (share == 1.0 or rng.random() < share):
            a, b = cascade_pair(n, int(rng.integers(0, n + 1)), rng)
        else:
            a, b = below_power(n, rng), below_power(n, rng)
        return aligned_x(a, b, width)

    def add_answer(x):
        total = number(x[:width]) + number(x[width + 1:])
        start = 1 + width  # positions of <bos> x: the '+' and the second operand
        return dict(zip(range(start, start + width + 1), left_padded(total, width + 1)))

    def add_valid(x):
        return (len(x) == 2 * width + 1 and x[width] == "+" and _padded_ok(x[:width]) and _padded_ok(x[width + 1:]))

    def mul_sample(n, rng):
        m = digits_exactly(multiplier, rng)
        return (*str(m), "*", *left_padded(below_power(n, rng), multiplicand_width))

    def mul_answer(x):
        product = int("".join(x[:multiplier])) * number(x[multiplier + 1:])
        size = multiplicand_width + multiplier
        start = len(x) + 1 - size
        return dict(zip(range(start, start + size), left_padded(product, size)))

    def mul_valid(x):
        return (len(x) == multiplier + 1 + multiplicand_width and x[multiplier] == "*"
                and all(t in DIGITS for t in x[:multiplier]) and (x[0] != "0" or multiplier == 1)
                and _padded_ok(x[multiplier + 1:]))

    def digits_of(tokens) -> int:
        return max(1, sum(1 for t in tokens if t != PAD))

    aligned_task = functools.partial(Task, family="arithmetic", protocol="sabbaghi", format=Format.ALIGNED,
                                     labels=Labels(None, None), separator=None, min_length=1, reference=SABBAGHI,
                                     no_program={"ape": _ENCODER, "nope": _ENCODER})
    addition = aligned_task(
        name="sabbaghi_addition" + ("" if distribution == "uniform" else f"_{distribution}"), operation="addition",
        distribution=distribution,
        symbols=(*DIGITS, "+", PAD),
        outputs=(*DIGITS, PAD), sample_input=add_sample, answer=add_answer, valid=add_valid,
        sample_batch=None if share else functools.partial(vectorised.sabbaghi_addition, width=width),
        train_range=(1, train_digits), bins=_bins_up_to(width, (5, 10, 20, 50)), max_length=width,
        anchors=() if share else _sabbaghi_anchors("addition"),
        description=f"a + b, each left-padded with {PAD} to {width}, least significant digits aligned; the sum "
                    f"(padded to {width + 1}) is read at the '+' and the second operand's positions"
                    + {"balanced": "; training inputs (up to 5 digits) have a longest carry cascade uniform in [0, n]",
                       "mixed": "; half the training inputs (up to 5 digits), chosen at random, have a longest carry "
                                "cascade uniform in [0, n]"}.get(distribution, ""),
        measure=lambda x: max(digits_of(x[:width]), digits_of(x[width + 1:])),
    )
    multiplication = aligned_task(
        name="sabbaghi_multiplication" + ("" if multiplier == 3 else f"_{multiplier}"), operation="multiplication",
        symbols=(*DIGITS, "*", PAD), outputs=(*DIGITS, PAD),
        sample_input=mul_sample, answer=mul_answer, valid=mul_valid,
        sample_batch=functools.partial(vectorised.sabbaghi_multiplication, multiplier=multiplier,
                                       width=multiplicand_width),
        train_range=(1, min(5, multiplicand_width)), bins=_bins_up_to(multiplicand_width, (5, 10, 15, 20)),
        max_length=multiplicand_width,
        anchors=_sabbaghi_anchors("multiplication_3xN") if multiplier == 3 else (),
        description=f"a {multiplier}-digit multiplier (unpadded) times a multiplicand left-padded with {PAD} to "
                    f"{multiplicand_width}; the product is read at the last {multiplicand_width + multiplier} positions"
                    + {1: " (Sabbaghi et al.'s single-digit setting, their Figure 4)"}.get(multiplier, ""),
        measure=lambda x: digits_of(x[multiplier + 1:]),
    )
    return [addition, multiplication]


def _bins_up_to(width: int, edges: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The paper's length bins (ending at ``edges``) that fit operands of ``width`` digits, the
    last one ending at ``width``: ``_bins_up_to(20, (5, 10, 20, 50))`` is (1-5, 6-10, 11-20)."""
    bins, low = [], 1
    for edge in edges:
        high = min(edge, width) if edge < edges[-1] else width
        if low <= high:
            bins.append((low, high))
        low = edge + 1
    return tuple(bins)


def _padded_ok(tokens) -> bool:
    text = [t for t in tokens if t != PAD]
    first = next((k for k, t in enumerate(tokens) if t != PAD), len(tokens))
    return (len(text) > 0 and all(t in DIGITS for t in text) and all(t != PAD for t in tokens[first:])
            and (len(text) == 1 or text[0] != "0"))


def _sabbaghi_anchors(name: str) -> tuple[Anchor, ...]:
    return tuple(Anchor(row["method"], (row["accuracy"],), f"trained on <= {row['train_digits']} digits, "
                        f"tested on {row['test_digits']}", "sabbaghi2024")
                 for row in anchors.read("arithmetic.csv") if row["source"] == "sabbaghi2024" and row["task"] == name)
