"""Translate a Limit Transformer into an ordinary APE transformer for context length N.

The translation follows the theory's direction (Huang et al. 2025, from Limit Transformers to
transformers with absolute positional encodings): for a context of N positions,

* the positional table gets N rows: row p is the periodic vector of p mod period, followed by
  a one-hot code of p (N extra residual dimensions);
* each head's bias phi(i - j) becomes a product of positional vectors: the query reads the
  one-hot code of i and the key maps the one-hot code of j to sum_d phi(d) e_(j + d), so the
  score is exactly phi(i - j); attention is plain causal softmax with no bias;
* each Heaviside unit H(z) becomes ReLU(z / m) - ReLU(z / m - 1), where m is the smallest
  positive value z takes on inputs of up to N positions (half a unit for Boolean gates,
  1/(2N) for count comparisons, the local margin for offset reads): equal to H there.

The result is a :class:`LimitTransformer` whose spec has ``wrap=False`` (its positional table
is indexed by absolute position, so :func:`check_properties` rejects it) and no phi.

>>> from crasp import parse
>>> from limit_transformer import compile, run
>>> model = compile(parse('alphabet {"a", "b"}\\nA = #[i - j in {1}] "a" > 0'))
>>> ape = to_ape(model, 16)
>>> run(ape, ["b a b", "a b b"]).accept.tolist()
[True, False]
"""

from __future__ import annotations

import math
from dataclasses import asdict

import torch

from crasp.errors import CraspError

from .model import LimitTransformer, ModelSpec, dense
from .properties import check_properties


class TranslationError(CraspError):
    """A model that cannot be translated (not PERIODIC and LOCAL, or N too small)."""


def margin(kind: str, n_positions: int, bias: float) -> float:
    """The smallest positive pre-activation of a Heaviside unit of this kind at N positions."""
    if kind == "boolean":
        return 0.5
    if kind == "count":
        return 0.5 / n_positions
    if kind == "local":  # (e^B - 1) / ((e^B + k) (k + 1)) at k = N - 1, computed without overflow
        return (1.0 - math.exp(-bias)) / ((1.0 + (n_positions - 1) * math.exp(-bias)) * n_positions)
    raise TranslationError(f"a Heaviside unit has no recorded margin class ({kind!r})")


def to_ape(model: LimitTransformer, n_positions: int) -> LimitTransformer:
    """An APE transformer equal to ``model`` on every input whose positions are below N."""
    check_properties(model)
    if n_positions < 2:
        raise TranslationError(f"the context length must be at least 2 positions, not {n_positions}")
    spec = model.spec
    d, N = spec.d_model, n_positions
    dtype = model.W_E.dtype
    positional = [bool((block.attn.phi != 0).any()) for block in model.blocks]
    d_qk = N if any(positional) else 0
    labels = spec.labels + tuple(f"position {p}" for p in range(N))
    state: dict[str, torch.Tensor] = {}
    state["W_E"] = torch.cat([dense(model.W_E), torch.zeros(len(spec.vocabulary), N, dtype=dtype)], 1)
    periodic = dense(model.W_pos)[torch.arange(N) % spec.period]
    state["W_pos"] = torch.cat([periodic, torch.eye(N, dtype=dtype)], 1)
    state["W_U"] = torch.cat([dense(model.W_U), torch.zeros(N, len(spec.outputs), dtype=dtype)], 0)
    widths, margins = [], []
    for layer, block in enumerate(model.blocks):
        attn, mlp = block.attn, block.mlp
        heads, _, d_head = attn.W_V.shape
        prefix = f"blocks.{layer}"
        W_Q = torch.zeros(heads, d + N, d_qk, dtype=dtype)
        W_K = torch.zeros(heads, d + N, d_qk, dtype=dtype)
        for h in range(heads):
            for offset in torch.nonzero(attn.phi[h]).flatten().tolist():
                value = float(attn.phi[h, offset])
                W_Q[h, d:, :] = torch.eye(N, dtype=dtype)
                keys = torch.arange(max(N - offset, 0))  # key at j maps to e_(j + offset)
                W_K[h, d + keys, keys + offset] = value
        state[f"{prefix}.attn.W_Q"], state[f"{prefix}.attn.W_K"] = W_Q, W_K
        state[f"{prefix}.attn.W_V"] = torch.cat([dense(attn.W_V), torch.zeros(heads, N, d_head, dtype=dtype)], 1)
        state[f"{prefix}.attn.W_O"] = torch.cat([dense(attn.W_O), torch.zeros(heads, d_head, N, dtype=dtype)], 2)
        state[f"{prefix}.attn.phi"] = torch.zeros(heads, 0, dtype=dtype)
        state[f"{prefix}.attn.phi_tail"] = torch.zeros(heads, dtype=dtype)
        W_in, b_in, W_out = dense(mlp.W_in), mlp.b_in.detach(), dense(mlp.W_out)
        columns: list[torch.Tensor] = []
        biases: list[torch.Tensor] = []
        rows: list[torch.Tensor] = []
        for u in range(W_in.shape[1]):
            if not bool(mlp.heaviside[u]):
                columns.append(W_in[:, u])
                biases.append(b_in[u])
                rows.append(W_out[u])
                continue
            m = margin(spec.margins[layer][u], N, spec.local_bias)
            for shift, sign in ((0.0, 1.0), (-1.0, -1.0)):  # H(z) = ReLU(z/m) - ReLU(z/m - 1)
                columns.append(W_in[:, u] / m)
                biases.append(b_in[u] / m + shift)
                rows.append(sign * W_out[u])
        width = len(columns)
        new_in = torch.stack(columns, 1) if width else torch.zeros(d, 0, dtype=dtype)
        state[f"{prefix}.mlp.W_in"] = torch.cat([new_in, torch.zeros(N, width, dtype=dtype)], 0)
        state[f"{prefix}.mlp.b_in"] = torch.stack(biases) if width else torch.zeros(0, dtype=dtype)
        new_out = torch.stack(rows, 0) if width else torch.zeros(0, d, dtype=dtype)
        state[f"{prefix}.mlp.W_out"] = torch.cat([new_out, torch.zeros(width, N, dtype=dtype)], 1)
        state[f"{prefix}.mlp.b_out"] = torch.cat([mlp.b_out.detach(), torch.zeros(N, dtype=dtype)])
        state[f"{prefix}.mlp.heaviside"] = torch.zeros(width, dtype=torch.bool)
        widths.append(width)
        margins.append(("",) * width)
    translated = ModelSpec(**{
        **asdict(spec), "labels": labels, "period": N, "wrap": False, "d_qk": d_qk,
        "mlp_widths": tuple(widths), "margins": tuple(margins), "window": (0,) * spec.n_layers,
        "max_length": min(spec.max_length, N - 1),
    })
    translated = ModelSpec.from_json(translated.to_json())
    with torch.device("meta"):
        ape = LimitTransformer(translated)
    ape.load_state_dict({k: v.to(model.W_E.device) for k, v in state.items()}, assign=True)
    return ape.eval().requires_grad_(False)


def positional_regularizer(model: LimitTransformer) -> float:
    """R_pos (Huang et al. 2025): over layers and heads, with P the positional table and
    M = (P W_Q)(P W_K)^T, the sum of (1/N) sum_b sum_(a >= b) M[a, b]^2."""
    table = dense(model.W_pos)
    n = table.shape[0]
    lower = torch.tril(torch.ones(n, n, dtype=torch.bool, device=table.device))
    total = 0.0
    for block in model.blocks:
        attn = block.attn
        for h in range(attn.n_heads):
            q, k = table @ dense(attn.W_Q[h]), table @ dense(attn.W_K[h])
            if not (bool(q.any()) and bool(k.any())):
                continue
            scores = q @ k.t()
            total += float((scores[lower] ** 2).sum()) / n
    return total
