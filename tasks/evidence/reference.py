"""The task's reference is checked before any evidence trusts it.

A prediction is only as good as the reference it reads: a reference that raises, returns None,
answers the same input in two ways, or answers in the wrong type for its format gets an error
that names the input, never a verdict.

>>> import tasks
>>> check_reference(tasks.get("bin_majority"), inputs=20)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..registry import Format, Task, TaskError


def _show(x: tuple[str, ...]) -> str:
    text = " ".join(x)
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _type_error(task: Task, answer) -> str | None:
    """What is wrong with an answer's type for the task's format (None if nothing)."""
    if task.format is Format.ACCEPT:
        return None if isinstance(answer, (bool, np.bool_)) else f"an accept task's answer must be a bool, not {type(answer).__name__}"
    if task.format is Format.SEQ2SEQ:
        if isinstance(answer, str) or not isinstance(answer, Sequence):
            return f"a seq2seq answer must be a tuple of output tokens, not {type(answer).__name__}"
        unknown = [t for t in answer if t not in task.outputs]
        if unknown:
            return (f"the answer holds {unknown[0]!r}, which is not among the task's outputs "
                    f"({', '.join(task.outputs[:10])}{', ...' if len(task.outputs) > 10 else ''}): declare it with outputs=")
        return None
    if task.format is Format.NEXT_SET:
        if not all(isinstance(s, (set, frozenset)) for s in answer):
            return "a next-set answer must be a sequence of sets, one after each prefix"
        return None
    return None


def _inputs(task: Task, count: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    if task.enumerate_inputs is not None:
        found += list(itertools.islice(task.enumerate_inputs(2), count // 2))
    elif len(task.symbols) <= 8:
        for n in range(0, 7):
            for x in itertools.product(task.symbols, repeat=n):
                if len(found) >= count // 2:
                    break
                try:
                    if len(x) + len(task.prefix) - 1 >= task.min_length and task.valid(x):
                        found.append(x)
                except Exception as error:  # noqa: BLE001 - a user's validity test
                    raise TaskError(f"the validity test of task {task.name!r} raised {type(error).__name__}: "
                                    f"{error} on input {_show(x)}") from error
    lengths = sorted({*np.linspace(task.min_length, min(task.bins[-1][1], task.max_input_length()), num=8).round()
                      .astype(int).tolist(), *(b for bin_ in task.bins for b in bin_)})
    per = max(1, (count - len(found)) // max(1, len(lengths)))
    for length in lengths:
        length = min(max(length, task.min_length), task.max_input_length())
        for _ in range(per):
            try:
                found.append(tuple(task.sample_input(length, rng)))
            except Exception as error:  # noqa: BLE001 - a user's sampler
                raise TaskError(f"the sampler of task {task.name!r} raised {type(error).__name__}: {error} "
                                f"at length {length}") from error
    return found


def check_reference(task: Task, inputs: int = 200, seed: int = 0) -> None:
    """Raise :class:`TaskError` naming the input where the reference of ``task`` raises, returns
    None, is not deterministic, or answers in the wrong type for its format."""
    rng = np.random.default_rng(seed)
    for x in _inputs(task, inputs, rng):
        try:
            first, second = task.answer(x), task.answer(x)
        except Exception as error:  # noqa: BLE001 - a user's reference: name the input
            raise TaskError(f"the reference of task {task.name!r} raised {type(error).__name__}: {error} "
                            f"on input {_show(x)}") from error
        if first is None:
            raise TaskError(f"the reference of task {task.name!r} returned None on input {_show(x)}")
        if first != second:
            raise TaskError(f"the reference of task {task.name!r} is not deterministic: input {_show(x)} gave "
                            f"{first!r}, then {second!r}")
        problem = _type_error(task, first)
        if problem:
            raise TaskError(f"the reference of task {task.name!r} on input {_show(x)} returned {first!r}: {problem}")


__all__ = ["check_reference"]
