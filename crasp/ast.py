"""Abstract syntax of C-RASP[periodic, local] programs as frozen dataclasses.

The syntax is sort-agnostic: whether an expression is a Boolean or a count vector is decided by
the static checker (:mod:`crasp.checker`), not by the parser. Every node carries an optional
source location that takes no part in equality, so a parsed program equals a built one.

>>> Count(TokenIs("a")) == Count(TokenIs("a"), guard=None)
True
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from typing import Iterable, Mapping, TypeVar, Union, dataclass_transform

from .intsets import IntSet


@dataclass(frozen=True)
class Loc:
    """A source span: 1-based line and column of its first character and of the character after it."""

    line: int
    column: int
    end_line: int
    end_column: int


def _loc() -> Loc | None:
    return field(default=None, compare=False, repr=False)


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _remembered_hash(self) -> int:
    """The dataclass hash, computed once per node: a tree is hashed in O(size), not O(size x depth)."""
    try:
        return self.__dict__["_hash"]
    except KeyError:
        value = hash((type(self).__name__, *(getattr(self, f.name) for f in fields(self) if f.compare)))
        object.__setattr__(self, "_hash", value)
        return value


def _state_without_hash(self) -> dict:
    """Pickled state: a remembered hash is per process (str hashes are salted), so it is left out."""
    state = dict(self.__dict__)
    state.pop("_hash", None)
    return state


_Class = TypeVar("_Class", bound=type)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _node(cls: _Class) -> _Class:
    """A frozen dataclass for a syntax node. Its ``__repr__`` (the dataclass one's text) and its
    hash, computed once per node, are shared functions rather than code generated per class,
    which keeps importing this module cheap for the command line."""
    setattr(cls, "__repr__", _repr)
    setattr(cls, "__hash__", _remembered_hash)
    setattr(cls, "__getstate__", _state_without_hash)
    return dataclass(frozen=True, repr=False)(cls)  # type: ignore[return-value]  # the class itself, decorated


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _statement(cls: _Class) -> _Class:
    """A frozen dataclass for a statement (its ``__repr__`` shared, as for nodes)."""
    setattr(cls, "__repr__", _repr)
    return dataclass(frozen=True, repr=False)(cls)  # type: ignore[return-value]  # the class itself, decorated


COMPARISONS = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">=": operator.ge, ">": operator.gt,
}
"""The comparison operators of the language and their meaning (on ints and numpy arrays)."""
COMPARISON_OPERATORS = tuple(COMPARISONS)


# ---------------------------------------------------------------- Boolean-looking leaves


@_node
class TokenIs:
    """``"a"``: Q_a, true where the token is ``a``."""

    token: str
    loc: Loc | None = _loc()


@_node
class BoolConst:
    """``true`` or ``false``."""

    value: bool
    loc: Loc | None = _loc()


@_node
class Periodic:
    """``i mod m in {r, ...}``: true where the absolute position is congruent to a residue.

    ``residues`` may be given as any set of ints; it is kept as an :class:`~crasp.intsets.IntSet`,
    so ``i mod 10^12 >= 1`` costs no more than ``i mod 2 == 1``.
    """

    modulus: int
    residues: IntSet
    loc: Loc | None = _loc()

    def __post_init__(self) -> None:
        object.__setattr__(self, "residues", IntSet.of(self.residues))


@_node
class Ref:
    """A name: an earlier definition or an imported unary predicate."""

    name: str
    loc: Loc | None = _loc()


# ---------------------------------------------------------------- Boolean operations


@_node
class Not:
    operand: Expr
    loc: Loc | None = _loc()


@_node
class And:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Or:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Compare:
    """``left op right`` for counts; ``op`` is one of :data:`COMPARISON_OPERATORS`."""

    op: str
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


# ---------------------------------------------------------------- counting


@_node
class OffsetSet:
    """Guard ``i - j in {d, ...}`` (``offsets`` kept as an :class:`~crasp.intsets.IntSet`)."""

    offsets: IntSet
    loc: Loc | None = _loc()

    def __post_init__(self) -> None:
        object.__setattr__(self, "offsets", IntSet.of(self.offsets))


@_node
class OffsetCompare:
    """Guard ``i - j op k``; local only when it holds for finitely many offsets."""

    op: str
    bound: int
    loc: Loc | None = _loc()


@_node
class NamedGuard:
    """Guard naming an imported binary predicate, as in ``#[pred] "a"``."""

    name: str
    loc: Loc | None = _loc()


Guard = Union[OffsetSet, OffsetCompare, NamedGuard]


@_node
class Count:
    """``# P`` (count j <= i with P(j)) or ``#[guard] P`` (also requiring guard(i, j))."""

    operand: Expr
    guard: Guard | None = None
    loc: Loc | None = _loc()


@_node
class Const:
    value: int
    loc: Loc | None = _loc()


@_node
class Add:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Sub:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Scale:
    """``factor * operand`` with an integer constant factor."""

    factor: int
    operand: Expr
    loc: Loc | None = _loc()


@_node
class Min:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Max:
    left: Expr
    right: Expr
    loc: Loc | None = _loc()


@_node
class Cond:
    """``then if condition else otherwise``; both branches have one sort."""

    then: Expr
    condition: Expr
    otherwise: Expr
    loc: Loc | None = _loc()


Expr = Union[
    TokenIs, BoolConst, Periodic, Ref, Not, And, Or, Compare,
    Count, Const, Add, Sub, Scale, Min, Max, Cond,
]


# ---------------------------------------------------------------- statements


@_statement
class Import:
    """``#import name``: a predicate from the registry (:mod:`crasp.predicates`)."""

    name: str
    loc: Loc | None = _loc()


@_statement
class Definition:
    """``name = expr``."""

    name: str
    expr: Expr
    loc: Loc | None = _loc()


@_statement
class Accept:
    """``accept expr``: the Boolean read at the last position decides acceptance."""

    expr: Expr
    loc: Loc | None = _loc()


@_statement
class NextToken:
    """``next "t" = expr``: the Boolean saying that the next token is ``t``."""

    token: str
    expr: Expr
    loc: Loc | None = _loc()


@_statement
class Alphabet:
    """``alphabet {"a", "b"}``: symbols of the input besides those the program mentions."""

    tokens: frozenset[str]
    loc: Loc | None = _loc()


Statement = Union[Import, Alphabet, Definition, Accept, NextToken]


@_statement
class Comment:
    """A ``//`` comment, kept so that ``crasp fmt`` does not lose it."""

    text: str
    line: int
    column: int


@_statement
class Program:
    """A straight-line list of statements; ``source`` names the file it came from."""

    statements: tuple[Statement, ...]
    source: str = field(default="<program>", compare=False)
    comments: tuple[Comment, ...] = field(default=(), compare=False, repr=False)
    text: str | None = field(default=None, compare=False, repr=False)

    @property
    def definitions(self) -> tuple[Definition, ...]:
        return tuple(s for s in self.statements if isinstance(s, Definition))

    @property
    def imports(self) -> tuple[Import, ...]:
        return tuple(s for s in self.statements if isinstance(s, Import))

    def _repr_html_(self) -> str:
        """The program in a notebook: its source highlighted and what its syntax tells (class,
        count depth, definitions); ``crasp.check`` adds the sorts. A program that imports shows its
        source only: what it imports is known to the checker."""
        from .display import program_html

        if self.imports:
            return program_html(self.source, self.text)
        nodes = [node for d in self.definitions for node in walk(d.expr)]
        nodes += [node for s in self.statements if isinstance(s, (Accept, NextToken)) for node in walk(s.expr)]
        local = any(isinstance(node, Count) and node.guard is not None for node in nodes)
        periodic = any(isinstance(node, Periodic) for node in nodes)
        kind = ("C-RASP[" + ", ".join(k for k, used in (("periodic", periodic), ("local", local)) if used) + "] (APE)"
                if local or periodic else "plain C-RASP (NoPE)")
        depths = definition_depths(self.definitions)
        outputs = ", ".join("accept" if isinstance(s, Accept) else f'next "{s.token}"'
                            for s in self.statements if isinstance(s, (Accept, NextToken)))
        rows = [(d.name, "?", depths[d.name], "") for d in self.definitions]
        return program_html(self.source, self.text, kind=kind, depth=max(depths.values(), default=0),
                            outputs=outputs or None, definitions=rows, checked=False)


def children(node: Expr) -> tuple[Expr, ...]:
    """The sub-expressions of ``node`` in source order.

    >>> children(Add(Const(1), Ref("x")))
    (Const(value=1), Ref(name='x'))
    """
    if isinstance(node, (Not,)):
        return (node.operand,)
    if isinstance(node, Count):
        return (node.operand,)
    if isinstance(node, Scale):
        return (node.operand,)
    if isinstance(node, (And, Or, Compare, Add, Sub, Min, Max)):
        return (node.left, node.right)
    if isinstance(node, Cond):
        return (node.then, node.condition, node.otherwise)
    return ()


def deeper_than(program: Program, limit: int) -> tuple[Expr, Statement] | None:
    """The first node nested more than ``limit`` levels deep in an expression of ``program``, with
    its statement (None if there is none); found without recursion, so any depth can be asked.

    >>> deeper_than(Program((Definition("A", Not(Not(BoolConst(True)))),)), 2)
    (BoolConst(value=True), Definition(name='A', expr=Not(operand=Not(operand=BoolConst(value=True)))))
    """
    for statement in program.statements:
        expr = getattr(statement, "expr", None)
        stack = [(expr, 1)] if expr is not None else []
        while stack:
            node, depth = stack.pop()
            if depth > limit:
                return node, statement
            stack.extend((child, depth + 1) for child in children(node))
    return None


def count_depth(expr: Expr, named: Mapping[str, int]) -> int:
    """How deep counts nest in ``expr``, a reference as deep as ``named`` says (0 where it says
    nothing: an imported predicate); found without recursion, so any nesting can be asked.

    >>> count_depth(Count(And(Ref("A"), Count(TokenIs("a")))), {"A": 2})
    3
    """
    found: dict[int, int] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, Ref):
            found[id(node)] = named.get(node.name, 0)
        elif not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in children(node))
        else:
            inner = max((found[id(child)] for child in children(node)), default=0)
            found[id(node)] = inner + isinstance(node, Count)
    return found[id(expr)]


def definition_depths(definitions: Iterable[Definition]) -> dict[str, int]:
    """Each definition's count-nesting depth (:func:`count_depth`, each reference to an earlier one).

    >>> definition_depths([Definition("A", Count(TokenIs("a"))), Definition("B", Count(Ref("A")))])
    {'A': 1, 'B': 2}
    """
    depths: dict[str, int] = {}
    for definition in definitions:
        depths[definition.name] = count_depth(definition.expr, depths)
    return depths


def walk(node: Expr):
    """Every node of an expression tree, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))
