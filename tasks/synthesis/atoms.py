"""Atoms: whole expressions the enumeration starts from as if they were single leaves.

Programs for a task's format are made of the same few pieces. A seq2seq task with a separator
reads "the separator has been seen", the count of each symbol before it (the input's) and after it
(the output's so far), the number of output steps so far and the input's length, and compares
them. :func:`format_atoms` names those pieces for a task, so that a
comparison of two of them is an expression of size 3 rather than 9 to 15. Outputs already found
become atoms too (:func:`found_atom`), so that later outputs can reuse them, and for a seq2seq task
the last output open is "none of the others" (:func:`complement_atom`), since exactly one output
holds wherever one is checked.

Tasks of at most :data:`RELATION_SYMBOLS` symbols also get *relation atoms*
(:func:`relation_atoms`): comparisons of the input's symbol counts (``#a > #b``, ``#a == #b``,
``#a + #b == #c``) and the order of its blocks (every a before every b; a*b*c*). They are
seeded only where they bear on an output still open (:func:`bears_on`: on the batch, the atom's
true positions contain the output's or lie within them, or the same with either negated), so that
a one-token answer chosen by comparing counts, or a counter language such as a^n b^n c^n, is a
conjunction of a few atoms rather than one large expression, and other tasks keep their leaves.

An atom's ``expr`` is plain C-RASP without references, so that it is evaluated by the interpreter
itself (:func:`evaluate`) and printed where it is used; the program's assembly names it (``name``)
where it is more than a token count and its name is an identifier (relation atoms are written out,
and named only where they occur twice).

>>> import tasks
>>> from crasp.printer import format_expr
>>> atoms = format_atoms(tasks.get("bin_majority"))
>>> [a.name for a in atoms]
['Seen', 'Steps', 'Length', 'In_0', 'In_1', 'Out_0', 'Out_1']
>>> format_expr(atoms[3].expr)
'#("0" && !#"<sep>" >= 1)'
>>> [a.name for a in relation_atoms(tasks.get("tomita_1"))]
['#0 < #1', '#0 == #1', '#0 > #1', '0 before 1', '1 before 0']
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from crasp import ast
from crasp.checker import check
from crasp.interpreter import run

from .evaluator import BOOL, COUNT, Batch
from .examples import Output


MAX_SYMBOLS = 8
"""Tasks of more symbols get no atom per symbol (their number would crowd out the rest)."""
RELATION_SYMBOLS = 4
"""Tasks of more symbols get no relation atoms (their number grows with the cube of the alphabet's)."""
ORDER_SIZE = 2
"""The size the search gives a block-order atom (a comparison of counts is a leaf, of size 1): that
of a count ``#"a"``, so that a program of tokens and counts alone is found first where it is as
small (Tomita-1's ``#"0" == 0`` rather than "every 1 before every 0, and not at a 0")."""


@dataclass(frozen=True)
class Atom:
    """An expression the enumeration takes as one leaf of ``sort`` (BOOL or COUNT), of ``size``
    (a Boolean atom may count as more than one node)."""

    name: str
    sort: int
    expr: ast.Expr
    size: int = 1


def _any_of(symbols: Sequence[str]) -> ast.Expr:
    leaves: list[ast.Expr] = [ast.TokenIs(s) for s in symbols]
    return functools.reduce(ast.Or, leaves)


def _suffix(token: str, index: int) -> str:
    return token if re.fullmatch(r"[A-Za-z0-9_]+", token) else str(index)


def format_atoms(task) -> tuple[Atom, ...]:
    """The atoms of ``task``'s format (see the module's docstring)."""
    symbols = tuple(task.symbols)
    separator = task.separator
    if getattr(task.format, "value", task.format) == "seq2seq" and separator and symbols:
        seen = ast.Compare(">=", ast.Count(ast.TokenIs(separator)), ast.Const(1))
        before = ast.Not(seen)
        framing = ast.Not(_any_of(task.prefix)) if task.prefix else ast.BoolConst(True)
        atoms = [Atom("Seen", BOOL, seen), Atom("Steps", COUNT, ast.Count(seen)),
                 Atom("Length", COUNT, ast.Count(ast.And(framing, before)))]
        if len(symbols) > MAX_SYMBOLS:
            return tuple(atoms)
        atoms += [Atom(f"In_{_suffix(s, k)}", COUNT, ast.Count(ast.And(ast.TokenIs(s), before)))
                  for k, s in enumerate(symbols)]
        atoms += [Atom(f"Out_{_suffix(t, k)}", COUNT, ast.Count(ast.And(ast.TokenIs(t), seen)))
                  for k, t in enumerate(task.outputs)]
        return tuple(atoms)
    return ()  # other formats start from the plain leaves: #"x" is already of size 2


def _input_of(task) -> tuple[Callable[[str], ast.Expr], Callable[[str], ast.Expr]]:
    """(an input symbol x here, the count of x so far): before the separator for a seq2seq task."""
    if getattr(task.format, "value", task.format) == "seq2seq" and task.separator:
        before = ast.Not(ast.Compare(">=", ast.Count(ast.TokenIs(task.separator)), ast.Const(1)))
        return (lambda x: ast.And(ast.TokenIs(x), before)), (lambda x: ast.Count(ast.And(ast.TokenIs(x), before)))
    return ast.TokenIs, (lambda x: ast.Count(ast.TokenIs(x)))


def relation_atoms(task) -> tuple[Atom, ...]:
    """Boolean atoms relating the input's symbol counts and blocks (see the module's docstring):
    for symbols x before y in the task's order, ``#x < #y``, ``#x == #y`` and ``#x > #y``; for
    three symbols, ``#x + #y == #z``; for three or more, the blocks in the task's order and in the
    reverse one (``#(("a" && #"b" + #"c" >= 1) || ("b" && #"c" >= 1)) == 0``: no symbol after one
    of a later block); for each ordered pair, "x before y" (``#("x" && #"y" >= 1) == 0``). None
    for more than :data:`RELATION_SYMBOLS` symbols."""
    symbols = tuple(task.symbols)
    if not 2 <= len(symbols) <= RELATION_SYMBOLS:
        return ()
    occurs, count = _input_of(task)

    def in_order(order: Sequence[str]) -> ast.Expr:
        after: list[ast.Expr] = [  # a symbol with one of a later block before it
            ast.And(occurs(x), ast.Compare(">=", functools.reduce(ast.Add, map(count, order[k + 1:])), ast.Const(1)))
            for k, x in enumerate(order[:-1])]
        return ast.Compare("==", ast.Count(functools.reduce(ast.Or, after)), ast.Const(0))

    atoms = [Atom(f"#{x} {op} #{y}", BOOL, ast.Compare(op, count(x), count(y)))
             for x, y in itertools.combinations(symbols, 2) for op in ("<", "==", ">")]
    atoms += [Atom(f"#{x} + #{y} == #{z}", BOOL, ast.Compare("==", ast.Add(count(x), count(y)), count(z)))
              for x, y in itertools.combinations(symbols, 2) for z in symbols if z not in (x, y)]
    if len(symbols) > 2:
        atoms += [Atom(" ".join(order), BOOL, in_order(order), ORDER_SIZE) for order in (symbols, symbols[::-1])]
    atoms += [Atom(f"{x} before {y}", BOOL, in_order((x, y)), ORDER_SIZE)
              for x, y in itertools.permutations(symbols, 2)]
    return tuple(atoms)


def bears_on(values: np.ndarray, outputs: Sequence[Output]) -> bool:
    """Whether a Boolean atom's ``values`` (every position of the batch) bear on one of
    ``outputs``: at the checked positions neither is constant, and the atom's true positions, or
    its false ones, contain the output's true positions or its false ones, or lie within them (the
    atom is a necessary or a sufficient condition of the output or of its negation).

    >>> from tasks.synthesis.examples import Output
    >>> want = Output("x", np.arange(4), np.array([True, True, False, False]))
    >>> bears_on(np.array([True, True, True, False]), [want]), bears_on(np.array([True, False, True, False]), [want])
    (True, False)
    """
    for output in outputs:
        here, want = values[output.where], output.want
        if here.all() or not here.any() or want.all() or not want.any():
            continue
        if any(not (want & ~a).any() or not (a & ~want).any() for a in (here, ~here)):
            return True
    return False


def found_atom(output: str, expr: ast.Expr) -> Atom:
    """An output already found, as a Boolean atom for the outputs still open."""
    return Atom(f"found {output}", BOOL, expr)


def complement_atom(found: Sequence[ast.Expr]) -> Atom:
    """True where none of ``found`` holds: the last open output of a seq2seq task."""
    return Atom("none found", BOOL, ast.Not(functools.reduce(ast.Or, found)))


def evaluate(atoms: Sequence[Atom], batch: Batch) -> list[np.ndarray]:
    """Each atom's values at every position of ``batch`` (Booleans, or int64 counts), computed by
    the interpreter on the batch's inputs at their offsets."""
    if not atoms:
        return []
    names = [f"A{k}" for k in range(len(atoms))]
    program = ast.Program((*(ast.Definition(n, a.expr) for n, a in zip(names, atoms)),
                           ast.Accept(ast.BoolConst(True))))
    inputs = [example.tokens for example, _ in batch.examples]
    offsets = np.array([offset for _, offset in batch.examples], dtype=np.int64)
    result = run(check(program), inputs, offset=offsets, trace=True, allow_unknown=True)
    assert result.values is not None  # recorded with trace=True
    values = []
    for name, atom in zip(names, atoms):
        table = result.values[name]
        flat = np.concatenate([table[b, :n] for b, n in enumerate(batch.lengths.tolist())])
        values.append(flat.astype(bool) if atom.sort == BOOL else flat.astype(np.int64))
    return values


__all__ = ["Atom", "format_atoms", "relation_atoms", "bears_on", "found_atom", "complement_atom", "evaluate"]
