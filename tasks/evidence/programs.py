"""Evidence from programs: a C-RASP[periodic, local] program that computes the task.

Huang et al. 2025, Theorems 7 and 9: a function computed by a C-RASP[periodic, local] program is
expressed by a Limit Transformer with PERIODIC and LOCAL and identified from short inputs by
their idealized learner, so an APE transformer length-generalizes on it; a plain C-RASP program
(no positional predicates) gives the same for NoPE. A program counts only after it passed
:func:`tasks.verify.verify` with inputs read off the program itself (every comparison taken to
both sides of its threshold, lengths past twice its largest constant): the finding is
``verified`` with those bounds, or ``extrapolated`` where its constants outran the inputs.

Candidates: the user's programs, the task's library programs, and, where none passes, one found
by :mod:`crasp.synthesis` within the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.ast import Program
from crasp.checker import CheckedProgram, check
from crasp.errors import CraspError
from crasp.theorem12 import message_size

from ..findings import Budget, Finding, Strength, Verdict, scheme_named, silent
from ..ranges import ranges
from ..types import Task
from ..verify import Report, verify
from .context import Context

SOURCE = "program"
HUANG = "Huang et al. 2025 (arXiv 2410.02140)"
THEOREMS = f"{HUANG}, Theorems 7 and 9"
PLAIN_IN_APE = "plain C-RASP is contained in C-RASP[periodic, local]"


@dataclass(frozen=True)
class Checked:
    """A candidate and its verification (``report`` None when it was rejected before running)."""

    origin: str
    program: Program
    checked: CheckedProgram | None
    report: Report | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok

    @property
    def plain(self) -> bool:
        return self.checked is not None and self.checked.info.plain

    def rejection(self) -> str:
        """Why the candidate does not count, with the shortest counterexample found."""
        if self.error is not None:
            return f"{self.origin} rejected: {self.error}"
        bad = self.report.counterexample
        return (f"{self.origin} fails verification; shortest counterexample found "
                f"(length {bad.example.length}): " + bad.describe().replace("\n", "; "))


def candidates(task: Task, budget: Budget, context: Context) -> list[tuple[str, Program]]:
    """The user's programs, the task's library programs, then one built from the task's automaton
    (:func:`tasks.evidence.regular.constructed`), each distinct program once."""
    from . import regular

    found: list[tuple[str, Program]] = [(_named("given program", p), p) for p in context.programs]
    for variant in ("ape", "nope"):
        program = task.program(variant)
        if program is not None and all(program != p for _, p in found):
            found.append((_named(f"library {variant} program", program), program))
    if not found:
        built = regular.constructed(task, budget, context)
        if built is not None:
            found.append(("program built from the automaton", built))
    return found


def _named(origin: str, program: Program) -> str:
    return origin if program.source in ("", "<program>", "<string>") else f"{origin} {program.source}"


def check_candidate(task: Task, origin: str, program: Program, budget: Budget, context: Context) -> Checked:
    """Verify one candidate under ``budget`` (once per prediction)."""
    def run() -> Checked:
        context.say(f"verifying {origin}")
        try:
            checked = check(program)
            report = verify(task, checked, exhaustive_budget=budget.exhaustive, samples=budget.samples,
                            max_length=budget.max_length, derived=budget.derived, random_offsets=1,
                            seed=context.seed)
        except CraspError as error:  # ill-formed, or its outputs do not fit the task's format
            return Checked(origin, program, None, None, str(error))
        return Checked(origin, program, checked, report)
    return context.once(("verify", program, budget), run)


def verified(task: Task, budget: Budget, context: Context) -> list[Checked]:
    """Every candidate, verified (the user's and the library's)."""
    return [check_candidate(task, origin, p, budget, context) for origin, p in candidates(task, budget, context)]


def synthesized(task: Task, scheme: str, budget: Budget, context: Context) -> Checked | None:
    """A program found by synthesis for ``scheme``, verified like the others (None if none)."""
    if not context.synthesis or budget.synthesis_seconds <= 0:
        return None

    def search() -> tuple[Checked | None, str]:
        try:
            from crasp.synthesis import SynthesisConfig, synthesize
        except ImportError:  # pragma: no cover - synthesis ships with crasp
            return None, "synthesis is not installed"
        context.say(f"synthesizing a {scheme_named(scheme).program_kind} program "
                    f"(up to {budget.synthesis_seconds:g} s)")
        try:
            result = synthesize(task, SynthesisConfig(positions=scheme, time_limit=budget.synthesis_seconds,
                                                      seed=context.seed),
                                progress=(lambda line: context.say(f"  {line}")) if context.progress else None)
        except CraspError as error:
            return None, f"synthesis stopped: {error}"
        if result.program is None:
            return None, f"synthesis found no program ({result.searched})"
        return check_candidate(task, "synthesized program", result.program, budget, context), ""

    if scheme_named(scheme).plain_only:
        earlier = context.stored(("synthesis", "ape"))
        if earlier is not None and earlier[0] is not None and earlier[0].plain and earlier[0].ok:
            return earlier[0]
    found, why = context.once(("synthesis", scheme), search)
    if found is None and why:
        context.notes[scheme] = why
    return found


def assess(task: Task, scheme: str, budget: Budget, context: Context | None = None) -> Finding:
    """A verified program for ``scheme`` ("ape": any; "nope": plain C-RASP only)."""
    context = context or Context()
    if not scheme_named(scheme).has_programs:
        return silent(SOURCE, "Theorems 7 and 9 are about APE and NoPE transformers")
    if task.fixed_width is not None:
        return silent(SOURCE, "every sequence has the same length: the truncation test weighs the program")
    all_checked = verified(task, budget, context)
    usable = [c for c in all_checked if not scheme_named(scheme).plain_only or c.plain or c.checked is None]
    passed = [c for c in usable if c.ok]
    failed = [c.rejection() for c in usable if not c.ok]
    if not passed:
        found = synthesized(task, scheme, budget, context)
        if found is not None:
            (passed if found.ok else failed).append(found if found.ok else found.rejection())
    if not passed:
        kind = scheme_named(scheme).program_kind
        note = context.notes.get(scheme)
        reason = task.no_program.get(scheme)
        lines = [*([f"the task says: {reason}"] if reason else []), *([note] if note else []), *failed]
        return Finding(SOURCE, Verdict.UNDETERMINED, None, f"missing: a verified {kind} program", tuple(lines))
    best = min(passed, key=lambda c: (not _reaches(c), c.origin.startswith("synthesized")))
    strength = Strength.VERIFIED if _reaches(best) else Strength.EXTRAPOLATED
    others = [describe(c) for c in passed if c is not best]
    shown = [] if best.origin.startswith(("given", "library")) else [listing(best.program)]
    return Finding(SOURCE, Verdict.GENERALIZES, strength, bounds(best.report),
                   (describe(best), *shown, *(f"also: {line}" for line in others), *failed),
                   (THEOREMS,), program=best.program)


def _reaches(candidate: Checked) -> bool:
    return candidate.report.reaches_constants


def bounds(report: Report) -> str:
    """The headline's account of what a verification checked.

    For example "program checked on all 2,046 inputs to length 10 and 640 inputs to length 2,000,
    every constant exercised"."""
    longer = report.sampled_inputs + report.derived_inputs
    text = (f"program checked on all {report.exhaustive_inputs:,} inputs to length {report.exhaustive_length} and "
            f"{longer:,} inputs to length {report.reach:,}")
    if not report.reaches_constants:
        return text + f"; its largest constant {report.largest_constant:,} is beyond twice the inputs' length"
    if report.unexercised:
        return text + "; not exercised on both sides: " + "; ".join(e.describe() for e in report.unexercised[:3])
    return text + (", every constant exercised" if report.exercised else ", no constants to exercise")


def listing(program: Program) -> str:
    """A found program, formatted as ``crasp fmt`` formats it, as one evidence line."""
    from crasp.printer import format_program

    return "the program:\n      " + format_program(program).rstrip("\n").replace("\n", "\n      ")


def describe(candidate: Checked) -> str:
    """What the program is and what the verification covered."""
    info, report = candidate.checked.info, candidate.report
    needs = []
    if info.periods:
        needs.append(f"periodic predicates (period {info.period})")
    if info.offsets:
        needs.append(f"local guards (offsets {ranges(info.offsets)})")
    kind = ("a plain C-RASP program, so also NoPE (" + PLAIN_IN_APE + ")" if info.plain else
            "a C-RASP[periodic, local] program using " + " and ".join(needs))
    size = message_size(candidate.checked, splits=(1024,))
    return (f"{candidate.origin}: {kind}, {len(candidate.checked.definitions)} definitions; verified on "
            f"{report.exhaustive_inputs} inputs exhaustively (length <= {report.exhaustive_length}), "
            f"{report.sampled_inputs} from the task's distribution up to length {report.max_sampled_length} and "
            f"{report.derived_inputs} read off the program up to length {report.reach} (largest constant "
            f"{report.largest_constant}), at offsets {', '.join(map(str, report.offsets))}; "
            f"{report.coverage_text()}; Theorem 12 message {size.formula()} bits")


__all__ = ["assess", "Checked", "candidates", "check_candidate", "verified", "bounds", "describe"]
