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

from validation.config import ModelConfig


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    mask: torch.Tensor | None = None, dropout: float = 0.0) -> torch.Tensor:
    """Softmax(q k^T / sqrt(d_head) + mask) v as one call of torch's fused attention. On a GPU it
    keeps to the math backend: under vmap (a group of seeds) the backward of the memory-efficient
    kernel fails ("LSE is not correctly aligned"), as a paper preset on an H100 showed.

    >>> q = torch.randn(2, 1, 3, 4)
    >>> fused_attention(q, q, q, causal=True)[:, :, 0].allclose(q[:, :, 0])
    True
    """
    with sdpa_kernel(SDPBackend.MATH) if q.is_cuda else contextlib.nullcontext():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, dropout_p=dropout)


def dropout_layer(config: ModelConfig) -> nn.Module:
    """``nn.Dropout`` at the config's rate, or the identity when the rate is 0 (no random draws)."""
    return nn.Dropout(config.dropout) if config.dropout else nn.Identity()


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
    layer, shared by heads). ``forward`` returns the output and, with ``record``, the attention
    weights (else None).
    """

    def __init__(self, config: ModelConfig, *, causal: bool = False, clip: int = 0, uniform: int = 0) -> None:
        super().__init__()
        self.n_head, self.causal = config.n_head, causal
        self.clip, self.uniform, self.dropout = clip, uniform, config.dropout
        self.c_attn = nn.Linear(config.d_model, 3 * config.d_model)
        self.c_proj = nn.Linear(config.d_model, config.d_model)
        head = config.d_model // config.n_head
        self.relative = nn.Embedding(2 * clip + 1 + uniform, head) if clip else None
        self.register_load_state_dict_pre_hook(_join_query_key_value)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                record: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        batch, length, width = x.shape
        if memory is None:
            q, k, v = self.c_attn(x).split(width, dim=2)
        else:
            weight, bias = self.c_attn.weight, self.c_attn.bias
            q = F.linear(x, weight[:width], bias[:width])
            k, v = F.linear(memory, weight[width:], bias[width:]).split(width, dim=2)
        heads = lambda t: t.view(batch, t.shape[1], self.n_head, width // self.n_head).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        dropout = self.dropout if self.training else 0.0
        if self.relative is None and not record:
            mixed = fused_attention(q, k, v, causal=self.causal, mask=mask, dropout=dropout)
            return self.c_proj(mixed.transpose(1, 2).reshape(batch, length, width)), None
        scores = q @ k.transpose(-2, -1)
        if self.relative is not None:
            index = relative_index(length, self.clip, self.uniform, device=x.device)
            by_row = q @ self.relative.weight.t()  # (batch, heads, length, rows)
            scores = scores + by_row.gather(-1, index.expand(batch, self.n_head, length, length))
        scores = scores / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask
        if self.causal:
            future = torch.ones(length, k.shape[2], dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        mixed = (F.dropout(weights, dropout) if dropout else weights) @ v
        return self.c_proj(mixed.transpose(1, 2).reshape(batch, length, width)), weights if record else None


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
