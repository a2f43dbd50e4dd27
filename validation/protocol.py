"""The paper's training protocol and the presets that apply it.

A :class:`Preset` says, for a task and variant, which model to train and how (a :class:`Plan`),
how many seeds must count, and what a seed needs to count. ``paper`` is the published protocol
(TASKS.md sections 1-2); ``cpu`` a smaller one that finishes the eight algorithmic tasks on a
2-core machine.

>>> from tasks import registry
>>> plan = PRESETS["paper"].plan(registry.get("majority"), Variant.parse("ape"))
>>> plan.model.label, plan.train.lr, plan.train.steps
('1l2h256d', 0.001, 30000)
>>> [c.label for c, lr in PAPER_GRID[:3]]
['1l1h16d', '1l1h16d', '1l1h64d']
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Callable

from tasks.registry import Task

from .config import ModelConfig, TrainConfig, ValidationError, Variant

PAPER_GRID = tuple((ModelConfig(l, h, d), lr) for l, h, d, lr in
                   itertools.product((1, 2, 4), (1, 2, 4), (16, 64, 256), (1e-3, 1e-4)))
"""Huang et al.'s search order for the algorithmic tasks: the first configuration that is exact on
the first two bins is kept."""

FORMAL_GRID = tuple(ModelConfig(l, h, d) for l, h, d in itertools.product((1, 2, 4), (1, 2, 4), (32, 64)))
"""The formal-language suite's model grid (lr 1e-5)."""

LARGE_LAYERS = 4
"""Models deeper than this (the paper's 12-layer fallback) count whatever their bin-1 accuracy."""


@dataclass(frozen=True)
class Plan:
    """What one task trains under a preset: the (possibly rescaled) task, model and optimisation."""

    task: Task
    model: ModelConfig
    train: TrainConfig
    note: str = ""


@dataclass(frozen=True)
class Preset:
    """A named protocol: plans per task and variant, and the counted-seeds rule.

    A seed *counts* when its accuracy on the first bin reaches ``count_threshold`` (or its model
    is deeper than :data:`LARGE_LAYERS`); seeds 0, 1, 2, ... are trained until ``seeds`` count or
    ``max_attempts`` times that many have been tried.
    """

    name: str
    description: str
    plan: Callable[[Task, Variant], Plan]
    seeds: int = 5
    count_threshold: float = 1.0
    max_attempts: int = 3

    def counts(self, model: ModelConfig, accuracy: tuple[float, ...]) -> bool:
        return model.n_layer > LARGE_LAYERS or accuracy[0] >= self.count_threshold


def _published_config(task: Task, variant: Variant) -> tuple[ModelConfig, float] | None:
    """The configuration and learning rate Huang et al. report for this task and variant."""
    wanted = "ape_reg1e-4" if variant.reg_coef else variant.name
    for anchor in task.anchors:
        if anchor.variant == wanted and anchor.config:
            label, _, lr = anchor.config.partition(" lr ")
            return ModelConfig.parse(label), float(lr)
    return None


def _paper_plan(task: Task, variant: Variant) -> Plan:
    if task.family == "formal":
        epochs = 150 if task.name in ("tomita_5", "abab_star") else 100
        sizes = task.dataset
        train = TrainConfig(lr=1e-5, batch_size=16, weight_decay=0.1, epochs=epochs,
                            train_size=sizes.train_size if sizes else 10_000,
                            test_size=sizes.test_size if sizes else 2_000, eval_every=1_000)
        return Plan(task, ModelConfig(2, 2, 64), train,
                    "formal-language protocol (batch 16, lr 1e-5, weight decay 0.1); the paper searched layers "
                    "{1,2,4} x heads {1,2,4} x width {32,64}: use --grid for that search")
    if task.family == "arithmetic":
        raise ValidationError(f"task {task.name!r}: the arithmetic papers' protocols (fixed-width formats, "
                              f"encoder models) are not part of the harness's presets")
    published = _published_config(task, variant)
    if published is None:
        model, lr = ModelConfig(2, 2, 64), 1e-3
        note = "no published configuration for this task and variant: 2l2h64d, lr 1e-3 (use --grid to search)"
    else:
        (model, lr), note = published, "the configuration Huang et al. report"
    if model.n_layer > LARGE_LAYERS:
        train = TrainConfig(lr=lr, steps=60_000, warmup=3_000)
    else:
        train = TrainConfig(lr=lr)
    return Plan(task, model, train, note)


CPU_MODELS: dict[str, tuple[str, float, int]] = {
    "bin_majority": ("1l1h16d", 1e-3, 1_000),
    "majority": ("1l2h64d", 1e-3, 2_000),
    "bin_majority_interleave": ("2l2h64d", 1e-3, 2_000),
    "unique_copy": ("2l1h64d", 1e-3, 1_500),
    "repeat_copy": ("2l2h64d", 1e-3, 1_000),
    "sort": ("1l2h64d", 1e-3, 1_500),
    "parity": ("2l2h64d", 1e-3, 1_500),
    "addition": ("2l2h64d", 1e-3, 1_000),
}
"""Per algorithmic task under the cpu preset: model, learning rate, training steps (the paper's
lengths, batch 64, 2 seeds; about 20 minutes for all eight on 2 cores)."""


def _cpu_plan(task: Task, variant: Variant) -> Plan:
    paper = _paper_plan(task, variant)
    model, lr, steps = CPU_MODELS.get(task.name, ("2l2h64d", 1e-3, 3_000))
    train = dataclasses.replace(paper.train, lr=lr, steps=steps, warmup=0, eval_every=max(1, steps // 5),
                                test_size=400, epochs=None if task.family != "formal" else 5)
    return Plan(task, ModelConfig.parse(model), train, "cpu preset: smaller model and step budget")


PRESETS: dict[str, Preset] = {
    "paper": Preset("paper", "the published protocol: published configurations, 30k steps (60k for 12 layers), "
                             "2,000 test examples per bin, 5 counted seeds", _paper_plan),
    "cpu": Preset("cpu", "a 2-core budget: the paper's lengths, small models, 1,000-2,000 steps, 400 test "
                         "examples per bin, 2 seeds, every seed counted", _cpu_plan, seeds=2, count_threshold=0.0,
                  max_attempts=1),
}


def preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValidationError(f"preset {name!r}: expected one of {', '.join(PRESETS)}") from None
