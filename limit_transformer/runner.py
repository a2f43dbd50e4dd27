"""Run a compiled model on token sequences, with the interpreter's result type.

:func:`run` prepends the model's beginning-of-sequence token, places token k at absolute position
offset + k (as the interpreter does), runs the model and reads the outputs, so a compiled model
and the interpreter can be compared field by field. Like :func:`crasp.run`, it frames the inputs
of a program that reads ``<bos>`` (the tasks' token, an ordinary symbol of the program; see
:mod:`crasp.framing`) unless ``raw``.

>>> from crasp import parse
>>> from limit_transformer import compile
>>> model = compile(parse('A = #"a" == #"b"'))
>>> run(model, ["a b", "a a"]).accept.tolist()
[True, False]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import torch

from crasp.errors import InputError
from crasp.interpreter import RunResult, Tokens, as_batch, as_given, as_tokens, encode

if TYPE_CHECKING:  # annotations only: the model's attention_figure reaches this module through plot
    from .model import LimitTransformer


def prepare(
    model: LimitTransformer,
    batch: Sequence[Sequence[str]],
    offsets: np.ndarray,
    *,
    allow_unknown: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """Token ids and absolute positions, (batch, n+1) each with the BOS column first, and lengths."""
    tokens, lengths = token_ids(model.spec.vocabulary, model.spec.bos, batch, allow_unknown=allow_unknown)
    steps = np.minimum(np.arange(tokens.shape[1], dtype=np.int64)[None, :], lengths[:, None])
    positions = offsets[:, None] + steps  # padding repeats the last real position
    device = model.W_E.device
    return (torch.as_tensor(tokens, dtype=torch.long, device=device),
            torch.as_tensor(positions, device=device), lengths)


def token_ids(vocabulary: Sequence[str], bos: str, batch: Sequence[Sequence[str]], *,
              allow_unknown: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Ids of a compiled model's tokens, (batch, n+1) with the BOS column first and shorter inputs
    padded at the end; a token outside the program's alphabet takes the last id (the model's
    "other" token) when ``allow_unknown``. And the lengths."""
    known = {token: index for index, token in enumerate(vocabulary)}
    bos_id = known.pop(bos)
    other = len(vocabulary) - 1
    del known[vocabulary[other]]
    ids, lengths = encode(batch, known, allow_unknown=allow_unknown)
    ids = np.where(ids < 0, other, ids)
    return np.concatenate([np.full((len(batch), 1), bos_id, dtype=ids.dtype), ids], axis=1), lengths


def as_result(outputs: np.ndarray, batch: Sequence[tuple[str, ...]], lengths: np.ndarray, offsets: np.ndarray,
              output_kind: str, names: Sequence[str]) -> RunResult:
    """A :class:`crasp.RunResult` from a model's Boolean outputs (batch, n, outputs), BOS column
    dropped: the accept output at each input's last position, or each next(t) everywhere."""
    accept = accept_values = next_values = None
    if output_kind == "accept":
        accept_values = outputs[:, :, 0]
        accept = (accept_values[np.arange(len(batch)), np.maximum(lengths - 1, 0)] if len(batch)
                  else np.zeros(0, dtype=bool))
    else:
        next_values = {name: outputs[:, :, k] for k, name in enumerate(names)}
    return RunResult(tokens=tuple(batch), lengths=lengths, offsets=offsets, accept=accept, next=next_values,
                     values=None, accept_values=accept_values)


def run(
    model: LimitTransformer,
    inputs: Iterable[Tokens],
    *,
    offset: int | Sequence[int] | np.ndarray = 0,
    allow_unknown: bool = False,
    raw: bool = False,
    check_length: bool = True,
) -> RunResult:
    """The compiled model's outputs on a batch, as a :class:`crasp.RunResult`.

    ``accept_values`` (acceptance programs) and ``next`` hold the outputs at every position.
    Inputs are framed as :func:`crasp.run` frames them: a program that reads ``<bos>`` gets it
    prepended where an input does not start with it (so the empty word runs), unless ``raw``;
    the result holds the inputs as run. Inputs longer than the length the model was compiled
    for (a prepended ``<bos>`` counted) are refused unless ``check_length`` is False (then
    exactness is not guaranteed by the compiler's analysis).

    >>> from crasp import parse
    >>> from limit_transformer import compile
    >>> first_a = compile(parse('alphabet {"b"}\\nA = #("a" && #[i - j == 1] "<bos>" == 1) == 1'))
    >>> run(first_a, ["a b", "b a", ""]).accept.tolist(), run(first_a, ["a b"], raw=True).accept.tolist()
    ([True, False, False], [False])
    """
    given = [as_tokens(item) for item in inputs]
    alphabet = model.spec.vocabulary[1:-1]  # the program's symbols, between the model's own two
    batch = as_batch(given, alphabet=alphabet, raw=raw)
    offsets = np.broadcast_to(np.asarray(offset, dtype=np.int64), (len(batch),)).copy()
    longest = max((len(seq) for seq in batch), default=0)
    if check_length and longest > model.spec.max_length:
        prepended = any(len(seq) > len(item) for seq, item in zip(batch, given))
        raise InputError(
            f"an input has {longest} tokens{' (the prepended <bos> counted)' if prepended else ''} but the "
            f"model is compiled to be exact up to {model.spec.max_length}; compile with a larger max_length "
            "(--verify-length)"
        )
    try:
        tokens, positions, lengths = prepare(model, batch, offsets, allow_unknown=allow_unknown)
    except InputError as error:
        raise as_given(error, given, batch, sorted(alphabet)) from None
    with torch.no_grad():
        outputs = model.outputs(model(tokens, positions))[:, 1:, :].cpu().numpy()
    return as_result(outputs, batch, lengths, offsets, model.spec.output_kind, model.spec.outputs)
