"""The prediction engine: will a transformer trained on short inputs of a task work on longer ones?

For each model class (APE: learned absolute positions; NoPE: none) :func:`predict` returns a
verdict, the evidence it rests on and the references, combining in this order:

1. a program that passes :func:`tasks.verify.verify`: a C-RASP[periodic, local] program gives
   "generalizes" for APE, a plain one (no positional predicates) for NoPE as well (Huang et al.
   2025, Theorems 7 and 9: such functions are expressed by a Limit Transformer with PERIODIC and
   LOCAL and identified from short inputs);
2. the communication checker: R(N) growing exponentially, on a matrix without ⊥ entries, means
   more than the O(log N) bits that Theorem 12 allows every such program: "does not generalize"
   for both classes. Constant or polynomial R proves nothing;
3. for Xu et al.'s fixed-width arithmetic, where every sequence has the same length and "longer"
   means nonzero digits where training only had zeros: whether the answer is a function of the
   trained digits alone (Xu et al.: the model computes the answer on the truncated operands);
4. documented results that neither can settle (parity, Tomita-3/5/6, {0,1,2}*02*, and the NoPE
   negatives whose arguments the task states): "does not generalize", citing them;
5. NoPE models are APE models with no positional table, so an APE "does not generalize" carries
   over to NoPE.

Anything else is "undetermined", naming what is missing.

>>> import tasks
>>> prediction = predict(tasks.get("bin_majority"), quick=True)
>>> prediction.ape.verdict.value, prediction.nope.verdict.value, prediction.agrees
('generalizes', 'generalizes', True)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from crasp.ast import Program
from crasp.checker import check
from crasp.errors import CraspError
from crasp.protocol import message_size

from . import arithmetic
from .algorithmic import HUANG
from .communication import Analysis, analyse
from .ranges import ranges
from .registry import Format, Labels, Task
from .verify import verify

PROGRAM_THEOREMS = f"{HUANG}, Theorems 7 and 9"
THEOREM_12 = f"{HUANG}, Theorem 12"
LABELS = f"{HUANG}: expressibility labels of the experiments"
CONTAINMENT = ("a NoPE transformer is an APE transformer whose positional table is zero, and plain C-RASP is "
               "contained in C-RASP[periodic, local]")

DOCUMENTED: dict[tuple[str, str], str] = {
    ("parity", "ape"): LABELS,
    ("tomita_3", "ape"): LABELS,
    ("tomita_5", "ape"): LABELS,
    ("tomita_6", "ape"): LABELS,
    ("012_star_0_2_star", "ape"): LABELS,
    ("aa_star", "nope"): LABELS,
    ("aaaa_star", "nope"): LABELS,
    ("abab_star", "nope"): LABELS,
    ("tomita_4", "nope"): LABELS,
    ("bin_majority_interleave", "nope"): LABELS,
    ("unique_copy", "nope"): LABELS,
    **{(f"copy_every_kth_k{k}{span}", "nope"): f"{HUANG}, appendix (copy every k-th token)"
       for k in (1, 2, 3) for span in ("", "_long")},
}
"""Negative results that programs and communication complexity cannot settle: (task, class) ->
reference. The statement is the task's own ``no_program`` reason for that class."""


class Verdict(enum.Enum):
    GENERALIZES = "generalizes"
    FAILS = "does not generalize"
    UNDETERMINED = "undetermined"


@dataclass(frozen=True)
class ClassVerdict:
    """The verdict for one model class, what it rests on (``basis``), the evidence and references."""

    verdict: Verdict
    basis: str
    evidence: tuple[str, ...]
    references: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"verdict": self.verdict.value, "basis": self.basis, "evidence": list(self.evidence),
                "references": list(self.references)}


@dataclass(frozen=True)
class Prediction:
    """Verdicts for APE and NoPE, the paper's labels where it has them, and the checker's table."""

    task: str
    family: str
    ape: ClassVerdict
    nope: ClassVerdict
    labels: Labels
    communication: Analysis | None = field(default=None, repr=False)

    def verdict(self, model: str) -> ClassVerdict:
        return {"ape": self.ape, "nope": self.nope}[model]

    @property
    def agrees(self) -> bool | None:
        """Whether the verdicts match the paper's labels (None where it gives none)."""
        pairs = [(v.verdict, label) for v, label in ((self.ape, self.labels.ape), (self.nope, self.labels.nope))
                 if label is not None]
        if not pairs:
            return None
        return all(verdict is (Verdict.GENERALIZES if label else Verdict.FAILS) for verdict, label in pairs)

    def to_json(self) -> dict:
        out = {"name": self.task, "family": self.family, "ape": self.ape.to_json(), "nope": self.nope.to_json(),
               "paper_labels": {"ape": self.labels.ape, "nope": self.labels.nope}, "agrees_with_paper": self.agrees}
        if self.communication is not None:
            analysis = self.communication
            out["communication"] = {
                "split": analysis.split.description, "symbols": list(analysis.symbols),
                "table": [{"n": s.n, "rows": s.rows, "bits": s.bits, "exact": s.exact} for s in analysis.table],
                "growth": analysis.growth.kind, "statement": analysis.growth.statement,
                "total": analysis.total, "applicable": analysis.applicable, "notes": list(analysis.notes)}
        return out


@dataclass(frozen=True)
class _Budget:
    exhaustive: int
    samples: int
    max_length: int
    pairs: int | None
    truncation_samples: int


FULL = _Budget(exhaustive=5000, samples=100, max_length=300, pairs=None, truncation_samples=500)
QUICK = _Budget(exhaustive=600, samples=12, max_length=120, pairs=1 << 14, truncation_samples=150)


# ---------------------------------------------------------------- evidence


@dataclass(frozen=True)
class _ProgramEvidence:
    program: Program
    plain: bool
    ok: bool
    text: str


def _programs(task: Task, extra: Iterable[Program]) -> list[tuple[str, Program]]:
    """The user's programs, then the task's library programs (each distinct program once)."""
    found: list[tuple[str, Program]] = [("given program", p) for p in extra]
    for variant in ("ape", "nope"):
        program = task.program(variant)
        if program is not None and all(program != p for _, p in found):
            found.append((f"library {variant} program", program))
    return found


def _check_program(task: Task, origin: str, program: Program, budget: _Budget, seed: int) -> _ProgramEvidence:
    try:
        checked = check(program)
        report = verify(task, checked, exhaustive_budget=budget.exhaustive, samples=budget.samples,
                        max_length=budget.max_length, random_offsets=1, seed=seed)
    except CraspError as error:  # ill-formed, or its outputs do not fit the task's format
        return _ProgramEvidence(program, False, False, f"{origin} rejected: {error}")
    info = checked.info
    needs = []
    if info.periods:
        needs.append(f"periodic predicates (period {info.period})")
    if info.offsets:
        needs.append(f"local guards (offsets {ranges(info.offsets)})")
    kind = ("a plain C-RASP program" if info.plain else
            "a C-RASP[periodic, local] program using " + " and ".join(needs))
    name = origin if program.source in ("", "<program>", "<string>") else f"{origin} {program.source}"
    if report.ok:
        size = message_size(checked, splits=(1024,))
        text = (f"{name}: {kind}, {len(checked.definitions)} definitions, verified on "
                f"{report.exhaustive_inputs} inputs exhaustively (length <= {report.exhaustive_length}) and "
                f"{report.sampled_inputs} sampled up to length {report.max_sampled_length}, at offsets "
                f"{', '.join(map(str, report.offsets))}; Theorem 12 message {size.formula()} bits")
    else:
        text = f"{name} fails verification: " + report.counterexample.describe().replace("\n", "; ")
    return _ProgramEvidence(program, info.plain, report.ok, text)


def _communication_text(analysis: Analysis) -> str:
    exact = analysis.exact
    table = ", ".join(f"R({s.n}) = {s.rows}" for s in exact[-4:])
    return (f"communication matrix ({analysis.split.description}; symbols {{{', '.join(analysis.symbols)}}}): "
            f"{table}; {analysis.growth.kind}: {analysis.growth.statement}")


def _exponential(analysis: Analysis | None) -> bool:
    return (analysis is not None and analysis.applicable and analysis.total
            and analysis.growth.kind == "exponential")


@dataclass(frozen=True)
class _Truncation:
    """Xu et al.'s test: the share of inputs beyond the training width whose answer equals the
    answer on operands truncated to the trained digits, per bin; and a proof where one exists.

    ``below`` mirrors it for fewer digits. In D_n one operand always has exactly n digits, so the
    digit pair (0, 0) at digit n, which every shorter input has, is never in training. Per bin of
    fewer digits: the share of inputs whose answer stays the same whatever nonzero digit either
    operand takes there. Where it is 100%, a shorter input differs from training inputs only in a
    digit the answer ignores; elsewhere training does not pin its answer down."""

    digits: int
    agreement: tuple[tuple[tuple[int, int], float], ...]
    proof: str | None
    below: tuple[tuple[tuple[int, int], float], ...] = ()

    @property
    def determined(self) -> bool:
        return all(share == 1.0 for _, share in self.agreement)

    @property
    def covers_below(self) -> bool:
        return all(share == 1.0 for _, share in self.below)

    def text(self) -> str:
        shares = _shares(self.agreement)
        head = (f"trained on {self.digits}-digit operands, the model only ever sees 0 above digit {self.digits}; "
                f"answers unchanged when those digits are zeroed: {shares}")
        return head + (f"; {self.proof}" if self.proof else "")

    def below_text(self) -> str:
        return (f"training never has 0 at digit {self.digits} of both operands, as every shorter input has; "
                f"answers unchanged whatever nonzero digit either operand takes there: {_shares(self.below)}")


def _shares(per_bin: tuple[tuple[tuple[int, int], float], ...]) -> str:
    return ", ".join(f"{low}-{high} digits: {100 * share:.1f}%" for (low, high), share in per_bin)


def _truncation(task: Task, samples: int, seed: int) -> _Truncation | None:
    if task.reference != arithmetic.XU:
        return None
    digits = task.train_range[1]
    rng, rng_below = np.random.default_rng(seed), np.random.default_rng((seed, 1))
    agreement, below = [], []
    for low, high in task.bins:
        if low < digits:
            shorter = (low, min(high, digits - 1))
            inputs = [task.sample_input(int(rng_below.integers(shorter[0], shorter[1] + 1)), rng_below)
                      for _ in range(samples)]
            below.append((shorter, float(np.mean([_ignores_digit(task, x, digits - 1) for x in inputs]))))
        if high <= digits:
            continue
        inputs = [task.sample_input(int(rng.integers(max(low, digits + 1), high + 1)), rng) for _ in range(samples)]
        same = [task.answer(x) == task.answer(arithmetic.truncate_operands(x, digits)) for x in inputs]
        agreement.append(((max(low, digits + 1), high), float(np.mean(same))))
    modulus = _modulus(task)
    proof = None
    if modulus is not None:
        power = next((k for k in range(1, digits + 1) if 10 ** k % modulus == 0), None)
        proof = (f"{modulus} divides 10^{power}, so a mod {modulus} depends only on the last {power} digits of a: the "
                 f"answer is a function of the trained digits (a proof)" if power is not None else
                 f"{modulus} divides no power of 10 up to 10^{digits}: digits above the training width change "
                 f"the answer mod {modulus}")
    return _Truncation(digits, tuple(agreement), proof, tuple(below))


def _ignores_digit(task: Task, x: tuple[str, ...], place: int) -> bool:
    """Whether the answer on Xu et al.'s input ``x`` stays the same whatever nonzero digit either
    operand takes at 10^``place``."""
    answer = task.answer(x)
    return all(task.answer(arithmetic.set_digit(x, operand, place, d)) == answer
               for operand in (0, 1) for d in range(1, 10))


def _modulus(task: Task) -> int | None:
    name = task.name.removeprefix("xu_")
    return int(name[3:name.index("_")]) if name.startswith("mod") else None


# ---------------------------------------------------------------- the verdict


def predict(task: Task, *, programs: Iterable[Program] = (), quick: bool = False, seed: int = 0) -> Prediction:
    """Verdicts for APE and NoPE with evidence (``programs``: extra candidate programs, e.g. the
    user's; ``quick``: smaller verification and enumeration budgets)."""
    budget = QUICK if quick else FULL
    evidence = [_check_program(task, origin, p, budget, seed) for origin, p in _programs(task, programs)]
    causal = task.format is not Format.ALIGNED
    analysis = analyse(task, max_pairs=budget.pairs) if causal else None
    refusal = None if causal else ("the model predicts its outputs in parallel with bidirectional attention: "
                                   "Theorem 12 and Huang et al.'s guarantee are about causal transformers")
    truncation = _truncation(task, budget.truncation_samples, seed)

    ape = _verdict(task, "ape", evidence, analysis, refusal, truncation)
    nope = _verdict(task, "nope", [e for e in evidence if e.plain], analysis, refusal, truncation)
    if nope.verdict is Verdict.UNDETERMINED and ape.verdict is Verdict.FAILS:
        nope = ClassVerdict(Verdict.FAILS, "containment", (f"APE: {ape.verdict.value} ({ape.basis}); {CONTAINMENT}",
                                                           *ape.evidence), ape.references)
    return Prediction(task.name, task.family, ape, nope, task.labels, analysis)


def _verdict(task: Task, model: str, programs: list[_ProgramEvidence], analysis: Analysis | None,
             refusal: str | None, truncation: _Truncation | None) -> ClassVerdict:
    failed = [e.text for e in programs if not e.ok]
    passed = [e.text for e in programs if e.ok]
    documented = DOCUMENTED.get((task.name, model))
    negative: list[tuple[str, str, str]] = []  # (basis, statement, reference)
    if _exponential(analysis):
        negative.append(("communication", _communication_text(analysis) + ": more than the C log N bits Theorem 12 "
                         "allows a C-RASP[periodic, local] program or Limit Transformer with PERIODIC and LOCAL",
                         THEOREM_12))
    if truncation is not None:
        return _fixed_width(task, model, truncation, passed, failed)
    if documented is not None:
        negative.append(("documented", task.no_program.get(model, "the paper's label"), documented))

    if passed and negative:
        return ClassVerdict(Verdict.UNDETERMINED, "conflict",
                            ("a verified program and a negative result disagree: check both", *passed,
                             *(statement for _, statement, _ in negative)),
                            (PROGRAM_THEOREMS, *(ref for _, _, ref in negative)))
    if passed:
        return ClassVerdict(Verdict.GENERALIZES, "program", (*passed, *failed), (PROGRAM_THEOREMS,))
    if negative:
        basis, statement, reference = negative[0]
        others = [s for _, s, _ in negative[1:]]
        context = _context(analysis) if basis == "documented" else []
        return ClassVerdict(Verdict.FAILS, basis, (statement, *others, *context, *failed),
                            tuple(dict.fromkeys(r for _, _, r in negative)))
    return ClassVerdict(Verdict.UNDETERMINED, "none", (*_missing(task, model, analysis, refusal, truncation), *failed),
                        _undetermined_references(task, analysis))


def _fixed_width(task: Task, model: str, truncation: _Truncation, passed: list[str], failed: list[str]) -> ClassVerdict:
    """Xu et al.'s format: every sequence has the same length, so Theorem 7 (about longer inputs) has
    nothing to extrapolate; what matters is whether the answer depends on digits training never varies."""
    width = (f"every sequence has the same length (operands padded to {arithmetic.WIDTH} digits): a program shows "
             "the task is expressible at this width, and the question is whether training pins down the "
             "digits it never varies")
    expressible = [f"expressible: {text}" for text in passed]
    below = [f"fewer digits: {truncation.below_text()}"] if truncation.below else []
    if not truncation.determined:
        return ClassVerdict(Verdict.FAILS, "truncation",
                            (truncation.text() + ": a model fitted to the training data computes the answer on "
                             "truncated operands, so these shares are its predicted accuracies", *below, width,
                             *expressible, *failed), (arithmetic.XU,))
    if passed and not truncation.covers_below:
        return ClassVerdict(Verdict.UNDETERMINED, "none",
                            (truncation.text(), f"missing: an argument for fewer digits: {truncation.below_text()}; "
                             "training does not pin their answers down", width, *expressible), (arithmetic.XU,))
    if passed:
        return ClassVerdict(Verdict.GENERALIZES, "program+truncation",
                            (truncation.text(), *below, width, *expressible), (arithmetic.XU, PROGRAM_THEOREMS))
    kind = "plain C-RASP" if model == "nope" else "C-RASP[periodic, local]"
    return ClassVerdict(Verdict.UNDETERMINED, "none",
                        (truncation.text(), f"missing: a verified {kind} program"
                         + (f" (the task says: {task.no_program[model]})" if model in task.no_program else ""),
                         *failed), (arithmetic.XU,))


def _context(analysis: Analysis | None) -> list[str]:
    if analysis is not None and analysis.exact:
        return [_communication_text(analysis) + ": not exponential, so communication complexity cannot settle it"]
    return []


def _missing(task: Task, model: str, analysis: Analysis | None, refusal: str | None,
             truncation: _Truncation | None) -> list[str]:
    kind = "plain C-RASP" if model == "nope" else "C-RASP[periodic, local]"
    lines = [f"missing: a verified {kind} program"
             + (f" (the task says: {task.no_program[model]})" if model in task.no_program else "")]
    if refusal is not None:
        lines.append(f"missing: a theory for this model: {refusal}")
    elif analysis is not None and not analysis.applicable:
        lines.append("missing: a negative argument; " + "; ".join(analysis.notes))
    elif analysis is not None:
        reason = ("⊥ entries make the count an upper bound only" if analysis.growth.kind == "exponential"
                  else "it proves nothing")
        lines.append(f"missing: a negative argument; {_communication_text(analysis)}: {reason}")
    if truncation is not None:
        lines.append(truncation.text() + ": consistent with generalizing, but a NoPE program is needed to say so")
    return lines


def _undetermined_references(task: Task, analysis: Analysis | None) -> tuple[str, ...]:
    refs = [THEOREM_12] if analysis is not None else []
    if task.reference and task.family == "arithmetic":
        refs.append(task.reference)
    return tuple(refs)


def predict_all(names: Iterable[str] | None = None, *, quick: bool = False) -> list[Prediction]:
    """:func:`predict` for the named tasks (default: every registered task)."""
    from .registry import all_tasks, get

    selected = [get(n) for n in names] if names is not None else list(all_tasks())
    return [predict(task, quick=quick) for task in selected]
