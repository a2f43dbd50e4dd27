"""Evidence from programs: a C-RASP[periodic, local] program that computes the task.

Huang et al. 2025, Theorems 7 and 9: a function computed by a C-RASP[periodic, local] program is
expressed by a Limit Transformer with PERIODIC and LOCAL and identified from short inputs by
their idealized learner, so an APE transformer length-generalizes on it; a plain C-RASP program
(no positional predicates) gives the same for NoPE. A program counts only after it passed
:func:`tasks.verify.verify` with inputs read off the program itself. How strong its finding is
follows one rule, :func:`strength` (stated in :data:`RULE`, and in docs/predict.md in the same
words): ``verified`` only where the inputs reached every constant and exercised every comparison
on both sides, else ``extrapolated``. The headline's wording (:func:`bounds`, :func:`brief`) reads
the same :func:`coverage`, so it can never call a program verified that the rule does not.

Candidates here: the user's programs and the task's library programs. Programs built from an
automaton are :mod:`.regular`'s, programs found by synthesis :mod:`.synthesis`'s; both are
verified by :func:`check_candidate` too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from crasp.ast import Program
from crasp.checker import CheckedProgram, check
from crasp.errors import CraspError, ReferenceFailure
from crasp.theorem12 import message_size

from ..findings import Budget, Finding, Reason, Strength, Verdict, open_question, scheme_named, silent
from ..ranges import ranges
from ..types import Format, Task
from ..verify import Report, verify
from .context import Evidence
from .guard import ReferenceTimeout
from .source import Source, cheap

NAME = "program"
HUANG = "Huang et al. 2025 (arXiv 2410.02140)"
THEOREMS = f"{HUANG}, Theorems 7 and 9"
PLAIN_IN_APE = "plain C-RASP is contained in C-RASP[periodic, local]"


class Origin(enum.Enum):
    """Where a candidate program comes from (its ``text``: how findings name it)."""

    GIVEN = "given program"
    LIBRARY = "library program"
    BUILT = "program built from the automaton"
    POSITIONAL = "program built from the automaton with positions"
    WINDOW = "program built from the bounded window"
    SYNTHESIZED = "synthesized program"


@dataclass(frozen=True)
class Checked:
    """A candidate and its verification (``report`` None when it was rejected before running):
    ``kind`` says where it comes from, ``origin`` names it in findings."""

    origin: str
    program: Program
    checked: CheckedProgram | None
    report: Report | None
    error: str | None = None
    kind: Origin = Origin.GIVEN

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok

    @property
    def plain(self) -> bool:
        return self.checked is not None and self.checked.info.plain

    def passed(self) -> tuple[CheckedProgram, Report]:
        """The checked program and report of a candidate that was verified (both are set when it was)."""
        assert self.checked is not None and self.report is not None
        return self.checked, self.report

    def rejection(self) -> str:
        """Why the candidate does not count, with the shortest counterexample found."""
        if self.error is not None:
            return f"{self.origin} rejected: {self.error}"
        # no error: it was verified, and failed (rejection is asked of candidates that are not ok)
        assert self.report is not None and self.report.counterexample is not None
        bad = self.report.counterexample
        return (f"{self.origin} fails verification; shortest counterexample found "
                f"(length {bad.example.length}): " + bad.describe().replace("\n", "; "))


def _named(origin: str, program: Program) -> str:
    return origin if program.source in ("", "<program>", "<string>") else f"{origin} {program.source}"


def verify_under(evidence: Evidence, checked: CheckedProgram, origin: str, budget: Budget | None = None) -> Report:
    """The verification of a checked candidate named ``origin`` under ``budget`` (default: the
    evidence's), the one every candidate gets."""
    budget = budget or evidence.budget
    evidence.say(f"verifying {origin}")
    return verify(evidence.task, checked, exhaustive_budget=budget.exhaustive, samples=budget.samples,
                  max_length=budget.max_length, derived=budget.derived, random_offsets=1, seed=evidence.seed,
                  max_work=budget.work)


def check_candidate(evidence: Evidence, kind: Origin, program: Program, budget: Budget | None = None,
                    origin: str | None = None) -> Checked:
    """Verify one candidate under ``budget`` (default: the evidence's); ``origin`` names it
    (default: its kind's text)."""
    origin = origin or kind.value
    try:
        checked = check(program)
        report = verify_under(evidence, checked, origin, budget)
    except CraspError as error:  # ill-formed, or its outputs do not fit the task's format
        if isinstance(error, (ReferenceFailure, ReferenceTimeout)):
            raise
        return Checked(origin, program, None, None, str(error), kind)
    return Checked(origin, program, checked, report, kind=kind)


def candidates(evidence: Evidence) -> tuple[Checked, ...]:
    """The user's programs, then the task's library programs (each distinct program once),
    verified (once per evidence: ask ``evidence.get(candidates)``)."""
    found = [(Origin.GIVEN, _named("given program", p), p) for p in evidence.given]
    for variant in ("ape", "nope"):
        program = evidence.task.program(variant)
        if program is not None and all(program != p for _, _, p in found):
            found.append((Origin.LIBRARY, _named(f"library {variant} program", program), program))
    return tuple(check_candidate(evidence, kind, program, origin=origin) for kind, origin, program in found)


class Coverage(enum.Enum):
    """What a passing verification reached, as :func:`strength` reads it (the value: the few words
    the one-line output shows)."""

    COMPLETE = "every constant exercised"
    """The inputs went past twice the largest constant (or to the task's longest input) and took
    every comparison true, false and to its threshold (or the program compares nothing)."""
    CONSTANT_NOT_REACHED = "its largest constant not reached"
    """The program's largest constant outran the inputs."""
    NOT_EXERCISED = "some comparisons not exercised"
    """Some comparison never came out true, or false, or at its threshold."""


RULE = ("a program that passed verification is `verified` only when the inputs went past twice its largest "
        "constant (or to the task's longest input) and took every comparison true, false and to its threshold; "
        "otherwise it is `extrapolated`")
"""The strength rule of a program's verification in words: docs/predict.md states it in these words
(a test checks), and :func:`strength` is its code."""


def coverage(report: Report) -> Coverage:
    """What the verification ``report`` reached (see :class:`Coverage`); the constants first.

    >>> import tasks
    >>> from crasp.parser import parse
    >>> from tasks.verify import verify
    >>> program = parse('''
    ... alphabet {"<bos>", "<eos>"}
    ... ONES = #"1" > #"0"
    ... next "1" = "<sep>" && ONES
    ... next "0" = "<sep>" && !ONES
    ... next "<eos>" = !"<sep>"
    ... ''')
    >>> report = verify(tasks.get("bin_majority"), program, exhaustive_length=6, samples=4, max_length=40)
    >>> coverage(report), strength(report).value
    (<Coverage.COMPLETE: 'every constant exercised'>, 'verified')
    >>> never = parse('''
    ... alphabet {"<bos>", "<eos>"}
    ... ONES = #"1" > #"0"
    ... TWO_STARTS = #"<bos>" >= 2
    ... next "1" = "<sep>" && ONES && !TWO_STARTS
    ... next "0" = "<sep>" && !ONES
    ... next "<eos>" = !"<sep>"
    ... ''')
    >>> report = verify(tasks.get("bin_majority"), never, exhaustive_length=6, samples=4, max_length=40)
    >>> report.ok, coverage(report).value, strength(report).value
    (True, 'some comparisons not exercised', 'extrapolated')
    """
    if not report.reaches_constants:
        return Coverage.CONSTANT_NOT_REACHED
    if report.unexercised:
        return Coverage.NOT_EXERCISED
    return Coverage.COMPLETE


def strength(report: Report) -> Strength:
    """The strength of a "generalizes" resting on a program that passed verification with
    ``report``: the one rule (:data:`RULE`) every source of programs and the layer bounds apply."""
    return Strength.VERIFIED if coverage(report) is Coverage.COMPLETE else Strength.EXTRAPOLATED


def finding(candidates: list[Checked], scheme: str, source: str = "program",
            missing: tuple[str, ...] = (), references: tuple[str, ...] = (THEOREMS,)) -> Finding:
    """The finding of a list of verified candidates for ``scheme`` ("nope": plain ones only):
    "generalizes" on the best that passed, else what is missing (with every rejection and the
    lines in ``missing``)."""
    plain_only = scheme_named(scheme).plain_only
    usable = [c for c in candidates if not plain_only or c.plain or c.checked is None]
    passed = [c for c in usable if c.ok]
    failed = [c.rejection() for c in usable if not c.ok]
    if not passed:
        kind = scheme_named(scheme).program_kind
        return open_question(source, f"missing: a verified {kind} program", Reason.NO_PROGRAM,
                             (*missing, *failed))
    best = min(passed, key=lambda c: (-strength(c.passed()[1]).rank, c.passed()[0].info.depth))
    report = best.passed()[1]
    others = [describe(c) for c in passed if c is not best]
    shown = [] if best.kind in (Origin.GIVEN, Origin.LIBRARY) else [listing(best.program)]
    return Finding(source, Verdict.GENERALIZES, strength(report), bounds(report), Reason.PROGRAM_VERIFIED,
                   (describe(best), *shown, *(f"also: {line}" for line in others), *failed),
                   references, program=best.program, short=f"{BRIEF[best.kind]} {passes(report)} ({brief(report)})")


def assess(evidence: Evidence, scheme: str) -> Finding:
    """A verified given or library program for ``scheme`` ("ape": any; "nope": plain C-RASP only)."""
    task = evidence.task
    if not scheme_named(scheme).has_programs:
        return silent(NAME, "Theorems 7 and 9 are about APE and NoPE transformers")
    if task.format is Format.ALIGNED:
        return silent(NAME, "the model predicts its outputs in parallel with bidirectional attention: Theorems 7 and 9 "
                      "are about causal transformers", Reason.OUTSIDE_THEORY)
    if task.fixed_width is not None:
        return silent(NAME, "every sequence has the same length: the truncation test weighs the program")
    found = evidence.get(candidates)
    if not found:
        return open_question(NAME, f"missing: a verified {scheme_named(scheme).program_kind} program (none given, "
                             "none in the library)", Reason.NO_PROGRAM, _says(task, scheme))
    return finding(list(found), scheme, NAME, _says(task, scheme))


def verified(evidence: Evidence, plain: bool = False) -> list[Checked]:
    """Every program that passed verification so far (plain C-RASP ones only with ``plain``):
    given, library, and those other sources built or found (:attr:`Evidence.found`)."""
    passed = [c for c in evidence.get(candidates) if c.ok]
    passed += [c for c in evidence.found if c.ok and c not in passed]
    return [c for c in passed if c.plain or not plain]


def _says(task: Task, scheme: str) -> tuple[str, ...]:
    reason = task.no_program.get(scheme)
    return (f"the task says: {reason}",) if reason else ()


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.GENERALIZES}), cheap, assess)


def bounds(report: Report) -> str:
    """The headline's account of what a verification checked, worded by :func:`coverage`.

    For example "program checked on all 2,046 inputs to length 10 and 640 inputs to length 2,000,
    every constant exercised"."""
    longer = report.sampled_inputs + report.derived_inputs
    text = (f"program checked on all {report.exhaustive_inputs:,} inputs to length {report.exhaustive_length} and "
            f"{longer:,} inputs to length {report.reach:,}")
    reached = coverage(report)
    if reached is Coverage.CONSTANT_NOT_REACHED:
        return text + f"; its largest constant {report.largest_constant:,} is beyond twice the inputs' length"
    if reached is Coverage.NOT_EXERCISED:
        return text + "; not exercised on both sides: " + "; ".join(e.describe() for e in report.unexercised[:3])
    return text + (", every constant exercised" if report.exercised else ", no constants to exercise")


BRIEF = {Origin.GIVEN: "your program", Origin.LIBRARY: "the library's program",
         Origin.BUILT: "the program built from the automaton",
         Origin.POSITIONAL: "the program built from the automaton with positions",
         Origin.WINDOW: "the program built from the bounded window",
         Origin.SYNTHESIZED: "a synthesized program"}


def brief(report: Report) -> str:
    """What a verification reached, in a few words (:func:`coverage`): "to length 2,000, every
    constant exercised"."""
    return f"to length {report.reach:,}, {coverage(report).value}"


def passes(report: Report) -> str:
    """How the one-line output says a program passed: "verified" where :func:`strength` says so,
    else "passes its checks" (the strength column then says ``extrapolated``)."""
    return "verified" if strength(report) is Strength.VERIFIED else "passes its checks"


def listing(program: Program) -> str:
    """A found program, formatted as ``crasp fmt`` formats it, as one evidence line."""
    from crasp.printer import format_program

    return "the program:\n      " + format_program(program).rstrip("\n").replace("\n", "\n      ")


def describe(candidate: Checked) -> str:
    """What the program is and what the verification covered."""
    checked, report = candidate.passed()
    info = checked.info
    needs = []
    if info.periods:
        needs.append(f"periodic predicates (period {info.period})")
    if info.offsets:
        needs.append(f"local guards (offsets {ranges(info.offsets)})")
    kind = ("a plain C-RASP program, so also NoPE (" + PLAIN_IN_APE + ")" if info.plain else
            "a C-RASP[periodic, local] program using " + " and ".join(needs))
    size = message_size(checked, splits=(1024,))
    return (f"{candidate.origin}: {kind}, {len(checked.definitions)} definitions; checked on "
            f"{report.exhaustive_inputs} inputs exhaustively (length <= {report.exhaustive_length}), "
            f"{report.sampled_inputs} from the task's distribution up to length {report.max_sampled_length} and "
            f"{report.derived_inputs} read off the program up to length {report.reach} (largest constant "
            f"{report.largest_constant}), at offsets {', '.join(map(str, report.offsets))}; "
            f"{report.coverage_text()}; Theorem 12 message {size.formula()} bits")


__all__ = ["SOURCE", "NAME", "Origin", "Checked", "check_candidate", "candidates", "verified", "finding", "bounds",
           "describe", "Coverage", "coverage", "strength", "RULE", "brief", "passes"]
