"""Evidence from regular languages: the automaton a task follows, and the algebraic decision of
plain C-RASP (Yang et al. 2026, arXiv 2608.13433, Theorem 15; :mod:`tasks.regular`).

Which tasks: accept tasks (the answer read at the last position of ``<bos> x``) and seq2seq tasks
whose answer is one token (read at ``<sep>``, a position after the input, as the end-of-sequence
convention of the decision reads it), over at most :data:`MAX_SYMBOLS` symbols.

The automaton: a task that carries its own (``task.automaton``, e.g. a regular expression's) is
decided exactly; for any other, one is learned from the reference (L* with the reference as
oracle, every word up to ``budget.learn_length`` checked), and kept only if it is *stable* (the
same automaton fits up to two symbols less) and agrees with the reference on random longer words.
A learned automaton is an extrapolation from the words checked, and so is every finding built on it.

The claims, for NoPE (and, a NoPE "generalizes", for APE by containment, in the combiner):

* "does not generalize" where the decision says the language is outside C-RASP (for accept tasks:
  some right quotient is, see :func:`tasks.regular.decide_nope_last_position`), with the
  obstruction; ``proof`` on the task's own automaton, ``extrapolated`` on a learned one;
* "generalizes" through a *program*: where the language is in C-RASP, :func:`tasks.regular.program_for`
  builds a plain C-RASP program, and it goes to the program source, whose verification against the
  reference decides (this source then reports the decision only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from crasp.ast import Program

from ..findings import Budget, Finding, Strength, TaskError, Verdict, scheme_named, silent
from ..types import Format, Task
from .context import Context

SOURCE = "regular language"
MAX_SYMBOLS = 6
MAX_WORDS = 40_000
"""The most words the learner checks exhaustively (the length shrinks for larger alphabets)."""
RANDOM_CHECKS = 200


class _Outside(Exception):
    """A word the task's domain excludes, beyond its shortest inputs: no language to learn."""


@dataclass(frozen=True)
class Automata:
    """The task's languages: one per answer (accept tasks: the accepted words), how they were
    obtained (``how``), whether exactly (the task's own automaton), and the convention."""

    languages: tuple[tuple[object, object], ...]  # (answer, Dfa)
    how: str
    exact: bool
    last_position: bool


def _key(task: Task, word: tuple[str, ...]):
    answer = task.answer(word)
    return bool(answer) if task.format is Format.ACCEPT else tuple(answer)


def _length(task: Task, budget: Budget) -> int:
    return max(2, min(budget.learn_length, int(math.log(MAX_WORDS) / math.log(max(2, len(task.symbols))))))


def _answers(task: Task, rng: np.random.Generator) -> set | None:
    """The answers of a one-token seq2seq task (None if some answer is longer)."""
    seen = set()
    for length in (1, 2, 3, 5, 8, 13, 21):
        if length < task.min_length - len(task.prefix) + 1:
            continue
        for _ in range(8):
            answer = tuple(task.answer(tuple(task.sample_input(length, rng))))
            if len(answer) != 1:
                return None
            seen.add(answer)
    return seen


def _learn_all(task: Task, budget: Budget, seed: int) -> Automata | str:
    from ..regular import learn

    rng = np.random.default_rng(seed)
    if task.format is Format.ACCEPT:
        answers, last = [True], True
    else:
        found = _answers(task, rng)
        if found is None:
            return "the answer is longer than one token"
        answers, last = sorted(found), False
    length = _length(task, budget)
    shortest = task.min_length - len(task.prefix) + 1
    languages, notes = [], []
    for answer in answers:
        fills = (False, True) if shortest > 0 else (False,)
        learned = []
        for fill in fills:
            def member(word, answer=answer, fill=fill):
                if len(word) < shortest:
                    return fill
                if not task.valid(word):
                    raise _Outside(word)
                return _key(task, word) == answer
            try:
                full = learn(member, task.symbols, length)
                short = learn(member, task.symbols, length - 2)
            except _Outside as outside:
                return f"the word {' '.join(outside.args[0])!r} is outside the task's domain"
            except TaskError as error:
                return f"no small automaton fits the reference: {error}"
            if full.dfa != short.dfa:
                return (f"the automaton learned up to length {length} ({full.dfa.n_states} states) differs from the "
                        f"one up to length {length - 2} ({short.dfa.n_states} states): the reference does not look "
                        "finite-state at these lengths")
            learned.append(full.dfa)
        mismatch = _random_mismatch(task, learned[0], answer, shortest, budget, rng)
        if mismatch:
            return mismatch
        languages.append((answer, tuple(learned)))
        notes.append(f"{learned[0].n_states} states")
    how = (f"learned from the reference (L*, every word up to length {length} checked, the same automaton up to "
           f"length {length - 2}, and {RANDOM_CHECKS} random words up to length {budget.family_length} agree)")
    return Automata(tuple(languages), how, False, last)


def _random_mismatch(task, dfa, answer, shortest, budget, rng) -> str | None:
    for _ in range(RANDOM_CHECKS):
        n = int(rng.integers(max(shortest, 1), max(shortest, 1) + budget.family_length))
        word = tuple(rng.choice(task.symbols, size=n)) if rng.random() < 0.5 else tuple(task.sample_input(n, rng))
        if not task.valid(word):
            continue
        if dfa.accepts(word) != (_key(task, word) == answer):
            return (f"the learned automaton disagrees with the reference on a word of length {len(word)}: the task is "
                    "not that automaton")
    return None


def automata(task: Task, budget: Budget, context: Context) -> Automata | str:
    """The task's languages (or why there are none to decide), once per prediction."""
    def compute():
        if task.format not in (Format.ACCEPT, Format.SEQ2SEQ) or task.fixed_width is not None:
            return "the format is neither accept nor a one-token answer"
        if task.automaton is not None and task.format is Format.ACCEPT:
            return Automata(((True, (task.automaton,)),), "the task's own automaton", True, task.end is None)
        if not 1 <= len(task.symbols) <= MAX_SYMBOLS:
            return f"more than {MAX_SYMBOLS} symbols"
        context.say("learning the automaton of the reference")
        try:
            return _learn_all(task, budget, context.seed)
        except Exception as error:  # noqa: BLE001 - a reference outside its sampler's inputs
            return f"the reference cannot be queried on every word ({type(error).__name__}: {error})"
    return context.once(("automata", budget), compute)


def inputs_include(task: Task, words) -> bool:
    """Whether every word of ``words`` is an input of ``task`` (its ``valid``); a ``valid`` that
    fails on a word excludes it."""
    try:
        return all(task.valid(tuple(w)) for w in words)
    except Exception:  # noqa: BLE001 - a user's domain test that fails on a word: not in the domain
        return False


def language_of(task: Task, budget: Budget, context: Context):
    """(dfas, exact): the language of an accept task (the words it accepts) or of a
    next-character-set task with an automaton (the words at which ``<eos>`` is legal); ``exact``
    when the task carries the automaton, False when it was learned. ``dfas`` has one automaton, or
    where the empty word is not an input, one per reading of it (the first rejecting it). A task
    without inputs of one symbol or more leaves too many words unread: a string says so, as it says
    why there is no automaton."""
    if task.automaton is not None and task.format in (Format.ACCEPT, Format.NEXT_SET):
        return (task.automaton,), True
    if task.format is not Format.ACCEPT:
        return "the task is neither an accept task nor a next-character-set task with an automaton"
    shortest = task.min_length - len(task.prefix) + 1
    if shortest > 1:
        return f"the task has no inputs shorter than {shortest} symbols, so its language is open on those words"
    found = automata(task, budget, context)
    if isinstance(found, str):
        return f"no automaton of the task: {found}"
    (_, dfas), = found.languages
    return tuple(dfas), False


def _decide(found: Automata):
    """Per language the decision (all fills of the shortest words must agree); None if they differ."""
    from ..regular import decide_nope, decide_nope_last_position

    decide = decide_nope_last_position if found.last_position else decide_nope
    out = []
    for answer, dfas in found.languages:
        decisions = [decide(d) for d in dfas]
        if len({d.member for d in decisions}) > 1:
            return None
        out.append((answer, dfas[0], decisions[0]))
    return out


def constructed(task: Task, budget: Budget, context: Context) -> Program | None:
    """A plain C-RASP program built from the task's automaton where the language is in C-RASP
    (accept tasks), for the program source to verify; None otherwise. A language that is the depth
    hierarchy's L_k on the task's two symbols gets the program of depth k
    (:func:`tasks.regular.blocks.recognizer`) instead of the general construction."""
    from ..regular import blocks, decide_nope, program_for

    found = automata(task, budget, context)
    if isinstance(found, str) or task.format is not Format.ACCEPT:
        return None
    (_, dfas), = found.languages
    if not all(decide_nope(d).member for d in dfas):
        return None

    def build():
        alternation = blocks.recognizes(dfas[0]) if len(dfas[0].symbols) == 2 else None
        if alternation is not None and alternation[0] >= 2:
            k, x, y = alternation
            return blocks.recognizer(k, x, y, end=task.end)
        return program_for(dfas[0], end=task.end)
    return context.once(("constructed", budget), build)


def assess(task: Task, scheme: str, budget: Budget, context: Context | None = None) -> Finding:
    context = context or Context()
    if not scheme_named(scheme).plain_only:
        return silent(SOURCE, "the algebraic decision is about plain C-RASP (NoPE)")
    found = automata(task, budget, context)
    if isinstance(found, str):
        return silent(SOURCE, f"no automaton to decide: {found}")
    decided = _decide(found)
    if decided is None:
        return Finding(SOURCE, Verdict.UNDETERMINED, None,
                       "the decision depends on how words shorter than the task's inputs are read", (found.how,))
    strength = Strength.PROOF if found.exact else Strength.EXTRAPOLATED
    outside = [(answer, dfa, d) for answer, dfa, d in decided if not d.member]
    convention = ("acceptance at the last position" if found.last_position else
                  "the answer read after the input (the end-of-sequence convention)")
    if outside:
        answer, dfa, decision = outside[0]
        which = "the language" if task.format is Format.ACCEPT else f"the inputs answered {' '.join(answer)!r}"
        unpublished = "unpublished" in decision.criterion
        reduction = (" (by reduction: a last-position program for L, reading the end-of-sequence position as that "
                     "symbol, would define the quotient)" if "quotient" in decision.criterion else "")
        return Finding(SOURCE, Verdict.FAILS, Strength.EXTRAPOLATED if unpublished else strength,
                       f"{which} ({dfa.n_states}-state automaton, {found.how}) is not in C-RASP: "
                       f"{decision.criterion}{reduction}",
                       (f"obstruction: {decision.obstruction}", f"convention: {convention}"),
                       decision.references)
    sizes = ", ".join(f"{dfa.n_states} states" for _, dfa, _ in decided)
    criteria = "; ".join(dict.fromkeys(d.criterion for _, _, d in decided))
    if not found.last_position and task.format is not Format.ACCEPT:  # one language per answer, no program
        return Finding(SOURCE, Verdict.GENERALIZES, strength,
                       f"the inputs of every answer form a language in C-RASP ({sizes}; {found.how}): {criteria}",
                       (f"convention: {convention}",), tuple(dict.fromkeys(
                           r for _, _, d in decided for r in d.references)))
    if found.exact and task.end is not None:  # the end token: the published decision itself
        return Finding(SOURCE, Verdict.GENERALIZES, Strength.PROOF,
                       f"the task's own automaton ({sizes}) is in C-RASP: {criteria}",
                       (f"convention: {convention}", *(d.certificate for _, _, d in decided)),
                       tuple(dict.fromkeys(r for _, _, d in decided for r in d.references)))
    if found.exact and all(d.criterion.startswith("EOS-definable") for _, _, d in decided):
        return Finding(SOURCE, Verdict.GENERALIZES, Strength.PROOF,
                       f"the task's own automaton ({sizes}) is in C-RASP: {criteria}",
                       (f"convention: {convention}", *(d.certificate for _, _, d in decided)),
                       tuple(dict.fromkeys(r for _, _, d in decided for r in d.references)))
    return Finding(SOURCE, Verdict.UNDETERMINED, None,
                   f"the automaton ({sizes}; {found.how}) is in C-RASP ({criteria}); a program built from it goes to "
                   "verification", (f"convention: {convention}",), tuple(dict.fromkeys(
                       r for _, _, d in decided for r in d.references)))


__all__ = ["assess", "automata", "constructed", "Automata"]
