"""Training: several seeds of one configuration at once, as one vmapped model.

Each seed has its own initialisation (``torch.manual_seed(seed)``), its own stream of training
examples, its own AdamW state and, with dropout, its own random stream (such seeds run one after
another instead of vmapped); the seeds share only the kernels they run on, so a seed's run does
not depend on which other seeds train beside it. Evaluation is teacher-forced exact match
per length bin; a seed stops once its training bin (:attr:`tasks.registry.Task.training_bin`) is
exact, and the others go on without it.

>>> from validation.config import ModelConfig, TrainConfig, Variant
>>> from tasks import registry
>>> group = SeedGroup(registry.get("bin_majority"), Variant.parse("ape"), ModelConfig(1, 1, 16),
...                   TrainConfig(steps=2, batch_size=4, eval_every=1, test_size=4), seeds=(0, 1))
>>> results = group.run()
>>> [len(r.accuracy) for r in results]
[3, 3]
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, cast

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from tasks.registry import Task
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.data.encoding import IGNORE, Batch, Encoding, exact_rows
from validation.data.streams import TrainingStream, VectorisedStream, held_out_sets
from validation.models.build import check_architecture, build_model, overwrite
from validation.models.gpt import positional_penalty
from validation.training.compiled import WholeStep
from validation.training.device import resolve_device
from validation.training.step import clip_per_seed, learning_rate

# vmap has no batching rule for the fused attention kernel and runs it once per seed instead; that is
# still faster than the unfused softmax(q k^T) v it replaces, so the warning says nothing to act on.
warnings.filterwarnings("ignore", message="There is a performance drop because we have not yet implemented the "
                                          "batching rule for aten::_scaled_dot_product", category=UserWarning)


DROPOUT_STREAM = 7_919
"""Seed s draws its dropout masks from a generator seeded with DROPOUT_STREAM + s (its
initialisation uses s itself)."""


EVAL_ELEMENTS = 2**25
"""Attention-score elements one evaluation chunk may hold (bounds evaluation memory)."""


COMPILE_VARIABLE = "VALIDATION_COMPILE"
"""The environment variable that opts a :class:`SeedGroup` into a compiled step when its caller says
nothing: ``1`` (torch.compile's default mode) or a mode name (``reduce-overhead``: CUDA graphs);
unset, empty or ``0``: eager."""


COMPILED_GRAPHS = 1024
"""The compiled graphs (batch widths x group sizes, over every group of the process) a compiled
step keeps before torch falls back to running it eagerly."""


def compile_mode(choice: bool | str | None = None) -> str | None:
    """The torch.compile mode a step runs under (None: eager), from a :class:`SeedGroup`'s
    ``compile_step`` or, when that is None, :data:`COMPILE_VARIABLE`.

    >>> compile_mode(False), compile_mode(True), compile_mode("reduce-overhead")
    (None, 'default', 'reduce-overhead')
    """
    if choice is None:
        choice = os.environ.get(COMPILE_VARIABLE, "").strip()
        choice = False if choice in ("", "0") else True if choice == "1" else choice
    if choice is True:
        return "default"
    return choice or None


PROGRESS_EVERY = 0.5
"""Seconds between two progress calls within training (each reads the loss, which waits for the
device): the bar moves between evaluations without a sync at every step."""


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


def _decays(name: str) -> bool:
    """AdamW weight decay applies to weights and embeddings, not to biases or LayerNorm gains."""
    return not (name.endswith("bias") or ".ln_" in f".{name}")


class SeedGroup:
    """Seeds of one (task, variant, model, training) configuration, trained together; ``initial``
    maps a seed to tensors that replace its fresh ones (see :func:`overwrite`).

    ``compile_step`` (None: :data:`COMPILE_VARIABLE` decides) runs the vmapped loss and its
    gradient through ``torch.compile`` (True, or a mode name), with static shapes: one graph per
    batch width and group size, compiled when first met. Its losses equal the eager ones to float
    tolerance, not bit for bit; runs with dropout stay eager. It is a keyword rather than a
    :class:`TrainConfig` field because it does not change what is trained, and so must not change
    a run's store key.
    """

    def __init__(self, task: Task, variant: Variant, model: ModelConfig, config: TrainConfig,
                 seeds: Sequence[int], *, device: str = "cpu", test_seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None,
                 initial: Mapping[int, Mapping[str, torch.Tensor]] | None = None,
                 compile_step: bool | str | None = None) -> None:
        if not seeds:
            raise ValidationError("no seeds to train")
        self.task, self.variant, self.model_config, self.config = task, variant, model, config
        self.device = resolve_device(device)
        self.encoding = Encoding.of(task)
        check_architecture(task, model)
        self.seeds = list(seeds)
        self.streams = self._streams(task, config)
        self.total_steps = config.total_steps(len(self.streams[0].fixed or []))
        self.tests = [self.encoding.collate(examples).to(self.device)
                      for examples in held_out_sets(task, config.test_size, test_seed)]
        self.progress = progress
        self.uniform = variant.scheme.uniform_width(task)
        models = []
        for seed in self.seeds:
            torch.manual_seed(seed)
            models.append(self._model())
            if initial is not None:
                overwrite(models[-1], initial[seed])
        self.base = self._model().to("meta").eval()  # training mode only inside _dropout_loss
        self.random = {seed: self._fresh_random(seed) for seed in self.seeds} if model.dropout else {}
        self.frozen = {name for name, p in models[0].named_parameters() if not p.requires_grad}
        params, _ = stack_module_state(models)
        self.params = self._as_params({name: p.to(self.device) for name, p in params.items()})
        self.optimizer = self._optimizer()
        self.step = 0
        self.history: list[list[Evaluation]] = [[] for _ in self.seeds]
        self.elapsed = 0.0
        self.compile_mode = compile_mode(compile_step)
        self._vmapped_losses = vmap(self._seed_loss)
        self._whole_step = self._whole_step_for(self.compile_mode)

    # ------------------------------------------------------------ set-up

    def _streams(self, task: Task, config: TrainConfig) -> list[TrainingStream | VectorisedStream]:
        if config.sampler == "vectorised":
            if config.epochs:
                raise ValidationError("a fixed training set (epochs) is drawn by the Python samplers: "
                                      "leave the sampler 'python'")
            return [VectorisedStream(task, s) for s in self.seeds]
        return [TrainingStream(task, s, config.train_size if config.epochs else None) for s in self.seeds]

    def _model(self) -> nn.Module:
        return build_model(self.encoding, self.variant, self.model_config, self.uniform)

    def _as_params(self, tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Leaf tensors of the stacked parameters; frozen ones (ABC's bias tables) get no gradient."""
        return {n: t.detach().clone().requires_grad_(n not in self.frozen) for n, t in tensors.items()}

    def _optimizer(self) -> torch.optim.AdamW:
        trained = {n: p for n, p in self.params.items() if n not in self.frozen}
        decay = [p for n, p in trained.items() if _decays(n)]
        plain = [p for n, p in trained.items() if not _decays(n)]
        # On a GPU, AdamW's fused kernel: 11-17% off a paper preset's step on an H100. Elsewhere its
        # multi-tensor form, which torch picks only for GPUs: the same arithmetic per tensor, bit for
        # bit, issued in a few calls instead of a Python loop over every tensor (2 ms of a step's host time).
        cuda = self.device.type == "cuda"
        return torch.optim.AdamW([{"params": decay, "weight_decay": self.config.weight_decay},
                                  {"params": plain, "weight_decay": 0.0}], lr=self.config.lr,
                                 fused=cuda, foreach=not cuda)

    def _fresh_random(self, seed: int) -> dict[str, torch.Tensor]:
        with torch.random.fork_rng(devices=self._cuda()):
            torch.default_generator.manual_seed(DROPOUT_STREAM + seed)
            if self._cuda():  # this device's generator only: fork_rng restores no other
                with torch.cuda.device(self.device):
                    torch.cuda.manual_seed(DROPOUT_STREAM + seed)
            return self._random_now()

    def _cuda(self) -> list[torch.device]:
        return [self.device] if self.device.type == "cuda" else []

    def _random_now(self) -> dict[str, torch.Tensor]:
        now = {"cpu": torch.get_rng_state()}
        if self._cuda():
            now["cuda"] = torch.cuda.get_rng_state(self.device)
        return now

    @contextlib.contextmanager
    def _random_stream(self, seed: int):
        """Random draws inside come from ``seed``'s own stream, which then moves on; the global
        generators are left as they were."""
        with torch.random.fork_rng(devices=self._cuda()):
            torch.set_rng_state(self.random[seed]["cpu"])
            if self._cuda() and "cuda" in self.random[seed]:  # absent when a cpu checkpoint resumes on a GPU
                torch.cuda.set_rng_state(self.random[seed]["cuda"], self.device)
            yield
            self.random[seed] = self._random_now()

    # ------------------------------------------------------------ one seed's loss, vmapped

    def _outputs(self, params: dict, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return functional_call(self.base, params, (ids, positions))

    def _seed_loss(self, params: dict, ids, positions, targets, mask) -> torch.Tensor:
        out = self._outputs(params, ids, positions)
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

    def _whole_step_for(self, mode: str | None) -> WholeStep | None:
        """The compiled optimizer step under torch.compile's ``mode`` (None: eager steps only).

        Every group's compiled graphs are cached under one code object, whose limit of 8
        recompilations a sweep or a task with many batch widths would reach, after which torch
        runs the step eagerly; the calls raise it to :data:`COMPILED_GRAPHS`."""
        if not mode or self.model_config.dropout:
            return None
        return WholeStep(self, mode, COMPILED_GRAPHS)

    def _train_batch(self) -> Batch:
        """Every seed's examples of one step, padded to one width (shape: seeds x examples x width)."""
        if self.config.sampler == "vectorised":  # then every stream is a VectorisedStream (_streams)
            vectorised = cast(list[VectorisedStream], self.streams)
            return self.encoding.batch_of([stream.next(self.config.batch_size) for stream in vectorised]
                                          ).to(self.device)
        streams = cast(list[TrainingStream], self.streams)
        examples = [e for stream in streams for e in stream.next(self.config.batch_size)]
        batch = self.encoding.collate(examples).to(self.device)
        shape = (len(self.streams), self.config.batch_size)
        return Batch(*(t.reshape(*shape, *t.shape[1:]) for t in (batch.ids, batch.positions, batch.targets, batch.mask)))

    def _seed_batch(self, stream: TrainingStream | VectorisedStream) -> Batch:
        """One seed's examples of one step, padded to their own width."""
        if isinstance(stream, VectorisedStream):  # the streams of the vectorised sampler
            batch = self.encoding.batch_of([stream.next(self.config.batch_size)])
            return Batch(*(t[0] for t in (batch.ids, batch.positions, batch.targets, batch.mask))).to(self.device)
        return self.encoding.collate(stream.next(self.config.batch_size)).to(self.device)

    def train_step(self) -> torch.Tensor:
        """One optimizer step for every seed; returns the per-seed losses."""
        lr = learning_rate(self.config, self.step, self.total_steps)
        if self.model_config.dropout:
            # Each seed's own batch, padded to its own longest example: the masks' shapes, and so
            # the draws, must not depend on the other seeds' examples.
            batches = [self._seed_batch(stream) for stream in self.streams]
            losses = torch.stack([self._dropout_loss(s, batch) for s, batch in enumerate(batches)])
        else:
            batch = self._train_batch()
            whole = self._whole_step
            if whole is not None and not whole.failed and whole.ready():
                stepped = whole(batch, lr)
                if stepped is not None:
                    self._set_learning_rate(lr)  # what a checkpoint of the optimizer keeps
                    self.step += 1
                    return stepped
            losses = self._vmapped_losses(self.params, batch.ids, batch.positions, batch.targets, batch.mask)
        self.optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()
        if self.config.grad_clip:
            self._clip_per_seed(self.config.grad_clip)
        self._set_learning_rate(lr)
        self.optimizer.step()
        self.step += 1
        return losses.detach()

    def _set_learning_rate(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def _dropout_loss(self, s: int, batch: Batch) -> torch.Tensor:
        """Seed number ``s``'s loss on its ``batch`` in training mode, with masks from its own
        random stream."""
        self.base.train()
        try:
            with self._random_stream(self.seeds[s]):
                params = {n: p[s] for n, p in self.params.items()}
                return self._seed_loss(params, batch.ids, batch.positions, batch.targets, batch.mask)
        finally:
            self.base.eval()

    def _clip_per_seed(self, max_norm: float) -> None:
        """Scale each seed's gradients to norm at most ``max_norm`` (the factor
        ``min(1, max_norm / (norm + 1e-6))`` of ``torch.nn.utils.clip_grad_norm_``), over all
        stacked gradients at once; see :func:`clip_per_seed`."""
        clip_per_seed([p.grad for p in self.params.values() if p.grad is not None], max_norm)

    # ------------------------------------------------------------ evaluation

    @torch.no_grad()
    def evaluate(self) -> list[tuple[float, ...]]:
        """Teacher-forced exact match per bin, for each seed: an example counts when every checked
        position's argmax (or every flag) is right."""
        per_bin = [self._exact(batch) for batch in self.tests]
        return [tuple(float(correct[s].float().mean()) for correct in per_bin) for s in range(len(self.seeds))]

    def _exact(self, batch: Batch) -> torch.Tensor:
        width = batch.ids.shape[1]
        chunk = max(1, EVAL_ELEMENTS // (len(self.seeds) * self.model_config.n_head * width * width))
        forward = vmap(self._outputs, in_dims=(0, None, None))
        parts = []
        for start in range(0, batch.ids.shape[0], chunk):
            part = Batch(*(t[start:start + chunk] for t in (batch.ids, batch.positions, batch.targets, batch.mask)))
            out = forward(self.params, part.ids, part.positions)
            parts.append(exact_rows(out, part, self.encoding.uses_flags).cpu())
        return torch.cat(parts, dim=1)

    # ------------------------------------------------------------ the loop

    def run(self, on_evaluation: Callable[["SeedGroup", list[SeedResult]], None] | None = None) -> list[SeedResult]:
        """Train until every seed has stopped (early, or at the last step).

        ``on_evaluation(group, finished)`` is called after every evaluation with the seeds that
        finished at it (already removed from the group), so a caller can store them and save a
        checkpoint of the rest.
        """
        results: list[SeedResult] = []
        if self.progress:
            self.progress(self.step, self.total_steps, f"training seeds {self.seeds}")
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
        old = self.optimizer.state_dict()
        self.params = self._as_params({n: p.detach()[index] for n, p in self.params.items()})
        self.optimizer = self._optimizer()
        state = {k: {key: (v[index] if torch.is_tensor(v) and v.dim() > 0 else v) for key, v in s.items()}
                 for k, s in old["state"].items()}
        self.optimizer.load_state_dict({"state": state, "param_groups": old["param_groups"]})
        self.seeds = [self.seeds[s] for s in keep]
        self.random = {seed: state for seed, state in self.random.items() if seed in self.seeds}
        self.streams = [self.streams[s] for s in keep]
        self.history = [self.history[s] for s in keep]

    def _status(self, losses: torch.Tensor | None, finished: list[SeedResult]) -> str:
        """The mean loss and, per seed, accuracy per bin at the last evaluation."""
        last = [(seed, h[-1].accuracy) for seed, h in zip(self.seeds, self.history) if h]
        last += [(r.seed, r.accuracy) for r in finished]
        loss = f"loss {float(losses.mean()):.4f} " if losses is not None else ""
        return loss + " ".join(f"s{seed}:" + "/".join(f"{a:.2f}" for a in acc) for seed, acc in sorted(last))

    # ------------------------------------------------------------ checkpoints of a group in progress

    def state(self) -> dict:
        """Everything needed to continue this group exactly where it is."""
        return {
            "seeds": list(self.seeds), "step": self.step, "elapsed": self.elapsed,
            "params": {n: p.detach().cpu() for n, p in self.params.items()},
            "optimizer": self.optimizer.state_dict(),
            "streams": [s.state() for s in self.streams],
            "random": {seed: dict(state) for seed, state in self.random.items()},
            "history": [[(e.step, list(e.accuracy)) for e in h] for h in self.history],
        }

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state` (the seeds it names must be a subset of this group's)."""
        try:
            positions = [self.seeds.index(s) for s in state["seeds"]]
            self.streams = [self.streams[k] for k in positions]
            self.seeds = list(state["seeds"])
            if self.model_config.dropout:
                self.random = {seed: dict(state["random"][seed]) for seed in self.seeds}
            for stream, saved in zip(self.streams, state["streams"]):
                stream.restore(saved)
            self.params = self._as_params({n: state["params"][n].to(self.device) for n in self.params})
            self.optimizer = self._optimizer()
            self.optimizer.load_state_dict(state["optimizer"])
            self.step, self.elapsed = int(state["step"]), float(state["elapsed"])
            self.history = [[Evaluation(step, tuple(acc)) for step, acc in h] for h in state["history"]]
        except (KeyError, ValueError, RuntimeError, TypeError) as error:
            raise ValidationError(f"checkpoint does not match this configuration: {error}") from None
