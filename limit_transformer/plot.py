"""Attention patterns of a model on one input, as arrays and as a figure (needs matplotlib; the
figure is returned, never drawn through pyplot, so matplotlib's backend is left alone).

>>> from crasp import library
>>> from limit_transformer import compile
>>> patterns = attention_patterns(compile(library.load("dyck1")), "( ( ) )")
>>> [round(w, 3) for w in patterns[(0, 0)][4].tolist()]
[0.2, 0.2, 0.2, 0.2, 0.2]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from .runner import prepare

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .model import LimitTransformer


def attention_patterns(model: LimitTransformer, tokens: str | list[str], offset: int = 0,
                       ) -> dict[tuple[int, int], np.ndarray]:
    """(layer, head) -> weights[i, j] of query i on key j (position 0 is the BOS token)."""
    sequence = tokens.split() if isinstance(tokens, str) else list(tokens)
    ids, positions, _ = prepare(model, [sequence], np.asarray([offset]), allow_unknown=True)
    states = model.residual_stream(ids, positions)
    n = ids.shape[1]
    distance = torch.arange(n)[:, None] - torch.arange(n)[None, :]
    patterns = {}
    for layer, block in enumerate(model.blocks):
        x = states[2 * layer][0]
        attn = block.attn
        for h in range(attn.n_heads):
            scores = (x @ attn.W_Q[h]) @ (x @ attn.W_K[h]).t() if attn.W_Q.shape[2] else torch.zeros(n, n, dtype=x.dtype)
            scores = scores + attn._bias_at(distance.clamp(min=0))[h]
            scores = scores.masked_fill(distance < 0, float("-inf"))
            patterns[(layer, h)] = torch.softmax(scores, dim=-1).numpy()
    return patterns


def plot_attention(model: LimitTransformer, tokens: str | list[str], *, offset: int = 0, layer: int | None = None,
                   head: int | None = None) -> Figure:
    """Every head's pattern (rows: queries, columns: keys) side by side, as a matplotlib Figure;
    only the heads of ``layer``, and only head ``head`` of a layer, where given.

    The figure is built without pyplot, so matplotlib's backend and pyplot's figures are left as
    they were; save it with ``figure.savefig(path)``, or show it in a notebook.

    >>> from crasp import library
    >>> from limit_transformer import compile
    >>> figure = plot_attention(compile(library.load("dyck1")), "( )")
    >>> type(figure).__name__, [axis.get_title() for axis in figure.axes]
    ('Figure', ['layer 0 head 0: uniform', 'layer 1 head 0: uniform'])
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - an environment without the 'plot' extra
        raise ImportError("plot_attention needs matplotlib: pip install 'crasp-lengthgen[plot]'") from None

    sequence = tokens.split() if isinstance(tokens, str) else list(tokens)
    patterns = attention_patterns(model, sequence, offset)
    if layer is not None and not 0 <= layer < model.spec.n_layers:
        raise ValueError(f"layer {layer}: the model has layers 0..{model.spec.n_layers - 1}")
    if head is not None and not any(h == head for _, h in patterns):
        raise ValueError(f"head {head}: no layer of the model has a head {head}")
    patterns = {(l, h): w for (l, h), w in patterns.items()
                if (layer is None or l == layer) and (head is None or h == head)}
    if not patterns and (layer is not None or head is not None):
        raise ValueError(f"no head {head} in layer {layer}" if head is not None else f"layer {layer} has no heads")
    labels = ["BOS", *sequence]
    count = max(len(patterns), 1)
    figure = Figure(figsize=(3.2 * count, 3.4))
    axes = figure.subplots(1, count, squeeze=False)
    for axis, ((l, h), weights) in zip(axes[0], sorted(patterns.items())):
        info = model.spec.heads[l][h]
        title = "uniform" if info.kind == "uniform" else f"offset {info.offset}"
        axis.imshow(weights, cmap="viridis", vmin=0, vmax=1)
        axis.set_title(f"layer {l} head {h}: {title}", fontsize=9)
        axis.set_xticks(range(len(labels)), labels, fontsize=7, rotation=90)
        axis.set_yticks(range(len(labels)), labels, fontsize=7)
        axis.set_xlabel("key j", fontsize=8)
        axis.set_ylabel("query i", fontsize=8)
    figure.tight_layout()
    return figure
