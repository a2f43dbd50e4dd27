"""Evidence from communication complexity (Huang et al. 2025, Theorem 12).

Every C-RASP[periodic, local] program, and every Limit Transformer with PERIODIC and LOCAL, needs
only O(log N) bits of one-way communication between the two halves of its input. R(N), the
number of distinct rows of the task's communication matrix, growing faster than every polynomial
*for all N* puts the task outside the class, for APE and so for NoPE. What can be computed is R(N)
for the N that can be enumerated, and lower bounds for larger N from samples: an exponential
trend there is ``extrapolated`` (a copy of the first 8 symbols grows like 2^N up to N = 8, then
stops), and the finding says so. The trend must also hold on the sampled larger N: where sampled
Alice strings start sharing rows, the growth has stopped and nothing is claimed. Constant or
polynomial R(N) proves nothing (parity and every regular language have constant R).

No lower-bound argument for every N (a fooling set built for each N) is automated. A search: it
runs for a scheme still open after the cheaper sources, within what is left of the time budget
(the exact sizes it reaches in that time are the ones it reports).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..communication import Analysis, CommunicationError, analyse, relevant_share
from ..findings import Finding, Reason, Strength, Verdict, open_question, silent
from ..types import Format
from .context import Evidence
from .source import Source, search

NAME = "communication"
THEOREM_12 = "Huang et al. 2025 (arXiv 2410.02140), Theorem 12"
KEPT = 0.95
"""The share of sampled Alice strings that must keep rows of their own for an exponential trend to
count as continuing at a sampled N."""
RELEVANCE = (32, 128)
"""Two sizes N at which the share of Alice's positions that Bob's outputs depend on is measured."""
HELD = 0.75
"""An exponential trend goes on only if that share at the larger N keeps this much of the smaller's
(a copy of the first k symbols falls from 1 to k / N)."""


@dataclass(frozen=True)
class Missing:
    """Why there is no communication matrix: ``reason`` says whether it does not apply
    (``OUT_OF_SCOPE``) or was not computed for lack of time (``NOT_SEARCHED``)."""

    why: str
    reason: Reason = Reason.OUT_OF_SCOPE


def analysis(evidence: Evidence) -> Analysis | Missing:
    """The communication matrix of a causal task within what is left of the searches' time, or why
    there is none."""
    task, budget = evidence.task, evidence.budget
    if task.format is Format.ALIGNED:
        return Missing("the model predicts its outputs in parallel with bidirectional attention")
    seconds = evidence.clock.left
    if seconds <= 0:
        return Missing("not computed: the searches are off (seconds=0)" if budget.seconds <= 0 else
                       f"not computed: the {budget.seconds:g} s of search are spent", Reason.NOT_SEARCHED)
    evidence.say("enumerating the communication matrix")
    vectorised = task.batch_answer is not None
    started = time.perf_counter()
    try:
        return analyse(task, max_pairs=budget.pairs, samples=budget.comm_samples,
                       bob_samples=256 if vectorised else max(16, (1 << 16) // budget.comm_samples),
                       progress=lambda size: evidence.say(f"  R({size.n}) = {size.rows}"),
                       deadline=started + seconds)
    except CommunicationError as error:
        return Missing(f"no communication matrix: {error}")
    finally:
        evidence.clock.charge(started)


def relevance(evidence: Evidence) -> tuple[float | None, float | None]:
    """The share of Alice's positions that Bob's outputs depend on, at the two sizes of
    :data:`RELEVANCE`."""
    found = evidence.get(analysis)
    assert isinstance(found, Analysis)  # asked for by assess only once the matrix is there
    evidence.say("measuring which of Alice's positions matter at large N")
    rng = np.random.default_rng(evidence.seed)
    samples = 12 if evidence.budget.comm_samples >= 1024 else 6
    started = time.perf_counter()
    try:
        small, large = (relevant_share(evidence.task, n, rng=rng, samples=samples, split=found.split)
                        for n in RELEVANCE)
        return small, large
    finally:
        evidence.clock.charge(started)


def table_text(found: Analysis) -> str:
    exact = ", ".join(f"R({s.n}) = {s.rows}" for s in found.exact[-4:])
    return (f"communication matrix ({found.split.description}; symbols {{{', '.join(found.symbols)}}}): "
            f"{exact}; {found.growth.kind}: {found.growth.statement}")


def _continues(found: Analysis) -> tuple[bool, str]:
    """Whether the sampled larger N keep the exponential trend: their lower bound stays at the
    smaller of the fitted value and the share of sampled Alice strings that had rows of their own
    at the largest exact N (a task whose inputs are partly outside its domain shares one row among
    those)."""
    last = found.exact[-1]
    share = last.rows / last.alice
    base = found.growth.base
    assert base is not None  # an exponential growth (the caller checked) has its base
    seen = []
    for size in found.table:
        if size.exact or size.n <= last.n:
            continue
        expected = min(size.alice * share, base ** size.n)
        if size.rows < KEPT * expected:
            return False, (f"at N = {size.n} only {size.rows} of {size.alice} sampled Alice strings have rows of "
                           f"their own where the trend predicts {round(expected)}: the growth stops")
        seen.append(f"N = {size.n}: {size.rows} rows from {size.alice} sampled strings")
    return True, "; ".join(seen)


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    if task.format is Format.ALIGNED:
        return silent(NAME, "the model predicts its outputs in parallel with bidirectional attention: Theorem 12 "
                            "is about causal transformers", Reason.OUTSIDE_THEORY)
    found = evidence.get(analysis)
    if isinstance(found, Missing):
        return silent(NAME, found.why) if found.reason is Reason.OUT_OF_SCOPE else open_question(
            NAME, found.why, found.reason)
    if not found.applicable:
        return silent(NAME, "; ".join(found.notes))
    exact = found.exact
    if found.growth.kind != "exponential":
        return open_question(NAME, f"{table_text(found)}: not exponential, so Theorem 12 cannot settle it",
                             details=found.notes, references=(THEOREM_12,))
    if not found.total:
        return open_question(NAME, f"{table_text(found)}: ⊥ entries make the count an upper bound only",
                             details=found.notes, references=(THEOREM_12,))
    continues, sampled = _continues(found)
    if not continues:
        return open_question(NAME, f"{table_text(found)}; but {sampled}", details=found.notes,
                             references=(THEOREM_12,))
    small, large = evidence.get(relevance)
    if small is None or large is None or large < HELD * small:
        why = ("the sampled strings at large N are outside the task's domain" if small is None or large is None else
               f"the share of Alice's positions that Bob's outputs depend on falls from {small:.0%} at N = "
               f"{RELEVANCE[0]} to {large:.0%} at N = {RELEVANCE[1]}: the growth stops (a bounded part of her "
               "input matters)")
        return open_question(NAME, f"{table_text(found)}; but {why}", details=found.notes, references=(THEOREM_12,))
    sampled = "; ".join(filter(None, [sampled, f"Bob's outputs depend on {small:.0%} of Alice's positions at N = "
                                      f"{RELEVANCE[0]} and {large:.0%} at N = {RELEVANCE[1]}"]))
    span = f"N = {exact[0].n}..{exact[-1].n}"
    doubling = all(s.rows == len(found.symbols) ** (found.split.block * s.n) for s in exact)
    trend = (f"R(N) = {len(found.symbols)}^{'N' if found.split.block == 1 else f'{found.split.block}N'} for {span}"
             if doubling else f"R(N) ~ {found.growth.base}^N for {span}")
    summary = f"{trend} (exact){'; sampled ' + sampled if sampled else ''}"
    largest = max((s.n for s in found.table), default=exact[-1].n)
    return Finding(NAME, Verdict.FAILS, Strength.EXTRAPOLATED, summary, Reason.EXPONENTIAL_COMMUNICATION,
                   (f"{table_text(found)}: more than the C log N bits Theorem 12 allows every C-RASP[periodic, local] "
                    "program, if the trend goes on for every N (checked exactly for the N listed only)", *found.notes),
                   (THEOREM_12,), short=f"{trend} (exact), still growing on samples to N = {largest} (Theorem 12)")


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.FAILS}), search, assess)

__all__ = ["SOURCE", "NAME", "Missing", "analysis", "relevance", "table_text", "THEOREM_12"]
