"""A GPT-2-style causal decoder, as the paper trains it: learned absolute positions (or none),
pre-LayerNorm blocks, a GELU MLP of width 4d, embeddings tied with the output layer, and no
dropout unless the config asks for it (then on the embeddings, the attention weights and each
residual branch, as in BERT).
The same blocks make the arithmetic papers' variants: relative and uniform positions, and an
encoder (bidirectional attention) that predicts every output position in parallel.

Next-set tasks (formal languages) read a separate linear head of one logit per legal-next symbol.

>>> import torch
>>> from validation.config import ModelConfig
>>> model = GPT(ModelConfig(1, 1, 16), vocab_size=6, n_positions=20, variant="ape")
>>> ids = torch.tensor([[4, 0, 1, 5]])
>>> model(ids, torch.arange(4)[None]).shape
torch.Size([1, 4, 6])
"""

from __future__ import annotations

import math

import torch
from torch import nn

from validation.config import ModelConfig, ValidationError, Variant
from validation.models.layers import Attention, Dropout, feed_forward, number_sites


class Block(nn.Module):
    def __init__(self, config: ModelConfig, *, clip: int = 0, uniform: int = 0) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.attn = Attention(config, causal=not config.encoder, clip=clip, uniform=uniform)
        self.ln_2 = nn.LayerNorm(config.d_model)
        self.mlp = feed_forward(config)
        self.drop_attn, self.drop_mlp = Dropout(config), Dropout(config)

    def forward(self, x: torch.Tensor, noise: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.drop_attn(self.attn(self.ln_1(x), noise=noise)[0], noise)
        return x + self.drop_mlp(self.mlp(self.ln_2(x)), noise)


class GPT(nn.Module):
    """The model. ``variant``'s scheme says how positions enter: a learned table of ``n_positions``
    absolute positions (ape), none (nope), or relative ones in every layer (rpe, upe, which
    ``uniform`` leading operand digits need, :meth:`validation.positions.PositionScheme.uniform_width`);
    see :mod:`validation.positions`.

    ``n_flags`` > 0 adds a head of that many independent logits (next-set tasks); the forward
    pass then returns those instead of token logits (next tokens in a decoder, the output at each
    position in an encoder).
    """

    def __init__(self, config: ModelConfig, *, vocab_size: int, n_positions: int, variant: Variant | str,
                 n_flags: int = 0, uniform: int = 0) -> None:
        super().__init__()
        variant = Variant.parse(variant) if isinstance(variant, str) else variant
        scheme = variant.scheme
        if scheme.uniform and uniform < 1:
            raise ValidationError(f"variant {variant.name}: uniform positions need a leading operand of fixed width")
        self.config = config
        self.wte = nn.Embedding(vocab_size, config.d_model)
        self.wpe = nn.Embedding(n_positions, config.d_model) if scheme.absolute_table else None
        self.drop = Dropout(config)
        uniform = uniform if scheme.uniform else 0
        clip = scheme.relative_clip(variant.clip)
        self.blocks = nn.ModuleList(Block(config, clip=clip, uniform=uniform) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.flags = nn.Linear(config.d_model, n_flags) if n_flags else None
        self.apply(self._init_weights)
        for name, parameter in self.named_parameters():
            if name.endswith("c_proj.weight") or name.endswith("mlp.2.weight"):
                # GPT-2's scaled initialisation of the projections into the residual stream.
                nn.init.normal_(parameter, std=0.02 / math.sqrt(2 * config.n_layer))
        number_sites(self)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, noise: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (B, T, vocabulary), or flags (B, T, flags); ``noise`` (a seed's dropout key and
        the step, see :func:`validation.models.layers.keyed_dropout`) turns dropout on."""
        x = self.wte(ids)  # (B, T, C)
        if self.wpe is not None:
            x = x + self.wpe(positions)
        x = self.drop(x, noise)
        for block in self.blocks:
            x = block(x, noise)
        x = self.ln_f(x)
        if self.flags is not None:
            return self.flags(x)
        return x @ self.wte.weight.t()


def positional_penalty(params: dict[str, torch.Tensor], n_head: int) -> torch.Tensor:
    """R_pos of Huang et al. (2025) from a parameter dict of :class:`GPT`: for every layer and
    head, with P the positional table, M = (P W_Q)(P W_K)^T, the sum of
    (1/N) * sum_b sum_(a >= b) M[a, b]^2 (N positions). Zero for NoPE.

    >>> import torch
    >>> from validation.config import ModelConfig
    >>> model = GPT(ModelConfig(1, 2, 8), vocab_size=4, n_positions=5, variant="ape")
    >>> bool(positional_penalty(dict(model.named_parameters()), 2) > 0)
    True
    """
    table = params.get("wpe.weight")
    if table is None:
        return torch.zeros(())
    n, width = table.shape
    lower = torch.ones(n, n, dtype=torch.bool, device=table.device).tril()
    total = table.new_zeros(())
    layer = 0
    while f"blocks.{layer}.attn.c_attn.weight" in params:
        weight = params[f"blocks.{layer}.attn.c_attn.weight"]  # (3d, d): rows are q, k, v outputs
        q = (table @ weight[:width].t()).view(n, n_head, -1).transpose(0, 1)
        k = (table @ weight[width:2 * width].t()).view(n, n_head, -1).transpose(0, 1)
        scores = q @ k.transpose(1, 2)  # (heads, a, b)
        total = total + (scores.square() * lower).sum() / n
        layer += 1
    return total
