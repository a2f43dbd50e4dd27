"""The prediction engine: will a transformer trained on short inputs of a task work on longer ones?

:func:`predict` is the only place a verdict is made, for every positional scheme the project
trains (:data:`tasks.findings.SCHEMES`). Each source of evidence (:mod:`tasks.evidence`) returns
a :class:`~tasks.findings.Finding` per scheme; :func:`combine` turns them into the verdict
(docs/predict.md):

1. only findings that claim something count; each has a strength: proof > verified > extrapolated;
2. the strongest claims decide; a weaker finding that disagrees is kept and shown as a conflict;
3. two findings of strength verified or proof that disagree leave the verdict undetermined (one of
   them is wrong, and neither may silently win);
4. NoPE transformers are APE transformers without positional table, and plain C-RASP is contained
   in C-RASP[periodic, local]: every APE "does not generalize" holds for NoPE, every NoPE
   "generalizes" for APE (the finding says it was carried over);
5. nothing claimed: undetermined, listing what each source lacked.

>>> import tasks
>>> prediction = predict(tasks.get("bin_majority"), budget=QUICK)
>>> prediction.ape.verdict.value, prediction.nope.verdict.value, prediction.agrees
('generalizes', 'generalizes', True)
>>> prediction.ape.strength.value
'verified'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable

from crasp.ast import Program

from . import evidence
from . import layers as layer_bounds
from . import training_length as length_bounds
from .communication import Analysis
from .evidence import programs as program_evidence
from .evidence.context import Context
from .evidence.reference import check_reference
from .findings import DEFAULT, QUICK, SCHEME_TITLES, SCHEMES, Budget, Finding, Strength, TaskError, Verdict
from .types import Format, Labels, Task

CONTAINMENT = ("a NoPE transformer is an APE transformer whose positional table is zero, and plain C-RASP is "
               "contained in C-RASP[periodic, local]")


@dataclass(frozen=True)
class ClassVerdict:
    """The verdict for one scheme: its strength, the headline, the finding it rests on (``basis``:
    that finding's source, ``conflict`` or ``none``), every finding, and the conflicts."""

    verdict: Verdict
    basis: str
    evidence: tuple[str, ...]
    references: tuple[str, ...] = ()
    strength: Strength | None = None
    headline: str = ""
    findings: tuple[Finding, ...] = ()
    conflicts: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"verdict": self.verdict.value, "strength": self.strength.value if self.strength else None,
                "headline": self.headline, "basis": self.basis, "evidence": list(self.evidence),
                "references": list(self.references), "conflicts": list(self.conflicts),
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class Prediction:
    """The verdicts per scheme, the paper's labels where it has them, the communication table, and
    the user's programs that verification rejected (with their shortest counterexamples)."""

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

    @property
    def ape(self) -> ClassVerdict:
        return self.schemes["ape"]

    @property
    def nope(self) -> ClassVerdict:
        return self.schemes["nope"]

    def verdict(self, scheme: str) -> ClassVerdict:
        return self.schemes[scheme]

    @property
    def agrees(self) -> bool | None:
        """Whether the verdicts match the paper's labels (None where it gives none)."""
        pairs = [(self.schemes[s].verdict, label) for s, label in (("ape", self.labels.ape), ("nope", self.labels.nope))
                 if label is not None and s in self.schemes]
        if not pairs:
            return None
        return all(verdict is (Verdict.GENERALIZES if label else Verdict.FAILS) for verdict, label in pairs)

    def to_json(self) -> dict:
        out = {"name": self.task, "family": self.family,
               **{scheme: verdict.to_json() for scheme, verdict in self.schemes.items()},
               "paper_labels": {"ape": self.labels.ape, "nope": self.labels.nope}, "agrees_with_paper": self.agrees,
               "rejected_programs": list(self.rejected), "budget": dataclasses.asdict(self.budget)}
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


def _carried(finding: Finding, to: str) -> Finding:
    return dataclasses.replace(finding, source=f"{finding.source}, carried over",
                               summary=f"{'APE' if to == 'nope' else 'NoPE'}: {finding.summary}",
                               details=(CONTAINMENT, *finding.details))


def combine(findings: Iterable[Finding]) -> ClassVerdict:
    """One scheme's verdict from its findings (the rules in the module docstring).

    >>> strong = Finding("program", Verdict.GENERALIZES, Strength.VERIFIED, "checked to length 2,000")
    >>> trend = Finding("communication", Verdict.FAILS, Strength.EXTRAPOLATED, "R(N) = 2^N for N <= 8")
    >>> verdict = combine([strong, trend])
    >>> verdict.verdict.value, verdict.basis, len(verdict.conflicts)
    ('generalizes', 'program', 1)
    """
    findings = tuple(findings)
    decisive = [f for f in findings if f.decisive]
    lines = tuple(line for f in findings if f.applies for line in f.lines())
    references = tuple(dict.fromkeys(r for f in findings if f.applies for r in f.references))
    if not decisive:
        if not any(f.applies for f in findings):
            lines = tuple(f"[{f.source}: does not apply] {f.summary}" for f in findings)
        missing = [f.summary for f in findings if f.applies] or [
            "no source of evidence applies: " + "; ".join(dict.fromkeys(f.summary for f in findings if
                                                                          "outside" in f.summary or "uniform" in f.summary))]
        return ClassVerdict(Verdict.UNDETERMINED, "none", lines, references, None,
                            f"UNDETERMINED ({'; '.join(m for m in missing if m.startswith('missing')) or missing[0]})",
                            findings)
    rank = max(f.strength.rank for f in decisive)
    top = [f for f in decisive if f.strength.rank == rank]
    claims = {f.claim for f in top}
    against = [f for f in decisive if f.claim is not top[0].claim]
    conflicts = tuple(f"{f.source} ({f.strength.value}) says {f.claim.value}: {f.summary}" for f in against)
    if len(claims) > 1 or any(f.strength.rank >= Strength.VERIFIED.rank for f in against):
        sides = "; ".join(f"{f.source} ({f.strength.value}): {f.claim.value}" for f in decisive)
        return ClassVerdict(Verdict.UNDETERMINED, "conflict", (f"conflict: {sides}", *lines), references, None,
                            f"UNDETERMINED (conflict: {sides}; check both)", findings, conflicts)
    winner = top[0]
    headline = winner.headline() + (f" [conflicting, weaker: {'; '.join(conflicts)}]" if conflicts else "")
    return ClassVerdict(winner.claim, winner.source.split(",")[0], lines, references, winner.strength, headline,
                        findings, conflicts)


# ---------------------------------------------------------------- the engine


def predict(task: Task, *, schemes: Iterable[str] | None = None, programs: Iterable[Program] = (),
            budget: Budget | None = None, quick: bool = False, seed: int = 0, synthesis: bool = True,
            progress: Callable[[str], None] | None = None) -> Prediction:
    """Verdicts for ``schemes`` (default: APE and NoPE, plus relative and uniform positions where
    they apply) with every finding. ``programs``: the user's candidate programs; ``budget``: every
    numeric setting (``quick=True`` is :data:`~tasks.findings.QUICK`); ``synthesis``: search for a
    program when none is given; ``progress``: called with a line on long work."""
    budget = budget or (QUICK if quick else DEFAULT)
    wanted = _schemes(task, schemes)
    check_reference(task, inputs=60 if budget.samples < 100 else 200, seed=seed)
    context = Context(tuple(programs), seed, progress, synthesis=False)
    found: dict[str, list[Finding]] = {}
    for scheme in dict.fromkeys([*wanted, *(["ape", "nope"] if {"ape", "nope"} & set(wanted) else [])]):
        found[scheme] = [source.assess(task, scheme, budget, context) for source in evidence.SOURCES]
    if synthesis and budget.synthesis_seconds > 0:
        _synthesize_where_open(task, found, budget, context)
    if "ape" in found and "nope" in found:
        ape, nope = list(found["ape"]), list(found["nope"])
        found["nope"] += [_carried(f, "nope") for f in ape if f.decisive and f.claim is Verdict.FAILS]
        found["ape"] += [_carried(f, "ape") for f in nope if f.decisive and f.claim is Verdict.GENERALIZES
                         and not any(g.decisive and g.claim is Verdict.GENERALIZES and g.source == f.source
                                     for g in ape)]
    verdicts = {scheme: combine(found[scheme]) for scheme in wanted}
    communication = context.stored(("communication", budget))
    given = [c for c in program_evidence.verified(task, budget, context) if c.origin.startswith("given program")]
    rejected = tuple(c.rejection() for c in given if not c.ok)
    if synthesis:
        layer_bounds.search_shallower(task, wanted, budget, context)
    depth = layer_bounds.layers(task, wanted, budget, context)
    shallowest = layer_bounds.shallowest_program(task, budget, context)
    length = length_bounds.training_length(task, budget, context, shallowest)
    return Prediction(task.name, task.family, verdicts, task.labels, communication, rejected, budget, depth, length)


def _synthesize_where_open(task: Task, found: dict[str, list[Finding]], budget: Budget, context: Context) -> None:
    """Search for a program for each of APE and NoPE whose findings settle nothing at strength
    verified or proof (a trend can still be overturned by a program; a proof cannot): the program
    source is asked again, now allowed to synthesize."""
    if task.format is Format.ALIGNED or task.fixed_width is not None:
        return  # no theory for a parallel encoder; at a fixed width the truncation test decides
    context.synthesis = True
    for scheme in ("ape", "nope"):
        if scheme not in found:
            continue
        settled = [f for f in found[scheme] if f.decisive and f.strength.rank >= Strength.VERIFIED.rank]
        if settled:
            continue
        found[scheme] = [evidence.programs.assess(task, scheme, budget, context) if source is evidence.programs
                         else finding for source, finding in zip(evidence.SOURCES, found[scheme])]


def _schemes(task: Task, schemes: Iterable[str] | None) -> list[str]:
    if schemes is None:
        return ["ape", "nope", *(["relative", "uniform"] if evidence.alignment.applies(task) else [])]
    chosen = list(schemes)
    unknown = [s for s in chosen if s not in SCHEMES]
    if unknown or not chosen:
        raise TaskError(f"unknown positional scheme {unknown[0] if unknown else '(none)'!r}: choose from "
                        f"{', '.join(SCHEMES)}")
    return chosen


def predict_all(names: Iterable[str] | None = None, *, quick: bool = False) -> list[Prediction]:
    """:func:`predict` for the named tasks (default: every registered task)."""
    from .registry import all_tasks, get

    selected = [get(n) for n in names] if names is not None else list(all_tasks())
    return [predict(task, quick=quick) for task in selected]


def explain(prediction: Prediction) -> str:
    """The prediction as text: per scheme the headline, then the evidence and references."""
    lines = [prediction.task]
    for scheme, verdict in prediction.schemes.items():
        lines.append(f"\n{SCHEME_TITLES[scheme]}: {verdict.headline}")
        lines += [f"  - {line}" for line in verdict.evidence]
        lines += [f"  ref: {ref}" for ref in verdict.references]
    labels = prediction.labels
    if labels.ape is not None or labels.nope is not None:
        show = {None: "-", True: "yes", False: "no"}
        agree = "agrees" if prediction.agrees else "DISAGREES"
        lines.append(f"\npaper labels (expressible APE/NoPE): {show[labels.ape]}/{show[labels.nope]}: "
                     f"the prediction {agree}")
    if prediction.communication is not None and prediction.communication.table:
        lines.append("\n" + prediction.communication.summary())
    if prediction.layers is not None:
        lines.append("\nlayers (at most: the compiled program; at least: a published lower bound):")
        lines += [f"  {line}" for line in prediction.layers.lines()]
    if prediction.training_length is not None:
        lines.append("\ntraining length (idealized learners that see every input up to length N):")
        lines += [f"  - {line}" for line in prediction.training_length.lines()]
    lines.append(f"\nbudget: {prediction.budget.describe()} (--budget to change)")
    return "\n".join(lines)


__all__ = ["predict", "predict_all", "combine", "explain", "Prediction", "ClassVerdict", "Verdict", "Strength",
           "Budget", "QUICK", "DEFAULT"]
