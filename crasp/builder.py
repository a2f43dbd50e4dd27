"""Build programs from Python: operator sugar over the plain AST dataclasses.

Tasks with large alphabets need generated programs. :class:`Expr` wraps an AST node and
overloads ``& | ~`` (Booleans), ``< <= == != >= >`` (comparisons of counts) and ``+ - *``
(integer linear arithmetic); :class:`ProgramBuilder` collects named definitions and outputs.

>>> alphabet = ["x", "y", "z"]
>>> b = ProgramBuilder()
>>> counts = {t: b.let(f"C_{t}", count(tok(t))) for t in alphabet}
>>> for t in alphabet:
...     b.next(t, all_of(counts[t] > counts[u] for u in alphabet if u != t))
>>> program = b.build()
>>> from crasp.interpreter import run
>>> run(program, ["x y y z"]).next_tokens(0)
['x', None, 'y', 'y']
>>> from crasp.printer import format_statement
>>> print(format_statement(program.statements[3]))
next "x" = C_x > C_y && C_x > C_z
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union, get_args

from . import ast
from .checker import CheckedProgram, check
from .intsets import IntSet

Operand = Union["Expr", int, bool]


@dataclass(frozen=True, eq=False)
class Expr:
    """An AST node with Python operators; ``.node`` is the plain AST."""

    node: ast.Expr

    __hash__ = None  # type: ignore[assignment]  # == builds a comparison, so no hashing

    def __bool__(self) -> bool:
        raise TypeError("a C-RASP expression has no Python truth value: use & | ~ rather than and/or/not")

    # Booleans
    def __and__(self, other: Operand) -> Expr:
        return Expr(ast.And(self.node, lift(other).node))

    def __rand__(self, other: Operand) -> Expr:
        return Expr(ast.And(lift(other).node, self.node))

    def __or__(self, other: Operand) -> Expr:
        return Expr(ast.Or(self.node, lift(other).node))

    def __ror__(self, other: Operand) -> Expr:
        return Expr(ast.Or(lift(other).node, self.node))

    def __invert__(self) -> Expr:
        return Expr(ast.Not(self.node))

    # comparisons
    def _compare(self, op: str, other: Operand) -> Expr:
        return Expr(ast.Compare(op, self.node, lift(other).node))

    def __lt__(self, other: Operand) -> Expr:
        return self._compare("<", other)

    def __le__(self, other: Operand) -> Expr:
        return self._compare("<=", other)

    def __gt__(self, other: Operand) -> Expr:
        return self._compare(">", other)

    def __ge__(self, other: Operand) -> Expr:
        return self._compare(">=", other)

    def __eq__(self, other: Operand) -> Expr:  # type: ignore[override]  # == builds a comparison
        return self._compare("==", other)

    def __ne__(self, other: Operand) -> Expr:  # type: ignore[override]  # != builds a comparison
        return self._compare("!=", other)

    # arithmetic
    def __add__(self, other: Operand) -> Expr:
        return Expr(ast.Add(self.node, lift(other).node))

    def __radd__(self, other: Operand) -> Expr:
        return Expr(ast.Add(lift(other).node, self.node))

    def __sub__(self, other: Operand) -> Expr:
        return Expr(ast.Sub(self.node, lift(other).node))

    def __rsub__(self, other: Operand) -> Expr:
        return Expr(ast.Sub(lift(other).node, self.node))

    def __mul__(self, factor: int) -> Expr:
        if not isinstance(factor, int) or isinstance(factor, bool):
            raise TypeError("C-RASP multiplies counts by integer constants only")
        return Expr(ast.Scale(factor, self.node))

    __rmul__ = __mul__

    def __neg__(self) -> Expr:
        return Expr(ast.Scale(-1, self.node))


def lift(value: Operand) -> Expr:
    """An :class:`Expr` from an Expr, an AST node, an int (a constant) or a bool."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Expr(ast.BoolConst(value))
    if isinstance(value, int):
        return Expr(ast.Const(value))
    if isinstance(value, get_args(ast.Expr)):
        return Expr(value)
    raise TypeError(f"cannot use {value!r} in a C-RASP expression")


def tok(token: str) -> Expr:
    """Q_token: true where the token is ``token``."""
    return Expr(ast.TokenIs(token))


def ref(name: str) -> Expr:
    """A reference to a definition or an imported unary predicate."""
    return Expr(ast.Ref(name))


def const(value: int) -> Expr:
    return Expr(ast.Const(value))


def periodic(modulus: int, residues: Iterable[int]) -> Expr:
    """True at absolute positions p with p mod ``modulus`` in ``residues``."""
    return Expr(ast.Periodic(modulus, IntSet.of(residues)))


def offsets(*values: int) -> ast.OffsetSet:
    """A local guard ``i - j in {values}`` for :func:`count`."""
    return ast.OffsetSet(IntSet.of(values))


def count(operand: Operand, guard: ast.Guard | str | None = None) -> Expr:
    """``#P``, or ``#[guard] P`` with a guard from :func:`offsets` or an imported predicate's name."""
    if isinstance(guard, str):
        guard = ast.NamedGuard(guard)
    return Expr(ast.Count(lift(operand).node, guard))


def minimum(left: Operand, right: Operand) -> Expr:
    return Expr(ast.Min(lift(left).node, lift(right).node))


def maximum(left: Operand, right: Operand) -> Expr:
    return Expr(ast.Max(lift(left).node, lift(right).node))


def where(condition: Operand, then: Operand, otherwise: Operand) -> Expr:
    """``then if condition else otherwise``."""
    return Expr(ast.Cond(lift(then).node, lift(condition).node, lift(otherwise).node))


def _fold(items: Iterable[Operand], combine, empty: Operand) -> Expr:
    """Combine left to right; more than :data:`FLAT_FOLD` items as a balanced tree, so that a
    long disjunction stays far below the checker's nesting limit."""
    values = [lift(item) for item in items]
    if not values:
        return lift(empty)
    if len(values) <= FLAT_FOLD:
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result
    middle = len(values) // 2
    return combine(_fold(values[:middle], combine, empty), _fold(values[middle:], combine, empty))


FLAT_FOLD = 32


def all_of(items: Iterable[Operand]) -> Expr:
    """The conjunction of ``items`` (``true`` when empty)."""
    return _fold(items, lambda a, b: a & b, True)


def any_of(items: Iterable[Operand]) -> Expr:
    """The disjunction of ``items`` (``false`` when empty)."""
    return _fold(items, lambda a, b: a | b, False)


def sum_of(items: Iterable[Operand]) -> Expr:
    """The sum of counts (``0`` when empty)."""
    return _fold(items, lambda a, b: a + b, 0)


def one_of(tokens: Iterable[str]) -> Expr:
    """True where the token is any of ``tokens``."""
    return any_of(tok(t) for t in tokens)


class ProgramBuilder:
    """Collects statements; :meth:`build` returns a plain :class:`~crasp.ast.Program`."""

    def __init__(self, source: str = "<built>") -> None:
        self.source = source
        self.statements: list[ast.Statement] = []
        self._fresh = 0

    def import_(self, name: str) -> Expr:
        """``#import name``; returns a reference usable as a unary predicate."""
        self.statements.append(ast.Import(name))
        return ref(name)

    def let(self, name: str | None, value: Operand) -> Expr:
        """``name = value``; returns a reference to it. ``name=None`` picks a fresh name."""
        if name is None:
            self._fresh += 1
            name = f"_t{self._fresh}"
        self.statements.append(ast.Definition(name, lift(value).node))
        return ref(name)

    def alphabet(self, tokens: Iterable[str]) -> None:
        """``alphabet {...}``: input symbols besides those the program mentions."""
        self.statements.append(ast.Alphabet(frozenset(tokens)))

    def accept(self, value: Operand) -> None:
        self.statements.append(ast.Accept(lift(value).node))

    def next(self, token: str, value: Operand) -> None:
        self.statements.append(ast.NextToken(token, lift(value).node))

    def build(self) -> ast.Program:
        return ast.Program(tuple(self.statements), source=self.source)

    def check(self) -> CheckedProgram:
        return check(self.build())
