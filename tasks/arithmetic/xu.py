"""Xu et al. (arXiv 2407.17963): ``<bos> a + b = c ; <eos>`` with a, b zero-padded to 20 digits
(most significant first) and c the result zero-padded to 21 digits and reversed. Inputs of length n
(the set D_n): one operand has exactly n digits, the other is uniform in [0, 10^n). Addition,
multiplication, and both modulo p for p in :data:`MODULI`."""

from __future__ import annotations

import functools
import itertools

from .. import anchors, arithmetic_programs, vectorised
from ..types import Anchor, Format, Labels, Task
from .common import DIGITS, d_n_pair, digit_count

XU = "Xu et al. 2024, Relating the Seemingly Unrelated (arXiv 2407.17963)"
MODULI = (50, 51, 100, 101, 150, 200, 201)
WIDTH, OUT_WIDTH = arithmetic_programs.WIDTH, arithmetic_programs.OUT_WIDTH


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
    return max(digit_count(a), digit_count(b))


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
        protocol="xu",
        operation=kind,
        format=Format.SEQ2SEQ,
        symbols=(*DIGITS, op, "="),
        outputs=(*DIGITS, ";"),
        sample_input=lambda n, rng: operands_x(*d_n_pair(n, rng), op),
        sample_batch=functools.partial(vectorised.xu_operation, multiply=op == "*", modulus=modulus, width=WIDTH,
                                       out_width=OUT_WIDTH),
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


def xu_tasks() -> list[Task]:
    """Xu et al.'s 16 tasks: addition and multiplication, then both modulo each of :data:`MODULI`."""
    tasks = [xu_task("+"), xu_task("*")]
    for modulus in MODULI:
        tasks += [xu_task("+", modulus), xu_task("*", modulus)]
    return tasks
