"""Evidence from regular languages with positions: the C-RASP[periodic, local] program built
where the balanced counts separate the states of the automaton in product with a tracker of the
last few symbols and of the position modulo m (:mod:`tasks.regular.positional`; the argument is
ours, docs/regular.md).

It speaks to APE only, and only where some language of the task is outside plain C-RASP (else
the plain program of :mod:`.regular` settles APE by containment). The languages are those of
:func:`.regular.automata`: the task's own automaton, or one learned from its reference. The
trackers are tried smallest first within :class:`tasks.regular.positional.Limits` and the time
the budget gives the searches; the program built is verified against the task's reference like
any other (:func:`.programs.check_candidate`), so the finding is ``verified`` with those bounds.
Finding no tracker says nothing: an APE "does not generalize" needs an argument this search
cannot give.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..findings import Finding, Reason, Strength, Verdict, open_question, silent
from ..types import Format, Task
from . import programs, regular
from .context import Evidence
from .source import Cost, Source

if TYPE_CHECKING:
    from crasp.ast import Program

    from ..regular.positional import Agreement

NAME = "positional construction"
ARGUMENT = ("the construction of docs/regular.md (ours): the automaton in product with a tracker of the last symbols "
            "and of the position modulo m, its states separated by balanced counts of the relabelled letters")


FIRST_PASS_SYMBOLS = 700
"""A batch's first pass (``crasp predict --regex-file``, where a thousand expressions share half a
minute) checks the program against the task's own automaton on every word up to the length that
keeps to this many symbols in all (length 4 over three symbols, 6 over two, 36 over one), and on 6
random words up to length 64."""


@dataclass(frozen=True)
class Construction:
    """The program built and verified (``checked``), with the tracker of each language: (answer,
    window, modulus, product states); in a batch's first pass, the program and its ``agreement``
    with the task's own automaton instead."""

    checked: programs.Checked | None
    trackers: tuple[tuple[object, int, int, int], ...]
    limits: str
    agreement: Agreement | None = None
    program: Program | None = None


def limits(evidence: Evidence):
    """The search's limits under the evidence's budget: its seconds at most (a quick budget
    searches windows of up to 3 symbols and moduli up to 4; a batch's first pass, which gives
    no seconds to searches, moduli up to 4 and products of up to 300 states within 0.1 s)."""
    from ..regular.positional import Limits

    if not evidence.build_programs:
        return Limits(window=4, modulus=4, states=300, seconds=0.1)
    seconds = max(0.5, evidence.budget.seconds)
    if evidence.budget.seconds <= 2:
        return Limits(window=3, modulus=4, states=400, seconds=seconds)
    return Limits(seconds=seconds)


def construct(evidence: Evidence) -> Construction | str:
    """The program where every language of the task has a separating tracker, verified and
    joined to :attr:`Evidence.found`; otherwise why there is none. Learned automata that the
    program's verification refutes are learned again with its counterexample
    (:func:`.regular.relearned`, at most :data:`.regular.REFINE_ROUNDS` times)."""
    built = _construct(evidence, evidence.get(regular.automata))
    while not isinstance(built, str) and built.checked is not None:
        again = regular.relearned(evidence, built.checked)
        if again is None:
            break
        built = _construct(evidence, again)
    if not isinstance(built, str) and built.checked is not None:
        evidence.found.append(built.checked)
    return built


def _construct(evidence: Evidence, found: regular.Automata | str) -> Construction | str:
    from ..regular.positional import NotFound, agreement, search

    task = evidence.task
    if isinstance(found, str):
        return f"no automaton: {found}"
    if found.first_only:
        return "no automaton: the answer is longer than one token (only its first token's languages are learned)"
    if all(regular.buildable(dfas) is not None for _, dfas in found.languages):
        return "every language is in plain C-RASP: the program built without positions covers APE"
    bounds = limits(evidence)
    evidence.say("searching the trackers of the positional construction")
    chosen, trackers = {}, []
    for answer, dfas in found.languages:
        result = None
        for dfa in dfas:  # a reading of the words shorter than the inputs that the construction covers
            result = search(dfa, bounds)
            if not isinstance(result, NotFound):
                chosen[answer] = (dfa, result.product)
                trackers.append((answer, result.window, result.modulus, result.product.n_states))
                break
        if isinstance(result, NotFound):
            return f"{regular.which(task, answer)}: {result.why}"
    program = _program(task, chosen)
    if program is None:
        return "a one-token answer without a separator: no position reads the whole input"
    if not evidence.build_programs:  # a batch's first pass: checked against the task's own automaton
        (dfa, _), = chosen.values()
        return Construction(None, tuple(trackers), bounds.describe(),
                            agreement(program, dfa, end=task.end, max_symbols=FIRST_PASS_SYMBOLS, sampled=6, longest=64,
                                      seed=evidence.seed), program)
    checked = programs.check_candidate(evidence, programs.Origin.POSITIONAL, program)
    return Construction(checked, tuple(trackers), bounds.describe())


def _program(task: Task, chosen: dict):
    from ..regular import positional

    if task.format is Format.ACCEPT:
        dfa, product = chosen[True]
        return positional.build(dfa, product, end=task.end)
    if task.format is Format.NEXT_SET:
        return positional.outputs_program(dict(chosen), tokens=tuple(t for t in task.alphabet if t not in chosen))
    if task.separator is None:
        return None
    by_token = {answer[0]: pair for answer, pair in chosen.items()}
    return positional.outputs_program(by_token, read_at=task.separator,
                                      tokens=tuple(t for t in task.alphabet if t not in by_token))


def _tracker(answer, window: int, modulus: int, states: int, task: Task) -> str:
    return f"{regular.which(task, answer)}: {_reads(window, (modulus,))} ({states} product states)"


def _reads(window: int, moduli) -> str:
    moduli = sorted(m for m in set(moduli) if m > 1)
    reads = [f"the last {window} token{'s' * (window != 1)}" if window else "",
             f"the position mod {' or '.join(map(str, moduli))}" if moduli else ""]
    return " and ".join(r for r in reads if r) or "no positions"


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    if not evidence.build_programs and (_cost(task) is not Cost.CHEAP or task.format is not Format.ACCEPT):
        return silent(NAME, "not built in a batch's first pass (only for an accept task's own automaton)",
                      Reason.NOT_SEARCHED)
    built = evidence.get(construct)
    if isinstance(built, str):
        return silent(NAME, built) if built.startswith(("no automaton", "every language")) else \
            open_question(NAME, f"missing: a verified C-RASP[periodic, local] program (the positional construction: "
                          f"{built})", Reason.NO_PROGRAM,
                          ("this proves nothing: an APE 'does not generalize' needs a published argument",))
    trackers = "; ".join(_tracker(*t, task) for t in built.trackers)
    reads = _reads(max(t[1] for t in built.trackers), [t[2] for t in built.trackers])
    if built.checked is None:
        return _first_pass(built, trackers, reads)
    verified = programs.finding([built.checked], scheme, NAME, references=(programs.THEOREMS, ARGUMENT))
    if not verified.decisive:
        return replace(verified, summary=f"the positional construction's program fails verification "
                       f"({trackers}): the automaton does not describe the reference")
    report = built.checked.report
    assert report is not None  # the finding is decisive: the program passed verification
    return replace(verified, details=(f"trackers: {trackers}", f"searched: {built.limits}", *verified.details),
                   short=f"built from the automaton, reading {reads}; {programs.passes(report)} "
                         f"({programs.brief(report)})")


def _first_pass(built: Construction, trackers: str, reads: str) -> Finding:
    checked = built.agreement
    assert checked is not None  # a first pass's construction carries its agreement
    if checked.disagreement is not None:
        word, offset = checked.disagreement
        raise AssertionError(f"internal error: the positional construction's program disagrees with the task's own "
                             f"automaton on {' '.join(word)!r} at offset {offset}")
    return Finding(NAME, Verdict.GENERALIZES, Strength.VERIFIED, f"program {checked.describe()}",
                   Reason.PROGRAM_VERIFIED, (f"trackers: {trackers}", f"searched: {built.limits}",
                                             "a batch's first pass: `crasp predict` of the expression shows the "
                                             "program and verifies it under the full budget"),
                   (programs.THEOREMS, ARGUMENT), program=built.program,
                   short=f"built from the automaton, reading {reads}; checked against it (all words to length "
                         f"{checked.exhaustive_length}, random ones to {checked.longest})")


def _cost(task: Task) -> Cost:
    own = task.automaton is not None and task.format in (Format.ACCEPT, Format.NEXT_SET)
    return Cost.CHEAP if own else Cost.LEARNING


SOURCE = Source(NAME, frozenset({"ape"}), frozenset({Verdict.GENERALIZES}), _cost, assess)

__all__ = ["SOURCE", "NAME", "construct", "Construction", "limits"]
