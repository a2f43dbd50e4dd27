"""The arithmetic tasks of the seed papers: Xu et al., Duan et al., Sabbaghi et al. (formats in docs/arithmetic.md).

A task's *length* is a number of digits (``task.measure``): the longest operand's for Xu et al.
and Duan et al., the padded width class for Sabbaghi et al.

* **Xu et al. (arXiv 2407.17963)**: ``<bos> a + b = c ; <eos>`` with a, b zero-padded to 20
  digits (most significant first) and c the result zero-padded to 21 digits and reversed. Every
  sequence has the same length. Inputs of length n (the set D_n): one operand has exactly n
  digits, the other is uniform in [0, 10^n). Addition, multiplication, and both modulo p for
  p in {50, 51, 100, 101, 150, 200, 201}.
* **Duan et al. (arXiv 2310.11984)**: successor, addition, parity with a scratchpad and N x 1,
  operands zero-padded to n digits (most significant first), the output reversed.
* **Sabbaghi et al. (arXiv 2406.01895)**: encoder-only, outputs in parallel. Operands left-padded
  with ``<pad>`` to the same width, least significant digits aligned; the output sits under the
  last positions (format ALIGNED).

>>> import tasks
>>> task = tasks.get("xu_mod100_addition")
>>> example = task.example(operands_x(123, 4095, "+"))
>>> "".join(example.targets[:4]), example.length
('8100', 4)
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from . import anchors, arithmetic_programs
from .algorithmic import PLAIN_CONTAINED
from .types import Anchor, Format, Labels, Task
from .split import Split

DIGITS = tuple("0123456789")
XU = "Xu et al. 2024, Relating the Seemingly Unrelated (arXiv 2407.17963)"
DUAN = "Duan et al. 2023, From Interpolation to Extrapolation (arXiv 2310.11984)"
SABBAGHI = "Sabbaghi et al. 2024, Explicitly Encoding Structural Symmetry (arXiv 2406.01895)"
MODULI = (50, 51, 100, 101, 150, 200, 201)
WIDTH, OUT_WIDTH = arithmetic_programs.WIDTH, arithmetic_programs.OUT_WIDTH
PAD = "<pad>"


def _digits_exactly(n: int, rng: np.random.Generator) -> int:
    """Uniform among the numbers with exactly n digits (0-9 for n = 1); exact for any n."""
    if n == 1:
        return int(rng.integers(0, 10))
    return int("".join([str(int(rng.integers(1, 10))), *(str(int(d)) for d in rng.integers(0, 10, size=n - 1))]))


def _below_power(n: int, rng: np.random.Generator) -> int:
    """Uniform in [0, 10^n); exact for any n."""
    return int("".join(str(int(d)) for d in rng.integers(0, 10, size=n)) or "0")


def _d_n_pair(n: int, rng: np.random.Generator) -> tuple[int, int]:
    """Xu et al.'s D_n: one operand (either, with equal chance) has exactly n digits, the other < 10^n."""
    exact, other = _digits_exactly(n, rng), _below_power(n, rng)
    return (exact, other) if rng.integers(0, 2) == 0 else (other, exact)


def _size(value: int) -> int:
    return len(str(value))


# ---------------------------------------------------------------- Xu et al.


def operands_x(a: int, b: int, op: str) -> tuple[str, ...]:
    """Xu et al.'s input tokens: a and b zero-padded to 20 digits around ``op``, then '='."""
    return (*str(a).zfill(WIDTH), op, *str(b).zfill(WIDTH), "=")


def _xu_parse(x) -> tuple[int, str, int]:
    return int("".join(x[:WIDTH])), x[WIDTH], int("".join(x[WIDTH + 1:2 * WIDTH + 1]))


def _xu_valid(op: str, modulus: int | None):
    def valid(x) -> bool:
        if len(x) != 2 * WIDTH + 2 or x[WIDTH] != op or x[-1] != "=":
            return False
        if not all(t in DIGITS for t in (*x[:WIDTH], *x[WIDTH + 1:2 * WIDTH + 1])):
            return False
        a, _, b = _xu_parse(x)
        return modulus is not None or _result(a, op, b, None) < 10 ** OUT_WIDTH
    return valid


def _result(a: int, op: str, b: int, modulus: int | None) -> int:
    value = a + b if op == "+" else a * b
    return value % modulus if modulus else value


def _xu_answer(modulus: int | None):
    def answer(x) -> tuple[str, ...]:
        a, op, b = _xu_parse(x)
        return (*str(_result(a, op, b, modulus)).zfill(OUT_WIDTH)[::-1], ";")
    return answer


def truncate_operands(x: tuple[str, ...], digits: int) -> tuple[str, ...]:
    """Xu et al.'s input with every operand digit above the ``digits`` least significant set to 0:
    what a model trained on D_n (n = ``digits``) has only ever seen in those positions.

    >>> "".join(truncate_operands(operands_x(98765, 43, "+"), 3))[15:]
    '00765+00000000000000000043='
    """
    a, op, b = _xu_parse(x)
    return operands_x(a % 10 ** digits, b % 10 ** digits, op)


def set_digit(x: tuple[str, ...], operand: int, place: int, digit: int) -> tuple[str, ...]:
    """Xu et al.'s input with the digit of 10^``place`` in operand ``operand`` (0: a, 1: b) set to
    ``digit``.

    >>> "".join(set_digit(operands_x(12, 345, "+"), 0, 2, 7))[17:]
    '712+00000000000000000345='
    """
    a, op, b = _xu_parse(x)
    values = [a, b]
    old = values[operand] // 10 ** place % 10
    values[operand] += (digit - old) * 10 ** place
    return operands_x(values[0], values[1], op)


def _xu_measure(x) -> int:
    a, _, b = _xu_parse(x)
    return max(_size(a), _size(b))


def _xu_enumerate(op: str):
    def enumerate_inputs(n: int):
        for a, b in itertools.product(range(10 ** n), repeat=2):
            yield operands_x(a, b, op)
    return enumerate_inputs


def _digit_range(text: str) -> tuple[int, int]:
    """``"1-4"`` -> (1, 4); ``"3"`` -> (3, 3)."""
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def _xu_anchors(name: str, train: int, bins) -> tuple[Anchor, ...]:
    """Published accuracies for the task trained on ``train`` digits, one value per bin where the
    paper reports that range, or a range holding it at 0% or 100% (an average over a range is 0 or
    100 only when it is so on every part of it, so "100% on 1-4" gives 100% on 1-3 and on 4)."""
    rows = [row for row in anchors.read("arithmetic.csv")
            if row["source"] == "xu2024" and row["task"] == name and row["train_digits"] == str(train)]
    published = {_digit_range(row["test_digits"]): float(row["accuracy"]) for row in rows}
    if not published:
        return ()
    values = []
    for low, high in bins:
        exact = published.get((low, high))
        holding = [v for (a, b), v in published.items() if a <= low and high <= b and v in (0.0, 100.0)]
        values.append(exact if exact is not None else holding[0] if holding else "-")
    return (Anchor("ape", tuple(values), f"6 layers, 6 heads, d 384; trained on {train} digits", "xu2024"),)


def xu_bins(digits: int, longest: int) -> tuple[tuple[int, int], ...]:
    """Xu et al.'s length bins for a model trained on D_``digits``: the shorter lengths, the trained
    one, the longer ones to 9 digits, and the rest to ``longest``.

    >>> xu_bins(4, 20), xu_bins(1, 10)
    (((1, 3), (4, 4), (5, 9), (10, 20)), ((1, 1), (2, 9), (10, 10)))
    """
    shorter = ((1, digits - 1),) if digits > 1 else ()
    return (*shorter, (digits, digits), (digits + 1, 9), (10, longest))


def xu_task(op: str, modulus: int | None = None) -> Task:
    """One task of Xu et al.: ``a op b`` (op "+" or "*"), optionally modulo ``modulus``."""
    kind = "addition" if op == "+" else "multiplication"
    name = f"mod{modulus}_{kind}" if modulus else kind
    multiply_exact = op == "*" and modulus is None
    train = 3 if op == "*" else 4
    bins = ((1, 2), (3, 3), (4, 6), (7, 10)) if multiply_exact else xu_bins(train, WIDTH)
    divides = modulus is not None and any(10 ** k % modulus == 0 for k in range(1, WIDTH + 1))
    note = ""
    if modulus:
        note = (f"; {modulus} divides 10^{next(k for k in range(1, 30) if 10 ** k % modulus == 0)}: the program "
                f"reads only the last digits" if divides else
                f"; {modulus} divides no power of 10: every digit has a nonzero weight 10^i mod {modulus}")
    return Task(
        name=f"xu_{name}",
        family="arithmetic",
        format=Format.SEQ2SEQ,
        symbols=(*DIGITS, op, "="),
        outputs=(*DIGITS, ";"),
        sample_input=lambda n, rng: operands_x(*_d_n_pair(n, rng), op),
        answer=_xu_answer(modulus),
        valid=_xu_valid(op, modulus),
        train_range=(train, train),
        bins=bins,
        min_length=1,
        max_length=10 if multiply_exact else WIDTH,
        separator=None,
        labels=Labels(None, None),
        programs={"ape": functools.partial(arithmetic_programs.xu_program, op, modulus)},
        no_program={"nope": "no plain C-RASP program: every output digit sits at a fixed distance from the "
                            "operand digits it needs, which the program reads with local guards i - j = k; "
                            "without positions a program cannot tell the digits of a padded operand apart"},
        anchors=_xu_anchors(name, train, bins),
        description=f"{'a + b' if op == '+' else 'a * b'}{f' mod {modulus}' if modulus else ''} in Xu et al.'s "
                    f"fixed-width format (20-digit operands, 21-digit reversed result, ';'){note}",
        reference=XU,
        modulus=modulus,
        fixed_width=WIDTH,
        measure=_xu_measure,
        enumerate_inputs=_xu_enumerate(op),
    )


# ---------------------------------------------------------------- Duan et al.

_MIRROR = ("no program known: the output is reversed while the input is most significant first, so output "
           "digit d needs input digit d, which sits 2d + 1 positions back (a mirror alignment). No finite set "
           "of offsets reaches it for unbounded n, periodic predicates cannot locate it, and we know of no "
           "counting construction that singles out one digit of a string with repeated symbols. Duan et al. "
           "report 0% beyond the training length for sinusoidal, RoPE and ALiBi models and fix it with "
           "attention biases")


def _duan_task(name: str, symbols, outputs, sample, answer, valid, description, no_program: str,
               measure, split: Split | None = None) -> Task:
    return Task(
        name=f"duan_{name}",
        family="arithmetic",
        format=Format.SEQ2SEQ,
        symbols=tuple(symbols),
        outputs=tuple(outputs),
        sample_input=sample,
        answer=answer,
        valid=valid,
        train_range=(1, 6),
        bins=((1, 6), (7, 10), (11, 20), (21, 60)),
        min_length=1,
        labels=Labels(None, None),
        no_program={"ape": no_program, "nope": PLAIN_CONTAINED},
        anchors=_duan_anchors(name),
        description=description,
        reference=DUAN,
        measure=measure,
        split=split,
    )


def _duan_anchors(name: str) -> tuple[Anchor, ...]:
    key = {"parity_scratchpad": "parity_scratchpad", "n_times_1": "n_times_1"}.get(name, name)
    found = []
    for row in anchors.read("arithmetic.csv"):
        if row["source"] == "duan2024" and row["task"] == key:
            found.append(Anchor(row["method"], (float(row["accuracy"]),),
                                f"trained on {row['train_digits']} digits, tested on {row['test_digits']}", "duan2024"))
    return tuple(found)


def _reversed_padded(value: int, width: int) -> tuple[str, ...]:
    return tuple(str(value).zfill(width)[::-1])


def _all_digits(x) -> bool:
    return len(x) > 0 and all(t in DIGITS for t in x)


def duan_tasks() -> list[Task]:
    successor = _duan_task(
        "successor", DIGITS, DIGITS,
        sample=lambda n, rng: tuple(str(_digits_exactly(n, rng)).zfill(n)),
        answer=lambda x: _reversed_padded(int("".join(x)) + 1, len(x) + 1),
        valid=_all_digits,
        description="n -> n + 1: n zero-padded (most significant first), the successor reversed, n + 1 digits",
        no_program=_MIRROR, measure=len,
        split=Split(("0", "1"), description="Alice holds the N most significant digits, Bob the N least (digits 0 "
                                            "and 1 only)"))

    def add_sample(n, rng):
        a, b = _d_n_pair(n, rng)
        return (*str(a).zfill(n), "+", *str(b).zfill(n))

    def add_split(x):
        text = "".join(x)
        return text.split("+") if text.count("+") == 1 else None

    addition = _duan_task(
        "addition", (*DIGITS, "+"), DIGITS, sample=add_sample,
        answer=lambda x: _reversed_padded(sum(int(p) for p in add_split(x)), len(x) // 2 + 1),
        valid=lambda x: (parts := add_split(x)) is not None and len(parts[0]) == len(parts[1]) > 0
        and all(p.isdigit() for p in parts),
        description="a + b, both zero-padded to n digits, the sum reversed with n + 1 digits",
        no_program=_MIRROR, measure=lambda x: len(x) // 2,
        split=Split(("0", "1"), middle=("+",), description="Alice holds the first operand, Bob the second (N digits "
                                                           "each, digits 0 and 1 only)"))

    def prefix_xor(x):
        bits, acc = [], 0
        for t in x:
            acc ^= int(t)
            bits.append(str(acc))
        return tuple(bits)

    parity = _duan_task(
        "parity_scratchpad", ("0", "1"), ("0", "1"),
        sample=lambda n, rng: tuple(str(int(v)) for v in rng.integers(0, 2, size=n)),
        answer=prefix_xor, valid=lambda x: len(x) > 0 and set(x) <= {"0", "1"},
        description="n bits; the scratchpad of prefix XORs, in input order (the last one is the parity)",
        no_program="no program known: the k-th scratchpad bit needs the k-th input bit, n positions back, "
                   "an offset that grows with n (not local) in a string of repeated symbols, as in "
                   "repeat_copy; Duan et al. solve it with a windowed attention bias and cyclic positions",
        measure=len)

    def times_sample(n, rng):
        return (*str(_digits_exactly(n, rng)).zfill(n), "*", str(int(rng.integers(0, 10))))

    def times_valid(x):
        return len(x) >= 3 and x[-2] == "*" and _all_digits(x[:-2]) and x[-1] in DIGITS

    times = _duan_task(
        "n_times_1", (*DIGITS, "*"), DIGITS, sample=times_sample,
        answer=lambda x: _reversed_padded(int("".join(x[:-2])) * int(x[-1]), len(x) - 1),
        valid=times_valid,
        description="a * d: a zero-padded to n digits, d one digit; the product reversed with n + 1 digits",
        no_program=_MIRROR, measure=lambda x: len(x) - 2,
        split=Split(("0", "1"), after=("*", "3"), description="Alice holds the N most significant digits of the "
                                                              "multiplicand, Bob the rest and the multiplier 3 (digits "
                                                              "0 and 1 only)"))
    return [successor, addition, parity, times]


# ---------------------------------------------------------------- Sabbaghi et al.

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


def _left_padded(value: int, width: int) -> tuple[str, ...]:
    digits = str(value)
    return (*[PAD] * (width - len(digits)), *digits)


def aligned_x(a: int, b: int, width: int) -> tuple[str, ...]:
    """Sabbaghi et al.'s addition input: a and b left-padded with ``<pad>`` to ``width``, around '+'.

    >>> aligned_x(12, 345, 4)
    ('<pad>', '<pad>', '1', '2', '+', '<pad>', '3', '4', '5')
    """
    return (*_left_padded(a, width), "+", *_left_padded(b, width))


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
        if max(_size(a), _size(b)) >= low:
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
            a, b = _below_power(n, rng), _below_power(n, rng)
        return aligned_x(a, b, width)

    def add_answer(x):
        total = number(x[:width]) + number(x[width + 1:])
        start = 1 + width  # positions of <bos> x: the '+' and the second operand
        return dict(zip(range(start, start + width + 1), _left_padded(total, width + 1)))

    def add_valid(x):
        return (len(x) == 2 * width + 1 and x[width] == "+" and _padded_ok(x[:width]) and _padded_ok(x[width + 1:]))

    def mul_sample(n, rng):
        m = _digits_exactly(multiplier, rng)
        return (*str(m), "*", *_left_padded(_below_power(n, rng), multiplicand_width))

    def mul_answer(x):
        product = int("".join(x[:multiplier])) * number(x[multiplier + 1:])
        size = multiplicand_width + multiplier
        start = len(x) + 1 - size
        return dict(zip(range(start, start + size), _left_padded(product, size)))

    def mul_valid(x):
        return (len(x) == multiplier + 1 + multiplicand_width and x[multiplier] == "*"
                and all(t in DIGITS for t in x[:multiplier]) and (x[0] != "0" or multiplier == 1)
                and _padded_ok(x[multiplier + 1:]))

    def digits_of(tokens) -> int:
        return max(1, sum(1 for t in tokens if t != PAD))

    common = dict(family="arithmetic", format=Format.ALIGNED, labels=Labels(None, None), separator=None,
                  min_length=1, reference=SABBAGHI, no_program={"ape": _ENCODER, "nope": _ENCODER})
    addition = Task(
        name="sabbaghi_addition" + ("" if distribution == "uniform" else f"_{distribution}"),
        symbols=(*DIGITS, "+", PAD),
        outputs=(*DIGITS, PAD), **common, sample_input=add_sample, answer=add_answer, valid=add_valid,
        train_range=(1, train_digits), bins=_bins_up_to(width, (5, 10, 20, 50)), max_length=width,
        anchors=() if share else _sabbaghi_anchors("addition"),
        description=f"a + b, each left-padded with {PAD} to {width}, least significant digits aligned; the sum "
                    f"(padded to {width + 1}) is read at the '+' and the second operand's positions"
                    + {"balanced": "; training inputs (up to 5 digits) have a longest carry cascade uniform in [0, n]",
                       "mixed": "; half the training inputs (up to 5 digits), chosen at random, have a longest carry "
                                "cascade uniform in [0, n]"}.get(distribution, ""),
        measure=lambda x: max(digits_of(x[:width]), digits_of(x[width + 1:])),
    )
    multiplication = Task(
        name="sabbaghi_multiplication" + ("" if multiplier == 3 else f"_{multiplier}"),
        symbols=(*DIGITS, "*", PAD), outputs=(*DIGITS, PAD),
        **common, sample_input=mul_sample, answer=mul_answer, valid=mul_valid,
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


# ---------------------------------------------------------------- the suite


def builtin_tasks() -> list[Task]:
    """Xu et al.'s 16 tasks, Duan et al.'s 4 and Sabbaghi et al.'s 4: addition (also with the
    complexity-balanced training distribution) and multiplication by a 3-digit and by a 1-digit
    multiplier (``sabbaghi_multiplication_1``)."""
    xu = [xu_task("+"), xu_task("*")]
    for modulus in MODULI:
        xu += [xu_task("+", modulus), xu_task("*", modulus)]
    return [*xu, *duan_tasks(), *sabbaghi_tasks(), sabbaghi_tasks(distribution="balanced")[0],
            sabbaghi_tasks(distribution="mixed")[0], sabbaghi_tasks(multiplier=1)[1]]


__all__ = ["builtin_tasks", "xu_task", "duan_tasks", "sabbaghi_tasks", "operands_x", "MODULI", "longest_cascade",
           "cascade_pair"]
