"""Evidence for Xu et al.'s fixed-width arithmetic (tasks with ``fixed_width``).

Every sequence has the same length (operands padded to the width), so Theorem 7, about longer
inputs, has nothing to extrapolate: "longer" means nonzero digits where training only had zeros.
Xu et al. (arXiv 2407.17963) show that a model fitted to such data computes the answer on operands
truncated to the trained digits. So the test: per bin, the share of longer inputs whose answer
equals the answer on truncated operands (the predicted accuracy), with a proof where the modulus
divides a power of 10; and its mirror for fewer digits than trained. "Generalizes" needs every
share at 100% and a verified program showing the task is expressible at this width; a share below
100% is "does not generalize", verified on the sampled inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import arithmetic
from ..findings import Finding, Reason, Strength, Verdict, open_question, scheme_named, silent
from ..types import Task
from . import programs
from .context import Evidence
from .source import Source, cheap

NAME = "truncation"
XU = arithmetic.XU


@dataclass(frozen=True)
class Truncation:
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


def truncation(task: Task, samples: int, seed: int) -> Truncation | None:
    """Xu et al.'s test on a fixed-width task (None for any other task)."""
    if task.fixed_width is None:
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
    modulus = task.modulus
    proof = None
    if modulus is not None:
        power = next((k for k in range(1, digits + 1) if 10 ** k % modulus == 0), None)
        proof = (f"{modulus} divides 10^{power}, so a mod {modulus} depends only on the last {power} digits of a: the "
                 f"answer is a function of the trained digits (a proof)" if power is not None else
                 f"{modulus} divides no power of 10 up to 10^{digits}: digits above the training width change "
                 f"the answer mod {modulus}")
    return Truncation(digits, tuple(agreement), proof, tuple(below))


def measured(evidence: Evidence) -> Truncation | None:
    """Xu et al.'s test on the evidence's task (once per evidence: ``evidence.get(measured)``)."""
    return truncation(evidence.task, evidence.budget.truncation_samples, evidence.seed)


def _ignores_digit(task: Task, x: tuple[str, ...], place: int) -> bool:
    """Whether the answer on Xu et al.'s input ``x`` stays the same whatever nonzero digit either
    operand takes at 10^``place``."""
    answer = task.answer(x)
    return all(task.answer(arithmetic.set_digit(x, operand, place, d)) == answer
               for operand in (0, 1) for d in range(1, 10))


def _width(task: Task) -> str:
    return (f"every sequence has the same length (operands padded to {task.fixed_width} digits): a program shows the "
            "task is expressible at this width, and the question is whether training pins down the digits it never "
            "varies")


def assess(evidence: Evidence, scheme: str) -> Finding:
    task, budget = evidence.task, evidence.budget
    if not scheme_named(scheme).has_programs or task.fixed_width is None:
        return silent(NAME, "Xu et al.'s truncation test is for fixed-width tasks under APE or NoPE")
    found = evidence.get(measured)
    assert found is not None  # measured on every fixed-width task
    checked = [c for c in evidence.get(programs.candidates) if not scheme_named(scheme).plain_only or c.plain]
    passed = [programs.describe(c) for c in checked if c.ok]
    failed = [c.rejection() for c in checked if not c.ok]
    expressible = [f"expressible: {line}" for line in passed]
    below = [f"fewer digits: {found.below_text()}"] if found.below else []
    shown = found.text()
    if not found.determined:
        return Finding(NAME, Verdict.FAILS, Strength.VERIFIED,
                       f"{shown}: a model fitted to the training data computes the answer on truncated operands, so "
                       f"these shares are its predicted accuracies ({budget.truncation_samples} sampled inputs per bin)",
                       Reason.TRUNCATED_OPERANDS, (*below, _width(task), *expressible, *failed), (XU,))
    if passed and not found.covers_below:
        return open_question(NAME, f"missing: an argument for fewer digits: {found.below_text()}; training does not "
                             "pin their answers down", Reason.NO_ARGUMENT, (shown, _width(task), *expressible), (XU,))
    if passed:
        return Finding(NAME, Verdict.GENERALIZES, Strength.VERIFIED,
                       f"{shown}; a verified program ({budget.truncation_samples} sampled inputs per bin)",
                       Reason.TRUNCATION_AGREES, (*below, _width(task), *expressible), (XU, programs.THEOREMS))
    kind = scheme_named(scheme).program_kind
    reason = task.no_program.get(scheme)
    return open_question(NAME, f"missing: a verified {kind} program", Reason.NO_PROGRAM,
                         (shown + ": consistent with generalizing, but a program is needed to say so",
                          *([f"the task says: {reason}"] if reason else []), *failed), (XU,))


SOURCE = Source(NAME, frozenset({"ape", "nope"}), frozenset({Verdict.GENERALIZES, Verdict.FAILS}), cheap, assess)

__all__ = ["SOURCE", "NAME", "truncation", "Truncation"]
