"""The layers every model here is made of: multi-head attention (self or cross, causal or not,
with relative positions where asked), the GELU MLP of width 4d, and dropout.

>>> import torch
>>> from validation.config import ModelConfig
>>> attention = Attention(ModelConfig(1, 2, 8), causal=True)
>>> attention(torch.randn(3, 5, 8))[0].shape
torch.Size([3, 5, 8])
"""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from tasks.keyed_random import hash_words
from validation.config import ModelConfig


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    mask: torch.Tensor | None = None, learned_mask: bool = False) -> torch.Tensor:
    """Softmax(q k^T / sqrt(d_head) + mask) v as one call of torch's fused attention. On a GPU it
    keeps to the math backend: under vmap (a group of seeds) the backward of the memory-efficient
    kernel fails ("LSE is not correctly aligned"), as a paper preset on an H100 showed; and so does
    a mask that is learned (``learned_mask``: relative positions), whose gradient only the math
    backend gives.

    >>> q = torch.randn(2, 1, 3, 4)
    >>> fused_attention(q, q, q, causal=True)[:, :, 0].allclose(q[:, :, 0])
    True
    """
    with sdpa_kernel(SDPBackend.MATH) if q.is_cuda or learned_mask else contextlib.nullcontext():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)


def keyed_dropout(x: torch.Tensor, rate: float, noise: torch.Tensor | None, site: int) -> torch.Tensor:
    """``x`` with each element zeroed at ``rate`` and the others scaled by 1 / (1 - rate), or ``x``
    itself when ``noise`` is None (evaluation). The mask is a pure function of ``noise`` (a seed's
    key and the step: two int64 values), the dropout ``site`` in the model and each element's
    coordinates (:mod:`tasks.keyed_random`), so every seed of a group draws its own masks whichever
    seeds train beside it and however wide their batch is padded, a CUDA graph can replay them, and
    they are the same on every device.

    >>> x = torch.ones(10, 100)
    >>> dropped = keyed_dropout(x, 0.5, torch.tensor([3, 7]), site=0)
    >>> sorted(set(dropped.flatten().tolist())), 400 < int((dropped == 0).sum()) < 600
    ([0.0, 2.0], True)
    >>> wider = keyed_dropout(torch.ones(10, 120), 0.5, torch.tensor([3, 7]), site=0)
    >>> torch.equal(dropped, wider[:, :100])  # padding more places changes no mask
    True
    """
    if noise is None or not rate:
        return x
    if max(x.shape, default=0) >= 1 << 16:
        raise ValueError(f"dropout of a tensor of shape {tuple(x.shape)}: a side of 2^16 or more")
    key = hash_words([noise[0], noise[1], site], device=x.device)
    axes = [torch.arange(size, device=x.device).view(*(-1 if k == axis else 1 for k in range(x.dim())))
            for axis, size in enumerate(x.shape)]
    words = [axes[k] << 16 | axes[k + 1] if k + 1 < len(axes) else axes[k] for k in range(0, len(axes), 2)]
    kept = (hash_words([key, *words], device=x.device) >> 8).to(torch.float32) * (1.0 / (1 << 24)) >= rate
    return x * kept / (1 - rate)


class Dropout(nn.Module):
    """:func:`keyed_dropout` at the config's rate; its ``site`` is set by :func:`number_sites`."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.rate, self.site = config.dropout, 0

    def forward(self, x: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
        return keyed_dropout(x, self.rate, noise, self.site)


def number_sites(model: nn.Module) -> None:
    """Give every dropout site of ``model`` (each :class:`Dropout`, and each :class:`Attention`'s
    weights) its own number, in the order of ``model.modules()``."""
    for site, module in enumerate(m for m in model.modules() if isinstance(m, (Dropout, Attention))):
        module.site = site


def relative_index(length: int, clip: int, uniform: int = 0, device=None) -> torch.Tensor:
    """The row of the relative-position table that query i uses for key j: the offset j - i
    clipped to [-clip, clip] (rows 0 .. 2 clip), except that keys 1 .. ``uniform`` (the digits of
    a leading operand, after ``<bos>``) have one row each (2 clip + 1, ...) for every query.

    >>> relative_index(4, 1).tolist()
    [[1, 2, 2, 2], [0, 1, 2, 2], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> relative_index(4, 1, uniform=2)[:, 1:3].tolist()
    [[3, 4], [3, 4], [3, 4], [3, 4]]
    """
    at = torch.arange(length, device=device)
    index = (at[None, :] - at[:, None]).clamp(-clip, clip) + clip
    span = min(uniform, max(0, length - 1))
    if span:
        index[:, 1:1 + span] = 2 * clip + 1 + torch.arange(span, device=device)
    return index


class Attention(nn.Module):
    """Multi-head attention, the one kind every model here uses: queries from ``x``, keys and values
    from ``x`` (self-attention) or from ``memory`` (cross-attention), through one projection
    ``c_attn`` whose rows are the query, key and value maps. Causal in a decoder, bidirectional in
    an encoder; ``mask`` is added to the scores (batch, heads or 1, queries, keys).

    With relative positions (``clip`` > 0), query i scores key j as q_i . (k_j + r_ij) / sqrt(d_head),
    r_ij the learned row :func:`relative_index` picks (Shaw et al.'s keys term; one table per
    layer, shared by heads): a bias added to the scores like ``mask``. The scores go through torch's
    fused attention unless the weights are asked for (``record``) or dropped out (``noise`` given,
    at a positive rate). ``forward`` returns the output and, with ``record``, the weights (else None).
    """

    def __init__(self, config: ModelConfig, *, causal: bool = False, clip: int = 0, uniform: int = 0) -> None:
        super().__init__()
        self.n_head, self.causal = config.n_head, causal
        self.clip, self.uniform, self.dropout, self.site = clip, uniform, config.dropout, 0
        self.c_attn = nn.Linear(config.d_model, 3 * config.d_model)
        self.c_proj = nn.Linear(config.d_model, config.d_model)
        head = config.d_model // config.n_head
        self.relative = nn.Embedding(2 * clip + 1 + uniform, head) if clip else None
        self.register_load_state_dict_pre_hook(_join_query_key_value)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                record: bool = False, noise: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        batch, length, width = x.shape  # (B, T, C)
        if memory is None:
            q, k, v = self.c_attn(x).split(width, dim=2)
        else:
            weight, bias = self.c_attn.weight, self.c_attn.bias
            q = F.linear(x, weight[:width], bias[:width])
            k, v = F.linear(memory, weight[width:], bias[width:]).split(width, dim=2)
        heads = lambda t: t.view(batch, t.shape[1], self.n_head, width // self.n_head).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)  # (B, H, T, C / H); keys and values: (B, H, S, C / H)
        if self.relative is not None:
            index = relative_index(length, self.clip, self.uniform, device=x.device)
            by_row = q @ self.relative.weight.t()  # (B, H, T, rows)
            relative = by_row.gather(-1, index.expand(batch, self.n_head, length, length)) / math.sqrt(q.shape[-1])
            mask = relative if mask is None else mask + relative
        dropped = noise is not None and self.dropout > 0
        if not (record or dropped):
            if mask is not None and self.causal:  # a float mask and is_causal cannot go together
                mask = mask.masked_fill(_future(length, k.shape[2], x.device), float("-inf"))
            mixed = fused_attention(q, k, v, causal=self.causal and mask is None, mask=mask,
                                    learned_mask=self.relative is not None)
            return self.c_proj(mixed.transpose(1, 2).reshape(batch, length, width)), None
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, S)
        if mask is not None:
            scores = scores + mask
        if self.causal:
            scores = scores.masked_fill(_future(length, k.shape[2], x.device), float("-inf"))
        weights = scores.softmax(dim=-1)
        mixed = keyed_dropout(weights, self.dropout, noise, self.site) @ v
        return self.c_proj(mixed.transpose(1, 2).reshape(batch, length, width)), weights if record else None


def _future(queries: int, keys: int, device) -> torch.Tensor:
    """Where key j lies after query i (what a causal mask hides)."""
    return torch.ones(queries, keys, dtype=torch.bool, device=device).triu(1)


def _join_query_key_value(module: nn.Module, state: dict, prefix: str, *_ignored) -> None:
    """Checkpoints written before the attention classes were one keep the encoder-decoder's
    ``query`` and ``key_value`` projections apart; their rows, stacked, are ``c_attn``."""
    for part in ("weight", "bias"):
        query, key_value = f"{prefix}query.{part}", f"{prefix}key_value.{part}"
        if query in state and key_value in state:
            state[f"{prefix}c_attn.{part}"] = torch.cat((state.pop(query), state.pop(key_value)))


def feed_forward(config: ModelConfig) -> nn.Sequential:
    """The MLP sublayer of every block (decoder-only and encoder-decoder): d -> 4d -> d with GELU."""
    return nn.Sequential(
        nn.Linear(config.d_model, 4 * config.d_model),
        nn.GELU(approximate="tanh"),
        nn.Linear(4 * config.d_model, config.d_model),
    )
