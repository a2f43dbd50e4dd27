"""Questions put to a trained model after training: exact match on chosen examples, and whether it
answers as if the input were another one (Xu et al.'s truncated operands).

A :class:`Trained` model is rebuilt from a stored run's weights with the task it was trained on.
Exact match is teacher-forced, as in training's evaluation: an example counts when every checked
position's argmax is its target. For a decoder that is the same as greedy decoding reproducing the
whole target, so teacher-forcing the *other* input's answer asks whether greedy decoding would
write that answer.

>>> import numpy as np
>>> from tasks import registry
>>> from validation.config import ModelConfig, Variant
>>> task = registry.get("bin_majority")
>>> trained = Trained.fresh(task, Variant.parse("ape"), ModelConfig(1, 1, 16), seed=0)
>>> trained.exact(task.sample_bin(1, 5, 3, np.random.default_rng(0))).shape
(3,)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from tasks.registry import Example, Format, Task

from .config import ModelConfig, ValidationError, Variant
from .data import Encoding, exact_rows
from .train import build_model

EVAL_TOKENS = 2**17
"""Tokens per evaluation chunk (bounds the memory of a probe)."""


@dataclass(frozen=True)
class Trained:
    """A trained model with the task (as trained: a preset may rescale it) and its encoding."""

    task: Task
    variant: Variant
    config: ModelConfig
    encoding: Encoding
    model: nn.Module
    """The decoder-only :class:`~validation.model.GPT` or Duan et al.'s encoder-decoder."""

    @classmethod
    def from_weights(cls, task: Task, variant: Variant, config: ModelConfig, weights: dict[str, torch.Tensor],
                     device: str | torch.device = "cpu") -> "Trained":
        """The model of a stored run (``Store.weights``), in evaluation mode on ``device``."""
        trained = cls.fresh(task, variant, config, seed=0)
        try:
            trained.model.load_state_dict(weights)
        except RuntimeError as error:
            raise ValidationError(f"weights do not fit a {config.label} {variant.name} model of task "
                                  f"{task.name!r}: {str(error).splitlines()[0]}") from None
        trained.model.to(device)
        return trained

    @classmethod
    def fresh(cls, task: Task, variant: Variant, config: ModelConfig, seed: int) -> "Trained":
        """An untrained model, initialised as training initialises ``seed``."""
        encoding = Encoding.of(task)
        uniform = variant.scheme.uniform_width(task)
        torch.manual_seed(seed)
        return cls(task, variant, config, encoding, build_model(encoding, variant, config, uniform).eval())

    @torch.no_grad()
    def exact(self, examples: Sequence[Example]) -> np.ndarray:
        """Per example, whether every checked position is predicted right (teacher-forced)."""
        if not examples:
            return np.zeros(0, dtype=bool)
        device = next(self.model.parameters()).device
        order = sorted(range(len(examples)), key=lambda k: len(examples[k].tokens))
        right = np.zeros(len(examples), dtype=bool)
        start = 0
        while start < len(order):
            width = len(examples[order[start]].tokens)
            stop = start + max(1, EVAL_TOKENS // max(width, 1))
            chunk = order[start:stop]
            batch = self.encoding.collate([examples[k] for k in chunk]).to(device)
            out = self.model(batch.ids, batch.positions)
            right[chunk] = exact_rows(out, batch, self.encoding.uses_flags).cpu().numpy()
            start = stop
        return right


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
