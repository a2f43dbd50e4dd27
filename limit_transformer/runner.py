"""Run a compiled model on token sequences, with the interpreter's result type.

:func:`run` prepends the beginning-of-sequence token, places token k at absolute position
offset + k (as the interpreter does), runs the model and reads the outputs, so a compiled model
and the interpreter can be compared field by field.

>>> from crasp import parse
>>> from limit_transformer import compile
>>> model = compile(parse('A = #"a" == #"b"'))
>>> run(model, ["a b", "a a"]).accept.tolist()
[True, False]
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import torch

from crasp.errors import InputError
from crasp.interpreter import RunResult, Tokens, as_tokens, encode

from .model import LimitTransformer


def prepare(
    model: LimitTransformer,
    batch: Sequence[Sequence[str]],
    offsets: np.ndarray,
    *,
    allow_unknown: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """Token ids and absolute positions, (batch, n+1) each with the BOS column first, and lengths."""
    vocabulary = {token: index for index, token in enumerate(model.spec.vocabulary)}
    bos = vocabulary.pop(model.spec.bos)
    other = len(model.spec.vocabulary) - 1
    del vocabulary[model.spec.vocabulary[other]]
    ids, lengths = encode(batch, vocabulary, allow_unknown=allow_unknown)
    ids = np.where(ids < 0, other, ids)
    tokens = np.concatenate([np.full((len(batch), 1), bos, dtype=ids.dtype), ids], axis=1)
    steps = np.minimum(np.arange(tokens.shape[1], dtype=np.int64)[None, :], lengths[:, None])
    positions = offsets[:, None] + steps  # padding repeats the last real position
    device = model.W_E.device
    return (torch.as_tensor(tokens, dtype=torch.long, device=device),
            torch.as_tensor(positions, device=device), lengths)


def run(
    model: LimitTransformer,
    inputs: Iterable[Tokens],
    *,
    offset: int | Sequence[int] | np.ndarray = 0,
    allow_unknown: bool = False,
    check_length: bool = True,
) -> RunResult:
    """The compiled model's outputs on a batch, as a :class:`crasp.RunResult`.

    ``accept_values`` (acceptance programs) and ``next`` hold the outputs at every position.
    Inputs longer than the length the model was compiled for are refused unless
    ``check_length`` is False (then exactness is not guaranteed by the compiler's analysis).
    """
    batch = [as_tokens(item) for item in inputs]
    for index, seq in enumerate(batch):
        if not seq:
            raise InputError(f"input {index + 1} is empty: a program reads its output at the last position")
    offsets = np.broadcast_to(np.asarray(offset, dtype=np.int64), (len(batch),)).copy()
    longest = max((len(seq) for seq in batch), default=0)
    if check_length and longest > model.spec.max_length:
        raise InputError(
            f"an input has {longest} tokens but the model is compiled to be exact up to "
            f"{model.spec.max_length}; compile with a larger max_length (--verify-length)"
        )
    tokens, positions, lengths = prepare(model, batch, offsets, allow_unknown=allow_unknown)
    with torch.no_grad():
        outputs = model.outputs(model(tokens, positions))[:, 1:, :].cpu().numpy()
    rows = np.arange(len(batch))
    last = np.maximum(lengths - 1, 0)
    accept = accept_values = next_values = None
    if model.spec.output_kind == "accept":
        accept_values = outputs[:, :, 0]
        accept = accept_values[rows, last] if len(batch) else np.zeros(0, dtype=bool)
    else:
        next_values = {name: outputs[:, :, k] for k, name in enumerate(model.spec.outputs)}
    return RunResult(
        tokens=tuple(batch), lengths=lengths, offsets=offsets, accept=accept, next=next_values,
        values=None, accept_values=accept_values,
    )
