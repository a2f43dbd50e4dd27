"""One optimizer step of a group of seeds, and the ways of taking it.

Every way shares :func:`descend`: the seeds' losses and gradients, each seed's gradients clipped
to its own norm (:func:`clip_per_seed`), then AdamW (:class:`~validation.training.optimizer.SeedAdamW`).
:class:`EagerStep` issues it from Python at every step; :class:`CapturedStep` gives it static
shapes and its learning rate and step count on the device, so that a GPU replays it as one CUDA
graph (the default on a GPU) and the host reads nothing back between evaluations.

>>> from validation.config import TrainConfig
>>> [learning_rate(TrainConfig(lr=1.0, warmup=2), step, 4) for step in range(5)]
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch.func import grad

from validation.config import TrainConfig
from validation.data.encoding import Batch
from validation.training.optimizer import SeedAdamW


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


def schedule(config: TrainConfig, total: int, device: str | torch.device) -> torch.Tensor:
    """The learning rate of every step 0 .. total (the last, past the schedule, is never taken) as a
    float32 tensor on ``device``: a captured step reads its own from it.

    >>> schedule(TrainConfig(lr=1.0, warmup=2), 4, "cpu").tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return torch.tensor([learning_rate(config, step, total) for step in range(total + 1)], dtype=torch.float32,
                        device=device)


Losses = Callable[..., torch.Tensor]
"""``losses(params, ids, positions, targets, mask, noise)``: every seed's loss on its own batch
(``params`` stacked by seed; ``noise`` each seed's dropout key and step, or None)."""


@dataclass(frozen=True)
class Objective:
    """What a step descends: every seed's loss, the tensors it trains (by name, each marked
    whether weight decay applies to it; the others are held fixed), the seeds' dropout keys
    (None: no dropout), and the clipping norm (None: no clipping)."""

    losses: Losses
    trained: tuple[str, ...]
    decayed: tuple[bool, ...]
    weight_decay: float
    dropout_keys: tuple[int, ...] | None
    grad_clip: float | None


def descend(objective: Objective, params: dict[str, torch.Tensor], optimizer: SeedAdamW, lr, noise,
            ids: torch.Tensor, positions: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, *,
            functional: bool = False) -> torch.Tensor:
    """One optimizer step of every seed at learning rate ``lr``: the seeds' losses and their
    gradients, each seed's gradients clipped to its own norm, then AdamW; ``params`` (the trained
    ones leaves that require gradients) are updated in place. Returns the losses (before the step).

    The gradients come from autograd, or with ``functional`` from ``torch.func.grad``, which
    ``torch.compile`` traces whole (autograd breaks its graph) but which costs a sixth more host
    time a step on a small model (one more layer of dispatch under the seeds' vmap)."""
    names = objective.trained
    trained = [params[n] for n in names]
    if functional:
        fixed = {n: t for n, t in params.items() if n not in names}

        def total(tensors):
            losses = objective.losses({**dict(zip(names, tensors)), **fixed}, ids, positions, targets, mask, noise)
            return losses.sum(), losses

        grads, losses = grad(total, has_aux=True)(trained)
    else:
        losses = objective.losses(params, ids, positions, targets, mask, noise)
        grads = list(torch.autograd.grad(losses.sum(), trained))
    if objective.grad_clip:
        clip_per_seed(grads, objective.grad_clip)
    optimizer.update(trained, grads, lr)
    return losses.detach()


class EagerStep:
    """Each step issued from Python: the learning rate computed on the host, AdamW in host mode
    (bit for bit ``torch.optim.AdamW``'s arithmetic). Every shape is welcome."""

    name = "eager"

    def __init__(self, objective: Objective, params: dict[str, torch.Tensor], config: TrainConfig, total: int,
                 device: torch.device) -> None:
        self.objective, self.params, self.config, self.total, self.device = objective, params, config, total, device
        self.optimizer = SeedAdamW([params[n] for n in objective.trained], objective.decayed, objective.weight_decay)

    def __call__(self, batch: Batch, step: int) -> torch.Tensor:
        lr = learning_rate(self.config, step, self.total)
        noise = None
        if self.objective.dropout_keys is not None:
            noise = torch.tensor([[key, step] for key in self.objective.dropout_keys], device=self.device)
        return descend(self.objective, self.params, self.optimizer, lr, noise, *batch.tensors())


class CapturedStep:
    """The whole step as one replay: static shapes (one graph per batch width), the learning rate
    read from :func:`schedule` by a step counter on the device, AdamW in device mode, the losses
    written to a buffer the host reads only when it wants them. On a GPU each width is captured as
    a CUDA graph after :data:`WARM_STEPS` eager steps at that width (real steps, taken on a side
    stream as CUDA graphs ask); elsewhere (``graphs=False``) the same function runs eagerly, which
    is how the CPU tests compare it with :class:`EagerStep`. ``compiled``: the function goes
    through ``torch.compile`` first (fused kernels; on a GPU captured all the same).

    If a capture fails, :attr:`failure` says why and the step runs eagerly from then on (in device
    mode: same arithmetic, no graph).
    """

    name = "captured"

    def __init__(self, objective: Objective, params: dict[str, torch.Tensor], config: TrainConfig, total: int,
                 device: torch.device, *, graphs: bool, compiled: bool = False) -> None:
        self.objective, self.params, self.device = objective, params, device
        self.optimizer = SeedAdamW([params[n] for n in objective.trained], objective.decayed, objective.weight_decay,
                                   on_device=True)
        self.lr = schedule(config, total, device)
        self.counter = torch.zeros((), dtype=torch.int64, device=device)
        """The next step's number: the graph reads its learning rate and dropout masks by it and moves it on."""
        self.keys = None if objective.dropout_keys is None else torch.tensor(objective.dropout_keys, device=device)
        self.losses = torch.zeros(params[objective.trained[0]].shape[0], device=device)  # one per seed
        self.graphs_wanted, self.failure = graphs, ""
        self.graphs: dict[tuple, object] = {}
        self.inputs: dict[tuple, tuple[torch.Tensor, ...]] = {}
        self.warm: dict[tuple, int] = {}
        self.pool: Any = None  # the graphs' shared memory pool, made at the first capture
        self.side: Any = None  # the side stream of warm-up steps and captures, made at the first
        self.functional = compiled  # torch.compile traces torch.func.grad whole
        self.function = torch.compile(self._function, dynamic=False) if compiled else self._function
        self.name = ("compiled" if compiled else "captured") + ("" if graphs else " (no graph)")

    def start_at(self, step: int) -> None:
        """Continue at step ``step`` (a group resumed from a checkpoint)."""
        self.counter.fill_(step)

    def _function(self, ids, positions, targets, mask) -> None:
        lr = self.lr[self.counter]
        noise = None
        if self.keys is not None:
            noise = torch.stack([self.keys, self.counter.expand(len(self.keys))], dim=1)
        losses = descend(self.objective, self.params, self.optimizer, lr, noise, ids, positions, targets, mask,
                         functional=self.functional)
        self.counter.add_(1)
        self.losses.copy_(losses)

    def __call__(self, batch: Batch, step: int) -> torch.Tensor:
        tensors = batch.tensors()
        shape = tuple(tuple(t.shape) for t in tensors)
        if shape in self.graphs:
            for static, t in zip(self.inputs[shape], tensors):
                static.copy_(t, non_blocking=True)
            self.graphs[shape].replay()  # type: ignore[attr-defined]
            return self.losses
        if not self.graphs_wanted or self.failure:
            self.function(*tensors)
            return self.losses
        try:
            if self.side is None:
                self.side = torch.cuda.Stream(self.device)
        except Exception as error:  # noqa: BLE001 - no CUDA stream here: no graph either
            return self._without_graphs(error, tensors)
        if self.warm.get(shape, 0) < WARM_STEPS:  # a real step, on the side stream, as graphs want before a capture
            self.warm[shape] = self.warm.get(shape, 0) + 1
            self.side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(self.side):
                self.function(*tensors)
            torch.cuda.current_stream(self.device).wait_stream(self.side)
            return self.losses
        try:
            self._capture(shape, tensors)  # records the step without running it: nothing has changed yet
        except Exception as error:  # noqa: BLE001 - any failure to capture: say why and step without graphs
            return self._without_graphs(error, tensors)
        return self(batch, step)

    def _without_graphs(self, error: Exception, tensors: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """Give up graphs for good, saying why, and take this step without one."""
        self.failure = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        warnings.warn(f"the training step could not be captured as a CUDA graph ({self.failure}); it goes on "
                      f"without graphs", RuntimeWarning, stacklevel=3)
        self.graphs.clear()
        self.name = f"{self.name} (no graph)"
        self.function(*tensors)
        return self.losses

    def _capture(self, shape: tuple, tensors: tuple[torch.Tensor, ...]) -> None:
        static = tuple(torch.empty_like(t) for t in tensors)
        for s, t in zip(static, tensors):
            s.copy_(t)
        if self.pool is None:
            self.pool = torch.cuda.graph_pool_handle()  # the widths' graphs share memory: they never run at once
        graph = torch.cuda.CUDAGraph()
        torch.cuda.synchronize(self.device)
        # captured on this step's own side stream (torch's default capture stream is one per process, which
        # groups capturing side by side in threads would share), erring only on this thread's unsafe calls
        with torch.cuda.graph(graph, pool=self.pool, stream=self.side, capture_error_mode="thread_local"):
            self.function(*static)
        self.inputs[shape], self.graphs[shape] = static, graph

    def keep(self, index: torch.Tensor, params: dict[str, torch.Tensor], objective: Objective) -> None:
        """Go on with the seeds at ``index`` only: their parameters ``params``; the graphs, made
        for the old shapes, are dropped (and captured again as needed)."""
        self.params, self.objective = params, objective
        self.optimizer.keep(index)
        self.keys = None if objective.dropout_keys is None else torch.tensor(objective.dropout_keys,
                                                                             device=self.device)
        self.losses = self.losses[index].clone()
        self.graphs.clear()
        self.inputs.clear()
        self.warm.clear()


WARM_STEPS = 2
"""Eager steps taken at a batch width before its CUDA graph is captured."""
