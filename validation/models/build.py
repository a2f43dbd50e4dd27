"""One place builds and loads models: the decoder (:class:`~validation.models.gpt.GPT`) or Duan
et al.'s encoder-decoder for a task's encoding and variant, starting weights written over a fresh
model, and a trained model rebuilt from stored weights (:class:`Trained`).

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
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from tasks.registry import Example, Format, Task
from validation.config import ModelConfig, ValidationError, Variant
from validation.data.encoding import Encoding, exact_rows
from validation.models.gpt import GPT
from validation.models.seq2seq import EncoderDecoder


def check_architecture(task: Task, model: ModelConfig) -> None:
    """Outputs aligned to input positions need an encoder, and only they may use one: an encoder
    sees the whole sequence, so under teacher forcing it would read the answer it must predict."""
    aligned = task.format is Format.ALIGNED
    if aligned and not model.encoder:
        raise ValidationError(f"task {task.name!r}: its outputs are aligned to input positions and predicted in "
                              f"parallel, which needs an encoder (a model label ending -enc, e.g. "
                              f"{model.label}-enc)")
    if model.encoder and not aligned:
        raise ValidationError(f"model {model.label}: an encoder sees every position, so on {task.format.value} "
                              f"task {task.name!r} it would read the tokens it must predict; use a decoder")


def build_model(encoding: Encoding, variant: Variant, config: ModelConfig, uniform: int = 0) -> nn.Module:
    """The model of ``config`` for a task's encoding (``uniform``: the scheme's
    ``uniform_width`` of the task, for upe): the decoder-only :class:`GPT`, or Duan et al.'s encoder-decoder for their variants."""
    if variant.seq2seq:
        return EncoderDecoder(config, encoding, variant)
    return GPT(config, vocab_size=len(encoding.vocabulary), n_positions=encoding.n_positions, variant=variant,
               n_flags=len(encoding.flags), uniform=uniform)


def overwrite(model: nn.Module, weights: Mapping[str, torch.Tensor]) -> None:
    """Replace some of a fresh model's tensors: a first stage's weights, or ABC's bias tables.

    >>> from tasks import registry
    >>> from validation.config import ModelConfig
    >>> model = build_model(Encoding.of(registry.get("bin_majority")), Variant.parse("ape"), ModelConfig(1, 1, 8))
    >>> overwrite(model, {"wpe.weight": torch.zeros(3, 3)})
    Traceback (most recent call last):
    ...
    validation.config.ValidationError: starting weights do not fit this model: wpe.weight (shape or name differs)
    """
    state = model.state_dict()
    wrong = [name for name, t in weights.items() if name not in state or state[name].shape != t.shape]
    if wrong:
        raise ValidationError(f"starting weights do not fit this model: {', '.join(wrong)} (shape or name differs)")
    with torch.no_grad():
        for name, t in weights.items():
            state[name].copy_(t)


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
    """The decoder-only :class:`~validation.models.gpt.GPT` or Duan et al.'s encoder-decoder."""

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
