"""Hypothesis strategies for random well-sorted C-RASP programs and their inputs.

Every program drawn passes :func:`crasp.checker.check`; sizes are bounded so that property tests
stay fast. Use them to test anything that consumes programs:

>>> from hypothesis import given
>>> from crasp.checker import check
>>> @given(programs(alphabet=("a", "b"), periodic=False, local=False))
... def test_plain(program):
...     assert check(program).info.plain
>>> test_plain()
"""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st

from . import ast
from .checker import Sort
from .intsets import IntSet
from .predicates import BUILTINS, BinaryPredicate, UnaryPredicate

DEFAULT_ALPHABET = ("a", "b", "c")
_OPERATORS = ast.COMPARISON_OPERATORS


class _Scope:
    """Names visible so far, by sort, and the imported predicates."""

    def __init__(self, unary: list[str], binary: list[str]) -> None:
        self.names: dict[Sort, list[str]] = {Sort.BOOL: [], Sort.COUNT: []}
        self.unary = unary
        self.binary = binary


def _guard(draw, scope: _Scope) -> ast.Guard:
    kind = draw(st.sampled_from(["set", "compare", "named"] if scope.binary else ["set", "compare"]))
    if kind == "named":
        return ast.NamedGuard(draw(st.sampled_from(scope.binary)))
    if kind == "set":
        return ast.OffsetSet(IntSet.of(draw(st.sets(st.integers(0, 5), max_size=3))))
    return ast.OffsetCompare(draw(st.sampled_from(["==", "<", "<="])), draw(st.integers(0, 4)))


def _expr(draw, sort: Sort, depth: int, scope: _Scope, alphabet: Sequence[str],
          periodic: bool, local: bool) -> ast.Expr:
    leaf = depth <= 0 or draw(st.integers(0, 3)) == 0
    if sort is Sort.BOOL:
        choices = ["token", "const"] + (["ref"] if scope.names[Sort.BOOL] else [])
        if periodic:
            choices += ["periodic"] + (["unary"] if scope.unary else [])
        if not leaf:
            choices = ["not", "and", "or", "compare", "compare", "cond"]
        kind = draw(st.sampled_from(choices))
        sub = lambda s: _expr(draw, s, depth - 1, scope, alphabet, periodic, local)  # noqa: E731
        if kind == "token":
            return ast.TokenIs(draw(st.sampled_from(alphabet)))
        if kind == "const":
            return ast.BoolConst(draw(st.booleans()))
        if kind == "ref":
            return ast.Ref(draw(st.sampled_from(scope.names[Sort.BOOL])))
        if kind == "periodic":
            modulus = draw(st.integers(1, 6))
            return ast.Periodic(modulus, IntSet.of(draw(st.sets(st.integers(0, modulus - 1)))))
        if kind == "unary":
            return ast.Ref(draw(st.sampled_from(scope.unary)))
        if kind == "not":
            return ast.Not(sub(Sort.BOOL))
        if kind == "and":
            return ast.And(sub(Sort.BOOL), sub(Sort.BOOL))
        if kind == "or":
            return ast.Or(sub(Sort.BOOL), sub(Sort.BOOL))
        if kind == "compare":
            return ast.Compare(draw(st.sampled_from(_OPERATORS)), sub(Sort.COUNT), sub(Sort.COUNT))
        return ast.Cond(sub(Sort.BOOL), sub(Sort.BOOL), sub(Sort.BOOL))

    choices = ["const", "count"] + (["ref"] if scope.names[Sort.COUNT] else [])
    if not leaf:
        choices = ["count", "count", "add", "sub", "scale", "min", "max", "cond"]
    kind = draw(st.sampled_from(choices))
    sub = lambda s: _expr(draw, s, depth - 1, scope, alphabet, periodic, local)  # noqa: E731
    if kind == "const":
        return ast.Const(draw(st.integers(-3, 5)))
    if kind == "ref":
        return ast.Ref(draw(st.sampled_from(scope.names[Sort.COUNT])))
    if kind == "count":
        guard = _guard(draw, scope) if local and draw(st.booleans()) else None
        operand = _expr(draw, Sort.BOOL, max(depth - 1, 0), scope, alphabet, periodic, local)
        return ast.Count(operand, guard)
    if kind == "add":
        return ast.Add(sub(Sort.COUNT), sub(Sort.COUNT))
    if kind == "sub":
        return ast.Sub(sub(Sort.COUNT), sub(Sort.COUNT))
    if kind == "scale":
        return ast.Scale(draw(st.integers(-3, 3)), sub(Sort.COUNT))
    if kind == "min":
        return ast.Min(sub(Sort.COUNT), sub(Sort.COUNT))
    if kind == "max":
        return ast.Max(sub(Sort.COUNT), sub(Sort.COUNT))
    return ast.Cond(sub(Sort.COUNT), sub(Sort.BOOL), sub(Sort.COUNT))


@st.composite
def programs(
    draw,
    *,
    alphabet: Sequence[str] = DEFAULT_ALPHABET,
    max_definitions: int = 6,
    max_depth: int = 3,
    periodic: bool = True,
    local: bool = True,
    outputs: str = "any",
) -> ast.Program:
    """Random well-sorted programs over ``alphabet``.

    ``periodic``/``local`` allow periodic predicates and local guards (plain C-RASP when both
    are False); ``max_depth`` bounds expression nesting; ``outputs`` is ``"default"`` (last
    definition is the Boolean output), ``"accept"``, ``"next"`` or ``"any"``.
    """
    if outputs == "any":
        outputs = draw(st.sampled_from(["default", "accept", "next"]))
    unary = [p.name for p in BUILTINS if isinstance(p, UnaryPredicate)]
    binary = [p.name for p in BUILTINS if isinstance(p, BinaryPredicate)]
    imported_unary = draw(st.lists(st.sampled_from(unary), unique=True, max_size=1)) if periodic else []
    imported_binary = draw(st.lists(st.sampled_from(binary), unique=True, max_size=1)) if local else []
    scope = _Scope(imported_unary, imported_binary)
    statements: list[ast.Statement] = [ast.Import(n) for n in imported_unary + imported_binary]
    if draw(st.booleans()):
        statements.append(ast.Alphabet(frozenset(draw(st.sets(st.sampled_from(alphabet))))))

    count = draw(st.integers(1, max_definitions))
    for index in range(count):
        last = index == count - 1
        sort = Sort.BOOL if last and outputs == "default" else draw(st.sampled_from(list(Sort)))
        expr = _expr(draw, sort, max_depth, scope, alphabet, periodic, local)
        statements.append(ast.Definition(f"v{index}", expr))
        scope.names[sort].append(f"v{index}")

    def output_expr() -> ast.Expr:
        return _expr(draw, Sort.BOOL, 1, scope, alphabet, periodic, local)

    if outputs == "accept":
        statements.append(ast.Accept(output_expr()))
    elif outputs == "next":
        for token in draw(st.lists(st.sampled_from(alphabet), unique=True, min_size=1)):
            statements.append(ast.NextToken(token, output_expr()))
    return ast.Program(tuple(statements))


def token_sequences(
    alphabet: Sequence[str] = DEFAULT_ALPHABET, *, min_size: int = 1, max_size: int = 64
) -> st.SearchStrategy[list[str]]:
    """Random inputs over ``alphabet``."""
    return st.lists(st.sampled_from(list(alphabet)), min_size=min_size, max_size=max_size)


def offsets(max_offset: int = 1000) -> st.SearchStrategy[int]:
    """Random position offsets (training uses random offsets; periodic predicates see them)."""
    return st.integers(0, max_offset)
