"""Evidence from modular counting: a family of inputs on which the answer counts a symbol modulo k.

PARITY is outside C-RASP[periodic, local] (Huang et al. 2025, the result behind their label of
parity), and so is counting a symbol modulo any k > 1: positional predicates see where a position
is, not how many of the earlier symbols are a's, and the paper's argument for PARITY applies to
every modulus. For plain C-RASP it is also the algebraic fact that C-RASP holds only aperiodic
regular languages (Huang et al. 2025, Lemma 38, as cited by Yang et al. 2026, Example 43).

The family: strings over two symbols a and b of the task (every arrangement, every length, all of
them valid inputs). If on all of it the answer is a function of (#a mod k, length mod m) that
changes with #a mod k for some k > 1, a program for the task would count a's modulo k, so there is
none, for APE and for NoPE. The pattern must be established, not fitted: each of its cells is seen
at several counts, so every answer recurs over several periods (a finite language, or a threshold
such as #a >= 3, never shows such a pattern). The family is checked exhaustively up to ``budget.family`` symbols and
on random strings up to ``budget.family_length``; beyond that the finding assumes the pattern goes
on, and says so (strength ``verified``, with those bounds).

>>> import tasks
>>> found = family(tasks.get("parity"), QUICK_BUDGET)
>>> found.counted, found.modulus
('1', 2)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from crasp.errors import ReferenceFailure

from ..findings import QUICK, Budget, Finding, Reason, Strength, Verdict, scheme_named, silent
from ..types import INVALID, Format, Task
from .context import Evidence
from .source import Source, cheap

NAME = "modular counting"
PARITY = "Huang et al. 2025 (arXiv 2410.02140): PARITY is not in C-RASP[periodic, local]; its argument covers counting modulo any k > 1"
APERIODIC = ("Huang et al. 2025, Lemma 38 (as cited by Yang et al. 2026, arXiv 2608.13433, Example 43): the regular "
             "languages of plain C-RASP are aperiodic")
MAX_MODULUS = 8
MAX_SYMBOLS = 32
"""Tasks of more symbols are not searched (a pair of symbols costs about 130 answers to drop)."""
PREFILTER = 6
"""Every string over a pair up to this length: where the answer depends on the order of the
symbols already, the pair is dropped."""
DIRECTED = 24
"""One string of each count at each length up to this one: a pattern modulo k <= 8 shows at two
counts per cell."""
SUPPORT = 3
"""The different counts at which each cell of a modular pattern must be seen."""
QUICK_BUDGET = QUICK


@dataclass(frozen=True)
class Family:
    """The answer on strings over {counted, filler} is a function of (#counted mod ``modulus``,
    length mod ``length_period``), checked on ``exhaustive`` strings (all, up to
    ``exhaustive_length``) and ``sampled`` random ones up to ``longest``."""

    counted: str
    filler: str
    modulus: int
    length_period: int
    values: int
    exhaustive: int
    exhaustive_length: int
    sampled: int
    longest: int

    def describe(self) -> str:
        length = f" and the length mod {self.length_period}" if self.length_period > 1 else ""
        return (f"on strings over {{{self.counted}, {self.filler}}} the answer is a function of the number of "
                f"{self.counted!r} mod {self.modulus}{length}, with {self.values} different answers: counting modulo "
                f"{self.modulus} (all {self.exhaustive:,} strings up to length {self.exhaustive_length} and "
                f"{self.sampled:,} random ones up to length {self.longest})")


def _key(task: Task, x: tuple[str, ...]):
    answer = task.answer(x)
    if task.format is Format.ACCEPT:
        return bool(answer)
    if task.format is Format.NEXT_SET:
        return tuple(answer)[-1] if len(tuple(answer)) else None
    return tuple(answer)


def _answers(task: Task, strings: list[tuple[str, ...]]) -> dict[tuple[str, ...], object] | None:
    """string -> its answer (its key), for the strings the task reads (those at least its shortest
    input long); None when one of them is outside the domain. The vectorised reference, where the
    task has one, answers the strings of one length at once."""
    shortest = task.min_length - len(task.prefix) + 1
    strings = list(dict.fromkeys(x for x in strings if len(x) >= shortest))
    if not all(task.valid(x) for x in strings):
        return None
    if task.batch_answer is not None and task.format is not Format.ALIGNED:
        try:
            return _answers_batched(task, strings)
        except NotImplementedError:  # strings the vectorised reference does not cover
            pass
    return {x: _key(task, x) for x in strings}


def _answers_batched(task: Task, strings) -> dict[tuple[str, ...], object] | None:
    assert task.batch_answer is not None  # _answers calls this only for tasks with a vectorised reference
    index = {s: k for k, s in enumerate(task.symbols)}
    by_length: dict[int, list] = {}
    for x in strings:
        by_length.setdefault(len(x), []).append(x)
    out: dict[tuple[str, ...], object] = {}
    for length, group in by_length.items():
        ids = np.array([[index[s] for s in x] for x in group], dtype=np.int64).reshape(len(group), length)
        codes = np.asarray(task.batch_answer(ids))
        if (codes == INVALID).all(axis=1).any():
            return None
        answers = codes[:, -1:] if task.format is Format.NEXT_SET else codes
        out.update(zip(group, map(tuple, answers.tolist())))
    return out


def _seen(answers: dict[tuple[str, ...], object], counted: str) -> dict[tuple[int, int], set]:
    """(#counted, length) -> the answers seen."""
    seen: dict[tuple[int, int], set] = {}
    for x, answer in answers.items():
        seen.setdefault((x.count(counted), len(x)), set()).add(answer)
    return seen


def _fits(table: dict[tuple[int, int], object], k: int, m: int, support: int) -> int | None:
    """The number of answers where ``table`` is an established function of (count mod k, length
    mod m) that depends on the count mod k (see :func:`_pattern`), else None."""
    function: dict[tuple[int, int], object] = {}
    witnesses: dict[tuple[int, int], set[int]] = {}
    for (c, n), answer in table.items():
        if function.setdefault((c % k, n % m), answer) != answer:
            return None
        witnesses.setdefault((c % k, n % m), set()).add(c)
    if len(function) < k * m or any(len(w) < support for w in witnesses.values()):
        return None
    if not any(len({function[(r, s)] for r in range(k)}) > 1 for s in range(m)):
        return None
    return len(set(function.values()))


def _pattern(seen: dict[tuple[int, int], set], support: int = SUPPORT) -> tuple[int, int, int] | None:
    """The smallest (k, m) with the answer a function of (count mod k, length mod m) that depends
    on count mod k (k > 1), with the number of answers; None if there is none. The function must be
    *established*: every one of its k x m cells is seen at ``support`` different counts or more (so
    each answer recurs over several periods of k, which no finite language and no threshold does),
    and the counts seen reach ``support`` periods of k."""
    if not seen or any(len(answers) > 1 for answers in seen.values()):
        return None
    table = {key: next(iter(answers)) for key, answers in seen.items()}
    counts = max(c for c, _ in table)
    for k, m in sorted(itertools.product(range(2, MAX_MODULUS + 1), range(1, MAX_MODULUS + 1)),
                       key=lambda pair: (pair[0] * pair[1], pair)):
        if counts >= support * k and (values := _fits(table, k, m, support)) is not None:
            return k, m, values
    return None


def _arranged(pair: tuple[str, str], count: int, length: int, rng: np.random.Generator) -> tuple[str, ...]:
    """A string of ``length`` symbols, ``count`` of them ``pair[0]`` at random places, the rest ``pair[1]``."""
    x = np.full(length, pair[1], dtype=object)
    x[rng.choice(length, size=count, replace=False)] = pair[0]
    return tuple(x)


def _covering(pair: tuple[str, str], k: int, m: int, lengths: tuple[int, int], rng: np.random.Generator,
              per_cell: int = 2 * SUPPORT) -> list[tuple[str, ...]]:
    """For each cell (r, s) of Z_k x Z_m, ``per_cell`` strings of lengths in ``lengths`` (inclusive)
    with length = s and #pair[0] = r, modulo m and k, at counts spread over the possible ones."""
    low, high = lengths
    out = []
    for r, s in itertools.product(range(k), range(m)):
        for _ in range(per_cell):
            n = int(rng.integers(low, high + 1))
            n += (s - n) % m
            if n > high:
                n -= m
            if n < max(low, r):
                continue
            counts = np.arange(r, n + 1, k)
            out.append(_arranged(pair, int(rng.choice(counts)), n, rng))
    return out


def family(task: Task, budget: Budget, seed: int = 0) -> Family | None:
    """The pair of symbols on whose strings the answer counts modulo k > 1, the simplest such
    (no dependence on the length where possible, then the smallest k); None if there is none.

    Per pair of symbols: every string up to :data:`PREFILTER` symbols, where the answer must
    depend on nothing but the counts (else the pair is dropped at once); then one string of each
    count at each length up to :data:`DIRECTED`, where a pattern must show at two counts per cell;
    then every string up to ``budget.family`` symbols, strings covering every cell of the pattern
    and random ones up to ``budget.family_length``, where it must hold at :data:`SUPPORT` counts
    per cell (:func:`_pattern`)."""
    if task.format is Format.ALIGNED or not 2 <= len(task.symbols) <= MAX_SYMBOLS:
        return None
    rng = np.random.default_rng(seed)
    short = min(PREFILTER, budget.family)
    families: list[Family] = []
    for pair in itertools.combinations(task.symbols, 2):
        quick = [x for n in range(short + 1) for x in itertools.product(pair, repeat=n)]
        try:
            answers = _answers(task, quick)
            if answers is None or any(len(a) > 1 for a in _seen(answers, pair[0]).values()):
                continue  # outside the domain, or the order of the symbols matters already
            directed = [_arranged(pair, c, n, rng) for n in range(short + 1, DIRECTED + 1) for c in range(n + 1)]
            more = _answers(task, directed)
        except ReferenceFailure:  # strings of this pair are not all inputs of the task
            continue
        if more is None:
            continue
        answers.update(more)
        seen = [(oriented, found) for oriented in (pair, pair[::-1])
                if (found := _pattern(_seen(answers, oriented[0]), support=2)) is not None]
        if seen:
            families += _established(task, seen, short, answers, budget, rng)
    return min(families, key=lambda f: (f.length_period, f.modulus), default=None)


def _established(task: Task, seen: list, short: int, answers: dict, budget: Budget,
                 rng: np.random.Generator) -> list[Family]:
    """The families of a pair (``seen``: each orientation whose pattern showed on short strings,
    with it) whose pattern holds on longer strings: every string up to ``budget.family``, random
    ones and, per orientation, strings built for every cell of its pattern. The strings common to
    both orientations are answered once."""
    pair = seen[0][0]
    exhaustive = [x for n in range(short + 1, budget.family + 1) for x in itertools.product(pair, repeat=n)]
    longest = max(budget.family + 1, budget.family_length)
    lengths = np.linspace(budget.family + 1, longest, num=40).round()
    sampled = [tuple(rng.choice(pair, size=int(n), p=[q, 1 - q])) for n in lengths for q in (0.2, 0.5, 0.8)]
    quick = sum(1 for x in answers if len(x) <= short)  # the rest of ``answers`` are the directed strings
    try:
        common = _answers(task, exhaustive + sampled)
        if common is None:
            return []
        families = []
        for (counted, filler), (k, m, _) in seen:
            covering = _covering((counted, filler), k, m, (budget.family + 1, longest), rng)
            more = _answers(task, covering)
            found = None if more is None else _pattern(_seen({**answers, **common, **more}, counted))
            if found is not None:
                families.append(Family(counted, filler, *found, quick + len(exhaustive), budget.family,
                                       len(sampled) + len(covering) + len(answers) - quick, int(longest)))
    except ReferenceFailure:
        return []
    return families


def observed(evidence: Evidence) -> Family | None:
    """:func:`family` of the evidence's task (once per evidence: ``evidence.get(observed)``)."""
    return family(evidence.task, evidence.budget, evidence.seed)


def assess(evidence: Evidence, scheme: str) -> Finding:
    found = evidence.get(observed)
    if found is None:
        return silent(NAME, "no pair of symbols on whose strings the answer counts modulo k > 1")
    return Finding(NAME, Verdict.FAILS, Strength.VERIFIED, found.describe(), Reason.MODULAR_COUNTING,
                   ("a program for the task would count a symbol modulo "
                    f"{found.modulus} on these strings, which no C-RASP[periodic, local] program does",),
                   (PARITY, *([APERIODIC] if scheme_named(scheme).plain_only else [])),
                   short=f"on strings over {{{found.counted}, {found.filler}}} the answer counts {found.counted!r} "
                         f"modulo {found.modulus} (checked to length {found.longest})")


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.FAILS}), cheap, assess)

__all__ = ["SOURCE", "NAME", "family", "Family"]
