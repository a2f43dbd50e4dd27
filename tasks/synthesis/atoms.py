"""Atoms: whole expressions the enumeration starts from as if they were single leaves.

Programs for a task's format are made of the same few pieces. A seq2seq task with a separator
reads "the separator has been seen", the count of each symbol before it (the input's) and after it
(the output's so far), the number of output steps so far and the input's length, and compares
them. :func:`format_atoms` names those pieces for a task, so that a
comparison of two of them is an expression of size 3 rather than 9 to 15. Outputs already found
become atoms too (:func:`found_atom`), so that later outputs can reuse them, and for a seq2seq task
the last output open is "none of the others" (:func:`complement_atom`), since exactly one output
holds wherever one is checked.

An atom's ``expr`` is plain C-RASP without references, so that it is evaluated by the interpreter
itself (:func:`evaluate`) and printed where it is used; the program's assembly names it (``name``)
where it is more than a token count.

>>> import tasks
>>> from crasp.printer import format_expr
>>> atoms = format_atoms(tasks.get("bin_majority"))
>>> [a.name for a in atoms]
['Seen', 'Steps', 'Length', 'In_0', 'In_1', 'Out_0', 'Out_1']
>>> format_expr(atoms[3].expr)
'#("0" && !#"<sep>" >= 1)'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp import ast
from crasp.checker import check
from crasp.interpreter import run

from .evaluator import BOOL, COUNT, Batch


MAX_SYMBOLS = 8
"""Tasks of more symbols get no atom per symbol (their number would crowd out the rest)."""


@dataclass(frozen=True)
class Atom:
    """An expression the enumeration takes as one leaf of ``sort`` (BOOL or COUNT)."""

    name: str
    sort: int
    expr: ast.Expr


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


__all__ = ["Atom", "format_atoms", "found_atom", "complement_atom", "evaluate"]
