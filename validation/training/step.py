"""The pieces of one optimizer step that every way of stepping shares: the learning rate of a
step, and the clipping of each seed's gradients to its own norm.

>>> from validation.config import TrainConfig
>>> [learning_rate(TrainConfig(lr=1.0, warmup=2), step, 4) for step in range(5)]
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

from typing import Sequence

import torch

from validation.config import TrainConfig


def learning_rate(config: TrainConfig, step: int, total: int) -> float:
    """Linear warm-up, then linear decay to 0 at ``total`` (the Hugging Face linear schedule)."""
    if step < config.warmup:
        return config.lr * step / config.warmup
    return config.lr * max(0.0, (total - step) / max(1, total - config.warmup))


def clip_per_seed(grads: Sequence[torch.Tensor], max_norm: float, *, fused: bool | None = None) -> torch.Tensor:
    """Clip stacked gradients (leading axis: seeds) in place so that each seed's norm over all of
    them is at most ``max_norm``, by ``torch.nn.utils.clip_grad_norm_``'s factor
    ``min(1, max_norm / (norm + 1e-6))``; returns the per-seed norms before clipping.

    ``fused`` (the default on a GPU): a fixed handful of operators whatever the number of
    tensors: one fused norm of every seed's slice of every gradient (``torch._foreach_norm``), a
    sum of their squares per seed, and one fused in-place product by the per-seed factor. A seed's
    norm then differs from one summed element by element in the last bits. Otherwise (the default
    on the CPU, where dispatching costs little beside the reductions and ``_foreach_norm`` runs a
    less accurate kernel) the squares are summed per tensor as :func:`clip_per_seed_reference`
    does, so CPU runs stay bit for bit what they were; the product is fused either way.

    >>> g = torch.tensor([[3.0, 4.0], [0.3, 0.4]])  # seed 0 has norm 5, seed 1 norm 0.5
    >>> clip_per_seed([g], 1.0).tolist(), g.mul(1e4).round().tolist()
    ([5.0, 0.5], [[6000.0, 8000.0], [3000.0, 4000.0]])
    """
    if not grads:
        return torch.zeros(0)
    if grads[0].is_cuda if fused is None else fused:
        seeds = grads[0].shape[0]
        slices = [row for g in grads for row in g.unbind(0)]
        squares = torch.stack(torch._foreach_norm(slices)).view(len(grads), seeds).square()
    else:
        squares = torch.stack([g.flatten(1).square().sum(1) for g in grads])
    norms = squares.sum(0).sqrt()
    factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    shaped = {dim: factor.view(-1, *([1] * (dim - 1))) for dim in {g.dim() for g in grads}}
    torch._foreach_mul_(list(grads), [shaped[g.dim()] for g in grads])
    return norms


def clip_per_seed_reference(grads: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """:func:`clip_per_seed` one tensor at a time, as a group clipped before it was fused."""
    if not grads:
        return torch.zeros(0)
    norms = torch.stack([g.flatten(1).square().sum(1) for g in grads]).sum(0).sqrt()
    factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(factor.view(-1, *([1] * (g.dim() - 1))))
    return norms
