"""Two experiments on how deep and how long (``crasp validate --experiment depth|training-length``).

``depth``: Yang, Cadilhac & Chiang's experiment at a CPU scale. NoPE decoders of 1 to 4 layers (one
head, as theirs) learn the prediction task of L_3 to L_6 (:mod:`tasks.depth_languages`); the report
puts the accuracy on lengths beyond training beside the published numbers and the predicted
minimum depth (:mod:`tasks.layers`).

``training-length``: one regular task (``re:ab:a*b*``, a three-state automaton) and one counting task
(``bin_majority``) trained on inputs of at most N = 2, 4, 8, 16, 32 symbols and tested on 51 to 100;
the report plots accuracy against N beside the training-length bound of :mod:`tasks.training_length`.

Every run goes through :func:`validation.runs.sweep.validate` (stored, resumable); a seed counts whatever
it learned, since a model too shallow to learn the training lengths is a result here.

>>> [(cell.k, cell.depth) for cell in depth_cells()][:3]
[(3, 1), (3, 2), (3, 3)]
>>> [run.longest for run in length_runs()][:5]
[2, 4, 8, 16, 32]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tasks import registry
from tasks.registry import Task
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.runs.protocol import Plan, Preset
from validation.runs.store import Store
from validation.runs.sweep import Progress, Validation, validate
from validation.training.device import Machine

KS = (3, 4, 5, 6)


DEPTHS = (1, 2, 3, 4)


SEEDS = 3


DEPTH_WIDTH = 64


DEPTH_TRAIN = TrainConfig(lr=1e-3, steps=2_000, batch_size=32, warmup=100, eval_every=500, test_size=200)
"""Our CPU choices: the authors train one word per step at lr 1e-4 or 1e-5 for 25 epochs and keep the
first of their settings that is exact on the training bin; we take batches of 32 words at lr 1e-3
for at most 2,000 steps, stopping once the training bin is exact."""


LENGTH_TASKS = ("re:ab:a*b*", "bin_majority")


LONGEST = (2, 4, 8, 16, 32)


LONG_BIN = (51, 100)


LENGTH_MODEL = ModelConfig(2, 2, 64)


LENGTH_TRAIN = TrainConfig(lr=1e-3, steps=2_000, batch_size=32, warmup=100, eval_every=500, test_size=200)


VARIANT = "nope"


def _no_default_plan(task: Task, variant: Variant) -> Plan:
    raise ValidationError("each run of the depth and training-length experiments brings its own plan")


EVERY_SEED = Preset("experiment", "every seed counts: a model that cannot learn the training lengths is a result",
                    _no_default_plan, seeds=SEEDS, count_threshold=0.0, max_attempts=1)


@dataclass(frozen=True)
class DepthCell:
    """One cell of the depth experiment: L_k learned by a NoPE decoder of ``depth`` layers."""

    k: int
    depth: int

    @property
    def task(self) -> str:
        return f"L{self.k}"

    @property
    def label(self) -> str:
        return f"{self.task} {self.depth} layers"

    def plan(self) -> Plan:
        return Plan(registry.get(self.task), ModelConfig(self.depth, 1, DEPTH_WIDTH), DEPTH_TRAIN,
                    f"depth experiment: {self.depth} layers, one head, width {DEPTH_WIDTH}")


@dataclass(frozen=True)
class LengthRun:
    """One run of the training-length experiment: ``task`` trained on inputs of at most ``longest``."""

    task: str
    longest: int

    @property
    def label(self) -> str:
        return f"{self.task} N={self.longest}"

    def plan(self) -> Plan:
        task = registry.get(self.task)
        low = task.min_length
        shortened = dataclasses.replace(task, train_range=(low, self.longest), bins=((low, self.longest), LONG_BIN))
        return Plan(shortened, LENGTH_MODEL, LENGTH_TRAIN,
                    f"training-length experiment: inputs of at most {self.longest} symbols")


def depth_cells(ks=KS, depths=DEPTHS) -> list[DepthCell]:
    return [DepthCell(k, d) for k in ks for d in depths]


def length_runs(names=LENGTH_TASKS, longest=LONGEST) -> list[LengthRun]:
    return [LengthRun(name, n) for name in names for n in longest]


def _write_depth(cells, results, out: Path) -> Path:
    from validation.reports.depth import write_depth

    return write_depth(cells, results, out)


def _write_length(runs, results, out: Path) -> Path:
    from validation.reports.depth import write_length

    return write_length(runs, results, out)


EXPERIMENTS = {"depth": (depth_cells, _write_depth), "training-length": (length_runs, _write_length)}
"""Each experiment's runs and its report (matplotlib is imported only to write one)."""


def experiment(name: str):
    """(the runs, the report writer) of experiment ``name``; an unknown name is refused."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ValidationError(f"experiment {name!r}: expected one of {', '.join(EXPERIMENTS)}") from None


@dataclass(frozen=True)
class Outcome:
    """The validations of an experiment (in the order of its cells or runs) and the report's path."""

    name: str
    cells: tuple
    results: tuple[Validation, ...]
    report: Path | None


def run(name: str, *, store: Store, out: str | Path | None = None, device: str | Machine = "cpu",
        seeds: int | None = None,
        progress: Callable[[str], Progress | None] = lambda label: None, cells: tuple | None = None) -> Outcome:
    """Train (or find in ``store``) every run of experiment ``name`` and write its report to ``out``."""
    runs, write = experiment(name)
    chosen = cells if cells is not None else tuple(runs())
    results = tuple(validate(cell.task, EVERY_SEED, VARIANT, store=store, seeds=seeds, device=device,
                             progress=progress(cell.label), plan=cell.plan()) for cell in chosen)
    report = write(tuple(chosen), results, Path(out)) if out is not None else None
    return Outcome(name, tuple(chosen), results, report)


__all__ = ["EXPERIMENTS", "experiment", "DepthCell", "LengthRun", "depth_cells", "length_runs", "run", "Outcome"]
