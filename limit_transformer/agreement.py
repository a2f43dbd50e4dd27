"""Compare a compiled model with the interpreter, output by output and position by position.

>>> from crasp import check, library
>>> from limit_transformer import compile
>>> checked = check(library.load("dyck1"))
>>> report = verify(compile(checked), checked, max_length=64, count=20)
>>> report.ok, report.inputs
(True, 20)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp.checker import CheckedProgram
from crasp.interpreter import RunResult, length_batches, run as interpret

from .model import LimitTransformer
from .runner import run as run_compiled


@dataclass(frozen=True)
class Mismatch:
    """One output at one position where the model and the interpreter differ."""

    tokens: tuple[str, ...]
    offset: int
    position: int
    output: str
    expected: bool
    got: bool

    def describe(self) -> str:
        shown = " ".join(self.tokens) if len(self.tokens) <= 40 else " ".join(self.tokens[:40]) + " ..."
        return (f"{self.output} at position {self.position} (offset {self.offset}): interpreter "
                f"{self.expected}, model {self.got}; input of {len(self.tokens)} tokens: {shown}")


@dataclass(frozen=True)
class Verification:
    inputs: int
    positions: int
    longest: int
    mismatches: tuple[Mismatch, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        head = (f"{self.inputs} inputs up to {self.longest} tokens, {self.positions} positions: ")
        if self.ok:
            return head + "compiled model equals the interpreter"
        return head + f"{len(self.mismatches)} mismatches; first: {self.mismatches[0].describe()}"

    def to_json(self) -> dict:
        """``ok``, the inputs, positions and longest input compared, and the mismatches listed
        (each: its tokens, offset, position, output, and the interpreter's and the model's value)."""
        return {"ok": self.ok, "inputs": self.inputs, "positions": self.positions, "longest": self.longest,
                "mismatches": [{"tokens": list(m.tokens), "offset": m.offset, "position": m.position,
                                "output": m.output, "expected": m.expected, "got": m.got} for m in self.mismatches]}


def per_position(result: RunResult) -> dict[str, np.ndarray]:
    """Every output at every position: accept, or next(t) for each declared token."""
    if result.accept_values is not None:
        return {"accept": result.accept_values}
    return dict(result.next or {})


def compare(
    model: LimitTransformer,
    checked: CheckedProgram,
    inputs: Sequence[Sequence[str]],
    offsets: Sequence[int],
    *,
    limit: int = 10,
) -> Verification:
    """Run both on the inputs and list (up to ``limit``) mismatching outputs."""
    offset_array = np.asarray(offsets, dtype=np.int64)
    expected = interpret(checked, inputs, offset=offset_array, trace=True, allow_unknown=True, raw=True)
    got = run_compiled(model, inputs, offset=offset_array, allow_unknown=True, raw=True, check_length=False)
    want, have = per_position(expected), per_position(got)
    mismatches: list[Mismatch] = []
    for row, tokens in enumerate(expected.tokens):
        n = len(tokens)
        for name in want:
            wrong = np.flatnonzero(want[name][row, :n] != have[name][row, :n])
            for k in wrong[: max(limit - len(mismatches), 0)]:
                mismatches.append(Mismatch(tuple(tokens), int(offset_array[row]), int(k) + 1, name,
                                           bool(want[name][row, k]), bool(have[name][row, k])))
    return Verification(len(inputs), int(expected.lengths.sum()),
                        int(expected.lengths.max(initial=0)), tuple(mismatches))


def random_inputs(
    checked: CheckedProgram,
    count: int,
    max_length: int,
    rng: np.random.Generator,
    alphabet: Sequence[str] = (),
    max_offset: int = 1000,
) -> tuple[list[list[str]], list[int]]:
    """``count`` random token strings of lengths in 1..max_length (the last one exactly that
    long) over the program's alphabet, with random offsets."""
    symbols = sorted(set(checked.info.alphabet) | set(alphabet)) or ["x"]
    lengths = rng.integers(1, max_length + 1, size=count)
    if count:
        lengths[-1] = max_length
    inputs = [list(rng.choice(symbols, size=int(n))) for n in lengths]
    return inputs, rng.integers(0, max_offset + 1, size=count).tolist()


def verify(
    model: LimitTransformer,
    checked: CheckedProgram,
    *,
    max_length: int,
    count: int = 100,
    seed: int = 0,
    batch_cells: int = 1 << 16,
) -> Verification:
    """Compare on ``count`` random inputs up to ``max_length`` tokens, in batches of similar length."""
    rng = np.random.default_rng(seed)
    inputs, offsets = random_inputs(checked, count, max_length, rng)
    reports = [
        compare(model, checked, [inputs[k] for k in chosen], [offsets[k] for k in chosen])
        for chosen in length_batches([len(tokens) for tokens in inputs], batch_cells)
    ]
    mismatches = tuple(m for r in reports for m in r.mismatches)
    return Verification(count, sum(r.positions for r in reports),
                        max((r.longest for r in reports), default=0), mismatches)
