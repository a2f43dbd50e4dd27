"""What a search asks of a task: its inputs (every one up to a small length, then random longer
ones, each at a position offset), the tokens of its predicates, and the outputs to find."""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np

from crasp.errors import CraspError

from ..types import EOS
from ..verify import exhaustive_inputs
from .config import SynthesisConfig, SynthesisError
from .evaluator import Batch


@dataclass
class Output:
    """One Boolean to find: ``want`` at the flat positions ``where``, anything elsewhere."""

    name: str  # "accept", or the output token
    where: np.ndarray
    want: np.ndarray
    solution: int | None = None
    size: int | None = None


def format_of(task) -> str:
    return getattr(task.format, "value", task.format)


def targets(task, batch: Batch, names: Sequence[str]) -> list[Output]:
    where: list[int] = []
    values: list[bool | str | frozenset[str]] = []
    for (example, _), base in zip(batch.examples, batch.starts.tolist()):
        where.extend(base + k for k in example.checked)
        values.extend(example.targets)
    where_array = np.array(where, dtype=np.int64)
    if format_of(task) == "accept":
        return [Output("accept", where_array, np.array([bool(v) for v in values], dtype=bool))]
    if format_of(task) == "next-set":
        sets = cast("list[frozenset[str]]", values)
        return [Output(t, where_array, np.array([t in v for v in sets], dtype=bool)) for t in names]
    return [Output(t, where_array, np.array([v == t for v in values], dtype=bool)) for t in names]


def output_names(task, examples: Sequence[tuple]) -> list[str]:
    if format_of(task) == "accept":
        return ["accept"]
    seen: dict[str, None] = dict.fromkeys(task.outputs)
    if format_of(task) in ("seq2seq", "next-set"):
        seen[EOS] = None
    for example, _ in examples:
        for target in example.targets:
            for token in (target if isinstance(target, frozenset) else [target]):
                seen[token] = None
    return list(seen)


def initial_examples(task, config: SynthesisConfig, rng: np.random.Generator,
                      deadline: float | None = None) -> list[tuple]:
    """All inputs up to a small length (the lengths enumerated before ``deadline``), then random
    longer ones, each at a position offset."""
    plain = config.plain
    spread = math.lcm(*range(2, config.max_period + 1)) if not plain else 1
    framed = _exhaustive(task, config, deadline)
    longest = max((e.length for e in framed), default=0)
    top = min(config.max_random_length, task.max_input_length())
    low = max(task.min_length, longest + 1)
    if config.random_inputs and top >= task.min_length:
        for length in np.linspace(min(low, top), top, num=config.random_inputs).round().astype(int):
            try:
                framed.append(task.sample(int(length), rng))
            except CraspError:  # a length the task's sampler cannot produce (a guarded sampler raises this)
                continue
    examples, seen = [], set()
    for example in framed:
        offset = int(rng.integers(0, spread)) if spread > 1 else 0
        key = (example.tokens, offset)
        if key not in seen:
            seen.add(key)
            examples.append((example, offset))
    if not examples:
        raise SynthesisError(f"task {task.name!r} produced no inputs to synthesize from")
    return examples


def _exhaustive(task, config: SynthesisConfig, deadline: float | None = None) -> list:
    """Framed examples of every valid input up to the longest length within the budget (and whose
    enumeration, at the pace of the length before, ends before ``deadline``)."""
    budget = config.exhaustive_inputs
    found: list = []
    last = 0.0

    def in_time() -> bool:
        return deadline is None or time.perf_counter() + 4 * last <= deadline

    if task.enumerate_inputs is not None:
        for length in range(0, config.max_exhaustive_length + 1):
            if not in_time():
                break
            started = time.perf_counter()
            batch = list(itertools.islice(task.enumerate_inputs(length), budget + 1))
            last = time.perf_counter() - started
            if len(batch) > budget:
                break
            found = batch
    else:
        symbols = tuple(task.symbols[:5])
        for length in range(0, config.max_exhaustive_length + 1):
            total = sum(len(symbols) ** n for n in range(length + 1))
            if total > 50 * budget and found or not in_time():
                break
            started = time.perf_counter()
            batch = exhaustive_inputs(task, length, symbols)
            last = time.perf_counter() - started
            if len(batch) > budget:
                break
            found = batch
    examples = []
    for x in found:
        try:
            examples.append(task.example(x))
        except CraspError:  # an input the (guarded) reference rejects
            continue
    return examples


def alphabet_of(task, examples: Sequence[tuple]) -> tuple[str, ...]:
    """The tokens of the search's token predicates: those of the inputs, and the task's symbols."""
    seen = dict.fromkeys(task.prefix)
    for example, _ in examples:
        seen.update(dict.fromkeys(example.tokens))
    seen.update(dict.fromkeys(task.symbols))
    return tuple(seen)
