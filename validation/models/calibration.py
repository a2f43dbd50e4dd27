"""Duan et al.'s attention bias calibration: read a trained ``sinusoidal`` encoder-decoder's
attention on training examples, average it along the lines of :mod:`validation.models.attention_bias`,
and keep the lines far above the mean as the bias tables an ``abc`` model trains with."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from tasks.registry import Example
from validation.config import ValidationError
from validation.data.encoding import IGNORE, Encoding, exact_rows
from validation.models.seq2seq import EncoderDecoder

from . import attention_bias as lines


def calibrate(model: EncoderDecoder, encoding: Encoding, examples: Sequence[Example], *,
              kappa_cross: float = lines.KAPPA_CROSS, kappa_self: float = lines.KAPPA_SELF,
              every_layer: bool = False, batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor, int]:
    """ABC's (self, cross) bias tables from a trained model: its last block's attention weights on
    the ``examples`` it answers exactly, summed along every line per example, thresholded per head. Also
    returns how many examples were used; refuses when none is answered exactly.

    With ``every_layer``, every block is summed and thresholded on its own, and a head's table
    keeps the lines that head kept in any block (at the larger bias where two blocks keep one).
    """
    heads = model.config.n_head
    read = range(len(model.blocks)) if every_layer else (len(model.blocks) - 1,)
    own = {b: lines.LineSums.empty(heads, len(lines.SELF), model.half_width) for b in read}
    source = {b: lines.LineSums.empty(heads, len(lines.CROSS), model.half_width) for b in read}
    used = 0
    device = next(model.parameters()).device
    model.eval()
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            batch = encoding.collate(examples[start:start + batch_size]).to(device)
            logits, recorded = model(batch.ids, batch.positions, record=True)
            checked = batch.targets != IGNORE
            exact = exact_rows(logits, batch, uses_flags=False)
            if not bool(exact.any()):
                continue
            keep = exact.nonzero().squeeze(-1)
            where = lines.layout(batch.ids[keep], sep=model.sep, pad=model.pad, operators=model.operators)
            for b in read:
                own_weights, source_weights = recorded[b]
                own[b].add(own_weights[keep], lines.SELF, where, checked[keep])
                source[b].add(source_weights[keep], lines.CROSS, where, checked[keep])
            used += int(keep.numel())
    if not used:
        raise ValidationError(f"task {encoding.task.name!r}: attention bias calibration needs a model that answers "
                              f"training inputs exactly, and this one answers none of {len(examples)}")
    union = lambda sums, kappa: torch.stack([lines.calibrated(s, kappa) for s in sums.values()]).amax(0)
    return union(own, kappa_self), union(source, kappa_cross), used


CALIBRATION_EXAMPLES = 512
"""Training inputs decoded to calibrate one model's biases."""


def calibration_examples(task, count: int, seed: int) -> list[Example]:
    """``count`` training inputs (lengths of the training range) to calibrate on."""
    return task.sample_bin(*task.train_range, count, np.random.default_rng([seed, 29]))
