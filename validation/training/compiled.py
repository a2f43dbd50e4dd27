"""A seed group's whole optimizer step (losses, gradients, per-seed clipping, AdamW) as one
``torch.compile``'d function.

Eagerly, a step of a 6-layer model issues about 900 operators from Python (the vmapped forward
and backward, a clipping reduction per gradient, AdamW's updates), 9 to 14 ms of host time on
the 2-core CPU whatever the model's width. Compiled as one graph it is one call (on the CPU its
wrapper compiled to C++ too, inductor's ``cpp_wrapper``): the host floor of that step falls to
about 2 ms (docs/performance.md).

The arithmetic is the eager step's: :func:`validation.training.step.clip_per_seed`'s factor
``min(1, max_norm / (norm + 1e-6))`` on each seed's gradients, then torch's AdamW (decoupled
weight decay, bias-corrected moments) on the optimizer's own state tensors, which are updated in
place, so checkpoints, resumption and an eager step afterwards see what an eager step would have
left. Compiled kernels round differently: losses and weights follow the eager ones to float
tolerance, not bit for bit (``tests/test_training_speed.py``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Callable

import torch
from torch.func import grad

from validation.data.encoding import to_device

if TYPE_CHECKING:
    from validation.data.encoding import Batch
    from validation.training.group import SeedGroup


class WholeStep:
    """``step(batch, lr)`` runs one optimizer step of ``group`` at learning rate ``lr``, compiled
    under ``mode``, and returns the per-seed losses; it needs the optimizer's state, which the
    group's first (eager) step creates (:meth:`ready`). A graph is compiled per batch shape. If torch cannot compile it, the call
    returns None, changing nothing, a warning says why and :attr:`failed` is set: the group then
    steps eagerly."""

    def __init__(self, group: "SeedGroup", mode: str, graphs: int) -> None:
        self.group, self.mode, self.graphs = group, mode, graphs
        self.failed = False
        self.calls = 0
        """Steps run compiled so far."""
        optimizer = group.optimizer
        defaults = optimizer.defaults
        if defaults.get("amsgrad") or defaults.get("maximize") or defaults.get("capturable"):
            raise ValueError("the compiled step reproduces plain AdamW only")
        self.trained = [name for name in group.params if name not in group.frozen]
        group_of = {id(p): g for g in optimizer.param_groups for p in g["params"]}
        self.decay = [group_of[id(group.params[n])]["weight_decay"] for n in self.trained]
        self.betas, self.eps = defaults["betas"], defaults["eps"]
        self._ready_with: torch.optim.Optimizer | None = None  # the optimizer last found ready (checking reads a device tensor)
        self._compiled = torch.compile(self._step, mode=mode, dynamic=False)

    def ready(self) -> bool:
        """Whether the optimizer holds its moments for every trained tensor, at the group's step
        (checked once per optimizer: a group replaces its optimizer when it drops seeds or resumes)."""
        optimizer = self.group.optimizer
        if self._ready_with is optimizer:
            return True
        state = optimizer.state
        if not all(self.group.params[n] in state for n in self.trained):
            return False
        if int(state[self.group.params[self.trained[0]]]["step"]) != self.group.step:
            return False
        self._ready_with = optimizer
        return True

    def __call__(self, batch: "Batch", lr: float) -> torch.Tensor | None:
        group = self.group
        state = group.optimizer.state
        params = [group.params[n] for n in self.trained]
        beta1, beta2 = self.betas
        count = group.step + 1
        scalars = to_device(torch.tensor([[1 - lr * decay for decay in self.decay],
                                          [lr / (1 - beta1 ** count)] * len(self.decay),
                                          [(1 - beta2 ** count) ** 0.5] * len(self.decay)],
                                         dtype=params[0].dtype), params[0].device)
        frozen = {n: group.params[n] for n in group.frozen}
        arguments = ([p.detach() for p in params], [state[p]["exp_avg"] for p in params],
                     [state[p]["exp_avg_sq"] for p in params], [state[p]["step"] for p in params],
                     scalars, frozen, batch.ids, batch.positions, batch.targets, batch.mask)
        from torch._inductor import config as inductor

        try:
            with torch._dynamo.config.patch(recompile_limit=self.graphs, accumulated_recompile_limit=self.graphs), \
                    inductor.patch(cpp_wrapper=params[0].device.type == "cpu"):
                losses = self._compiled(*arguments)
            self.calls += 1
            return losses
        except Exception as error:  # torch could not compile this step: say so, and step eagerly
            self.failed = True
            warnings.warn(f"the compiled training step failed to compile ({type(error).__name__}: "
                          f"{str(error).splitlines()[0] if str(error) else ''}); training goes on eagerly",
                          RuntimeWarning, stacklevel=2)
            return None

    def _step(self, params, exp_avg, exp_avg_sq, steps, scalars, frozen, ids, positions, targets, mask):
        group, names = self.group, self.trained
        losses_of: Callable = group._vmapped_losses

        def total(trained):
            losses = losses_of({**dict(zip(names, trained)), **frozen}, ids, positions, targets, mask)
            return losses.sum(), losses

        grads, losses = grad(total, has_aux=True)(params)
        max_norm = group.config.grad_clip
        if max_norm:
            norms = torch.stack([g.flatten(1).square().sum(1) for g in grads]).sum(0).sqrt()
            factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
            grads = [g * factor.view(-1, *([1] * (g.dim() - 1))) for g in grads]
        beta1, beta2 = self.betas
        with torch.no_grad():
            for k, (p, g, m, v, s) in enumerate(zip(params, grads, exp_avg, exp_avg_sq, steps)):
                s.add_(1)
                if self.decay[k]:
                    p.mul_(scalars[0, k])
                m.lerp_(g, 1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                p.sub_(m / (v.sqrt() / scalars[2, k]).add_(self.eps) * scalars[1, k])
        return losses.detach()


__all__ = ["WholeStep"]
