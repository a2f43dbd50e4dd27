"""Evidence from regular languages: the automaton a task follows, the algebraic decision of plain
C-RASP (Yang et al. 2026, arXiv 2608.13433, Theorem 15; :mod:`tasks.regular`), and the program
built from the decision's certificate.

**Which languages.** A program for a task computes, at the positions the task checks, one
Boolean per output token; on a task of a regular kind each of them is the membership of the word
read so far in a regular language, and the task has a plain C-RASP program exactly when every one
of these languages is in C-RASP (read where the task reads it):

* an accept task: its language, read at the last position (or at the end token ``task.end``
  appended after the input, the end-of-sequence convention of the decision);
* a seq2seq task whose answer is one token: per answer t, the inputs answered t, read at
  ``<sep>`` (a position after the input: the end-of-sequence convention); where answers are
  longer, per first token t the inputs whose answer starts with t, also decided at ``<sep>``: one
  of them outside C-RASP rules the task out, but no program for the whole answer follows;
* a next-character-set task: per token t (each symbol and ``<eos>``), the words after which t is
  legal, read at the last position of every prefix. Its inputs must be every word over its symbols
  (checked up to :data:`DOMAIN_LENGTH`): on fewer inputs a program only has to agree there, which
  the decision does not cover.

**The automaton.** A task that carries its own (``task.automaton``: a regular expression's, the
formal languages' of the suite) is decided exactly; a next-character-set task's automaton is first
checked against its reference on every word up to :data:`DOMAIN_LENGTH`. For any other task one
automaton per language is learned from the reference (L* with the reference as oracle, every word
up to ``budget.learn_length`` checked, fewer over large alphabets), kept only if it is minimal and
complete (checked: the constructions and the decision read its states), *stable* (the same
automaton fits up to two symbols less, one where at most 5 are checked) and agrees with the
reference on random longer words. A learned automaton is an
extrapolation from the words checked, and so is a "does not generalize" built on it.

**The claims** (NoPE; a NoPE "generalizes" is carried to APE by containment, in the combiner):

* "does not generalize" where some language is outside C-RASP, with the obstruction: ``proof`` on
  the task's own automaton, ``extrapolated`` on a learned one;
* "generalizes" where every language is in C-RASP: the program built from the certificate
  (:func:`tasks.regular.program.outputs_program`) is verified against the reference, and the
  finding carries it: ``proof`` on the task's own automaton (the decision is exact and the
  construction follows it; a quick verification guards against a reference that is not its
  automaton), as strong as the verification under the full budget on a learned one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, cast

import numpy as np

from crasp.errors import ReferenceFailure

from ..findings import QUICK, Finding, Reason, Strength, TaskError, Verdict, open_question, silent
from ..types import EOS, Format, Task
from . import programs
from .context import Evidence
from .source import Cost, Source

if TYPE_CHECKING:
    from ..regular.dfa import Dfa

NAME = "regular language"
MAX_SYMBOLS = 12
MAX_WORDS = 40_000
"""The most words the learner checks exhaustively (the length shrinks for larger alphabets)."""
RANDOM_CHECKS = 200
DOMAIN_LENGTH = 8
DOMAIN_WORDS = 1_000
"""A next-character-set task's inputs are checked to be every word, and its automaton to match its
reference, on every word up to :data:`DOMAIN_LENGTH` symbols (at most :data:`DOMAIN_WORDS` words)."""


_QUICK_CHECK = QUICK
"""The verification of a program built from the task's own automaton (see :func:`construct`)."""


class _Outside(Exception):
    """A word the task's domain excludes, beyond its shortest inputs: no language to learn."""


@dataclass(frozen=True)
class Automata:
    """The task's languages, one per output token: ``languages`` holds (answer, automata) pairs,
    the answer being True (accept), the answer tokens (one-token seq2seq) or the token (next-set),
    and the automata one per reading of the words shorter than the task's inputs (one where there
    are none); ``how`` says how they were obtained, ``exact`` whether they are the task's own, and
    ``last_position`` whether the languages are read at the last symbol (else after the input);
    ``stable`` whether a learned automaton was found at a shorter length already (a program built
    from an unstable one is evidence once verified; a "does not generalize" needs stability);
    ``first_only`` whether the languages are those of the answer's first token only (an answer
    longer than one token: a program for the task decides them at ``<sep>``, so one outside
    C-RASP rules the task out, but no program for the whole answer is built from them)."""

    languages: tuple[tuple[object, tuple[Dfa, ...]], ...]  # (answer, Dfas)
    how: str
    exact: bool
    last_position: bool
    stable: bool = True
    first_only: bool = False
    counterexamples: tuple[tuple[str, ...], ...] = ()
    """Inputs on which a program built from earlier learned automata disagreed with the reference,
    learned from as well (:func:`relearned`)."""


# ---------------------------------------------------------------- the task's own automaton


def _shortest(task: Task) -> int:
    return task.min_length - len(task.prefix) + 1


def _domain_words(task: Task):
    from ..regular.dfa import words

    return itertools.islice(words(task.symbols, DOMAIN_LENGTH), DOMAIN_WORDS)


def every_word_is_an_input(task: Task) -> bool:
    """Whether the task's domain test accepts every word up to :data:`DOMAIN_LENGTH` symbols (the
    words shorter than its inputs aside); a domain test that raises on a word excludes it."""
    shortest = _shortest(task)
    try:
        return all(task.valid(w) for w in _domain_words(task) if len(w) >= shortest)
    except ReferenceFailure:
        return False


def next_set_languages(task: Task, dfa: Dfa) -> tuple[tuple[str, tuple[Dfa, ...]], ...]:
    """Per token (each symbol, then ``<eos>``) the language of the words after which it is legal,
    from the automaton of the task's language: a symbol is legal where it leads to a state from
    which an accepting one can be reached, ``<eos>`` where the word is in the language."""
    live = dfa.live()
    out = [(symbol, (dfa.with_accepting(q for q, row in enumerate(dfa.table) if row[k] in live),))
           for k, symbol in enumerate(dfa.symbols)]
    return (*out, (EOS, (dfa,)))


def _own(task: Task) -> Automata | str:
    dfa = cast("Dfa", task.automaton)  # automata() asks this of a task with its automaton
    if not every_word_is_an_input(task):
        return ("the task's inputs are not every word over its symbols (e.g. only prefixes of its language's words): "
                "a program must agree on those only, which the decision does not cover")
    if task.format is Format.ACCEPT:
        return Automata(((True, (dfa,)),), "the task's own automaton", True, task.end is None)
    languages = next_set_languages(task, dfa)
    for word in _domain_words(task):
        want = {token for token, (language,) in languages if language.accepts(word)}
        have = set(tuple(task.answer(word))[-1])
        if want != have:
            return (f"the task's automaton does not match its reference on {' '.join(word)!r} (legal next: "
                    f"{sorted(have)} by the reference, {sorted(want)} by the automaton)")
    return Automata(languages, f"the task's own automaton (checked against the reference on every word up to "
                    f"length {DOMAIN_LENGTH})", True, True)


# ---------------------------------------------------------------- learned


def _length(task: Task, learn_length: int) -> int:
    return max(2, min(learn_length, int(math.log(MAX_WORDS) / math.log(max(2, len(task.symbols))))))


def _stable_below(length: int) -> int:
    """The shorter length the learned automaton must already be found at: two symbols less, one
    where the alphabet is large enough that every word up to only 5 or fewer symbols is checked
    (over ten symbols, words of 2 symbols tell too little)."""
    return length - 2 if length >= 6 else length - 1


def _answers(task: Task, rng: np.random.Generator) -> tuple[list, bool]:
    """The answers of a seq2seq task, and whether only their first token is read (where some
    answer is not one token long: the token predicted at ``<sep>``, ``()`` for an empty answer)."""
    seen = set()
    for length in (1, 2, 3, 5, 8, 13, 21):
        if length < _shortest(task):
            continue
        for _ in range(8):
            seen.add(tuple(task.answer(tuple(task.sample_input(length, rng)))))
    if all(len(answer) == 1 for answer in seen):
        return sorted(seen), False
    return sorted({answer[:1] for answer in seen}), True


def _member(task: Task, answer, fill: bool, first_only: bool = False):
    shortest = _shortest(task)

    def member(word: tuple[str, ...]) -> bool:
        if len(word) < shortest:
            return fill
        try:
            if not task.valid(word):
                raise _Outside(word)
            result = task.answer(word)
        except ReferenceFailure:
            raise _Outside(word) from None
        if task.format is Format.ACCEPT:
            return bool(result)
        if task.format is Format.NEXT_SET:
            return answer in tuple(result)[-1]
        return (tuple(result)[:1] if first_only else tuple(result)) == answer
    return member


def _learn(evidence: Evidence, counterexamples: tuple[tuple[str, ...], ...] = ()) -> Automata | str:
    from ..regular import learn, minimize

    task, budget = evidence.task, evidence.budget
    rng = np.random.default_rng(evidence.seed)
    answers: Sequence[object]
    first_only = False
    if task.format is Format.ACCEPT:
        answers, last = [True], task.end is None  # read at the end token where the task has one
    elif task.format is Format.NEXT_SET:
        answers, last = [*task.symbols, EOS], True
    else:
        answers, first_only = _answers(task, rng)
        last = False
    length = _length(task, budget.learn_length)
    longer = _longer_words(task, length, rng)
    languages, sizes = [], []
    unstable: str | None = None
    for answer in answers:
        extra = [*longer, *counterexamples]
        wrong: tuple[str, ...] = ()
        for _ in range(LEARN_ROUNDS):  # a random word the automaton gets wrong joins the learner's words
            learned = []
            for fill in (False, True) if _shortest(task) > 0 else (False,):
                member = _member(task, answer, fill, first_only)
                try:
                    full = learn(member, task.symbols, length, extra=extra)
                    short = learn(member, task.symbols, _stable_below(length))
                except _Outside as outside:
                    return f"the word {' '.join(outside.args[0])!r} is outside the task's domain"
                except TaskError as error:
                    return f"no small automaton fits the reference: {error}"
                if minimize(full.dfa) != full.dfa or any(len(row) != len(task.symbols) for row in full.dfa.table):
                    return "internal error: the learned automaton is not minimal and complete"
                if full.dfa != short.dfa and unstable is None:
                    unstable = (f"the automaton learned up to length {length} ({full.dfa.n_states} states) differs "
                                f"from the one up to length {_stable_below(length)} ({short.dfa.n_states} states)")
                learned.append(full.dfa)
            mismatch = _random_mismatch(task, learned[0], _member(task, answer, False, first_only),
                                        budget.family_length, rng)
            if mismatch is None:
                break
            wrong = mismatch
            extra.append(wrong)
        else:
            return (f"the learned automaton disagrees with the reference on a word of length {len(wrong)} after "
                    f"{LEARN_ROUNDS} rounds: the task is not that automaton")
        languages.append((answer, tuple(learned)))
        sizes.append(learned[0].n_states)
    same = (f"not stable: {unstable}" if unstable else
            f"the same automaton up to length {_stable_below(length)}")
    corrected = (f", and {len(counterexamples)} input{'s' * (len(counterexamples) != 1)} on which a program built "
                 "from an earlier one disagreed with the reference" if counterexamples else "")
    how = (f"learned from the reference (L*, every word up to length {length} and {len(longer)} random longer ones "
           f"checked{corrected}, {same}, and {RANDOM_CHECKS} random words up to length {budget.family_length}, not "
           "among those learned from, agree)")
    return Automata(tuple(languages), how, False, last, unstable is None, first_only, counterexamples)


REFINE_ROUNDS = 2
"""How many times learned automata are learned again with a counterexample of a program built
from them (:func:`relearned`)."""


def relearned(evidence: Evidence, built: "programs.Checked") -> Automata | None:
    """Where ``built``, a program built from the learned automata (so agreeing with them), failed
    verification: the task's languages learned again with its counterexample's input among the
    learner's words, kept in place of the automata it refutes. None where it passed, where the
    automata are the task's own, where the counterexample holds no new input over the task's
    symbols, or after :data:`REFINE_ROUNDS` such rounds."""
    found = evidence.get(automata)
    report = built.report
    if built.ok or isinstance(found, str) or found.exact or report is None or report.counterexample is None:
        return None
    tokens = report.counterexample.example.tokens[len(evidence.task.prefix):]  # the input, less the framing
    word = tuple(itertools.takewhile(lambda token: token in evidence.task.symbols, tokens))
    if not word or word in found.counterexamples or len(found.counterexamples) >= REFINE_ROUNDS:
        return None
    evidence.say("learning the automaton again, with the input a program built from it got wrong")
    again = _learn(evidence, (*found.counterexamples, word))
    if isinstance(again, str):
        return None
    evidence.keep(automata, again)
    return again


LONGER_WORDS = 120
"""Random words, up to :data:`LONGER_LENGTH` symbols more than the exhaustive length, that the
learned automaton must also agree on (they reach the states an exhaustive check over a large
alphabet does not)."""
LONGER_LENGTH = 60
LEARN_ROUNDS = 4
"""Rounds of learning: after each, fresh random words are checked, and one the automaton gets
wrong joins the learner's words (the last round's check is of words it never saw)."""


def _longer_words(task: Task, length: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    """Random inputs of the task (from its sampler, and uniform ones it accepts) longer than the
    exhaustive check's words, by up to :data:`LONGER_LENGTH` symbols."""
    low = max(_shortest(task), length + 1)
    words = []
    for k in range(LONGER_WORDS):
        n = int(rng.integers(low, low + LONGER_LENGTH + 1))
        try:
            word = tuple(task.sample_input(n, rng)) if k % 2 else tuple(rng.choice(task.symbols, size=n))
            if task.valid(word):
                words.append(word)
        except ReferenceFailure:
            continue
    return words


def _random_mismatch(task: Task, dfa, member, longest: int, rng: np.random.Generator) -> tuple[str, ...] | None:
    """A word among :data:`RANDOM_CHECKS` fresh random inputs (uniform, and from the task's
    sampler) on which ``dfa`` and ``member`` differ, or None."""
    low = max(_shortest(task), 1)
    for _ in range(RANDOM_CHECKS):
        n = int(rng.integers(low, low + longest))
        try:
            word = tuple(rng.choice(task.symbols, size=n)) if rng.random() < 0.5 else tuple(task.sample_input(n, rng))
            if not task.valid(word):
                continue
            if dfa.accepts(word) != member(word):
                return word
        except (_Outside, ReferenceFailure):
            continue
    return None


def automata(evidence: Evidence) -> Automata | str:
    """The task's languages (see the module docstring), or why there are none to decide."""
    task = evidence.task
    if task.fixed_width is not None or task.format is Format.ALIGNED:
        return "the format is neither accept, one-token seq2seq nor next-character-set"
    if task.automaton is not None and task.format in (Format.ACCEPT, Format.NEXT_SET):
        return _own(task)
    if not 1 <= len(task.symbols) <= MAX_SYMBOLS:
        return f"more than {MAX_SYMBOLS} symbols"
    if task.format is Format.NEXT_SET and not every_word_is_an_input(task):
        return ("the task's inputs are not every word over its symbols (e.g. only prefixes of its language's words): "
                "a program must agree on those only, which the decision does not cover")
    evidence.say("learning the automaton of the reference")
    return _learn(evidence)


def language_of(evidence: Evidence, learn: bool = True):
    """(dfas, exact): the language of an accept task (the words it accepts) or of a
    next-character-set task with an automaton (the words at which ``<eos>`` is legal); ``exact``
    when the task carries the automaton, False when it was learned. ``dfas`` has one automaton, or
    where the empty word is not an input, one per reading of it (the first rejecting it). A task
    without inputs of one symbol or more leaves too many words unread: a string says so, as it says
    why there is no automaton. With ``learn=False`` an automaton not learned yet is not learned."""
    task = evidence.task
    if task.automaton is not None and task.format in (Format.ACCEPT, Format.NEXT_SET):
        return (task.automaton,), True
    if task.format is not Format.ACCEPT:
        return "the task is neither an accept task nor a next-character-set task with an automaton"
    if _shortest(task) > 1:
        return f"the task has no inputs shorter than {_shortest(task)} symbols, so its language is open on those words"
    if not learn and not evidence.has(automata):
        return "no automaton was learned (the verdicts were settled without one)"
    found = evidence.get(automata)
    if isinstance(found, str):
        return f"no automaton of the task: {found}"
    if not found.stable:
        return f"no stable automaton of the task ({found.how})"
    (_, dfas), = found.languages
    return tuple(dfas), False


def inputs_include(task: Task, words) -> bool:
    """Whether every word of ``words`` is an input of ``task`` (its ``valid``); a ``valid`` that
    fails on a word excludes it."""
    try:
        return all(task.valid(tuple(w)) for w in words)
    except ReferenceFailure:
        return False


# ---------------------------------------------------------------- decision and construction


def _decide(found: Automata):
    """Per language (answer, dfa, decision), all readings of the short words agreeing; None if
    the readings disagree."""
    from ..regular import decide_nope, decide_nope_last_position

    decide = decide_nope_last_position if found.last_position else decide_nope
    out = []
    for answer, dfas in found.languages:
        decisions = [decide(d) for d in dfas]
        if len({d.member for d in decisions}) > 1:
            return None
        out.append((answer, dfas[0], decisions[0]))
    return out


def buildable(dfas: Sequence[Dfa]) -> Dfa | None:
    """A reading of the short words whose language the construction covers (EOS-definable)."""
    from ..regular import decide_nope

    return next((d for d in dfas if decide_nope(d).member), None)


def _build(task: Task, found: Automata):
    from ..regular import blocks, program_for
    from ..regular.program import outputs_program

    chosen = {answer: dfa for answer, dfas in found.languages if (dfa := buildable(dfas)) is not None}
    if len(chosen) < len(found.languages):
        return None
    if task.format is Format.ACCEPT:
        dfa = chosen[True]
        alternation = blocks.recognizes(dfa) if len(dfa.symbols) == 2 else None
        if alternation is not None and alternation[0] >= 2:
            k, x, y = alternation
            return blocks.recognizer(k, x, y, end=task.end)
        return program_for(dfa, end=task.end)
    if task.format is Format.NEXT_SET:
        return outputs_program(cast("dict[str, Dfa]", chosen),  # the answers of a next-set task are tokens
                               tokens=tuple(t for t in task.alphabet if t not in chosen))
    if task.separator is None:
        return None  # a one-token answer without a separator: no position reads the whole input
    by_token = {cast("tuple[str, ...]", answer)[0]: dfa for answer, dfa in chosen.items()}
    return outputs_program(by_token, read_at=task.separator,
                           tokens=tuple(t for t in task.alphabet if t not in by_token))


def construct(evidence: Evidence) -> "programs.Checked | None":
    """The program built from the task's automaton where every language is in C-RASP, verified
    (None where there is no automaton or no program is built); it joins :attr:`Evidence.found`."""
    found = evidence.get(automata)
    if isinstance(found, str) or found.first_only:
        return None
    program = _build(evidence.task, found)
    if program is None:
        return None
    # On the task's own automaton the decision is the proof and the construction follows it (the
    # tests check the construction against the automaton on every word): a quick verification
    # guards against a reference that is not its automaton. A learned automaton's program is the
    # evidence itself, and is verified under the full budget.
    budget = _QUICK_CHECK if found.exact else None
    built = programs.check_candidate(evidence, programs.Origin.BUILT, program, budget)
    if relearned(evidence, built) is not None:
        return construct(evidence)  # from the automata learned again (assess then decides on them)
    evidence.found.append(built)
    return built


def decided_outside(evidence: Evidence) -> bool:
    """Whether the task's automaton, already at hand (its own, or learned and stable), puts one of
    its languages outside C-RASP: the "does not generalize" of :func:`assess` for NoPE."""
    if not evidence.has(automata):
        return False
    found = evidence.get(automata)
    if isinstance(found, str) or not found.stable:
        return False
    decided = _decide(found)
    return decided is not None and any(not d.member for _, _, d in decided)


def _references(decided) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r for _, _, d in decided for r in d.references))


def which(task: Task, answer, first_only: bool = False) -> str:
    """The language of ``answer`` in words ("the words after which 'a' is legal")."""
    if task.format is Format.ACCEPT:
        return "the language"
    if task.format is Format.NEXT_SET:
        return f"the words after which {answer!r} is legal"
    if first_only:
        return f"the inputs whose answer starts with {str(answer[0])!r}" if answer else "the inputs answered with nothing"
    return f"the inputs answered {' '.join(answer)!r}"


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    found = evidence.get(automata)
    if isinstance(found, str):
        return silent(NAME, f"no automaton to decide: {found}")
    decided = _decide(found)
    if decided is None:
        return open_question(NAME, "the decision depends on how words shorter than the task's inputs are read",
                             details=(found.how,))
    strength = Strength.PROOF if found.exact else Strength.EXTRAPOLATED
    convention = ("acceptance at the last position" if found.last_position else
                  "the answer read after the input (the end-of-sequence convention)")
    outside = [(answer, dfa, d) for answer, dfa, d in decided if not d.member]
    if found.first_only and not outside:
        return silent(NAME, "the languages of the answer's first token are in C-RASP; the rest of the answer is not "
                      "decided here")
    if outside and not found.stable:
        answer, dfa, decision = outside[0]
        return open_question(NAME, f"{which(task, answer, found.first_only)} ({dfa.n_states}-state automaton, "
                             f"{found.how}) is not in "
                             f"C-RASP ({decision.criterion}), but the automaton is not stable, so no failure is "
                             "claimed", details=(f"convention: {convention}",), references=decision.references)
    if outside:
        answer, dfa, decision = outside[0]
        reduction = (" (by reduction: a last-position program for L, reading the end-of-sequence position as that "
                     "symbol, would define the quotient)" if "quotient" in decision.criterion else "")
        return Finding(NAME, Verdict.FAILS, strength,
                       f"{which(task, answer, found.first_only)} ({dfa.n_states}-state automaton, {found.how}) is not in C-RASP: "
                       f"{decision.criterion}{reduction}", Reason.LANGUAGE_OUTSIDE,
                       (f"obstruction: {decision.obstruction}", f"convention: {convention}"), decision.references,
                       short=f"{which(task, answer, found.first_only)} is not in C-RASP ({decision.criterion}; {dfa.n_states}-state "
                             f"automaton, {'the task' + chr(39) + 's own' if found.exact else 'learned'})")
    sizes = ", ".join(f"{dfa.n_states} states" for _, dfa, _ in decided)
    criteria = "; ".join(dict.fromkeys(d.criterion for _, _, d in decided))
    if any("unpublished" in d.criterion for _, _, d in decided):
        return open_question(NAME, f"every language ({sizes}; {found.how}) is in C-RASP, one only by a derived, "
                             f"unpublished criterion ({criteria}): no program is built for it",
                             details=(f"convention: {convention}",), references=_references(decided))
    if found.exact and not evidence.build_programs:
        return Finding(NAME, Verdict.GENERALIZES, Strength.PROOF,
                       f"the task's own automaton ({sizes}) is in C-RASP: {criteria}", Reason.LANGUAGE_INSIDE,
                       (f"convention: {convention}", "the program is not built here (a batch decides first): "
                        "`crasp predict` of the task builds and verifies it",
                        *(d.certificate for _, _, d in decided)),
                       (programs.THEOREMS, *_references(decided)),
                       short=f"the task's own automaton is in C-RASP ({criteria})")
    built = evidence.get(construct)
    if evidence.get(automata) is not found:  # learned again from the built program's counterexample
        return assess(evidence, scheme)
    if built is None:
        return open_question(NAME, f"every language ({sizes}; {found.how}) is in C-RASP ({criteria}), but no program "
                             "is built for it", details=(f"convention: {convention}",),
                             references=_references(decided))
    if not built.ok:
        return open_question(NAME, f"every language ({sizes}; {found.how}) is in C-RASP ({criteria}), but the program "
                             "built from it fails verification: the automaton does not describe the reference",
                             details=(built.rejection(), f"convention: {convention}"),
                             references=_references(decided))
    verified = programs.finding([built], scheme, NAME, references=(programs.THEOREMS, *_references(decided)))
    if not found.exact:
        return verified
    return Finding(NAME, Verdict.GENERALIZES, Strength.PROOF,
                   f"the task's own automaton ({sizes}) is in C-RASP: {criteria}; the program built from it passes "
                   f"verification", Reason.LANGUAGE_INSIDE,
                   (f"convention: {convention}", *verified.details, *(d.certificate for _, _, d in decided)),
                   verified.references, program=built.program,
                   short=f"the task's own automaton is in C-RASP ({criteria}); its program is verified")


def _cost(task: Task) -> Cost:
    own = task.automaton is not None and task.format in (Format.ACCEPT, Format.NEXT_SET)
    return Cost.CHEAP if own else Cost.LEARNING


SOURCE = Source(NAME, frozenset({"nope"}), frozenset({Verdict.GENERALIZES, Verdict.FAILS}), _cost, assess)

__all__ = ["SOURCE", "NAME", "automata", "construct", "language_of", "inputs_include", "every_word_is_an_input", "which",
           "buildable",
           "next_set_languages", "Automata"]
