"""Training: several seeds of one configuration at once, as one vmapped model.

Each seed has its own initialisation (``torch.manual_seed(seed)``), its own stream of training
examples, its own AdamW state and its own dropout masks (keyed by its seed and the step); the
seeds share only the kernels they run on, so a seed's run does not depend on which other seeds
train beside it. Evaluation is teacher-forced exact match per length bin; a seed stops once its
training bin (:attr:`tasks.registry.Task.training_bin`) is exact, and the others go on without it.

One run, top to bottom: :class:`SeedGroup` builds the seeds' models and stacks their weights,
makes the feed of training batches (:class:`validation.data.feed.Feed`) and the test sets, and
chooses its step once (:func:`stepping`: captured as a CUDA graph on a GPU, eager elsewhere);
:meth:`SeedGroup.run` then loops: take a batch, step, and every ``eval_every`` steps evaluate,
finish the seeds that are done and hand them to the caller.

>>> from validation.config import ModelConfig, TrainConfig, Variant
>>> from tasks import registry
>>> group = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 1, 16),
...                   TrainConfig(steps=2, batch_size=4, eval_every=1, test_size=4), seeds=(0, 1))
>>> results = group.run()
>>> [len(r.accuracy) for r in results]
[3, 3]
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from tasks.registry import Task
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.baseline import best_constant
from validation.data.encoding import IGNORE, Batch, Encoding, exact_rows
from validation.data.feed import Feed
from validation.data.streams import held_out_sets
from validation.models.build import build_model, check_architecture, overwrite
from validation.models.gpt import positional_penalty
from validation.training.device import autocast, resolve_device, set_matmul_precision
from validation.training.optimizer import decays
from validation.training.step import CapturedStep, EagerStep, Objective

# vmap has no batching rule for the fused attention kernel and runs it once per seed instead; that is
# still faster than the unfused softmax(q k^T) v it replaces, so the warning says nothing to act on.
warnings.filterwarnings("ignore", message="There is a performance drop because we have not yet implemented the "
                                          "batching rule for aten::_scaled_dot_product", category=UserWarning)

EVAL_ELEMENTS = 2**25
"""Attention-score elements one evaluation chunk may hold (bounds evaluation memory)."""

PROGRESS_EVERY = 0.5
"""Seconds between two progress calls within training (each reads the loss, which waits for the
device): the bar moves between evaluations without a sync at every step."""

WIDTH_QUANTUM = 16
"""A captured step pads batches to a multiple of this many places: one graph per multiple."""

STEPPINGS = ("auto", "eager", "captured", "compiled")
"""How a group may step: see :func:`stepping`."""

DROPOUT_KEY = 7_919
"""Seed s draws its dropout masks with key DROPOUT_KEY + s (its initialisation uses s itself)."""

_BUILDING = threading.Lock()
"""Held while a seed's model is initialised from torch's global generator (groups may be built
side by side in threads)."""


class _Clock:
    """Seconds between laps, by name."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name], self._last = now - self._last, now


def stepping(choice: str | None, device: torch.device) -> str:
    """The way a group steps: ``eager`` (every operator issued from Python each step), ``captured``
    (:class:`~validation.training.step.CapturedStep`: a CUDA graph per batch width on a GPU; on a
    CPU the same function without a graph), or ``compiled`` (the same through ``torch.compile``).
    ``auto`` (or None): captured on a GPU, eager on a CPU, where a graph has nothing to save.

    >>> stepping("auto", torch.device("cpu")), stepping("compiled", torch.device("cpu"))
    ('eager', 'compiled')
    """
    choice = choice or "auto"
    if choice not in STEPPINGS:
        raise ValidationError(f"--step {choice}: expected one of {', '.join(STEPPINGS)}")
    if choice == "auto":
        return "captured" if device.type == "cuda" else "eager"
    return choice


@dataclass(frozen=True)
class Evaluation:
    """Accuracy per bin of one seed at one step."""

    step: int
    accuracy: tuple[float, ...]


@dataclass(frozen=True)
class SeedResult:
    """The outcome of one seed: accuracy per bin where it stopped, and its trained weights."""

    seed: int
    accuracy: tuple[float, ...]
    steps: int
    wall_time: float
    stopped_early: bool
    history: tuple[Evaluation, ...]
    weights: dict[str, torch.Tensor] = field(repr=False, compare=False)


class SeedGroup:
    """Seeds of one (task, variant, model, training) configuration, trained together; ``initial``
    maps a seed to tensors that replace its fresh ones (see :func:`overwrite`).

    ``step`` chooses how each optimizer step is taken (:func:`stepping`). It is a keyword rather
    than a :class:`TrainConfig` field because it does not change what is trained (only the
    rounding of float sums), and so must not change a run's store key.
    """

    def __init__(self, task: Task, variant: Variant, model: ModelConfig, config: TrainConfig,
                 seeds: Sequence[int], *, device: str = "cpu", test_seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None,
                 initial: Mapping[int, Mapping[str, torch.Tensor]] | None = None, step: str | None = None) -> None:
        if not seeds:
            raise ValidationError("no seeds to train")
        self.task, self.variant, self.model_config, self.config = task, variant, model, config
        self.device = resolve_device(device)
        set_matmul_precision(config.precision, self.device)
        self.encoding = Encoding.of(task)
        check_architecture(task, model)
        self.seeds = list(seeds)
        self.progress = progress
        self.uniform = variant.scheme.uniform_width(task)
        clock = _Clock()
        # the models: one per seed, from its own seed, stacked along a first axis
        models = [self._fresh(seed, initial) for seed in self.seeds]
        with _BUILDING, torch.random.fork_rng(devices=[]):
            self.base = self._model().to("meta")  # the stacked weights' shapes, to call functionally
        self.frozen = {name for name, p in models[0].named_parameters() if not p.requires_grad}
        params, _ = stack_module_state(models)
        self.params = self._leaves({name: p.detach() for name, p in params.items()})
        clock.lap("models")
        # the data
        self.stepping = stepping(step, self.device)
        quantum = WIDTH_QUANTUM if self.stepping != "eager" and not model.encoder else None
        self.feed = Feed(task, self.encoding, self.seeds, config, self.device, quantum=quantum)
        self.total_steps = config.total_steps(self.feed.set_size)
        clock.lap("training data")
        held_out = held_out_sets(task, config.test_size, test_seed)
        self.tests = [self.encoding.collate(examples).to(self.device) for examples in held_out]
        self.baseline = tuple(best_constant(examples) for examples in held_out)
        """Per bin, what the best constant answer scores on the test set (:mod:`validation.data.baseline`)."""
        clock.lap("test sets")
        # the step, chosen once
        self._losses = vmap(self._seed_loss, in_dims=(0, 0, 0, 0, 0, 0 if model.dropout else None))
        self.steps = self._step()
        self.set_up = clock.laps
        """Seconds each part of the set-up took (the progress bar's first line shows them)."""
        self.step = 0
        self.history: list[list[Evaluation]] = [[] for _ in self.seeds]
        self.elapsed = 0.0
        self.stopped = False
        """Whether :meth:`run` stopped at its deadline, before every seed finished."""

    # ------------------------------------------------------------ set-up

    def _model(self) -> nn.Module:
        return build_model(self.encoding, self.variant, self.model_config, self.uniform)

    def _fresh(self, seed: int, initial: Mapping[int, Mapping[str, torch.Tensor]] | None) -> nn.Module:
        """Seed ``seed``'s model, initialised from ``torch.manual_seed(seed)`` (torch's global
        generator is left as it was), with ``initial[seed]`` written over it."""
        with _BUILDING, torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = self._model()
        if initial is not None:
            overwrite(model, initial[seed])
        return model

    def _leaves(self, tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The stacked parameters on the device, the trained ones leaves that require gradients
        (frozen ones, ABC's bias tables, do not)."""
        return {n: t.to(self.device).detach().requires_grad_(n not in self.frozen) for n, t in tensors.items()}

    def _objective(self) -> Objective:
        trained = tuple(name for name in self.params if name not in self.frozen)
        keys = tuple(DROPOUT_KEY + seed for seed in self.seeds) if self.model_config.dropout else None
        return Objective(self._losses, trained, tuple(decays(name) for name in trained), self.config.weight_decay,
                         keys, self.config.grad_clip)

    def _step(self) -> EagerStep | CapturedStep:
        objective = self._objective()
        if self.stepping == "eager":
            return EagerStep(objective, self.params, self.config, self.total_steps, self.device)
        return CapturedStep(objective, self.params, self.config, self.total_steps, self.device,
                            graphs=self.device.type == "cuda", compiled=self.stepping == "compiled")

    # ------------------------------------------------------------ one seed's loss (vmapped over seeds)

    def _outputs(self, params: dict, ids: torch.Tensor, positions: torch.Tensor,
                 noise: torch.Tensor | None = None) -> torch.Tensor:
        with autocast(self.config.precision, self.device):
            out = functional_call(self.base, params, (ids, positions), {"noise": noise} if noise is not None else {})
        return out.float()

    def _seed_loss(self, params: dict, ids, positions, targets, mask, noise) -> torch.Tensor:
        out = self._outputs(params, ids, positions, noise)
        if self.encoding.uses_flags:
            losses = F.binary_cross_entropy_with_logits(out, targets, reduction="none").mean(-1)
            loss = (losses * mask).sum() / mask.sum().clamp(min=1)
        else:
            log_probs = out.log_softmax(-1)
            checked = targets != IGNORE
            picked = log_probs.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            loss = -(picked * checked).sum() / checked.sum().clamp(min=1)
        if self.variant.reg_coef:
            loss = loss + self.variant.reg_coef * positional_penalty(params, self.model_config.n_head)
        return loss

    def train_step(self) -> torch.Tensor:
        """One optimizer step for every seed; returns the per-seed losses (on the device)."""
        losses = self.steps(self.feed.next(), self.step)
        self.step += 1
        return losses

    # ------------------------------------------------------------ evaluation

    @torch.no_grad()
    def evaluate(self) -> list[tuple[float, ...]]:
        """Teacher-forced exact match per bin, for each seed: an example counts when every checked
        position's argmax (or every flag) is right. The counts stay on the device until the last
        bin is done: one read per evaluation."""
        correct = torch.stack([self.exact(batch).sum(-1) for batch in self.tests], dim=1)  # (seeds, bins)
        sizes = [batch.ids.shape[0] for batch in self.tests]
        return [tuple(count / size for count, size in zip(row, sizes)) for row in correct.tolist()]

    @torch.no_grad()
    def exact(self, batch: Batch) -> torch.Tensor:
        """Per seed and example of ``batch``, whether the seed gets every checked position right
        (seeds x examples, on the device), in chunks that bound the attention scores' memory."""
        forward = vmap(self._outputs, in_dims=(0, None, None))
        width = batch.ids.shape[1]
        chunk = max(1, EVAL_ELEMENTS // (len(self.seeds) * self.model_config.n_head * width * width))
        parts = []
        for start in range(0, batch.ids.shape[0], chunk):
            part = batch.map(lambda t: t[start:start + chunk])
            parts.append(exact_rows(forward(self.params, part.ids, part.positions), part, self.encoding.uses_flags))
        return torch.cat(parts, dim=1)

    # ------------------------------------------------------------ the loop

    def run(self, on_evaluation: Callable[["SeedGroup", list[SeedResult]], None] | None = None, *,
            deadline: float | None = None) -> list[SeedResult]:
        """Train until every seed has stopped (early, or at the last step), or until ``deadline``
        (a ``time.time()`` value; then :attr:`stopped` is set).

        ``on_evaluation(group, finished)`` is called after every evaluation with the seeds that
        finished at it (already removed from the group), so a caller can store them and save a
        checkpoint of the rest; and once more, with none finished, where the deadline stops it.
        """
        results: list[SeedResult] = []
        if self.progress:
            parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.set_up.items())
            self.progress(self.step, self.total_steps,
                          f"training seeds {self.seeds} ({self.steps.name} steps; set up: {parts})")
        while self.seeds:
            started = time.perf_counter()
            target = min(self.total_steps, (self.step // self.config.eval_every + 1) * self.config.eval_every)
            losses = None
            reported = time.perf_counter()
            while self.step < target:
                losses = self.train_step()
                if self.progress and time.perf_counter() - reported >= PROGRESS_EVERY:
                    reported = time.perf_counter()  # the loss is read (a device sync) only this often
                    self.progress(self.step, self.total_steps, self._status(losses, []))
                if deadline is not None and time.time() >= deadline and self.step < target:
                    self.elapsed += time.perf_counter() - started
                    self.stopped = True
                    if on_evaluation:
                        on_evaluation(self, [])
                    return sorted(results, key=lambda r: r.seed)
            accuracies = self.evaluate()
            self.elapsed += time.perf_counter() - started
            finished = self._finish(accuracies, final=self.step >= self.total_steps)
            results.extend(finished)
            if self.progress:
                self.progress(self.step, self.total_steps, self._status(losses, finished))
            if on_evaluation:
                on_evaluation(self, finished)
        return sorted(results, key=lambda r: r.seed)

    def _finish(self, accuracies: list[tuple[float, ...]], final: bool) -> list[SeedResult]:
        done, keep = [], []
        for s, accuracy in enumerate(accuracies):
            self.history[s].append(Evaluation(self.step, accuracy))
            early = self.config.stop_when_exact and accuracy[self.task.training_bin] == 1.0
            if early or final:
                weights = {n: p[s].detach().cpu().clone() for n, p in self.params.items()}
                done.append(SeedResult(self.seeds[s], accuracy, self.step, self.elapsed, early,
                                       tuple(self.history[s]), weights))
            else:
                keep.append(s)
        if done and keep:
            self.keep_only(keep)
        elif not keep:
            self.seeds = []
        return done

    def keep_only(self, keep: list[int]) -> None:
        """Drop the seeds not in ``keep`` from the parameters, the optimizer and the streams."""
        index = torch.tensor(keep, device=self.device)
        kept = self._leaves({name: p.detach()[index] for name, p in self.params.items()})
        self.params.update(kept)  # the same dict: the step holds it
        self.seeds = [self.seeds[s] for s in keep]
        self.feed.keep(keep)
        self.history = [self.history[s] for s in keep]
        if isinstance(self.steps, CapturedStep):
            self.steps.keep(index, self.params, self._objective())
        else:
            self.steps.optimizer.keep(index)
            self.steps.objective = self._objective()

    def _status(self, losses: torch.Tensor | None, finished: list[SeedResult]) -> str:
        """The mean loss and, per seed, accuracy per bin at the last evaluation."""
        last = [(seed, h[-1].accuracy) for seed, h in zip(self.seeds, self.history) if h]
        last += [(r.seed, r.accuracy) for r in finished]
        loss = f"loss {float(losses.mean()):.4f} " if losses is not None else ""
        return loss + " ".join(f"s{seed}:" + "/".join(f"{a:.2f}" for a in acc) for seed, acc in sorted(last))

    # ------------------------------------------------------------ checkpoints of a group in progress

    def state(self) -> dict:
        """Everything needed to continue this group exactly where it is."""
        from validation.training.step import learning_rate

        lr = learning_rate(self.config, max(self.step - 1, 0), self.total_steps)
        optimizer = self.steps.optimizer.state_dict(lr)
        for moments in optimizer["state"].values():
            moments.update({name: t.to("cpu", copy=True) for name, t in moments.items()})
        return {  # copies: the group goes on changing its own tensors in place
            "seeds": list(self.seeds), "step": self.step, "elapsed": self.elapsed,
            "params": {n: p.detach().to("cpu", copy=True) for n, p in self.params.items()},
            "optimizer": optimizer,
            "streams": self.feed.state(),
            "history": [[(e.step, list(e.accuracy)) for e in h] for h in self.history],
        }

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state` (the seeds it names must be a subset of this group's)."""
        try:
            positions = [self.seeds.index(s) for s in state["seeds"]]
            if len(positions) < len(self.seeds):
                self.keep_only(positions)
            with torch.no_grad():
                for name in self.params:
                    self.params[name].copy_(state["params"][name].to(self.device))
            self.steps.optimizer.load_state_dict(state["optimizer"])
            self.feed.restore(state["streams"])
            self.step, self.elapsed = int(state["step"]), float(state["elapsed"])
            if isinstance(self.steps, CapturedStep):
                self.steps.start_at(self.step)
            self.history = [[Evaluation(step, tuple(acc)) for step, acc in h] for h in state["history"]]
        except (KeyError, ValueError, RuntimeError, TypeError, IndexError) as error:
            raise ValidationError(f"checkpoint does not match this configuration: {error}") from None


__all__ = ["STEPPINGS", "Evaluation", "SeedGroup", "SeedResult", "stepping"]
