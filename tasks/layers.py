"""How many layers does a transformer need for a task? Bounds with their evidence, per scheme.

**At most**: the depth of a verified program (:mod:`tasks.evidence.programs`: the user's, the
library's, one built from the task's automaton or one synthesized), as the layers of its compiled
Limit Transformer (:func:`limit_transformer.compiler.model_depth`; the layers that hold attention
heads are counted apart, since a conjunction of comparisons takes an MLP-only layer). Its *count
depth*, the nesting of counting operators, is also given: a transformer whose feed-forward blocks
may compute any function of their input needs no more layers than that (Yang, Cadilhac & Chiang
2025 show such fixed-precision transformers and C-RASP equivalent, depth for depth). NoPE counts
plain programs only. The bound is as strong as the program's verification, and as good as the
shallowest program found (:func:`search_shallower` asks synthesis where the only one was built from
an automaton).

**At least**: a published lower bound, with its citation, or none. The one known to us is Yang,
Cadilhac & Chiang's depth hierarchy for transformers without positional encodings (NoPE; plain
C-RASP): L_{k+1} is not recognized at depth k, and the prediction problem of L_{k+3} is not solved
at depth k + 1 (:mod:`tasks.regular.blocks` finds L_k inside a task's language). We apply it

* to an accept task whose language restricted to two symbols is L_k (recognition: at least k layers,
  k >= 2), or whose language agrees with L_k on the prefixes of L_k's words (prediction: at least
  k - 2, k >= 3); a verdict read at an appended end marker changes nothing: the marker's own
  contribution to every count is a Boolean of no greater depth, so a case split on it gives a program
  of the same depth that reads the verdict at the last symbol;
* to a next-character-set task whose ``<eos>`` target is membership in such a language: at the
  last symbol of each input it says whether the input is in the language (recognition, where the
  inputs include every word over the two symbols), and on prefixes (prediction).

The task's inputs must include the words the bound speaks of (checked on every such word up to
:data:`DOMAIN_CHECK` symbols). On the task's own automaton the bound is ``proof``; on an automaton
learned from the reference (:mod:`tasks.evidence.regular`) ``extrapolated``. For APE, relative and
uniform positions no lower bound is given: the hierarchy with positional encodings is stated for L_k
with a neutral letter, and a local predicate sees block boundaries (L_k's prediction problem has a
C-RASP[local] program of count depth 1).

A program shallower than a lower bound is a contradiction: both bounds are withdrawn and the
conflict is reported.

>>> import tasks
>>> from tasks.findings import QUICK
>>> found = layers(tasks.get("L5"), ("ape", "nope"), QUICK)
>>> found.schemes["nope"].at_least, found.schemes["nope"].count_depth, found.schemes["nope"].at_most
(3, 3, 8)
>>> found.schemes["ape"].at_least is None
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from crasp.errors import CraspError

from .evidence import programs as program_evidence
from .evidence.context import Context
from .findings import Budget, Strength, scheme_named
from .regular.blocks import YANG_CADILHAC_CHIANG
from .types import Format, Task

HIERARCHY = (f"{YANG_CADILHAC_CHIANG}, the depth hierarchy theorem and its corollary for the prediction task "
             "(theorem numbers not read)")
EQUIVALENCE = ("Yang, Cadilhac & Chiang 2025 (arXiv 2506.16055): fixed-precision transformers that round outside "
               "attention are equivalent to C-RASP, and the equivalence preserves depth")
DOMAIN_CHECK = 10
"""The length up to which the task's domain is checked to contain the words a lower bound speaks of."""


@dataclass(frozen=True)
class LayerFinding:
    """One bound: ``bound`` is "at_most" or "at_least" (or "none": a note without a bound)."""

    scheme: str
    bound: str
    layers: int | None
    claim: str
    strength: Strength | None
    citation: str = ""

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "bound": self.bound, "layers": self.layers, "claim": self.claim,
                "strength": self.strength.value if self.strength else None, "citation": self.citation}


@dataclass(frozen=True)
class SchemeLayers:
    """The bounds for one positional scheme: ``at_most`` the compiled model's layers (with
    ``attention_layers`` of them holding heads, ``count_depth`` the program's), ``at_least`` the
    published lower bound."""

    scheme: str
    at_most: int | None
    attention_layers: int | None
    count_depth: int | None
    at_least: int | None
    findings: tuple[LayerFinding, ...]

    def to_json(self) -> dict:
        return {"at_most": self.at_most, "attention_layers": self.attention_layers, "count_depth": self.count_depth,
                "at_least": self.at_least, "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class Layers:
    """Per scheme the bounds; over all schemes, ``at_most`` the fewest layers some scheme is shown
    to need at most, and ``at_least`` a bound every scheme shares (None unless each has one)."""

    schemes: dict[str, SchemeLayers]

    @property
    def at_most(self) -> int | None:
        found = [s.at_most for s in self.schemes.values() if s.at_most is not None]
        return min(found) if found else None

    @property
    def at_least(self) -> int | None:
        found = [s.at_least for s in self.schemes.values()]
        return min(found) if found and None not in found else None

    @property
    def findings(self) -> tuple[LayerFinding, ...]:
        return tuple(f for s in self.schemes.values() for f in s.findings)

    def to_json(self) -> dict:
        return {"at_most": self.at_most, "at_least": self.at_least, "findings": [f.to_json() for f in self.findings],
                "schemes": {name: s.to_json() for name, s in self.schemes.items()}}

    def lines(self) -> list[str]:
        """The bounds as text, one line per scheme and one per finding."""
        out = []
        for name, s in self.schemes.items():
            most = "unknown" if s.at_most is None else (
                f"{s.at_most} ({s.attention_layers} with attention; count depth {s.count_depth})")
            out.append(f"{name}: at most {most}; at least {'unknown' if s.at_least is None else s.at_least}")
            out += [f"  - [{f.bound}, {f.strength.value if f.strength else 'no claim'}] {f.claim}"
                    + (f" ({f.citation})" if f.citation else "") for f in s.findings]
        return out


# ---------------------------------------------------------------- upper bounds


def _passed_programs(task: Task, scheme: str, budget: Budget, context: Context) -> list[program_evidence.Checked]:
    found = [c for c in program_evidence.verified(task, budget, context) if c.ok]
    for searched in ("ape", "nope"):  # a program synthesized for either scheme (a plain one serves both)
        synthesized = context.stored(("synthesis", searched))
        if synthesized and synthesized[0] is not None and synthesized[0].ok and synthesized[0] not in found:
            found.append(synthesized[0])
    plain_only = scheme_named(scheme).plain_only
    return [c for c in found if c.plain or not plain_only]


def _upper(task: Task, scheme: str, budget: Budget, context: Context) -> tuple[list[LayerFinding], tuple | None]:
    from limit_transformer.compiler import model_depth

    if not scheme_named(scheme).has_programs:
        return [LayerFinding(scheme, "none", None, "no program bounds the depth of this scheme's transformers: "
                             "Huang et al.'s theorems tie programs to APE and NoPE", None)], None
    candidates = _passed_programs(task, scheme, budget, context)
    if not candidates:
        return [LayerFinding(scheme, "none", None, f"no verified {scheme_named(scheme).program_kind} program, so no "
                             "upper bound", None)], None
    best, findings = None, []
    shallowest = min(c.checked.info.depth for c in candidates)
    for candidate in candidates:
        count_depth = candidate.checked.info.depth
        try:
            depth = model_depth(candidate.checked)
        except CraspError as error:
            findings.append(LayerFinding(scheme, "none", None, f"{candidate.origin} (count depth {count_depth}) does "
                                         f"not compile: {error}", None))
            continue
        key = (depth.layers, depth.attention_layers, count_depth)
        if best is None or key < best[0]:
            best = (key, candidate)
    if best is None:
        return findings, None
    (layers, attention, count_depth), candidate = best
    strength = Strength.VERIFIED if candidate.report.reaches_constants else Strength.EXTRAPOLATED
    findings.insert(0, LayerFinding(
        scheme, "at_most", layers,
        f"{candidate.origin} compiles to a Limit Transformer of {layers} layers, {attention} of them with attention "
        f"heads; its count depth is {count_depth}, so a transformer whose feed-forward blocks compute any function "
        f"needs at most {count_depth} ({program_evidence.bounds(candidate.report)})",
        strength, f"{program_evidence.THEOREMS}; {EQUIVALENCE}"))
    return findings, (layers, attention, count_depth, shallowest)


SEARCH_SECONDS = 5.0
"""The most time :func:`search_shallower` gives synthesis (within the budget's own limit)."""


def search_shallower(task: Task, schemes, budget: Budget, context: Context) -> None:
    """Where every verified program of a scheme was built from the task's automaton (one counting
    step per state it passes, so deep by construction) and is at least two deep, ask synthesis for
    one (it tries the smallest programs first; for at most :data:`SEARCH_SECONDS`); the bounds then
    take the shallower."""
    if task.format is Format.ALIGNED or task.fixed_width is not None or budget.synthesis_seconds <= 0:
        return
    for scheme in [s for s in ("ape", "nope") if s in schemes]:
        passed = _passed_programs(task, scheme, budget, context)
        if passed and all(c.origin.startswith("program built") for c in passed) and \
                min(c.checked.info.depth for c in passed) >= 2:
            context.synthesis = True
            short = dataclasses.replace(budget, synthesis_seconds=min(budget.synthesis_seconds, SEARCH_SECONDS))
            program_evidence.synthesized(task, scheme, short, context)


# ---------------------------------------------------------------- lower bounds


def _renamed_prefixes(x: str, y: str, k: int, longest: int):
    """Every prefix of a word of L_k up to ``longest`` symbols, with a, b renamed x, y."""
    from .depth_languages import prefixes

    rename = {"a": x, "b": y}
    return (tuple(rename[c] for c in w) for w in prefixes(k, longest))


def _lower(task: Task, scheme: str, budget: Budget, context: Context) -> list[LayerFinding]:
    from .evidence import regular
    from .regular import blocks
    from .regular.dfa import words

    if not scheme_named(scheme).plain_only:
        return []
    language = regular.language_of(task, budget, context)
    if isinstance(language, str):
        return [LayerFinding(scheme, "none", None, f"no published lower bound applies: {language}", None)]
    (dfa, *_), exact = language  # the reading that rejects words shorter than the inputs: L_k has none
    strength = Strength.PROOF if exact else Strength.EXTRAPOLATED
    source = "the task's own automaton" if exact else "an automaton learned from the reference"
    found = []
    recognized = blocks.recognizes(dfa)  # a next-set task's <eos> at the last symbol is membership too
    if recognized and recognized[0] >= 2:
        k, x, y = recognized
        if regular.inputs_include(task, words((x, y), DOMAIN_CHECK)):
            found.append(LayerFinding(
                scheme, "at_least", k, f"on inputs over {{{x}, {y}}} the task is L_{k} ({source}), and no NoPE "
                f"transformer of fixed precision (rounding outside attention) with fewer than {k} layers recognizes "
                f"L_{k} (L_{{j+1}} needs more than j layers)",
                strength, HIERARCHY))
    predicted = blocks.predicts(dfa)
    if predicted and predicted[0] >= 3:
        k, x, y = predicted
        if regular.inputs_include(task, _renamed_prefixes(x, y, k, DOMAIN_CHECK)):
            found.append(LayerFinding(
                scheme, "at_least", k - 2, f"on every prefix of a word of L_{k} over {{{x}, {y}}} the task says "
                f"whether the prefix is in L_{k} ({source}), and no NoPE transformer of fixed precision (rounding "
                f"outside attention) with fewer than {k - 2} layers solves L_{k}'s prediction problem (L_{{j+3}} needs "
                "more than j + 1 layers)",
                strength, HIERARCHY))
    if not found:
        return [LayerFinding(scheme, "none", None, "no published lower bound applies: the task's language is none "
                             "of the depth hierarchy's L_k on two of its symbols", None)]
    best = max(found, key=lambda f: (f.strength.rank, f.layers))
    return [best]


# ---------------------------------------------------------------- both


def shallowest_program(task: Task, budget: Budget, context: Context) -> tuple[int, bool] | None:
    """(count depth, plain) of the shallowest verified program, plain ones first; None if none."""
    plain = _passed_programs(task, "nope", budget, context)
    if plain:
        return min(c.checked.info.depth for c in plain), True
    found = _passed_programs(task, "ape", budget, context)
    return (min(c.checked.info.depth for c in found), False) if found else None


def scheme_layers(task: Task, scheme: str, budget: Budget, context: Context) -> SchemeLayers:
    """The bounds for one scheme (programs are verified once per ``context``)."""
    upper_findings, upper = _upper(task, scheme, budget, context)
    lower_findings = _lower(task, scheme, budget, context)
    at_least = next((f.layers for f in lower_findings if f.bound == "at_least"), None)
    at_most, attention, count_depth, shallowest = upper if upper else (None, None, None, None)
    findings = [*upper_findings, *lower_findings]
    if at_least is not None and shallowest is not None and shallowest < at_least:
        findings.append(LayerFinding(
            scheme, "none", None, f"conflict: a verified program of count depth {shallowest} and a lower bound of "
            f"{at_least} layers cannot both hold; both are withdrawn (check the program on longer inputs)", None))
        at_least = at_most = attention = count_depth = None
    return SchemeLayers(scheme, at_most, attention, count_depth, at_least, tuple(findings))


def layers(task: Task, schemes=("ape", "nope"), budget: Budget | None = None, context: Context | None = None) -> Layers:
    """The layer bounds of ``task`` for each of ``schemes`` (see the module docstring)."""
    from .findings import DEFAULT

    budget = budget or DEFAULT
    context = context or Context(synthesis=False)
    return Layers({scheme: scheme_layers(task, scheme, budget, context) for scheme in schemes})


__all__ = ["layers", "shallowest_program", "search_shallower", "Layers", "SchemeLayers", "LayerFinding",
           "HIERARCHY"]
