"""Evidence from a program found by synthesis (:func:`tasks.synthesis.synthesize`), verified like
any other (Huang et al.'s Theorems 7 and 9).

A search, so it runs only for a scheme still open after the cheaper sources, within what is left
of the prediction's time budget (``budget.seconds``): APE first (its search space holds every
plain program, and a plain program settles NoPE too), taking half of what is left when NoPE is
still open as well, then NoPE with the rest; where a verified program is in hand already, or the
task's automaton rules plain C-RASP out, only :data:`STRENGTHEN_SECONDS`. Tasks of more than :data:`MAX_SYMBOLS`
symbols are not searched.
"""

from __future__ import annotations

import time

from crasp.errors import CraspError, ReferenceFailure

from ..findings import Finding, Reason, Verdict, open_question, scheme_named, silent
from ..types import Format
from . import programs, regular
from .context import Evidence
from .guard import ReferenceTimeout
from .source import Source, search

NAME = "synthesis"
MIN_SECONDS = 0.5
"""A search given less time than this is not started."""
STRENGTHEN_SECONDS = 1.5
"""Where a verified program for the scheme is in hand already (one whose checks left something
unexercised, or the scheme would be settled), the search only looks for a stronger one, for at
most this long; and as long where the task's automaton (learned: the failure it gives is
extrapolated) puts a language outside plain C-RASP, a search for a plain program that would
contradict it."""
MEMORY = 1 << 28
"""The bytes of stored classes a prediction's search may keep (its seconds rarely fill them)."""
MAX_SYMBOLS = 8
"""The largest alphabet searched: the enumeration's atoms grow with the alphabet and the outputs
(a next-token expression per output token), and beyond eight symbols the budget's seconds do not
reach past the smallest sizes (modular counting stops at the same size)."""


def _search(evidence: Evidence, scheme: str, seconds: float) -> "programs.Checked | str":
    from tasks.synthesis import SynthesisConfig, synthesize

    evidence.say(f"synthesizing a {scheme_named(scheme).program_kind} program (up to {seconds:.1f} s)")
    started = time.perf_counter()
    try:
        origin = programs.Origin.SYNTHESIZED
        result = synthesize(evidence.task, SynthesisConfig(positions=scheme, time_limit=seconds, seed=evidence.seed,
                                                           max_memory=MEMORY),
                            progress=(lambda line: evidence.say(f"  {line}")) if evidence.progress else None,
                            final=lambda checked: programs.verify_under(evidence, checked, origin.value))
    except (ReferenceFailure, ReferenceTimeout):
        raise
    except CraspError as error:
        return f"synthesis stopped: {error}"
    finally:
        evidence.clock.charge(started)
    if result.program is None:
        return f"synthesis found no program ({result.searched})"
    # checked and verified in the search by the evidence's own verification (``final``): not again here
    return programs.Checked(origin.value, result.program, result.checked, result.report, kind=origin)


def synthesized(evidence: Evidence, scheme: str, seconds: float) -> "programs.Checked | str":
    """The program synthesis finds for ``scheme`` in ``seconds`` (kept per scheme), or why none."""
    if scheme not in evidence.synthesized:
        found = evidence.synthesized[scheme] = _search(evidence, scheme, seconds)
        if not isinstance(found, str):
            evidence.found.append(found)
    return evidence.synthesized[scheme]


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    if not scheme_named(scheme).has_programs:
        return silent(NAME, "Theorems 7 and 9 are about APE and NoPE transformers")
    if task.format is Format.ALIGNED or task.fixed_width is not None:
        return silent(NAME, "no program search for a parallel encoder or a fixed width")
    if not evidence.synthesis:
        return silent(NAME, "synthesis is off (--no-synthesis)")
    if len(task.symbols) > MAX_SYMBOLS:
        return silent(NAME, f"synthesis searches tasks of at most {MAX_SYMBOLS} symbols; this one has "
                            f"{len(task.symbols)}")
    if scheme_named(scheme).plain_only:  # a plain program an earlier search found serves this one
        earlier = [c for c in evidence.synthesized.values() if not isinstance(c, str) and c.ok and c.plain]
        if earlier:
            return programs.finding(earlier, scheme, NAME)
    # The positional search first takes half, where a plain search is still to come.
    plain_to_come = any(scheme_named(s).plain_only for s in evidence.open if s != scheme)
    share = 0.5 if not scheme_named(scheme).plain_only and plain_to_come else 1.0
    seconds = evidence.clock.left * share
    plain = scheme_named(scheme).plain_only
    if programs.verified(evidence, plain=plain) or (plain and regular.decided_outside(evidence)):
        seconds = min(seconds, STRENGTHEN_SECONDS)
    if seconds < MIN_SECONDS:
        why = ("the searches are off (seconds=0)" if evidence.budget.seconds <= 0 else
               f"the {evidence.budget.seconds:g} s of search are spent")
        return open_question(NAME, f"missing: a verified {scheme_named(scheme).program_kind} program; not searched "
                             f"({why})", Reason.NOT_SEARCHED)
    found = synthesized(evidence, scheme, seconds)
    if isinstance(found, str):
        return open_question(NAME, f"missing: a verified {scheme_named(scheme).program_kind} program",
                             Reason.NO_PROGRAM, (found,))
    return programs.finding([found], scheme, NAME)


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.GENERALIZES}), search, assess)

__all__ = ["SOURCE", "NAME", "synthesized"]
