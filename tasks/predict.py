"""The prediction engine: will a transformer trained on short inputs of a task work on longer ones?

:func:`predict` is the only place a verdict is made, for every positional scheme the project
trains (:data:`tasks.findings.SCHEMES`). The engine (:mod:`tasks.engine`) runs the sources of
evidence (:mod:`tasks.evidence`) cheapest first and stops for a scheme once it is settled;
:func:`combine` turns a scheme's findings into its verdict (docs/predict.md):

1. only findings that claim something count; each has a strength, proof > verified > extrapolated;
   a program's strength follows the rule of its verification (``tasks.evidence.programs.strength``);
2. the strongest claims decide; a weaker finding that disagrees is kept, shown in the headline as a
   conflict (``[conflicting, weaker: ...]``) and listed in ``conflicts``;
3. two findings that disagree leave the verdict undetermined, basis ``conflict``, where both are of
   strength verified or proof, or where neither is and nothing stronger claims anything: one of
   them is wrong, and neither may silently win;
4. containment: a NoPE transformer is an APE transformer without positional table, and plain
   C-RASP is contained in C-RASP[periodic, local], so every APE "does not generalize" holds for
   NoPE and every NoPE "generalizes" for APE; such a finding is carried over (and says so) unless
   the receiving scheme holds the same source's claim at least as strongly, so the strongest
   finding of either scheme decides by rules 1 to 3;
5. nothing claimed: undetermined, naming what is missing (the findings whose reason is of the kind
   "missing", such as ``NO_PROGRAM``), else what was inconclusive; where no source applies, why (a
   scheme the theory does not cover first).

Published labels are never evidence: they are the column a prediction is compared with
(:attr:`Prediction.agrees`).

>>> import tasks
>>> prediction = predict(tasks.get("bin_majority"), budget=QUICK)
>>> prediction.ape.verdict.value, prediction.nope.verdict.value, prediction.agrees
('generalizes', 'generalizes', True)
>>> prediction.ape.strength.value
'verified'
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from crasp.ast import Program

from . import engine
from . import layers as layer_bounds
from . import training_length as length_bounds
from .communication import Analysis
from .evidence import Evidence
from .evidence import communication as communication_evidence
from .evidence import programs as program_evidence
from .evidence.alignment import applies as alignment_applies
from .evidence.guard import guarded, watchdog
from .evidence.reference import check_reference
from .findings import (DEFAULT, QUICK, SCHEME_TITLES, SCHEMES, Budget, Finding, Kind, Reason, Strength, TaskError,
                       Verdict, scheme_named)
from .types import Format, Labels, Task


@dataclass(frozen=True)
class ClassVerdict:
    """The verdict for one scheme: its strength, the headline, the finding it rests on (``basis``:
    that finding's source, ``conflict`` or ``none``; ``reason``: its code), every finding, the
    conflicts, the sources ``skipped`` because the scheme was settled before their turn, and
    ``brief``, the one-line reason the default output shows."""

    verdict: Verdict
    basis: str
    evidence: tuple[str, ...]
    references: tuple[str, ...] = ()
    strength: Strength | None = None
    headline: str = ""
    findings: tuple[Finding, ...] = ()
    conflicts: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    reason: Reason | None = None
    brief: str = ""

    @property
    def program(self) -> Program | None:
        """The verified program behind a "generalizes" verdict (None where there is none)."""
        if self.verdict is not Verdict.GENERALIZES:
            return None
        return next((f.program for f in self.findings if f.decisive and f.claim is Verdict.GENERALIZES
                     and f.program is not None), None)

    def to_json(self) -> dict:
        return {"verdict": self.verdict.value, "strength": self.strength.value if self.strength else None,
                "headline": self.headline, "basis": self.basis, "reason": self.reason.name.lower() if self.reason
                else None, "brief": self.brief, "evidence": list(self.evidence), "references": list(self.references),
                "conflicts": list(self.conflicts), "skipped": list(self.skipped),
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class Timing:
    """How long a prediction took: ``seconds`` in all, ``searched`` of the ``budget`` seconds the
    searches may take."""

    seconds: float
    searched: float
    budget: float

    def describe(self) -> str:
        return (f"{self.seconds:.1f} s in all; the searches used {self.searched:.1f} s of their {self.budget:g} s")


@dataclass(frozen=True)
class Prediction:
    """The verdicts per scheme, the paper's labels where it has them, the communication table, the
    user's programs that verification rejected (with their shortest counterexamples), the layer
    and training-length bounds, and how long it took."""

    task: str
    family: str
    schemes: dict[str, ClassVerdict]
    labels: Labels
    communication: Analysis | None = field(default=None, repr=False)
    rejected: tuple[str, ...] = ()
    budget: Budget = DEFAULT
    layers: layer_bounds.Layers | None = field(default=None, repr=False)
    """How many layers a transformer needs: bounds per scheme (:mod:`tasks.layers`)."""
    training_length: length_bounds.TrainingLength | None = field(default=None, repr=False)
    """How long the training inputs must be for idealized learners (:mod:`tasks.training_length`)."""
    timing: Timing | None = field(default=None, compare=False)
    cached: bool = field(default=False, compare=False)
    """Read from the per-user cache (:mod:`tasks.batch`) rather than computed now."""

    @property
    def ape(self) -> ClassVerdict:
        return self.schemes["ape"]

    @property
    def nope(self) -> ClassVerdict:
        return self.schemes["nope"]

    def verdict(self, scheme: str) -> ClassVerdict:
        return self.schemes[scheme]

    def __repr__(self) -> str:
        from crasp.display import prediction_repr

        return prediction_repr(self)

    def _repr_html_(self) -> str:
        """The prediction in a notebook: per scheme the verdict, strength and reason, then the
        layers and training length, every finding folded."""
        from crasp.display import prediction_html

        return prediction_html(self, SCHEME_TITLES)

    def comparison(self) -> dict[str, str]:
        """Per scheme with a published label: ``agrees``, ``disagrees`` or ``undetermined``."""
        out = {}
        for scheme, label in (("ape", self.labels.ape), ("nope", self.labels.nope)):
            if label is None or scheme not in self.schemes:
                continue
            verdict = self.schemes[scheme].verdict
            out[scheme] = ("undetermined" if verdict is Verdict.UNDETERMINED else
                           "agrees" if verdict is (Verdict.GENERALIZES if label else Verdict.FAILS) else "disagrees")
        return out

    @property
    def agrees(self) -> bool | None:
        """Whether every verdict matches the paper's label (None where it gives none)."""
        found = self.comparison()
        return all(v == "agrees" for v in found.values()) if found else None

    def to_json(self) -> dict:
        out = {"name": self.task, "family": self.family,
               **{scheme: verdict.to_json() for scheme, verdict in self.schemes.items()},
               "paper_labels": {"ape": self.labels.ape, "nope": self.labels.nope}, "agrees_with_paper": self.agrees,
               "comparison": self.comparison(), "rejected_programs": list(self.rejected),
               "budget": dataclasses.asdict(self.budget)}
        if self.timing is not None:
            out["timing"] = dataclasses.asdict(self.timing)
        if self.layers is not None:
            out["layers"] = self.layers.to_json()
        if self.training_length is not None:
            out["training_length"] = self.training_length.to_json()
        if self.communication is not None:
            analysis = self.communication
            out["communication"] = {
                "split": analysis.split.description, "symbols": list(analysis.symbols),
                "table": [{"n": s.n, "rows": s.rows, "bits": s.bits, "exact": s.exact} for s in analysis.table],
                "growth": analysis.growth.kind, "statement": analysis.growth.statement,
                "total": analysis.total, "applicable": analysis.applicable, "notes": list(analysis.notes)}
        return out


# ---------------------------------------------------------------- the combiner


def _undetermined(findings: tuple[Finding, ...]) -> tuple[str, tuple[str, ...]]:
    """The headline's reason and the evidence lines of a scheme nothing settled: what is missing
    first, then what was inconclusive; where no source applies, why (the theory first)."""
    applying = [f for f in findings if f.applies]
    if not applying:
        order = sorted(findings, key=lambda f: f.reason.kind is not Kind.OUTSIDE_THEORY)
        why = order[0].summary if order else "no source of evidence speaks to this scheme"
        return f"no source of evidence applies: {why}", tuple(f"[{f.source}: does not apply] {f.summary}"
                                                               for f in findings)
    missing = [f.summary for f in applying if f.reason.kind is Kind.MISSING]
    lines = tuple(line for f in applying for line in f.lines())
    return ("; ".join(dict.fromkeys(missing)) or applying[0].summary), lines


def combine(findings: Iterable[Finding], skipped: Iterable[str] = ()) -> ClassVerdict:
    """One scheme's verdict from its findings, those carried over by containment among them
    (:func:`tasks.engine.contained`): rules 1 to 3 and 5 of the module docstring.

    >>> strong = Finding("program", Verdict.GENERALIZES, Strength.VERIFIED, "checked to length 2,000",
    ...                  Reason.PROGRAM_VERIFIED)
    >>> trend = Finding("communication", Verdict.FAILS, Strength.EXTRAPOLATED, "R(N) = 2^N for N <= 8",
    ...                 Reason.EXPONENTIAL_COMMUNICATION)
    >>> verdict = combine([strong, trend])
    >>> verdict.verdict.value, verdict.basis, len(verdict.conflicts)
    ('generalizes', 'program', 1)
    """
    findings, skipped = tuple(findings), tuple(skipped)
    decisive = [f for f in findings if f.decisive]
    lines = tuple(line for f in findings if f.applies for line in f.lines())
    references = tuple(dict.fromkeys(r for f in findings if f.applies for r in f.references))
    if not decisive:
        why, lines = _undetermined(findings)
        return ClassVerdict(Verdict.UNDETERMINED, "none", lines, references, None, f"UNDETERMINED ({why})", findings,
                            skipped=skipped, reason=None, brief=why)
    rank = max(f.claimed_strength.rank for f in decisive)
    top = [f for f in decisive if f.claimed_strength.rank == rank]
    claims = {f.claim for f in top}
    against = [f for f in decisive if f.claim is not top[0].claim]
    conflicts = tuple(f"{f.source} ({f.claimed_strength.value}) says {f.claim.value}: {f.summary}" for f in against)
    if len(claims) > 1 or any(f.claimed_strength.rank >= Strength.VERIFIED.rank for f in against):
        sides = "; ".join(f"{f.source} ({f.claimed_strength.value}): {f.claim.value}" for f in decisive)
        return ClassVerdict(Verdict.UNDETERMINED, "conflict", (f"conflict: {sides}", *lines), references, None,
                            f"UNDETERMINED (conflict: {sides}; check both)", findings, conflicts, skipped, None,
                            f"conflict: {sides}")
    winner = top[0]
    headline = winner.headline() + (f" [conflicting, weaker: {'; '.join(conflicts)}]" if conflicts else "")
    carried = f", carried over from {scheme_named(winner.carried_from).short}" if winner.carried_from else ""
    return ClassVerdict(winner.claim, winner.source, lines, references, winner.strength, headline, findings,
                        conflicts, skipped, winner.reason, f"{winner.source}{carried}: {winner.brief}")


# ---------------------------------------------------------------- the engine


def predict(task: Task, *, schemes: Iterable[str] | None = None, programs: Iterable[Program] = (),
            budget: Budget | None = None, quick: bool = False, seed: int = 0, synthesis: bool = True,
            progress: Callable[[str], None] | None = None, decide_only: bool = False) -> Prediction:
    """Verdicts for ``schemes`` (default: APE and NoPE, plus relative and uniform positions where
    they apply) with every finding. ``programs``: the user's candidate programs; ``budget``: every
    numeric setting (``quick=True`` is :data:`~tasks.findings.QUICK`); ``synthesis``: search for a
    program when none settles a scheme; ``progress``: called with a line on long work;
    ``decide_only``: the verdicts alone, as a batch's first pass makes them: no program is built
    from the task's own automaton, and no layer or training-length bounds are given.

    The task's own code runs under guard (:mod:`tasks.evidence.guard`): an exception it raises, or
    a call longer than ``budget.reference_seconds``, is a :class:`TaskError` naming the input."""
    budget = budget or (QUICK if quick else DEFAULT)
    wanted = _schemes(task, schemes)
    started = time.perf_counter()
    with watchdog():
        task = guarded(task, budget.reference_seconds)
        check_reference(task, inputs=60 if budget.samples < 100 or decide_only else 200, seed=seed)
        evidence = Evidence(task, budget, tuple(programs), seed, progress, synthesis, build_programs=not decide_only)
        gathered = engine.gather(evidence, wanted)
        verdicts = {scheme: combine(gathered.findings[scheme], gathered.skipped[scheme]) for scheme in wanted}
        given = [c for c in evidence.get(program_evidence.candidates) if c.kind is program_evidence.Origin.GIVEN]
        rejected = tuple(c.rejection() for c in given if not c.ok)
        depth = length = None
        if not decide_only:
            _learn_for_the_bounds(evidence)
            if synthesis:
                layer_bounds.search_shallower(evidence, wanted)
            depth = layer_bounds.layers(task, wanted, budget, evidence)
            length = length_bounds.training_length(evidence, layer_bounds.shallowest_program(evidence))
    communication = evidence.peek(communication_evidence.analysis)
    communication = communication if isinstance(communication, Analysis) else None
    return Prediction(task.name, task.family, verdicts, task.labels,
                      communication, rejected, budget, depth, length,
                      Timing(time.perf_counter() - started, evidence.clock.spent, budget.seconds))


LEARN_SYMBOLS = 3
"""The largest alphabet for which the bounds learn an accept task's automaton that no source
learned (a few thousand words of the reference; a larger one is left to a source that needs it)."""


def _learn_for_the_bounds(evidence: Evidence) -> None:
    """The layer and training-length bounds read the task's automaton: learn it where no source
    did, for an accept task of a small alphabet, while the searches are on."""
    from .evidence.regular import automata

    task = evidence.task
    if (task.automaton is None and task.format is Format.ACCEPT and len(task.symbols) <= LEARN_SYMBOLS
            and evidence.budget.seconds > 0):
        evidence.get(automata)


def _schemes(task: Task, schemes: Iterable[str] | None) -> list[str]:
    if schemes is None:
        return ["ape", "nope", *(["relative", "uniform"] if alignment_applies(task) else [])]
    chosen = list(schemes)
    unknown = [s for s in chosen if s not in SCHEMES]
    if unknown or not chosen:
        raise TaskError(f"unknown positional scheme {unknown[0] if unknown else '(none)'!r}: choose from "
                        f"{', '.join(SCHEMES)}")
    return chosen


def predict_all(names: Iterable[str] | None = None, *, quick: bool = False) -> list[Prediction]:
    """:func:`predict` for the named tasks (default: every registered task), one after another
    (:func:`tasks.suite.predict_suite` runs them in parallel, with a cache)."""
    from .registry import all_tasks, get

    selected = [get(n) for n in names] if names is not None else list(all_tasks())
    return [predict(task, quick=quick) for task in selected]


# ---------------------------------------------------------------- as text

SHOW = {None: "-", True: "yes", False: "no"}


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 3)] + "..."


def summary(prediction: Prediction, width: int | None = None) -> str:
    """The prediction on one screen: per scheme the verdict, its strength and a one-line reason;
    the paper's labels beside; the layer and training-length bounds; the time it took. Lines are
    cut to ``width`` characters where one is given (the command line gives its terminal's)."""
    width = width or 10**6
    lines = [prediction.task]
    for scheme, verdict in prediction.schemes.items():
        strength = verdict.strength.value if verdict.strength else ""
        head = f"  {scheme_named(scheme).short:<9}{verdict.verdict.value.upper():<21}{strength:<13}"
        lines.append(head + _fit(verdict.brief, width - len(head)))
    comparison = prediction.comparison()
    if comparison:
        labels = prediction.labels
        lines.append(f"  published labels (APE/NoPE): {SHOW[labels.ape]}/{SHOW[labels.nope]}: "
                     + ", ".join(f"{scheme_named(s).short} {v}" for s, v in comparison.items()))
    if prediction.layers is not None:
        lines.append(_fit("  layers: " + prediction.layers.brief(), width))
    if prediction.training_length is not None:
        lines.append(_fit("  training length: " + prediction.training_length.brief(), width))
    if prediction.rejected:
        lines.append(f"  {len(prediction.rejected)} given program(s) rejected (--explain shows the counterexample)")
    budget = prediction.budget.name or "custom"
    timing = f"; {prediction.timing.describe()}" if prediction.timing else ""
    timing += " (kept from an earlier run: --no-cache recomputes)" if prediction.cached else ""
    lines.append(f"  budget: {budget}{timing}; --explain shows every finding")
    return "\n".join(lines)


def explain(prediction: Prediction) -> str:
    """The prediction in full: per scheme the headline, every finding, the references and the
    sources skipped; then the labels, the communication table, the layers and training length."""
    lines = [prediction.task]
    for scheme, verdict in prediction.schemes.items():
        lines.append(f"\n{SCHEME_TITLES[scheme]}: {verdict.headline}")
        lines += [f"  - {line}" for line in verdict.evidence]
        lines += [f"  ref: {ref}" for ref in verdict.references]
        if verdict.skipped:
            lines.append(f"  not run (settled before their turn): {', '.join(verdict.skipped)}")
    labels = prediction.labels
    comparison = prediction.comparison()
    if comparison:
        lines.append(f"\npublished labels (expressible APE/NoPE): {SHOW[labels.ape]}/{SHOW[labels.nope]}: "
                     + ", ".join(f"{scheme_named(s).short} {v}" for s, v in comparison.items()))
    if prediction.rejected:
        lines.append("\nrejected given programs:")
        lines += [f"  - {line}" for line in prediction.rejected]
    if prediction.communication is not None and prediction.communication.table:
        lines.append("\n" + prediction.communication.summary())
    if prediction.layers is not None:
        lines.append("\nlayers (attention layers, in count depth; at most: a verified program; at least: a published "
                     "lower bound):")
        lines += [f"  {line}" for line in prediction.layers.lines()]
    if prediction.training_length is not None:
        lines.append("\ntraining length (idealized learners that see every input up to length N):")
        lines += [f"  - {line}" for line in prediction.training_length.lines()]
    timing = f"; {prediction.timing.describe()}" if prediction.timing else ""
    lines.append(f"\nbudget: {prediction.budget.describe()}{timing} (--budget to change)")
    return "\n".join(lines)


__all__ = ["predict", "predict_all", "combine", "explain", "summary", "Prediction", "ClassVerdict", "Timing",
           "Verdict", "Strength", "Budget", "QUICK", "DEFAULT"]
