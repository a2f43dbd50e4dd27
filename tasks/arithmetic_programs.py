"""C-RASP[local] programs for Xu et al.'s fixed-width arithmetic format.

Every sequence has the same layout: ``<bos> a_19 .. a_0 op b_19 .. b_0 = c_0 c_1 .. c_20 ; <eos>``
(operands zero-padded to 20 digits, most significant first; the result zero-padded to 21 digits
and reversed). Because the layout never changes, each digit sits at a fixed distance from ``=``:
the program computes the whole result at ``=`` (a_i is 22 + i positions back, b_i is 1 + i back)
and the output at ``=`` + d reads digit d back through the local guard i - j = d. Only local
guards are needed; no program reads an absolute position.

Results are computed digit-serially: ``conv_d`` is the column sum (a_d + b_d, or the sum of
a_i * b_j with i + j = d, written as Boolean-selected counts), carries are split off with
:func:`divmod_const`, which finds a quotient bit by bit with comparisons. For a modulus p the
program sums the digits weighted by 10^i mod p and reduces once; when p divides 10^k every weight
of a digit beyond the k-th is 0, so the program never reads those digits.

>>> from crasp.interpreter import run
>>> program = xu_program("+")
>>> a, b = "0" * 17 + "123", "0" * 16 + "4095"
>>> tokens = ["<bos>", *a, "+", *b, "=", *("4218"[::-1] + "0" * 17), ";"]
>>> "".join(run(program, [tokens]).next_tokens(0)[42:65])
'812400000000000000000;<eos>'
"""

from __future__ import annotations

from crasp import builder as b
from crasp.ast import Program
from crasp.builder import Expr

from .types import BOS, EOS

WIDTH = 20
OUT_WIDTH = 21
DIGITS = "0123456789"


def divmod_const(pb: b.ProgramBuilder, name: str, value: b.Expr, divisor: int, bound: int) -> tuple[b.Expr, b.Expr]:
    """(value // divisor, value % divisor) for 0 <= value <= bound, one comparison per quotient bit."""
    rest, terms = value, []
    for bit in reversed(range(max(bound // divisor, 1).bit_length())):
        step = divisor << bit
        taken = pb.let(f"{name}_bit{bit}", rest >= step)
        rest = pb.let(f"{name}_rest{bit}", rest - b.where(taken, step, 0))
        terms.append(b.where(taken, 1 << bit, 0))
    return pb.let(f"{name}_quot", b.sum_of(terms)), rest


class _Operands:
    """Digit readers at '=', defined on first use, so a program reads only the digits it needs."""

    def __init__(self, pb: b.ProgramBuilder) -> None:
        self.pb = pb
        self.cache: dict[str, b.Expr] = {}

    def _define(self, name: str, make) -> b.Expr:
        if name not in self.cache:
            self.cache[name] = self.pb.let(name, make())
        return self.cache[name]

    @staticmethod
    def _value(distance: int) -> b.Expr:
        return b.sum_of(u * b.count(b.tok(str(u)), guard=b.offsets(distance)) for u in range(1, 10))

    def a(self, i: int) -> b.Expr:
        """The value of a_i (a count)."""
        return self._define(f"A{i}", lambda: self._value(WIDTH + 2 + i))

    def b(self, i: int) -> b.Expr:
        """The value of b_i (a count)."""
        return self._define(f"B{i}", lambda: self._value(1 + i))

    def a_is(self, i: int) -> list[Expr]:  # `b` here is the method above
        """The ten Booleans 'a_i is u'."""
        return [self._define(f"A{i}_is_{u}", lambda u=u: b.count(b.tok(str(u)), guard=b.offsets(WIDTH + 2 + i)) >= 1)
                for u in range(10)]


def _times(a_is_i: list[b.Expr], count: b.Expr) -> b.Expr:
    """a_i * count, with a_i given by its ten Booleans."""
    return b.sum_of(u * b.where(a_is_i[u], count, 0) for u in range(1, 10))


def xu_program(op: str, modulus: int | None = None) -> Program:
    """The result digits of ``a op b`` (op "+" or "*"), or of ``(a op b) mod modulus``."""
    name = f"a {op} b" + (f" mod {modulus}" if modulus else "")
    pb = b.ProgramBuilder(source=f"<Xu et al. format: {name}>")
    pb.alphabet([BOS, EOS, "+", "*", "=", ";", *DIGITS])
    operands = _Operands(pb)
    digits = _modular_digits(pb, op, modulus, operands) if modulus else _exact_digits(pb, op, operands)
    at_equals = [pb.let(f"Out{d}_is_{v}", b.tok("=") & (digits[d] == v)) for d in range(len(digits))
                 for v in range(10)]
    # Slots past the digits a residue can have always hold 0.
    zero_slots = range(len(digits), OUT_WIDTH)
    for v in range(10):
        reads = [b.count(at_equals[d * 10 + v], guard=b.offsets(d)) >= 1 for d in range(len(digits))]
        if v == 0 and zero_slots:
            reads.append(b.count(b.tok("="), guard=b.offsets(*zero_slots)) >= 1)
        pb.next(str(v), b.any_of(reads))
    pb.next(";", b.count(b.tok("="), guard=b.offsets(OUT_WIDTH)) >= 1)
    pb.next(EOS, b.tok(";"))
    return pb.build()


def _exact_digits(pb, op, x: _Operands) -> list[b.Expr]:
    digits, carry, bound_carry = [], b.lift(0), 0
    for d in range(OUT_WIDTH):
        if op == "+":
            column = (x.a(d) + x.b(d)) if d < WIDTH else b.lift(0)
            bound = 18 if d < WIDTH else 0
        else:
            pairs = [(i, d - i) for i in range(WIDTH) if 0 <= d - i < WIDTH]
            column = b.sum_of(_times(x.a_is(i), x.b(j)) for i, j in pairs)
            bound = 81 * len(pairs)
        total = pb.let(f"Column{d}", column + carry)
        bound += bound_carry
        carry, digit = divmod_const(pb, f"C{d}", total, 10, bound)
        bound_carry = bound // 10
        digits.append(digit)
    return digits


def _modular_digits(pb, op, modulus, x: _Operands) -> list[b.Expr]:
    weight = [pow(10, k, modulus) for k in range(2 * WIDTH)]
    if op == "+":
        terms = [weight[i] * (x.a(i) + x.b(i)) for i in range(WIDTH) if weight[i]]
        bound = sum(18 * weight[i] for i in range(WIDTH))
    else:
        terms, bound = [], 0
        for i in range(WIDTH):
            row = [(weight[i + j], j) for j in range(WIDTH) if weight[i + j]]
            if row:
                weighted = pb.let(f"Weighted_b_{i}", b.sum_of(w * x.b(j) for w, j in row))
                terms.append(_times(x.a_is(i), weighted))
                bound += 9 * sum(9 * w for w, _ in row)
    value = pb.let("Value", b.sum_of(terms))
    _, residue = divmod_const(pb, "Mod", value, modulus, bound)
    digits = []
    for d in range(len(str(modulus - 1))):
        residue, digit = divmod_const(pb, f"R{d}", residue, 10, modulus - 1)
        digits.append(digit)
    return digits


__all__ = ["xu_program", "divmod_const", "WIDTH", "OUT_WIDTH"]
