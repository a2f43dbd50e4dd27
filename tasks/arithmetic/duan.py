"""Duan et al. (arXiv 2310.11984): successor, addition, parity with a scratchpad and N x 1,
operands zero-padded to n digits (most significant first), the output reversed."""

from __future__ import annotations

from .. import anchors, vectorised
from ..algorithmic import PLAIN_CONTAINED
from ..split import Split
from ..types import Anchor, Format, Labels, Task
from .common import DIGITS, all_digits, d_n_pair, digits_exactly, reversed_padded

DUAN = "Duan et al. 2023, From Interpolation to Extrapolation (arXiv 2310.11984)"

_MIRROR = ("no program known: the output is reversed while the input is most significant first, so output "
           "digit d needs input digit d, which sits 2d + 1 positions back (a mirror alignment). No finite set "
           "of offsets reaches it for unbounded n, periodic predicates cannot locate it, and we know of no "
           "counting construction that singles out one digit of a string with repeated symbols. Duan et al. "
           "report 0% beyond the training length for sinusoidal, RoPE and ALiBi models and fix it with "
           "attention biases")


_SCAFFOLDS = {
    "successor": (("end", True),),
    "addition": (("before_op", True), ("end", True)),
    "n_times_1": (("before_op", True), ("end", False)),
    "parity_scratchpad": (("start", True),),
}
"""The source lines each output reads in our format (output reversed): output i of the successor
needs the i-th digit from the right; of a sum, the i-th digit from the right of both operands; of a
product by one digit, the multiplicand's and the multiplier; of the parity scratchpad (not
reversed), the i-th input bit."""


def _duan_task(name: str, symbols, outputs, sample, answer, valid, description, no_program: str,
               measure, sample_batch, split: Split | None = None) -> Task:
    return Task(
        name=f"duan_{name}",
        family="arithmetic",
        protocol="duan",
        scaffold=_SCAFFOLDS[name],
        format=Format.SEQ2SEQ,
        symbols=tuple(symbols),
        outputs=tuple(outputs),
        sample_input=sample,
        sample_batch=sample_batch,
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


def duan_tasks() -> list[Task]:
    successor = _duan_task(
        "successor", DIGITS, DIGITS,
        sample=lambda n, rng: tuple(str(digits_exactly(n, rng)).zfill(n)),
        answer=lambda x: reversed_padded(int("".join(x)) + 1, len(x) + 1),
        valid=all_digits,
        description="n -> n + 1: n zero-padded (most significant first), the successor reversed, n + 1 digits",
        no_program=_MIRROR, measure=len, sample_batch=vectorised.duan_successor,
        split=Split(("0", "1"), description="Alice holds the N most significant digits, Bob the N least (digits 0 "
                                            "and 1 only)"))

    def add_sample(n, rng):
        a, b = d_n_pair(n, rng)
        return (*str(a).zfill(n), "+", *str(b).zfill(n))

    def add_split(x):
        text = "".join(x)
        return text.split("+") if text.count("+") == 1 else None

    addition = _duan_task(
        "addition", (*DIGITS, "+"), DIGITS, sample=add_sample,
        answer=lambda x: reversed_padded(sum(int(p) for p in add_split(x)), len(x) // 2 + 1),
        valid=lambda x: (parts := add_split(x)) is not None and len(parts[0]) == len(parts[1]) > 0
        and all(p.isdigit() for p in parts),
        description="a + b, both zero-padded to n digits, the sum reversed with n + 1 digits",
        no_program=_MIRROR, measure=lambda x: len(x) // 2, sample_batch=vectorised.duan_addition,
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
        measure=len, sample_batch=vectorised.duan_parity)

    def times_sample(n, rng):
        return (*str(digits_exactly(n, rng)).zfill(n), "*", str(int(rng.integers(0, 10))))

    def times_valid(x):
        return len(x) >= 3 and x[-2] == "*" and all_digits(x[:-2]) and x[-1] in DIGITS

    times = _duan_task(
        "n_times_1", (*DIGITS, "*"), DIGITS, sample=times_sample,
        answer=lambda x: reversed_padded(int("".join(x[:-2])) * int(x[-1]), len(x) - 1),
        valid=times_valid,
        description="a * d: a zero-padded to n digits, d one digit; the product reversed with n + 1 digits",
        no_program=_MIRROR, measure=lambda x: len(x) - 2, sample_batch=vectorised.duan_times_one,
        split=Split(("0", "1"), after=("*", "3"), description="Alice holds the N most significant digits of the "
                                                              "multiplicand, Bob the rest and the multiplier 3 (digits "
                                                              "0 and 1 only)"))
    return [successor, addition, parity, times]
