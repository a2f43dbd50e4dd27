"""Relative alignment: does a format hand relative positions the task's translation symmetry?

Addition is translation-invariant: multiply both operands by 10 and the answer moves one digit
(Sabbaghi et al. 2024; Xu et al. 2024). A model with relative positions inherits that symmetry
only if, in the token sequence, every output digit then moves by as many positions as the operand
digits it reads; then output digit i sees its operands at the same offsets for every i, and a rule
learned at the trained digits is the rule at every other digit (up to carry cascades longer than
any in training, which no fixed set of offsets covers). Fields that do not move under the
symmetry (Sabbaghi et al.'s 3-digit multiplier) must have positions that do not depend on the
query: their uniform positions.

The check runs the task's own reference: it shifts operand fields of sampled inputs (drop the
leading padding token, append a 0: the operand times 10, each digit one position to the left) and
asks by how many positions the answer's digits move. An *operand field* is a maximal run of digit
or ``<pad>`` tokens, most significant digit first (every arithmetic format of the suite).

>>> from tasks import get
>>> relative_alignment(get("sabbaghi_addition")).aligned
True
>>> xu = relative_alignment(get("xu_addition"))
>>> xu.aligned, [s.output_step for s in xu.symmetries]
(False, [1])
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .arithmetic import DIGITS, PAD
from .types import Task, TaskError

FIELD_TOKENS = frozenset((*DIGITS, PAD))
PADDING = frozenset(("0", PAD))
STEPS = (-1, 1, -2, 2, -3, 3)
"""The output moves tried for one shift: a shift of k fields by one digit moves the answer by at most k."""
MIN_SHIFTED = 8
"""The fewest sampled inputs a shift must be possible on before its step counts."""
SABBAGHI_E = "Sabbaghi et al. 2024, Appendix E (relative positions and carry cascades)"


@dataclass(frozen=True)
class Symmetry:
    """Shifting ``fields`` (sequence positions, ``<bos>`` included) one digit moves every answer
    digit by ``output_step`` positions, on all of ``samples`` sampled inputs; the fields' own digits
    move by -1."""

    fields: tuple[tuple[int, int], ...]
    output_step: int
    samples: int


@dataclass(frozen=True)
class Alignment:
    """The task's operand fields, its shift symmetries, and whether one of them is aligned for a
    model whose first ``uniform`` input tokens have query-independent (uniform) positions."""

    task: str
    fields: tuple[tuple[int, int], ...]
    symmetries: tuple[Symmetry, ...]
    uniform: int
    aligned: bool
    evidence: str


def operand_fields(task: Task, x: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """Maximal runs [start, stop) of digit or ``<pad>`` tokens of ``x``, as positions in the framed
    sequence (after the task's prefix)."""
    head, runs, start = len(task.prefix), [], None
    for k, token in enumerate((*x, None)):
        if token in FIELD_TOKENS and start is None:
            start = k
        elif token not in FIELD_TOKENS and start is not None:
            runs.append((head + start, head + k))
            start = None
    return tuple(runs)


def shifted(task: Task, x: tuple[str, ...], fields) -> tuple[str, ...] | None:
    """``x`` with every field in ``fields`` times 10 (its leading padding dropped, a 0 appended), or
    None when a field has no leading padding to drop or the result is not a valid input."""
    out, head = list(x), len(task.prefix)
    for start, stop in fields:
        start, stop = start - head, stop - head
        if out[start] not in PADDING:
            return None
        out[start:stop] = [*out[start + 1:stop], "0"]
    moved = tuple(out)
    return moved if task.valid(moved) else None


def _digit_targets(task: Task, x: tuple[str, ...]) -> dict[int, str]:
    example = task.example(x)
    return {q: t for q, t in zip(example.checked, example.targets) if isinstance(t, str) and t in FIELD_TOKENS}


def _moves_by(before: dict[int, str], after: dict[int, str], step: int) -> bool:
    """Whether ``after`` is ``before`` moved by ``step`` positions: nothing but padding falls off
    the far end, and the vacated near end reads 0."""
    for q, token in before.items():
        if q + step in after:
            if after[q + step] != token:
                return False
        elif token not in PADDING:
            return False
    return all(after[q] == "0" for q in after if q - step not in before)


def _step(before: dict[int, str], after: dict[int, str]) -> int | None:
    """The step (of :data:`STEPS`) by which ``after`` is ``before`` moved, or None."""
    return next((step for step in STEPS if _moves_by(before, after, step)), None)


def symmetries(task: Task, samples: int = 48, seed: int = 0) -> tuple[tuple[tuple[int, int], ...],
                                                                       tuple[Symmetry, ...], bool]:
    """The task's operand fields; every set of them whose shift moves the answer by one constant
    step on every sampled input where the shift is possible (at least ``MIN_SHIFTED`` of them);
    and whether any set could be shifted at all (a format that pads its operands to a fixed
    width). Inputs whose answer is all zeros (it moves by any step) are left out."""
    rng = np.random.default_rng([seed, 23])
    length = max(task.min_length, min(task.max_input_length(), 40) // 2)
    inputs = [tuple(task.sample_input(length, rng)) for _ in range(samples)]
    fields = operand_fields(task, inputs[0])
    if any(operand_fields(task, x) != fields for x in inputs):
        return fields, (), False  # fields that move from input to input: no fixed layout to shift
    answers = {x: _digit_targets(task, x) for x in inputs}
    answers = {x: digits for x, digits in answers.items() if any(t not in PADDING for t in digits.values())}
    found, shiftable = [], False
    for size in range(1, len(fields) + 1):
        for chosen in itertools.combinations(fields, size):
            moved = {x: shifted(task, x, chosen) for x in answers}
            steps = [_step(answers[x], _digit_targets(task, m)) for x, m in moved.items() if m is not None]
            shiftable |= len(steps) >= MIN_SHIFTED
            if len(steps) >= MIN_SHIFTED and len(set(steps)) == 1 and steps[0] is not None:
                found.append(Symmetry(chosen, steps[0], len(steps)))
    return fields, tuple(found), shiftable


def relative_alignment(task: Task, uniform: int = 0, samples: int = 48, seed: int = 0) -> Alignment:
    """Whether relative positions (with the first ``uniform`` input tokens at uniform positions)
    see a shift symmetry of the task as a translation: some shift moves the answer by -1, as it
    moves the shifted fields' digits; no shifted field is uniform (its digits would look alike);
    and every field it leaves in place is uniform."""
    fields, found, shiftable = symmetries(task, samples, seed)
    pinned = {f for f in fields if f[1] <= len(task.prefix) + uniform}
    for symmetry in found:
        still = [f for f in fields if f not in symmetry.fields]
        moving_seen = not any(f in pinned for f in symmetry.fields)  # uniform positions hide a field's shift
        if symmetry.output_step == -1 and moving_seen and all(f in pinned for f in still):
            kept = (f", and the operand(s) at {_spans(still)} have uniform positions" if still else "")
            return Alignment(task.name, fields, found, uniform, True,
                             f"shifting the operand(s) at {_spans(symmetry.fields)} one digit moves every answer "
                             f"digit one position left, as it moves their digits{kept}: output digit i reads them at "
                             f"the same relative offsets for every i (checked on {symmetry.samples} inputs); carry "
                             f"cascades longer than in training are not covered")
    return Alignment(task.name, fields, found, uniform, False, _why_not(fields, found, pinned, shiftable))


def _why_not(fields, found, pinned, shiftable: bool) -> str:
    if not shiftable:
        return ("no operand field has leading padding to shift into: the format grows with its operands instead "
                "of padding them to a fixed width, and this check does not apply")
    if not found:
        return ("no shift of the operands by one digit moves the answer by a constant step on every sampled input: "
                "the task has no translation symmetry for relative positions to carry")
    parts = []
    for symmetry in found:
        still = [f for f in fields if f not in symmetry.fields and f not in pinned]
        hidden = [f for f in symmetry.fields if f in pinned]
        if hidden:
            parts.append(f"shifting the operand(s) at {_spans(symmetry.fields)} moves the answer, but the field(s) at "
                         f"{_spans(hidden)} have uniform positions, under which their digits cannot be told apart")
        elif symmetry.output_step != -1:
            way = "right" if symmetry.output_step > 0 else "left"
            parts.append(f"shifting the operand(s) at {_spans(symmetry.fields)} moves their digits one position left "
                         f"but the answer's {abs(symmetry.output_step)} {way}: the offset from output digit i to the "
                         f"digits it reads changes by {abs(symmetry.output_step + 1)} per digit")
        else:
            parts.append(f"shifting the operand(s) at {_spans(symmetry.fields)} moves the answer with them, but the "
                         f"field(s) at {_spans(still)} stay put without uniform positions, so their offsets from "
                         f"output digit i change with i")
    return "; ".join(parts) + " (checked on the task's reference): relative positions do not carry the rule to new digits"


def _spans(fields) -> str:
    if len(fields) == 1 and fields[0][1] - fields[0][0] == 1:
        return f"position {fields[0][0]}"
    return "positions " + " and ".join(f"{start}-{stop - 1}" if stop - start > 1 else f"{start}" for start, stop in fields)


def leading_operand_width(task: Task) -> int:
    """The number of input tokens before the first operator (``+``, ``*``), the same in every
    example: the digits that uniform positions give one vector each (Sabbaghi et al.'s multiplier).

    >>> from tasks import registry
    >>> leading_operand_width(registry.get("sabbaghi_multiplication"))
    3
    """
    rng = np.random.default_rng(0)
    widths = set()
    for low, high in (task.train_range, *task.bins):
        for example in task.sample_bin(low, high, 5, rng):
            tokens = example.tokens[len(task.prefix):]
            widths.add(next((k for k, t in enumerate(tokens) if t in ("+", "*")), None))
    width = next(iter(widths)) if len(widths) == 1 else None
    if not width:  # several widths, no operator, or an operator first
        raise TaskError(f"task {task.name!r}: uniform positions need a leading operand of one fixed width "
                              f"before '+' or '*' (found widths {sorted(widths, key=str)})")
    return width


__all__ = ["Alignment", "Symmetry", "operand_fields", "shifted", "symmetries", "relative_alignment",
           "leading_operand_width"]
