"""Questions put to a trained model after training: whether it answers an input as if it were
another one (Xu et al.'s truncated operands), and inputs drawn at chosen lengths.

Exact match is teacher-forced, as in training's evaluation: an example counts when every checked
position's argmax is its target. For a decoder that is the same as greedy decoding reproducing the
whole target, so teacher-forcing the *other* input's answer asks whether greedy decoding would
write that answer.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from tasks.registry import Example, Format, Task
from validation.config import ValidationError


def answered_as(task: Task, x: Sequence[str], other: Sequence[str]) -> Example:
    """The example of input ``x`` whose target is the answer to input ``other`` (of the same
    layout): teacher-forced exact match on it asks whether the model answers x as if it were other.

    >>> from tasks import registry
    >>> from tasks.arithmetic import operands_x, truncate_operands
    >>> task = registry.get("xu_addition")
    >>> x = operands_x(98765, 43, "+")
    >>> example = answered_as(task, x, truncate_operands(x, 3))
    >>> "".join(example.targets[:4])   # 765 + 43 = 808, reversed
    '8080'
    """
    if task.format is not Format.SEQ2SEQ:
        raise ValidationError(f"task {task.name!r}: answering as another input needs a seq2seq task")
    own, alternative = task.example(tuple(x)), task.example(tuple(other))
    if len(own.tokens) != len(alternative.tokens) or own.checked != alternative.checked:
        raise ValidationError(f"task {task.name!r}: the two inputs frame to different layouts")
    head = own.checked[0] + 1
    return Example((*own.tokens[:head], *alternative.tokens[head:]), alternative.checked, alternative.targets,
                   own.length, own.offset)


def input_of(task: Task, example: Example) -> tuple[str, ...]:
    """The input x of a framed seq2seq example: the tokens between the task's prefix and the answer.

    >>> from tasks import registry
    >>> task = registry.get("duan_successor")
    >>> input_of(task, task.example(("1", "9")))
    ('1', '9')
    """
    return tuple(example.tokens[len(task.prefix):example.checked[0] + 1 - (1 if task.separator else 0)])


def by_length(task: Task, lengths: Sequence[int], count: int, seed: int = 0,
              transform: Callable[[Example], Example] | None = None) -> dict[int, list[Example]]:
    """``count`` test examples of each length (the same for every model that uses ``seed``, and
    for a length whatever others are asked for), optionally transformed (e.g. retargeted with
    :func:`answered_as`)."""
    sets = {}
    for length in lengths:
        examples = task.sample_bin(length, length, count, np.random.default_rng([seed, 11, length]))
        sets[length] = [transform(e) for e in examples] if transform else examples
    return sets
