"""The paper's training protocol and the presets that apply it.

A :class:`Preset` says, for a task and variant, which model to train and how (a :class:`Plan`),
how many seeds must count, and what a seed needs to count. ``paper`` is the published protocol
(see docs/validation.md); ``cpu`` a smaller one that finishes the eight algorithmic tasks on a
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
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from tasks.algorithmic import offset_up_to
from tasks.alignment import leading_operand_width
from tasks.arithmetic import sabbaghi_tasks, xu_bins
from tasks.registry import Task
from validation.config import LEARNED, ModelConfig, Overrides, TrainConfig, ValidationError, Variant
from validation.data.device import cannot_draw
from validation.runs.spec import RunSpec, bin_labels

if TYPE_CHECKING:
    from validation.runs.store import StoredRun


PAPER_GRID = tuple((ModelConfig(l, h, d), lr) for l, h, d, lr in
                   itertools.product((1, 2, 4), (1, 2, 4), (16, 64, 256), (1e-3, 1e-4)))
"""Huang et al.'s search order for the algorithmic tasks: the first configuration that is exact on
the first two bins is kept."""


FORMAL_GRID = tuple(ModelConfig(l, h, d) for l, h, d in itertools.product((1, 2, 4), (1, 2, 4), (32, 64)))
"""The formal-language suite's model grid (lr 1e-5)."""


LARGE_LAYERS = 4
"""Models deeper than this (the paper's 12-layer fallback) count whatever their training-bin accuracy."""


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

    A seed *counts* when its accuracy on the training bin (:attr:`RunSpec.training_bin`) reaches
    ``count_threshold`` (or its model is deeper than :data:`LARGE_LAYERS`); seeds 0, 1, 2, ... are
    trained until ``seeds`` count or ``max_attempts`` times that many have been tried.
    """

    name: str
    description: str
    plan: Callable[[Task, Variant], Plan]
    seeds: int = 5
    count_threshold: float = 1.0
    max_attempts: int = 3
    family_seeds: tuple[tuple[str, int], ...] = ()
    """Counted seeds for the tasks of a family, where they differ from ``seeds``."""

    def seeds_for(self, task: Task) -> int:
        """The counted seeds a validation of ``task`` trains by default."""
        return dict(self.family_seeds).get(task.family, self.seeds)

    def counts(self, spec: RunSpec, accuracy: tuple[float, ...]) -> bool:
        return spec.model.n_layer > LARGE_LAYERS or accuracy[spec.training_bin] >= self.count_threshold

    def counted(self, runs: Sequence[StoredRun]) -> list[StoredRun]:
        """The runs among ``runs`` that count, in their order."""
        return [run for run in runs if self.counts(run.spec, run.accuracy)]


def plan_text(preset: Preset, plan: Plan, seeds: int) -> str:
    """What a validation trains, said before it trains: the model, the schedule, the bins and the
    one trained on, how many seeds must count, at most how many are tried, and what counts.

    >>> from tasks import registry
    >>> plan = PRESETS["cpu"].plan(registry.get("bin_majority"), Variant.parse("ape"))
    >>> plan_text(PRESETS["cpu"], plan, 5)
    '1l1h16d, 1,000 steps, lr 0.001, batch 64, bins 0-50 / 51-100 / 101-150 (trained on 0-50); seeds 0, 1, ... until 5 count, at most 10 tried (a seed counts at 0.9 or more on 0-50)'
    """
    train = plan.train
    schedule = (f"{train.epochs} epochs over {train.train_size:,} examples" if train.epochs
                else f"{train.steps:,} steps")
    labels = bin_labels(plan.task.bins)
    trained = labels[plan.task.training_bin]
    if plan.model.n_layer > LARGE_LAYERS:
        counts = f"every seed counts: deeper than {LARGE_LAYERS} layers"
    elif preset.count_threshold <= 0:
        counts = "every seed counts"
    else:
        counts = f"a seed counts at {preset.count_threshold:g} or more on {trained}"
    return (f"{plan.model.label}, {schedule}, lr {train.lr:g}, batch {train.batch_size}, bins {' / '.join(labels)} "
            f"(trained on {trained}); seeds 0, 1, ... until {seeds} count, at most {seeds * preset.max_attempts} "
            f"tried ({counts})")


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
        sizes = task.dataset
        epochs = sizes.epochs if sizes else 100
        train = TrainConfig(lr=1e-5, batch_size=16, weight_decay=0.1, epochs=epochs,
                            train_size=sizes.train_size if sizes else 10_000,
                            test_size=sizes.test_size if sizes else 2_000, eval_every=1_000)
        return Plan(task, ModelConfig(2, 2, 64), train,
                    "formal-language protocol (batch 16, lr 1e-5, weight decay 0.1); the paper searched layers "
                    "{1,2,4} x heads {1,2,4} x width {32,64}: use --grid for that search")
    own = _arithmetic_plan(task, variant, cpu=False)
    if own is not None:
        return own
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


def rescaled(task: Task, longest_train: int) -> Task:
    """``task`` trained on lengths up to ``longest_train`` and tested on the paper's three bins
    scaled alike: [low, n], [n+1, 2n], [2n+1, 3n].

    The positional table loses the positions the longest test sequence no longer needs (the paper
    sizes it n_positions // longest-length positions per input symbol), and training offsets stay
    uniform in [0, n_positions - sequence length], the published rule for every algorithmic task.

    >>> from tasks import registry
    >>> small = rescaled(registry.get("sort"), 20)
    >>> small.train_range, small.bins, small.n_positions
    ((0, 20), ((0, 20), (21, 40), (41, 60)), 123)
    """
    low, published_longest = task.train_range[0], task.bins[-1][1]
    if not task.n_positions or len(task.bins) != 3:
        raise ValidationError(f"task {task.name!r}: only tasks with three length bins and a published positional "
                              f"table can be rescaled")
    if not low < longest_train <= task.train_range[1]:
        raise ValidationError(f"task {task.name!r}: the rescaled training range must end in "
                              f"({low}, {task.train_range[1]}], not at {longest_train}")
    n = longest_train
    per_symbol = task.n_positions // published_longest
    n_positions = task.n_positions - per_symbol * (published_longest - 3 * n)

    return dataclasses.replace(task, train_range=(low, n), bins=((task.bins[0][0], n), (n + 1, 2 * n), (2 * n + 1, 3 * n)),
                               n_positions=n_positions,
                               train_offset=offset_up_to(lambda length, tokens: n_positions - tokens))


@dataclass(frozen=True)
class Budget:
    """What one algorithmic task trains under the cpu preset."""

    model: str
    lr: float
    steps: int
    longest_train: int | None = None
    """Train on lengths up to this (bins scaled alike, see :func:`rescaled`); None keeps the paper's."""
    warmup: int = 100


CPU_BUDGETS: dict[str, Budget] = {
    "bin_majority": Budget("1l1h16d", 1e-3, 1_000, warmup=0),
    "majority": Budget("1l1h128d", 2e-3, 2_000, longest_train=20),
    "bin_majority_interleave": Budget("1l2h64d", 3e-3, 3_000),
    "unique_copy": Budget("2l1h64d", 2e-3, 3_000, longest_train=20),
    "repeat_copy": Budget("2l2h64d", 1e-3, 3_000, longest_train=10),
    "sort": Budget("1l2h64d", 2e-3, 2_500),
    "parity": Budget("2l2h64d", 2e-3, 4_000, longest_train=20),
    "addition": Budget("2l2h64d", 3e-3, 1_500, longest_train=10),
}
"""Per algorithmic task under the cpu preset (batch 64, 400 test examples per bin; 5 counted seeds,
at most 10 tried: about 6 hours of training for the eight tasks, APE and NoPE, on 2 cores). Tasks whose
training range a small model does not learn within the budget at the paper's lengths are trained
on [0, 20] (or [0, 10]) and tested on the two bins scaled alike. parity trains 4,000 steps: at
3,000, 4 (APE) and 3 (NoPE) of 10 seeds reached 0.9 on its training range. Longer schedules did
not make the others learn theirs: addition over 6,000 steps was at 0.53-0.64 after 2,400 (APE and
NoPE, 10 seeds), and unique_copy with NoPE over 8,000 steps at 0.49-0.59 after 4,800 (5 seeds)."""


DEFAULT_BUDGET = Budget("2l2h64d", 1e-3, 3_000)


SABBAGHI_CPU_WIDTH = 20
"""Operand width of Sabbaghi et al.'s addition under the cpu preset (50 in the paper)."""


SABBAGHI_CPU_STEPS = 12_000
"""Steps of Sabbaghi et al.'s addition under the cpu preset, all of them (no stop once 1-5 digits
are exact), as the paper trains a fixed schedule: beyond 5 digits the rpe encoder's accuracy keeps
moving after 1-5 is exact (the report's 'Accuracy along training' gives its spread)."""


SABBAGHI_DROPOUT = 0.1
"""Dropout of Sabbaghi et al.'s encoders (BERT's), under both presets. At cpu scale it decides how
far the rpe encoder reaches: without it, seeds 0, 1 and 2 ended at 0.49, 0.998 and 0.23 on 6-10
digits (0.04, 0.46 and 0.00 on 11-20), and one seed's 6-10 accuracy swung between 0.39 and 0.84
from one evaluation to the next."""


def _sabbaghi_plan(task: Task, variant: Variant, *, cpu: bool) -> Plan:
    """Sabbaghi et al.'s protocol: an encoder trained on operands of at most 5 digits, tested on
    longer ones; the variant (ape, rpe, upe) is the experiment's variable."""
    if variant.positions not in ("ape", "rpe", "upe"):
        raise ValidationError(f"task {task.name!r}: Sabbaghi et al. compare ape, rpe and upe, not {variant.name}")
    addition = task.operation == "addition"
    if cpu:
        if addition:
            task = sabbaghi_tasks(width=SABBAGHI_CPU_WIDTH, distribution=task.distribution or "uniform")[0]
        train = TrainConfig(lr=1e-3, steps=SABBAGHI_CPU_STEPS, warmup=100, eval_every=1_000, test_size=400,
                            stop_when_exact=False)
        return Plan(task, ModelConfig(2, 4, 64, encoder=True, dropout=SABBAGHI_DROPOUT), train,
                    f"cpu preset: a 2-layer encoder with dropout {SABBAGHI_DROPOUT:g}, all {SABBAGHI_CPU_STEPS} steps"
                    + (f", operands padded to {SABBAGHI_CPU_WIDTH} digits" if addition else ""))
    three_digit = task.operation == "multiplication" and leading_operand_width(task) == 3  # the paper's harder setting: 9 layers, 5x the data
    model = ModelConfig(9 if three_digit else 6, 8, 768, encoder=True, dropout=SABBAGHI_DROPOUT)
    train = TrainConfig(lr=1e-4, weight_decay=1e-5, epochs=20, train_size=500_000 if three_digit else 100_000,
                        eval_every=3_000, stop_when_exact=False)
    return Plan(task, model, train, "Sabbaghi et al.'s BERT-size encoder with dropout 0.1, lr 1e-4, batch 64, 100k "
                                    "(500k for the 3-digit multiplier) training samples, every epoch trained; 20 "
                                    "epochs and weight decay 1e-5 (from their grid) are our choices")


XU_CPU_MODEL, XU_CPU_LR, XU_CPU_STEPS = "3l3h48d", 3e-3, 6_000
"""Xu et al.'s tasks under the cpu preset: their smallest model, learning rate, steps (batch 64).
Over 3,000 steps seed 0 of D_3 addition stayed on its plateau (0.02 at 3 digits) and seed 1 was
at 0.97 at the last evaluation, still rising; over 6,000 both were exact at 3 digits, from 1,800 and
3,600 steps on. At lr 1e-3 a trial had learned nothing after 3,000."""


XU_CPU_FINE_TUNE_STEPS = 6_000
"""Steps of a modular task fine-tuned from the plain operation under the cpu preset. In a trial
mod 101 addition was exact on 85% of 1-3 digit inputs after 3,000 steps and 93.5% after 6,000;
mod 100 addition was exact after 500."""


XU_CPU_DIGITS = 3
"""Operand digits Xu et al.'s tasks train on under the cpu preset: D_3 (the paper: D_4 for
addition, D_3 for multiplication and the modular tasks). On D_2 the modular tasks stayed on their
first plateau (nothing but the zero digits learned) for 3,000 steps."""


def fine_tuned_from(task: Task) -> str | None:
    """The task a modular task of Xu et al. starts from under the cpu preset: the same operation
    without the modulus (None for other tasks). From a fresh start, 3l3h48d models stayed on the
    modular tasks' first plateau (the zero digits learned, the rest at chance) for 13,000 steps at
    lr 3e-3 on mod 100 addition, and a 4l4h128d model at lr 1e-3 for 1,500. Our reading: no output
    digit of a sum modulo p is correlated with any single operand digit, so no one attention head
    helps until another does, while the top digit of a plain sum grows with the operands' leading
    digits and gives the gradient a start.

    >>> from tasks import registry
    >>> fine_tuned_from(registry.get("xu_mod101_addition")), fine_tuned_from(registry.get("xu_addition"))
    ('xu_addition', None)
    """
    found = re.fullmatch(r"xu_mod\d+_(addition|multiplication)", task.name)
    return f"xu_{found.group(1)}" if found else None


def trained_on(task: Task, digits: int) -> Task:
    """Xu et al.'s task trained on D_``digits`` and tested on fewer digits, on ``digits`` itself (the
    training bin), on [digits + 1, 9] and on [10, 20] (multiplication: up to 10).

    >>> from tasks import registry
    >>> trained = trained_on(registry.get("xu_addition"), 3)
    >>> trained.bins, trained.training_bin
    (((1, 2), (3, 3), (4, 9), (10, 20)), 1)
    """
    if not 1 <= digits < 9:
        raise ValidationError(f"task {task.name!r}: train on 1 to 8 digits, not {digits}")
    assert task.max_length is not None  # every task of Xu et al. has a longest length
    return dataclasses.replace(task, train_range=(digits, digits), bins=xu_bins(digits, task.max_length))


def _xu_plan(task: Task, variant: Variant, *, cpu: bool) -> Plan:
    """Xu et al.'s protocol: a nanoGPT decoder trained on D_n for a fixed schedule (no stop once D_n
    is exact: the shorter lengths are a test, and may still be learned after it), tested on fewer and
    more digits."""
    if variant.positions not in ("ape", "nope", "rpe"):
        raise ValidationError(f"task {task.name!r}: Xu et al. compare ape and rpe (and the harness adds nope), not "
                              f"{variant.name}")
    if cpu:
        source = fine_tuned_from(task)
        steps = XU_CPU_FINE_TUNE_STEPS if source else XU_CPU_STEPS
        train = TrainConfig(lr=XU_CPU_LR, steps=steps, warmup=100, eval_every=steps // 5, test_size=400,
                            start_from=source, stop_when_exact=False)
        note = f"cpu preset: {XU_CPU_MODEL}, lr {XU_CPU_LR:g}, all {steps} steps, trained on D_{XU_CPU_DIGITS}"
        if source:
            note += f", fine-tuned from seed s of {source} (from a fresh start the modular tasks do not leave their " \
                    f"first plateau at this scale)"
        return Plan(trained_on(task, XU_CPU_DIGITS), ModelConfig.parse(XU_CPU_MODEL), train, note)
    multiply = task.operation == "multiplication"
    train = TrainConfig(lr=1e-3, batch_size=64, epochs=10, train_size=500_000 if multiply else 100_000,
                        eval_every=5_000, stop_when_exact=False)
    return Plan(task, ModelConfig(6, 6, 384), train,
                "Xu et al.'s default model (6 layers, 6 heads, d 384), AdamW lr 1e-3, batch 64, 100k training samples "
                "(500k for multiplication), every epoch trained; 10 epochs is our choice")


def _duan_plan(task: Task, variant: Variant, *, cpu: bool) -> Plan:
    """Duan et al.'s protocol: the encoder-decoder trained on 1-6 digits, tested to 60."""
    if not variant.seq2seq:
        raise ValidationError(f"task {task.name!r}: Duan et al. train an encoder-decoder (variants sinusoidal, abs, "
                              f"abc, abc<kappa>, abc<kappa>-layers), not {variant.name}")
    if cpu:
        steps = DUAN_CPU_STEPS.get(task.name, DUAN_CPU_DEFAULT_STEPS)
        train = TrainConfig(lr=1e-3, steps=steps, warmup=100, eval_every=500, test_size=200)
        return Plan(task, ModelConfig.parse(DUAN_CPU_MODEL), train,
                    f"cpu preset: a {DUAN_CPU_MODEL} encoder-decoder, lr 1e-3, up to {steps} steps, batch 64")
    train = TrainConfig(lr=3e-4, batch_size=128, steps=30_000, warmup=1_000, eval_every=2_000, test_size=1_000)
    return Plan(task, ModelConfig(6, 8, 128), train,
                "Duan et al.'s model (6 decoder layers, 8 heads, d 128, FFN 512, identity encoder); they train until "
                "interpolation is exact: lr 3e-4, batch 128 and 30k steps are our choices")


DUAN_CPU_MODEL, DUAN_CPU_DEFAULT_STEPS = "2l4h64d", 6_000
"""Duan et al.'s tasks under the cpu preset: the model, and the most steps a run takes (each seed
stops once its training range is exact, as Duan et al. train until interpolation is exact). In
trials the sinusoidal model was exact on 1-6 digit successors after 1,000 steps and the scaffolded
one on 60-bit parity after 500."""


DUAN_CPU_STEPS = {"duan_addition": 12_000, "duan_n_times_1": 12_000}
"""Tasks that need more than :data:`DUAN_CPU_DEFAULT_STEPS`. In 6,000 steps two sinusoidal addition
seeds reached 0.86 and 0.52 on 1-6 digits, so neither counted and ABC had no exact model to
calibrate from; in a 12,000-step trial of three seeds trained together, seed 1 was exact after
6,000 steps, seed 0 after 9,000 and seed 2 at 0.995 after 12,000. An N x 1 ABC run of 6,000 steps
ended at 0.99 on 1-6 digits and 0.63 on 21-60, still rising at every evaluation."""


def _arithmetic_plan(task: Task, variant: Variant, *, cpu: bool) -> Plan | None:
    """The plan of an arithmetic paper's own protocol (None for other tasks)."""
    if task.protocol is None:
        return None
    plan = {"xu": _xu_plan, "duan": _duan_plan, "sabbaghi": _sabbaghi_plan}.get(task.protocol)
    return plan(task, variant, cpu=cpu) if plan is not None else None


def _cpu_plan(task: Task, variant: Variant) -> Plan:
    own = _arithmetic_plan(task, variant, cpu=True)
    if own is not None:
        return own
    paper = _paper_plan(task, variant)
    budget = CPU_BUDGETS.get(task.name, DEFAULT_BUDGET)
    formal = task.family == "formal"
    train = dataclasses.replace(paper.train, lr=budget.lr, steps=budget.steps, warmup=0 if formal else budget.warmup,
                                eval_every=max(1, budget.steps // 5), test_size=400, epochs=5 if formal else None)
    note = "cpu preset: smaller model and step budget"
    if budget.longest_train is not None:
        task = rescaled(task, budget.longest_train)
        note += f"; lengths scaled to training range [0, {budget.longest_train}]"
    return Plan(task, ModelConfig.parse(budget.model), train, note)


@dataclass(frozen=True)
class _DrawnOnDevice:
    """``plan_of``'s plans, their training examples drawn on the device wherever the task allows
    it (:func:`validation.data.device.cannot_draw`); a class, not a closure, as Ray sends it."""

    plan_of: Callable[[Task, Variant], Plan]

    def __call__(self, task: Task, variant: Variant) -> Plan:
        made = self.plan_of(task, variant)
        if cannot_draw(made.task, epochs=bool(made.train.epochs)):
            return made
        return dataclasses.replace(made, train=dataclasses.replace(made.train, sampler="device"))


PRESETS: dict[str, Preset] = {
    "paper": Preset("paper", "the published protocol: published configurations, 30k steps (60k for 12 layers), "
                             "2,000 test examples per bin, 5 counted seeds; training examples drawn on the device "
                             "where the task allows it, TF32 products on a GPU", _DrawnOnDevice(_paper_plan)),
    "cpu": Preset("cpu", "a 2-core budget: small models, 1,000-4,000 steps, the paper's lengths or (for "
                         "tasks small models cannot learn at them) lengths scaled down, 400 test examples per "
                         "bin, 5 counted seeds for the algorithmic tasks (enough for a t interval and a "
                         "Mann-Whitney test across seeds) and 2 for the others (a seed counts when it learned "
                         "the training bin, accuracy >= 0.9; at most twice as many tried); training examples drawn by "
                         "the Python samplers, TF32 products on a GPU (float32 on a CPU)", _cpu_plan, seeds=2,
                  count_threshold=LEARNED, max_attempts=2, family_seeds=(("algorithmic", 5),)),
}


@dataclass(frozen=True)
class _Overridden:
    """A preset's plans with overrides in place (a class, not a closure: Ray sends it to its workers)."""

    plan_of: Callable[[Task, Variant], Plan]
    overrides: Overrides

    def __call__(self, task: Task, variant: Variant) -> Plan:
        plan = self.plan_of(task, variant)
        model, train = self.overrides.apply(plan.model, plan.train)
        if train.sampler == "device" and cannot_draw(plan.task, epochs=bool(train.epochs)):
            train = dataclasses.replace(train, sampler="python")  # the overrides took what drawing on the device needs
        note = f"{plan.note}; " if plan.note else ""
        return dataclasses.replace(plan, model=model, train=train, note=f"{note}overridden: {self.overrides.text()}")


def overridden(rules: Preset, overrides: Overrides) -> Preset:
    """``rules`` with ``overrides`` in every plan it makes, first stages included (the run a
    fine-tuned task starts from, the run ABC calibrates from); its name, seeds and counting rule
    stay. Each run's spec holds the settings it trained with, so the overridden runs have store
    keys of their own and never stand in for the preset's.

    >>> from tasks import registry
    >>> changed = overridden(PRESETS["cpu"], Overrides.parse(["lr=3e-4", "steps=2000"]))
    >>> plan = changed.plan(registry.get("bin_majority"), Variant.parse("ape"))
    >>> changed.name, plan.model.label, plan.train.lr, plan.train.steps
    ('cpu', '1l1h16d', 0.0003, 2000)
    """
    if not overrides:
        return rules
    return dataclasses.replace(rules, plan=_Overridden(rules.plan, overrides))


def preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValidationError(f"preset {name!r}: expected one of {', '.join(PRESETS)}") from None
