"""Evidence from bounded windows: a seq2seq answer that copies a bounded part of the input.

Where, for every input of length n at least some N, the t-th answer token (t < m, a fixed answer
length) is the input symbol at a fixed index from the start (``x[i]``), at a fixed distance from
the end (``x[n - 1 - j]``), or a fixed token, and shorter inputs are answered in a way read off
them length by length, the answer has a program built here (the argument is ours):

* the output index is a count: ``Step = #After``, with ``After = #"<sep>" >= 1``, is t + 1 at
  the position that predicts the t-th answer token; the input length is a count too: ``Len =
  #!After`` is n + 1 from ``<sep>`` on;
* a symbol at a fixed index from the start is read through a count of all tokens (plain C-RASP,
  NoPE): ``#(#true == i + 2 && "a") >= 1`` holds exactly when ``x[i]`` is a (``x[i]`` sits at
  position i + 1, where ``#true``, counting ``<bos>``, is i + 2);
* a symbol at a fixed distance from the end is at a fixed distance from the position that
  predicts it: ``x[n - 1 - j]`` sits at position n - j, the t-th prediction at n + 1 + t, so a local
  guard reads it: ``#[i - j in {1 + t + j}] "a" >= 1`` (C-RASP[local], APE only);
* each of the finitely many shorter lengths has its own rule, selected by ``Len == n + 1``, its
  symbols read from the start.

The rule is found on the task's reference (every input of the short lengths where there are few,
else random ones, and random longer ones); the program built from it is verified like any other,
so the finding is as strong as that verification. A program reading only from the start is plain
C-RASP and speaks for NoPE too; one reading from the end speaks for APE only. Finding no window
says nothing.

>>> import tasks
>>> @tasks.task("doc_last_two", symbols=("a", "b"), replace=True,
...             sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
... def last_two(x):
...     return tuple(x[-2:])
>>> found = window(tasks.get("doc_last_two"))
>>> found.generic, found.from_length
((('end', 1), ('end', 0)), 2)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp import ast
from crasp.builder import Expr, ProgramBuilder, all_of, any_of, count, offsets, tok
from crasp.errors import ReferenceFailure

from ..findings import Finding, Verdict, silent
from ..types import BOS, EOS, Format, Task
from . import programs
from .context import Evidence
from .source import Source, cheap

NAME = "bounded window"
ARGUMENT = ("the bounded-window construction of tasks/evidence/window.py (ours): the output index and the input "
            "length are counts, a symbol at a fixed index from the start is read through a count of all tokens, one at "
            "a fixed distance from the end through a local guard")
SHORT = 12
"""Inputs up to this length have a rule of their own where no common one starts earlier."""
LONG = 60
"""The longest random inputs the rule is read on."""
PER_LENGTH = 24
"""Random inputs per length (every input, where a length has fewer)."""

Source_ = tuple[str, object]
"""Where an answer token comes from: ("start", i), ("end", j) or ("token", c)."""


@dataclass(frozen=True)
class Window:
    """The answer's ``generic`` rule (one source per answer token) for inputs of at least
    ``from_length`` symbols, and ``short[n]`` the rule of each shorter length (sources ("start",
    i) or ("token", c))."""

    generic: tuple[Source_, ...]
    from_length: int
    short: tuple[tuple[int, tuple[Source_, ...]], ...]

    @property
    def plain(self) -> bool:
        """Whether the program reads only from the start (plain C-RASP)."""
        return all(kind != "end" for kind, _ in self.generic)

    def describe(self) -> str:
        def one(source: Source_) -> str:
            kind, value = source
            return {"start": f"x[{value}]", "end": f"x[n-{1 + int(value)}]"}.get(kind, repr(value))  # type: ignore
        rule = ", ".join(one(s) for s in self.generic) or "nothing"
        shorter = f"; {len(self.short)} shorter lengths each with its own rule" if self.short else ""
        return f"for inputs of length n >= {self.from_length} the answer is ({rule}){shorter}"


def _inputs(task: Task, length: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    symbols = task.symbols
    if len(symbols) ** length <= PER_LENGTH:
        drawn = list(itertools.product(symbols, repeat=length))
    else:
        drawn = [tuple(rng.choice(symbols, size=length)) for _ in range(PER_LENGTH)]
        drawn += [tuple(task.sample_input(length, rng)) for _ in range(PER_LENGTH // 2)]
    return [x for x in drawn if len(x) == length and task.valid(x)]


def _candidates(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> list[set[Source_]] | None:
    """Per answer index the sources consistent with every (input, answer) of one length (indices
    from the start); None where the answer's length varies."""
    lengths = {len(y) for _, y in pairs}
    if len(lengths) != 1:
        return None
    (m,), n = lengths, len(pairs[0][0])
    found = []
    for t in range(m):
        here: set[Source_] = {("start", i) for i in range(n) if all(x[i] == y[t] for x, y in pairs)}
        if len({y[t] for _, y in pairs}) == 1:
            here.add(("token", pairs[0][1][t]))
        found.append(here)
    return found


def _common(by_length: dict[int, list[set[Source_]]], lengths: Sequence[int]) -> tuple[Source_, ...] | None:
    """One source per answer index that every length of ``lengths`` allows (an index from the
    start, a distance from the end, or a token), preferring the start, then the end."""
    shapes = {len(by_length[n]) for n in lengths}
    if len(shapes) != 1:
        return None
    rule = []
    for t in range(shapes.pop()):
        allowed: set[Source_] | None = None
        for n in lengths:
            here = {s for s in by_length[n][t] if s[0] == "token"}
            for kind, i in by_length[n][t]:
                if kind == "start":
                    here |= {("start", i), ("end", n - 1 - int(i))}  # type: ignore[call-overload]
            allowed = here if allowed is None else allowed & here
        if not allowed:
            return None
        rule.append(min(allowed, key=_preference))
    return tuple(rule)


def _preference(source: Source_) -> tuple[int, str]:
    return {"start": 0, "end": 1, "token": 2}[source[0]], str(source[1])


def window(task: Task, seed: int = 0) -> Window | None:
    """The bounded window the answer of a seq2seq ``task`` copies (see the module docstring), or None."""
    if (task.format is not Format.SEQ2SEQ or task.separator is None or task.prefix != (BOS,)
            or task.fixed_width is not None or task.measure is not None):
        return None
    rng = np.random.default_rng(seed)
    shortest = max(task.min_length - len(task.prefix) + 1, 0)
    lengths = [n for n in range(shortest, SHORT + 1)] + [n for n in (16, 24, 32, 45, LONG) if n > SHORT]
    by_length: dict[int, list[set[Source_]]] = {}
    try:
        for n in lengths:
            pairs = [(x, tuple(task.answer(x))) for x in _inputs(task, n, rng)]
            if not pairs:
                continue
            found = _candidates(pairs)
            if found is None:
                return None
            by_length[n] = found
    except ReferenceFailure:
        return None
    seen = sorted(by_length)
    long = [n for n in seen if n > SHORT]
    if not long:
        return None
    for start in [n for n in seen if n <= SHORT]:
        generic = _common(by_length, [n for n in seen if n >= start])
        if generic is not None:
            break
    else:
        return None
    short = []
    for n in (n for n in seen if n < start):
        rule = tuple(min(here, key=_preference) for here in by_length[n] if here)
        if len(rule) != len(by_length[n]):
            return None
        short.append((n, rule))
    return Window(generic, start, tuple(short))


def build(task: Task, found: Window) -> ast.Program:
    """The program of the module docstring for ``found``."""
    separator = task.separator
    assert separator is not None  # window() finds none for a task without one
    b = ProgramBuilder(source="<tasks.evidence.window>")
    outputs = list(dict.fromkeys([*task.outputs, EOS]))
    b.alphabet(dict.fromkeys([*task.symbols, BOS, separator, *outputs]))
    after = b.let("After", count(tok(separator)) >= 1)
    step = b.let("Step", count(after))
    length = b.let("Len", count(~after))
    marks: dict[int, Expr] = {}
    symbol_at: dict[tuple[int, str], Expr] = {}

    def source_is(source: Source_, token: str, t: int) -> Expr | bool:
        """Whether the t-th answer token, taken from ``source``, is ``token``."""
        kind, value = source
        if kind == "token":
            return value == token
        if token not in task.symbols:
            return False
        index = int(value)  # type: ignore[call-overload]
        if kind == "end":
            return count(tok(token), offsets(1 + t + index)) >= 1
        if index not in marks:
            marks[index] = b.let(f"Pos{index + 1}", count(True) == index + 2)
        if (index, token) not in symbol_at:
            symbol_at[(index, token)] = b.let(f"X{index}_{_slug(token)}", count(marks[index] & tok(token)) >= 1)
        return symbol_at[(index, token)]

    shortest = max(task.min_length - len(task.prefix) + 1, 0)
    every = not found.short and found.from_length <= shortest  # the generic rule answers every input
    rules: list[tuple[Expr | bool, tuple[Source_, ...]]] = [
        (True if every else length >= found.from_length + 1, found.generic)]
    rules += [(length == n + 1, rule) for n, rule in found.short]
    for token in outputs:
        ways: list[Expr | bool] = []
        for guard, rule in rules:
            if token == EOS:
                ways.append(all_of(c for c in (guard, step == len(rule) + 1) if c is not True))
                continue
            for t, source in enumerate(rule):
                holds = source_is(source, token, t)
                if holds is not False:
                    ways.append(all_of(c for c in (guard, step == t + 1, holds) if c is not True))
        b.next(token, after & any_of(ways))
    return b.build()


def _slug(token: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in token)


def construct(evidence: Evidence) -> "programs.Checked | str":
    """The program built from the window, verified (it joins :attr:`Evidence.found`), or why there is none."""
    found = window(evidence.task, evidence.seed)
    if found is None:
        return "the answer is not a bounded window of the input"
    checked = programs.check_candidate(evidence, programs.Origin.WINDOW, build(evidence.task, found))
    evidence.found.append(checked)
    return checked


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    if task.format is not Format.SEQ2SEQ:
        return silent(NAME, "the format is not seq2seq")
    built = evidence.get(construct)
    if isinstance(built, str):
        return silent(NAME, built)
    found = programs.finding([built], scheme, NAME, references=(programs.THEOREMS, ARGUMENT))
    if not found.decisive:
        return silent(NAME, f"no program from the window for this scheme: {found.summary}")
    return found


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.GENERALIZES}), cheap, assess)

__all__ = ["SOURCE", "NAME", "Window", "window", "build", "construct"]
