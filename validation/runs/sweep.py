"""Run a preset on a task: train the seeds that are not in the store yet, resuming any group a
killed sweep left in progress, until enough seeds count.

>>> import tempfile
>>> from validation.runs.store import Store
>>> from validation.runs import protocol
>>> from validation.config import ModelConfig, TrainConfig
>>> tiny = protocol.Preset("tiny", "a doctest", lambda task, variant: protocol.Plan(
...     task, ModelConfig(1, 1, 16), TrainConfig(steps=2, batch_size=4, eval_every=2, test_size=4)),
...     seeds=2, count_threshold=0.0)
>>> result = validate("bin_majority", tiny, "ape", store=Store(tempfile.mkdtemp()))
>>> [run.spec.seed for run in result.runs], len(result.counted)
([0, 1], 2)
"""

from __future__ import annotations

import dataclasses
import platform
from dataclasses import dataclass
from typing import Callable, Sequence, cast

import torch

from crasp.ast import Program
from tasks import registry
from tasks.registry import Task
from validation.config import ValidationError, Variant
from validation.data.encoding import Encoding
from validation.models.build import Trained
from validation.models.calibration import CALIBRATION_EXAMPLES, calibrate, calibration_examples
from validation.models.seq2seq import EncoderDecoder
from validation.runs.prediction import RecordedPrediction, prediction_for
from validation.runs.protocol import PAPER_GRID, Plan, Preset
from validation.runs.spec import RunSpec
from validation.runs.store import Store, StoredRun
from validation.training.device import Machine
from validation.training.group import SeedGroup, SeedResult


class Stopped(Exception):
    """Training stopped at its time limit; the groups in progress are saved in the store, and the
    same command run again resumes them."""


def trained_on(group: SeedGroup) -> dict:
    """Where a group trained, as its runs' records keep it: the device (and its name), how its
    steps were taken, and the torch that ran them."""
    device = group.device
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()
    return {"device": str(device), "device_name": name, "step": group.steps.name, "torch": torch.__version__}


def compared_with(group: SeedGroup, prediction: RecordedPrediction | None) -> dict:
    """What a group's runs are compared with, as their records keep it: the prediction (where
    given) and, per bin, the best constant answer's accuracy on the group's test sets."""
    return {"baseline": list(group.baseline), **({"prediction": prediction.to_json()} if prediction else {})}


Progress = Callable[[int, int, str], None]
"""Called with (step, total steps, status) after every evaluation."""


@dataclass(frozen=True)
class Validation:
    """The runs of one task and variant under a preset, and which of them count."""

    task: str
    variant: str
    preset: str
    plan: Plan
    runs: tuple[StoredRun, ...]
    counted: tuple[StoredRun, ...]

    def __repr__(self) -> str:
        from crasp.display import validation_repr

        return validation_repr(self)

    def _repr_html_(self) -> str:
        """The validation in a notebook: a row per run, and a plot of accuracy by length bin."""
        from crasp.display import validation_html

        return validation_html(self)


def validate(task_name: str | Task, preset: Preset, variant: str = "ape", *, store: Store, seeds: int | None = None,
             device: str | Machine = "cpu", progress: Progress | None = None, plan: Plan | None = None,
             programs: Sequence[Program] = (), prediction: RecordedPrediction | None = None) -> Validation:
    """Train (or find in ``store``) seeds 0, 1, ... of the preset's plan until ``seeds`` count
    (``task_name``: a name the registry knows, or the task itself). Every run trained records the
    prediction it is compared with (``prediction``, else the one ``crasp predict`` makes, given
    ``programs``: :func:`~validation.runs.prediction.prediction_for`) and its bins' baselines."""
    task = task_name if isinstance(task_name, Task) else registry.get(task_name)
    kind = Variant.parse(variant)
    plan = plan or preset.plan(task, kind)
    wanted = seeds if seeds is not None else preset.seeds_for(task)
    if wanted < 1:
        raise ValidationError(f"--seeds {wanted}: at least one seed is needed")
    prediction = prediction or prediction_for(plan.task, kind.name, programs)  # the task as trained
    initial = _first_stages(task, preset, kind, plan, store=store, device=device, progress=progress)
    runs: list[StoredRun] = []
    tried = 0
    while tried < wanted * preset.max_attempts:
        counted = preset.counted(runs)
        missing = wanted - len(counted)
        if missing <= 0:
            break
        specs = [RunSpec(task.name, kind.name, plan.model, plan.train, seed, preset.name,
                         plan.task.train_range, plan.task.bins)
                 for seed in range(tried, min(tried + missing, wanted * preset.max_attempts))]
        runs.extend(train_specs(plan, kind, specs, store=store, device=device, progress=progress, initial=initial,
                                prediction=prediction))
        tried += len(specs)
    counted = preset.counted(runs)
    return Validation(task.name, kind.name, preset.name, plan, tuple(runs), tuple(counted[:wanted]))


Initial = Callable[[list[int]], dict[int, dict[str, torch.Tensor]]]
"""Given seeds, the tensors each of them starts from (a first stage's output)."""


def _first_stages(task: Task, preset: Preset, variant: Variant, plan: Plan, *, store: Store, device: str | Machine,
                  progress: Progress | None) -> Initial | None:
    """What the seeds of a two-stage run start from: ABC's calibrated tables, the weights of the
    run ``plan.train.start_from`` names, or both (None for a run from a fresh initialisation)."""
    stages: list[Initial] = []
    if variant.scheme.calibrated:
        stages.append(lambda seeds: calibrations(task, preset, variant, seeds, store=store, device=device,
                                                 progress=progress))
    source = plan.train.start_from
    if source:
        stages.append(lambda seeds: starting_weights(task, preset, variant, source, seeds,
                                                     store=store, device=device, progress=progress))
    if not stages:
        return None

    def initial(seeds: list[int]) -> dict[int, dict[str, torch.Tensor]]:
        given = [stage(seeds) for stage in stages]
        return {seed: {name: t for tensors in given for name, t in tensors[seed].items()} for seed in seeds}

    return initial


def first_stage(task: Task, preset: Preset, variant: Variant, seeds: list[int], *, store: Store,
                device: str | Machine = "cpu", progress: Progress | None = None) -> tuple[Plan, list[StoredRun]]:
    """Seeds ``seeds`` of ``task`` and ``variant`` under ``preset``, trained if the store lacks them."""
    plan = preset.plan(task, variant)
    if plan.train.start_from:
        raise ValidationError(f"task {task.name!r}: a first stage cannot itself start from another run "
                              f"({plan.train.start_from!r})")
    specs = [RunSpec(task.name, variant.name, plan.model, plan.train, seed, preset.name, plan.task.train_range,
                     plan.task.bins) for seed in seeds]
    return plan, train_specs(plan, variant, specs, store=store, device=device,
                             progress=_prefixed(progress, f"first stage {task.name} {variant.name}"))


def _prefixed(progress: Progress | None, prefix: str) -> Progress | None:
    """``progress`` with ``prefix`` before every status: a run's bar then says when it is training
    the run it starts from."""
    if progress is None:
        return None
    return lambda step, total, status: progress(step, total, f"{prefix}: {status}")


def calibrations(task: Task, preset: Preset, variant: Variant, seeds: list[int], *, store: Store,
                 device: str | Machine = "cpu",
                 progress: Progress | None = None) -> dict[int, dict[str, torch.Tensor]]:
    """ABC's first stage for ``seeds``: seed s of the preset's ``sinusoidal`` run (trained if the
    store lacks it), calibrated into the bias tables of seed s of ``variant``."""
    stage = Variant.parse("sinusoidal")
    plan, runs = first_stage(task, preset, stage, seeds, store=store, device=device, progress=progress)
    tables = {}
    for run in runs:
        trained = Trained.from_weights(plan.task, stage, plan.model, store.weights(run), Machine.of(device).device)
        assert isinstance(trained.model, EncoderDecoder)  # the sinusoidal variant is Duan et al.'s encoder-decoder
        examples = calibration_examples(plan.task, CALIBRATION_EXAMPLES, run.spec.seed)
        own, cross, _ = calibrate(trained.model, trained.encoding, examples, kappa_cross=variant.kappa,
                                  every_layer=variant.every_layer)
        tables[run.spec.seed] = {"self_bias": own, "cross_bias": cross}
    return tables


def starting_weights(task: Task, preset: Preset, variant: Variant, source: str, seeds: list[int], *, store: Store,
                     device: str | Machine = "cpu",
                 progress: Progress | None = None) -> dict[int, dict[str, torch.Tensor]]:
    """Fine-tuning's first stage: the trained weights of seed s of task ``source`` (same preset and
    variant, trained if the store lacks it) for seed s of ``task``. The two tasks must share a
    vocabulary, so that every token keeps its embedding."""
    first = registry.get(source)
    if Encoding.of(first).vocabulary != Encoding.of(task).vocabulary:
        raise ValidationError(f"task {task.name!r} cannot start from {source!r}: their vocabularies differ")
    _, runs = first_stage(first, preset, variant, seeds, store=store, device=device, progress=progress)
    return {run.spec.seed: store.weights(run) for run in runs}


def train_specs(plan: Plan, variant: Variant, specs: list[RunSpec], *, store: Store, device: str | Machine = "cpu",
                progress: Progress | None = None, initial: Initial | None = None,
                prediction: RecordedPrediction | None = None) -> list[StoredRun]:
    """The stored runs of ``specs`` (which share everything but the seed), training the missing ones
    together; a group saved in progress under the same configuration continues where it stopped.
    ``initial(seeds)`` gives the tensors the seeds to train start from; each run records
    ``prediction`` (where given) and its test sets' baselines."""
    machine = Machine.of(device)
    done = {spec.seed: store.finished(spec) for spec in specs}
    pending = [spec for spec in specs if done[spec.seed] is None]
    if pending:
        by_seed = {spec.seed: spec for spec in pending}
        group_key = pending[0].group_key
        saved = store.load_partial(group_key)
        resumable = [s for s in (saved or {}).get("seeds", []) if s in by_seed]
        batches = [resumable, [s for s in by_seed if s not in resumable]] if resumable else [list(by_seed)]
        for seeds in (b for b in batches if b):
            if seeds is resumable:
                assert saved is not None  # the resumable seeds are those it names
                group = _resumed(plan, variant, saved, set(resumable), machine, progress)
                if progress:
                    progress(group.step, group.total_steps, f"resumed seeds {resumable} at step {group.step}")
            else:
                group = SeedGroup(plan.task, variant, plan.model, plan.train, seeds, device=machine.device,
                                  step=machine.step, progress=progress,
                                  initial=initial(seeds) if initial else None)

            def keep(group: SeedGroup, finished: list[SeedResult]) -> None:
                for result in finished:
                    spec = by_seed[result.seed]
                    done[result.seed] = store.record(
                        spec, result.accuracy, result.steps, result.wall_time, result.stopped_early,
                        [(e.step, e.accuracy) for e in result.history], result.weights,
                        trained_on=trained_on(group), compared_with=compared_with(group, prediction))
                if group.seeds:  # named, so that a report can show the run in progress
                    named = {"spec": dataclasses.replace(pending[0], seed=-1).to_json(),
                             "total_steps": group.total_steps}
                    store.save_partial(group_key, {**group.state(), **named})

            group.run(on_evaluation=keep, deadline=machine.deadline)
            if group.stopped:
                raise Stopped(f"{plan.task.name} {variant.name}: stopped at the time limit at step {group.step} of "
                              f"{group.total_steps}, seeds {group.seeds} saved in {store.root}")
            store.drop_partial(group_key)
    return cast(list[StoredRun], [done[spec.seed] for spec in specs])  # a group trains every seed to its end


def _resumed(plan: Plan, variant: Variant, saved: dict, pending: set[int], machine: Machine,
             progress: Progress | None) -> SeedGroup:
    """A group rebuilt from a saved state, without any seed that finished after it was saved."""
    group = SeedGroup(plan.task, variant, plan.model, plan.train, saved["seeds"], device=machine.device,
                      step=machine.step, progress=progress)
    group.restore(saved)
    keep = [k for k, seed in enumerate(group.seeds) if seed in pending]
    if len(keep) < len(group.seeds):
        group.keep_only(keep)
    return group


def search(task_name: str, variant: str, *, store: Store, plan_of: Callable[[Task, Variant], Plan],
           grid=PAPER_GRID, device: str | Machine = "cpu", progress: Progress | None = None) -> Plan:
    """The paper's configuration search: seed 0 of each grid configuration in order, keeping the
    first that is exact on the training bin and the next (the last one tried if none is)."""
    task = registry.get(task_name)
    kind = Variant.parse(variant)
    base = plan_of(task, kind)
    chosen = base
    for model, lr in grid:
        chosen = Plan(task, model, dataclasses.replace(base.train, lr=lr), f"grid search: {model.label}, lr {lr:g}")
        spec = RunSpec(task.name, kind.name, model, chosen.train, 0, "grid", task.train_range, task.bins)
        (run,) = train_specs(chosen, kind, [spec], store=store, device=device, progress=progress)
        if run.accuracy[task.training_bin:task.training_bin + 2] == (1.0, 1.0):
            break
    return chosen
