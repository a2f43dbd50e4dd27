"""What a candidate program's constants ask of the inputs that verify it.

A program can agree with its task on every input a fixed test set holds and still be wrong: the
program ``#"a" == 0 || #"a" == 3 || ... || #"a" == 180`` is "divisible by 3" until an input has
more than 180 a's. So the verifier reads the program itself: every comparison (and every min/max,
which compares too) becomes a *probe*, the difference of its two sides, and an input set
*exercises* a probe when the comparison comes out both true and false on it, once with the two
sides within one of each other (the threshold itself). :func:`probes` finds them;
:func:`derived_inputs` draws inputs whose symbol counts sweep past the largest constant by a
margin; :func:`exercised` reads the probes' values off a traced run.

>>> from crasp.parser import parse
>>> from crasp.checker import check
>>> [(p.text, p.constant) for p in probes(check(parse('A = #"a" >= 7 && #"b" < #"a" + 2')))]
[('#"a" >= 7', 7), ('#"b" < #"a" + 2', 2)]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from crasp import ast
from crasp.checker import CheckedProgram
from crasp.printer import format_expr

PROBE = "__probe_"


@dataclass(frozen=True)
class Probe:
    """One comparison of a program: ``left - right`` is the probed value, ``op`` its test;
    ``constant`` the largest integer constant on either side (the threshold it encodes);
    ``nested`` whether it sits under a count (then every position matters, not only the outputs)."""

    name: str
    node: ast.Expr
    op: str
    difference: ast.Expr
    constant: int
    nested: bool

    @property
    def text(self) -> str:
        """The comparison as source text (formatted when asked: programs can hold thousands)."""
        return format_expr(self.node)


@dataclass(frozen=True)
class Exercise:
    """How a probe fared on an input set."""

    probe: Probe
    true: bool
    false: bool
    boundary: bool

    @property
    def both_sides(self) -> bool:
        return self.true and self.false and self.boundary

    def describe(self) -> str:
        missing = [side for side, seen in (("true", self.true), ("false", self.false),
                                           ("at its threshold", self.boundary)) if not seen]
        return f"{self.probe.text} never {' nor '.join(missing)}"


def _constants(node: ast.Expr) -> Iterator[int]:
    if isinstance(node, ast.Const):
        yield abs(node.value)
    elif isinstance(node, ast.Scale):
        yield abs(node.factor)
    for child in _children(node):
        if not isinstance(child, ast.Count):  # a count's own comparisons are probes of their own
            yield from _constants(child)


_EXPR_TYPES = (ast.TokenIs, ast.BoolConst, ast.Periodic, ast.Ref, ast.Not, ast.And, ast.Or, ast.Compare, ast.Count,
               ast.Const, ast.Add, ast.Sub, ast.Scale, ast.Min, ast.Max, ast.Cond)
_FIELDS = {kind: tuple(f.name for f in dataclasses.fields(kind) if f.name != "loc") for kind in _EXPR_TYPES}


def _children(node: ast.Expr) -> list[ast.Expr]:
    return [value for name in _FIELDS.get(type(node), ()) if isinstance(value := getattr(node, name), _EXPR_TYPES)]


def probes(checked: CheckedProgram) -> tuple[Probe, ...]:
    """Every comparison, min and max of the program, in source order (found once per program)."""
    kept = checked.memo.get("probes")
    if kept is None:
        kept = checked.memo["probes"] = _probes(checked)
    return kept


def _probes(checked: CheckedProgram) -> tuple[Probe, ...]:
    found: list[Probe] = []

    def visit(node: ast.Expr, nested: bool) -> None:
        if isinstance(node, (ast.Compare, ast.Min, ast.Max)):
            op = node.op if isinstance(node, ast.Compare) else "<="
            constant = max([0, *_constants(node.left), *_constants(node.right)])
            found.append(Probe(f"{PROBE}{len(found)}", node, op, ast.Sub(node.left, node.right),
                               constant, nested))
        for child in _children(node):
            visit(child, nested or isinstance(node, ast.Count))

    counted = _counted(checked)
    for statement in checked.program.statements:
        if isinstance(statement, ast.Definition):
            # A definition read under a count matters at every position; one that only feeds the
            # outputs matters at the checked positions.
            visit(statement.expr, nested=statement.name in counted)
    outputs = [checked.accept] if checked.accept is not None else [e for _, e in checked.next_tokens]
    for expr in outputs:
        if not isinstance(expr, ast.Ref):
            visit(expr, nested=False)
    return tuple(found)


def _counted(checked: CheckedProgram) -> set[str]:
    """The definitions read (directly or through others) inside a count."""
    counted: set[str] = set()

    def refs(node: ast.Expr, inside: bool) -> None:
        if isinstance(node, ast.Ref) and inside:
            counted.add(node.name)
        for child in _children(node):
            refs(child, inside or isinstance(node, ast.Count))

    definitions = {d.name: d.expr for d in checked.definitions}
    for expr in definitions.values():
        refs(expr, False)
    frontier = list(counted)
    while frontier:
        current = frontier.pop()
        if current in definitions:
            direct: set[str] = set()
            _all_refs(definitions[current], direct)
            for other in direct - counted:
                counted.add(other)
                frontier.append(other)
    return counted


def _all_refs(node: ast.Expr, into: set[str]) -> None:
    if isinstance(node, ast.Ref):
        into.add(node.name)
    for child in _children(node):
        _all_refs(child, into)


def holds(op: str, values: np.ndarray) -> np.ndarray:
    """``left op right`` from ``left - right``."""
    return {"<": values < 0, "<=": values <= 0, "==": values == 0, "!=": values != 0,
            ">=": values >= 0, ">": values > 0}[op]


def exercise(probe: Probe, values: np.ndarray) -> Exercise:
    """How ``values`` (the probe's differences at the positions that matter) exercise it."""
    truth = holds(probe.op, values)
    near = {"<": (values == -1) | (values == 0), "<=": (values == 0) | (values == 1),
            ">": (values == 1) | (values == 0), ">=": (values == 0) | (values == -1),
            "==": values == 0, "!=": values == 0}[probe.op]
    return Exercise(probe, bool(truth.any()), bool((~truth).any()), bool(near.any()))


def largest_constant(checked: CheckedProgram) -> int:
    """The largest comparison constant, period or local offset of a program (0 if none)."""
    info = checked.info
    return max([0, *(p.constant for p in probes(checked)), *info.periods, *info.offsets])


def derived_inputs(symbols: Sequence[str], lengths: Sequence[int], rng: np.random.Generator,
                   per_length: int = 1) -> list[tuple[str, ...]]:
    """Random strings over ``symbols`` whose symbol frequencies are skewed at random (a Dirichlet
    draw per input, a few of them single runs), so that every symbol's count, and every difference
    of counts, sweeps the whole range 0..length across the set.

    >>> rng = np.random.default_rng(0)
    >>> [len(x) for x in derived_inputs(("a", "b"), [3, 5], rng)]
    [3, 5]
    """
    found = []
    alphabet = np.array(symbols, dtype=object)
    for length in lengths:
        for _ in range(per_length):
            shape = rng.integers(4)
            if shape == 0:  # one block per symbol, in random order and sizes
                cuts = np.sort(rng.integers(0, length + 1, size=len(symbols) - 1))
                sizes = np.diff([0, *cuts, length])
                order = rng.permutation(len(symbols))
                x = [symbols[order[k]] for k, size in enumerate(sizes) for _ in range(size)]
            else:
                weights = rng.dirichlet(np.full(len(symbols), 0.4 if shape == 1 else 1.5))
                x = list(alphabet[rng.choice(len(symbols), size=length, p=weights)])
            found.append(tuple(x))
    return found


__all__ = ["Probe", "Exercise", "probes", "exercise", "largest_constant", "derived_inputs",
           "holds"]
