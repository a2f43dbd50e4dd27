"""AdamW over the stacked parameters of a group of seeds, with its own state.

Each tensor's leading axis is the seed, and every operation is elementwise, so each seed's update
is its own: decoupled weight decay, then bias-corrected moments (Loshchilov & Hutter's AdamW, as
``torch.optim.AdamW`` computes it). Two modes share the state and its checkpoint format (that of
``torch.optim.AdamW.state_dict``, so a checkpoint written by either loads into the other):

* **host** (``on_device=False``): the step count and the learning rate are Python numbers, and the
  arithmetic is torch's multi-tensor AdamW's, operation for operation: bit for bit the same
  weights (``tests/test_training_step.py``).
* **device**: the step count and the learning rate are tensors on the parameters' device, updated
  there, so nothing is read back to the host and a CUDA graph can replay the update; the bias
  corrections are computed in float32 on the device, so weights follow the host mode's to float
  tolerance.

>>> import torch
>>> w = torch.ones(2, 3)  # two seeds, three weights each
>>> adam = SeedAdamW([w], decayed=[False], weight_decay=0.01)
>>> adam.update([w], [torch.tensor([[1.0, 1, 1], [-1, -1, -1]])], lr=0.1)
>>> [round(v, 4) for v in w[:, 0].tolist()]  # each seed moved by lr against its own gradient's sign
[0.9, 1.1]
"""

from __future__ import annotations

from typing import Sequence

import torch

BETAS = (0.9, 0.999)
EPS = 1e-8
"""torch.optim.AdamW's defaults, which every run here uses."""


def decays(name: str) -> bool:
    """AdamW weight decay applies to weights and embeddings, not to biases or LayerNorm gains.

    >>> decays("blocks.0.attn.c_attn.weight"), decays("blocks.0.ln_1.weight"), decays("wte.bias")
    (True, False, False)
    """
    return not (name.endswith("bias") or ".ln_" in f".{name}")


class SeedAdamW:
    """AdamW for ``params`` (each with a leading seed axis); the tensors marked in ``decayed`` are
    decayed by ``weight_decay``, the others not (two parameter groups, as torch would hold them).

    ``update(params, grads, lr)`` takes the same tensors in the same order each step; in device
    mode ``lr`` is a 0-d tensor on the parameters' device (a CUDA graph then replays the update
    with whatever value it holds).
    """

    def __init__(self, params: Sequence[torch.Tensor], decayed: Sequence[bool], weight_decay: float, *,
                 on_device: bool = False) -> None:
        self.groups = [(weight_decay, [k for k, d in enumerate(decayed) if d]),
                       (0.0, [k for k, d in enumerate(decayed) if not d])]
        self.on_device = on_device
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        device = params[0].device if params else torch.device("cpu")
        self.steps: int | torch.Tensor = torch.zeros((), device=device) if on_device else 0

    @property
    def step_count(self) -> int:
        """Updates made so far (reads the device in device mode)."""
        return int(self.steps)

    def update(self, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor], lr: float | torch.Tensor) -> None:
        beta1, beta2 = BETAS
        with torch.no_grad():
            if self.on_device:  # the count and the bias corrections stay on the device
                assert isinstance(self.steps, torch.Tensor)
                self.steps.add_(1)
                bias1: float | torch.Tensor = 1 - torch.pow(beta1, self.steps)
                root_bias2: float | torch.Tensor = (1 - torch.pow(beta2, self.steps)).sqrt()
            else:
                self.steps = int(self.steps) + 1
                bias1, root_bias2 = 1 - beta1 ** self.steps, (1 - beta2 ** self.steps) ** 0.5
            for decay, chosen in self.groups:  # torch's order: one parameter group after the other
                if not chosen:
                    continue
                p, g = [params[k] for k in chosen], [grads[k] for k in chosen]
                m, v = [self.exp_avg[k] for k in chosen], [self.exp_avg_sq[k] for k in chosen]
                if decay:
                    torch._foreach_mul_(p, 1 - lr * decay)
                torch._foreach_lerp_(m, g, 1 - beta1)
                torch._foreach_mul_(v, beta2)
                torch._foreach_addcmul_(v, g, g, 1 - beta2)
                denominator = torch._foreach_sqrt(v)
                torch._foreach_div_(denominator, root_bias2)
                torch._foreach_add_(denominator, EPS)
                if self.on_device:  # a tensor step size: the quotient, scaled, then subtracted
                    moved = torch._foreach_div(m, denominator)
                    torch._foreach_mul_(moved, lr / bias1)
                    torch._foreach_sub_(p, moved)
                else:
                    torch._foreach_addcdiv_(p, m, denominator, -lr / bias1)

    def keep(self, index: torch.Tensor) -> None:
        """Keep only the seeds at ``index`` (the group dropped the others)."""
        self.exp_avg = [m[index] for m in self.exp_avg]
        self.exp_avg_sq = [v[index] for v in self.exp_avg_sq]

    # ------------------------------------------------------------ checkpoints

    def state_dict(self, lr: float) -> dict:
        """The state as ``torch.optim.AdamW.state_dict`` writes it (parameters numbered group by
        group, decayed first), ``lr`` the learning rate of the last step."""
        step = torch.tensor(float(self.steps))
        state = {n: {"step": step.clone(), "exp_avg": self.exp_avg[k], "exp_avg_sq": self.exp_avg_sq[k]}
                 for n, k in enumerate(self._order())} if self.step_count else {}
        groups, start = [], 0
        for decay, chosen in self.groups:
            groups.append({"lr": lr, "betas": BETAS, "eps": EPS, "weight_decay": decay, "amsgrad": False,
                           "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                           "fused": None, "params": list(range(start, start + len(chosen)))})
            start += len(chosen)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, saved: dict) -> None:
        """Continue from :meth:`state_dict` (or a ``torch.optim.AdamW`` of the same parameters)."""
        order = self._order()
        sizes = [len(g["params"]) for g in saved["param_groups"]]
        if sizes != [len(chosen) for _, chosen in self.groups]:
            raise ValueError(f"the saved optimizer's groups hold {sizes} tensors, this one's "
                             f"{[len(chosen) for _, chosen in self.groups]}")
        state = saved["state"]
        if not state:
            return
        for n, k in enumerate(order):
            self.exp_avg[k] = state[n]["exp_avg"].to(self.exp_avg[k].device).clone()
            self.exp_avg_sq[k] = state[n]["exp_avg_sq"].to(self.exp_avg_sq[k].device).clone()
        count = float(state[0]["step"])
        if self.on_device:
            assert isinstance(self.steps, torch.Tensor)
            self.steps = torch.tensor(count, device=self.steps.device)
        else:
            self.steps = int(count)

    def _order(self) -> list[int]:
        """The tensors' indices in checkpoint order: group by group, decayed first."""
        return [k for _, chosen in self.groups for k in chosen]
