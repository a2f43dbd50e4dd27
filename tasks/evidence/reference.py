"""The task's reference is checked before any evidence, verification, synthesis or training trusts it.

A prediction is only as good as the reference it reads: a reference that raises, returns None,
answers the same input in two ways, or answers in the wrong type for its format gets an error
that names the input, never a verdict. :func:`check_reference` is called by
:func:`tasks.predict.predict`, :func:`tasks.verify.verify`, ``crasp synthesize`` and the training
data of :mod:`validation.data.encoding`; a task object that passed is not checked again.

>>> import tasks
>>> check_reference(tasks.get("bin_majority"), inputs=20)
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence

import numpy as np

from ..types import Format, Task, TaskError


def _show(x: tuple[str, ...]) -> str:
    text = " ".join(map(str, x))
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _tokens(values, allowed: Sequence[str], what: str) -> str | None:
    unknown = [t for t in values if t not in allowed]
    if not unknown:
        return None
    shown = ", ".join(map(str, allowed[:10])) + (", ..." if len(allowed) > 10 else "")
    return f"the answer holds {unknown[0]!r}, which is not among the task's {what} ({shown})"


def _type_error(task: Task, answer, x: tuple[str, ...] | None = None) -> str | None:
    """What is wrong with an answer's type for the task's format (None if nothing); given the input
    ``x``, also whether a next-set or aligned answer fits its length.

    >>> import tasks
    >>> _type_error(tasks.get("majority"), "a")
    'a seq2seq answer must be a tuple of output tokens, not str'
    """
    name = type(answer).__name__
    if task.format is Format.ACCEPT:
        return None if isinstance(answer, (bool, np.bool_)) else f"an accept task's answer must be a bool, not {name}"
    if task.format is Format.SEQ2SEQ:
        if isinstance(answer, str) or not isinstance(answer, Sequence):
            return f"a seq2seq answer must be a tuple of output tokens, not {name}"
        problem = _tokens(answer, task.outputs, "outputs")
        return problem and problem + ": declare it with outputs="
    positions = len(task.prefix) + len(x) if x is not None else None
    if task.format is Format.NEXT_SET:
        if isinstance(answer, (str, set, frozenset)) or not isinstance(answer, Sequence):
            return f"a next-set answer must be a tuple of sets, one after each prefix, not {name}"
        wrong = next((s for s in answer if not isinstance(s, (set, frozenset))), None)
        if wrong is not None:
            return f"a next-set answer must be a tuple of sets, one after each prefix, not of {type(wrong).__name__}"
        if positions is not None and len(answer) != positions:
            return (f"a next-set answer has one set after each prefix, the empty one first: {positions} here, "
                    f"not {len(answer)}")
        return _tokens([t for s in answer for t in sorted(s, key=str)], task.alphabet, "tokens")
    if task.format is Format.ALIGNED:
        try:
            pairs = dict(answer)
        except (TypeError, ValueError):
            return f"an aligned answer must map positions of <bos> x to output tokens (a dict), not {name}"
        bad = next((p for p in pairs if not isinstance(p, (int, np.integer)) or isinstance(p, bool)
                    or not 0 <= p < (positions if positions is not None else p + 1)), None)
        if bad is not None:
            return (f"an aligned answer's keys must be positions 0 .. {positions - 1 if positions else 'n'} of "
                    f"<bos> x, not {bad!r}")
        return _tokens(list(pairs.values()), task.outputs, "outputs")
    return None


def _inputs(task: Task, count: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    if task.enumerate_inputs is not None:
        try:
            found += [tuple(x) for x in itertools.islice(task.enumerate_inputs(2), count // 2)]
        except Exception as error:  # noqa: BLE001 - a user's enumeration
            raise TaskError(f"the input enumeration of task {task.name!r} raised {type(error).__name__}: "
                            f"{error}") from error
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


_CHECKED: dict[int, tuple[weakref.ref, int]] = {}
"""Tasks whose reference passed, by id: a weak reference to the task and how many inputs were checked."""


def check_reference(task: Task, inputs: int = 200, seed: int = 0) -> None:
    """Raise :class:`TaskError` naming the input where the reference of ``task`` raises, returns
    None, is not deterministic (each input is asked twice), or answers in the wrong type for its
    format. A task object that passed with at least ``inputs`` inputs is not checked again."""
    known = _CHECKED.get(id(task))
    if known is not None and known[0]() is task and known[1] >= inputs:
        return
    rng = np.random.default_rng(seed)
    for x in _inputs(task, inputs, rng):
        try:
            first, second = task.answer(x), task.answer(x)
        except Exception as error:  # noqa: BLE001 - a user's reference: name the input
            raise TaskError(f"the reference of task {task.name!r} raised {type(error).__name__}: {error} "
                            f"on input {_show(x)}") from error
        if first is None or second is None:
            raise TaskError(f"the reference of task {task.name!r} returned None on input {_show(x)}"
                            + ("" if first is None else f" (and {first!r} the first time)"))
        for answer in (first, second):
            problem = _type_error(task, answer, x)
            if problem:
                raise TaskError(f"the reference of task {task.name!r} on input {_show(x)} returned "
                                f"{_brief(answer)}: {problem}")
        if _differ(first, second):
            raise TaskError(f"the reference of task {task.name!r} is not deterministic: input {_show(x)} gave "
                            f"{_brief(first)}, then {_brief(second)}")
    _CHECKED[id(task)] = (weakref.ref(task), inputs)


def _differ(first, second) -> bool:
    if isinstance(first, Sequence) and isinstance(second, Sequence):
        return tuple(first) != tuple(second)
    return dict(first) != dict(second) if not isinstance(first, (bool, np.bool_)) else bool(first) != bool(second)


def _brief(answer) -> str:
    text = repr(answer)
    return text if len(text) <= 120 else text[:117] + "..."


__all__ = ["check_reference"]
