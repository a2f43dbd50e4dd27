"""How many layers does a transformer need for a task? Bounds with their evidence, per scheme.

Both bounds count *attention layers*, in the unit of the depth hierarchy: the count depth of a
C-RASP program, the nesting of its counting operators. Yang, Cadilhac & Chiang (2025) show
fixed-precision transformers that round outside attention (feed-forward blocks computing any
function of their input) and C-RASP equivalent, depth for depth.

**At most**: the count depth of the shallowest verified program (:mod:`tasks.evidence`: the
user's, the library's, one built from the task's automaton or one synthesized). Its compiled Limit
Transformer's layers are given in a field of their own (``compiled_layers``, of which
``attention_layers`` hold heads; :func:`limit_transformer.depth.model_depth`): our compiler places
Boolean combinations in the MLPs of attention layers where it can, so that count is the count depth
or a little more. NoPE counts plain programs only.
The bound is as strong as the program's verification, and as good as the shallowest program found
(:func:`search_shallower` asks synthesis where the only one was built from an automaton).

**At least**: a published lower bound, with its citation, or none. The one known to us is Yang,
Cadilhac & Chiang's depth hierarchy for transformers without positional encodings (NoPE; plain
C-RASP): L_{k+1} is not recognized at depth k, and the prediction problem of L_{k+3} is not solved
at depth k (their Figure 2: L_3 is predicted at depth 1, L_4 needs 2, L_5 needs 3;
:mod:`tasks.regular.blocks` finds L_k inside a task's language). We apply it

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
>>> nope = found.schemes["nope"]
>>> nope.at_least, nope.at_most, nope.compiled_layers
(3, 3, 3)
>>> found.schemes["ape"].at_least is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.errors import CraspError

from .evidence import Evidence
from .evidence import programs as program_evidence
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
    """One bound: ``bound`` is "at_most" or "at_least" (or "none": a note without a bound);
    ``layers`` counts attention layers (count depth)."""

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
    """The bounds for one positional scheme, both in attention layers (count depth): ``at_most``
    the count depth of the shallowest verified program, ``at_least`` the published lower bound;
    and the compiled Limit Transformer of that program: ``compiled_layers``, of which
    ``attention_layers`` hold heads."""

    scheme: str
    at_most: int | None
    at_least: int | None
    compiled_layers: int | None
    attention_layers: int | None
    findings: tuple[LayerFinding, ...]

    @property
    def count_depth(self) -> int | None:
        """The old name of :attr:`at_most`."""
        return self.at_most

    def to_json(self) -> dict:
        return {"at_most": self.at_most, "at_least": self.at_least, "unit": "attention layers (count depth)",
                "compiled_layers": self.compiled_layers, "attention_layers": self.attention_layers,
                "findings": [f.to_json() for f in self.findings]}


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
        found = [s.at_least for s in self.schemes.values() if s.at_least is not None]
        return min(found) if found and len(found) == len(self.schemes) else None

    @property
    def findings(self) -> tuple[LayerFinding, ...]:
        return tuple(f for s in self.schemes.values() for f in s.findings)

    def to_json(self) -> dict:
        return {"at_most": self.at_most, "at_least": self.at_least, "unit": "attention layers (count depth)",
                "findings": [f.to_json() for f in self.findings],
                "schemes": {name: s.to_json() for name, s in self.schemes.items()}}

    def brief(self) -> str:
        """One line: per scheme the bounds in attention layers."""
        def bound(value):
            return "?" if value is None else str(value)
        return "; ".join(f"{scheme_named(name).short} {bound(s.at_least)}..{bound(s.at_most)}"
                         for name, s in self.schemes.items() if scheme_named(name).has_programs) + \
            " attention layers (at least..at most)"

    def lines(self) -> list[str]:
        """The bounds as text, one line per scheme and one per finding."""
        out = []
        for name, s in self.schemes.items():
            compiled = ("" if s.compiled_layers is None else f" (its compiled Limit Transformer: {s.compiled_layers} "
                        f"layers, {s.attention_layers} with attention)")
            most = "unknown" if s.at_most is None else f"{s.at_most}{compiled}"
            out.append(f"{name}: at most {most}; at least {'unknown' if s.at_least is None else s.at_least}")
            out += [f"  - [{f.bound}, {f.strength.value if f.strength else 'no claim'}] {f.claim}"
                    + (f" ({f.citation})" if f.citation else "") for f in s.findings]
        return out


# ---------------------------------------------------------------- upper bounds


def _upper(evidence: Evidence, scheme: str) -> tuple[list[LayerFinding], tuple | None]:
    from limit_transformer.depth import model_depth

    if not scheme_named(scheme).has_programs:
        return [LayerFinding(scheme, "none", None, "no program bounds the depth of this scheme's transformers: "
                             "Huang et al.'s theorems tie programs to APE and NoPE", None)], None
    candidates = program_evidence.verified(evidence, plain=scheme_named(scheme).plain_only)
    if not candidates:
        return [LayerFinding(scheme, "none", None, f"no verified {scheme_named(scheme).program_kind} program, so no "
                             "upper bound", None)], None
    candidate = min(candidates, key=lambda c: (c.passed()[0].info.depth, len(c.passed()[0].definitions)))
    checked, report = candidate.passed()
    count_depth = checked.info.depth
    findings: list[LayerFinding] = []
    layers = attention = None
    if len(checked.definitions) > COMPILED_LIMIT:
        compiled = (f"its compiled depth is not computed for programs of more than {COMPILED_LIMIT} definitions "
                    f"(this one has {len(checked.definitions)}; `crasp compile` gives it)")
    else:
        try:
            depth = model_depth(checked)
            layers, attention = depth.layers, depth.attention_layers
            compiled = f"our compiler gives it {layers} layers, {attention} with attention heads"
        except CraspError as error:
            compiled = f"it does not compile: {error}"
    strength = program_evidence.strength(report)
    findings.insert(0, LayerFinding(
        scheme, "at_most", count_depth,
        f"{candidate.origin} has count depth {count_depth}, so a transformer whose feed-forward blocks compute any "
        f"function needs at most {count_depth} attention layers; {compiled} "
        f"({program_evidence.bounds(report)})",
        strength, f"{program_evidence.THEOREMS}; {EQUIVALENCE}"))
    return findings, (count_depth, layers, attention)


COMPILED_LIMIT = 150
"""The largest program (in definitions) whose compiled depth a prediction computes: lowering takes
about a millisecond a definition, and the library's largest programs have thousands."""


def search_shallower(evidence: Evidence, schemes) -> None:
    """Where every verified program of a scheme was built from the task's automaton (one counting
    step per state it passes, so deep by construction) and is at least two deep, ask synthesis for
    one (it tries the smallest programs first), within what is left of the searches' time and at
    most :data:`~tasks.evidence.synthesis.STRENGTHEN_SECONDS` (a verified program is in hand, as
    where the verdict's search only strengthens one: a shallow program is small, and synthesis
    finds the small ones first); the bounds then take the shallower."""
    from .evidence.synthesis import MIN_SECONDS, STRENGTHEN_SECONDS, synthesized

    task = evidence.task
    if task.format is Format.ALIGNED or task.fixed_width is not None or not evidence.synthesis:
        return
    for scheme in [s for s in ("ape", "nope") if s in schemes]:
        passed = program_evidence.verified(evidence, plain=scheme_named(scheme).plain_only)
        seconds = min(evidence.clock.left, STRENGTHEN_SECONDS)
        if passed and all(c.kind is program_evidence.Origin.BUILT for c in passed) and \
                min(c.passed()[0].info.depth for c in passed) >= 2 and seconds >= MIN_SECONDS:
            synthesized(evidence, scheme, seconds)


# ---------------------------------------------------------------- lower bounds


def _renamed_prefixes(x: str, y: str, k: int, longest: int):
    """Every prefix of a word of L_k up to ``longest`` symbols, with a, b renamed x, y."""
    from .depth_languages import prefixes

    rename = {"a": x, "b": y}
    return (tuple(rename[c] for c in w) for w in prefixes(k, longest))


def _lower(evidence: Evidence, scheme: str) -> list[LayerFinding]:
    from .evidence import regular
    from .regular import blocks
    from .regular.dfa import words

    if not scheme_named(scheme).plain_only:
        return []
    task = evidence.task
    language = regular.language_of(evidence, learn=False)
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
                f"transformer of fixed precision (rounding outside attention) with fewer than {k} attention layers "
                f"recognizes L_{k} (L_{{j+1}} is not recognized at depth j)",
                strength, HIERARCHY))
    predicted = blocks.predicts(dfa)
    if predicted and predicted[0] >= 3:
        k, x, y = predicted
        if regular.inputs_include(task, _renamed_prefixes(x, y, k, DOMAIN_CHECK)):
            found.append(LayerFinding(
                scheme, "at_least", k - 2, f"on every prefix of a word of L_{k} over {{{x}, {y}}} the task says "
                f"whether the prefix is in L_{k} ({source}), and no NoPE transformer of fixed precision (rounding "
                f"outside attention) with fewer than {k - 2} attention layers solves L_{k}'s prediction problem "
                "(L_{j+3}'s is not solved at depth j)",
                strength, HIERARCHY))
    if not found:
        return [LayerFinding(scheme, "none", None, "no published lower bound applies: the task's language is none "
                             "of the depth hierarchy's L_k on two of its symbols", None)]
    best = max(found, key=lambda f: (f.strength.rank if f.strength else -1, f.layers))
    return [best]


# ---------------------------------------------------------------- both


def shallowest_program(evidence: Evidence) -> tuple[int, bool] | None:
    """(count depth, plain) of the shallowest verified program, plain ones first; None if none."""
    plain = program_evidence.verified(evidence, plain=True)
    if plain:
        return min(c.passed()[0].info.depth for c in plain), True
    found = program_evidence.verified(evidence)
    return (min(c.passed()[0].info.depth for c in found), False) if found else None


def scheme_layers(evidence: Evidence, scheme: str) -> SchemeLayers:
    """The bounds for one scheme, from the programs and the automaton the evidence holds."""
    upper_findings, upper = _upper(evidence, scheme)
    lower_findings = _lower(evidence, scheme)
    at_least = next((f.layers for f in lower_findings if f.bound == "at_least"), None)
    at_most, compiled, attention = upper if upper else (None, None, None)
    findings = [*upper_findings, *lower_findings]
    if at_least is not None and at_most is not None and at_most < at_least:
        findings.append(LayerFinding(
            scheme, "none", None, f"conflict: a verified program of count depth {at_most} and a lower bound of "
            f"{at_least} attention layers cannot both hold; both are withdrawn (check the program on longer inputs)",
            None))
        at_least = at_most = compiled = attention = None
    return SchemeLayers(scheme, at_most, at_least, compiled, attention, tuple(findings))


def layers(task: Task, schemes=("ape", "nope"), budget: Budget | None = None,
           evidence: Evidence | None = None) -> Layers:
    """The layer bounds of ``task`` for each of ``schemes`` (see the module docstring), from
    ``evidence`` (default: the task's own and library programs under ``budget``)."""
    from .findings import DEFAULT

    if evidence is None:  # asked on its own: learn the task's automaton where it has none
        evidence = Evidence(task, budget or DEFAULT, synthesis=False)
        if task.automaton is None and task.format is Format.ACCEPT:
            from .evidence.regular import automata

            evidence.get(automata)
    return Layers({scheme: scheme_layers(evidence, scheme) for scheme in schemes})


__all__ = ["layers", "shallowest_program", "search_shallower", "Layers", "SchemeLayers", "LayerFinding",
           "HIERARCHY"]
