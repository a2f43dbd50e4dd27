"""Predicted versus observed versus published: one row per task, variant and model in the store.

Each length bin's accuracy is a proportion of the run's test inputs for that bin: every seed's
value gets a Wilson interval, and the mean over the counted seeds a t interval over the seeds
(never narrower than the Wilson interval of their inputs pooled; :mod:`validation.reports.statistics`).
The row's *outcome* is decided from those intervals against fixed thresholds: learned when the
training bin (the first, but for Xu et al.'s tasks, whose shorter lengths are a bin of their own)
is entirely at or above :data:`LEARNED`; then *kept* when every other bin is entirely at or above
:data:`KEPT`, *collapsed* when the longest is entirely at or below :data:`COLLAPSED`, *in between*
when neither can be; a bin whose interval straddles a threshold makes the row *inconclusive*.
The same rule read on the paper's published numbers (points: the papers do not give intervals)
gives the paper's own labels for all 24 algorithmic rows (tested).

>>> outcome((1.0, 0.97, 0.85)), outcome((1.0, 0.26, 0.0)), outcome((0.5, 0.5, 0.5))
(<Outcome.KEPT: 'kept'>, <Outcome.COLLAPSED: 'collapsed'>, <Outcome.NOT_LEARNED: 'not learned'>)
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from tasks import registry
from tasks.registry import Task, TaskError
from validation.config import ValidationError, Variant
from validation.reports.statistics import (
    COLLAPSED,
    CONFIDENCE,
    KEPT,
    LEARNED,
    Interval,
    Outcome,
    decide,
    mean_interval,
    point,
)
from validation.data.baseline import TRIVIAL_SHARE, baselines
from validation.runs.prediction import RecordedPrediction, prediction_for, scheme_of
from validation.runs.protocol import PRESETS, Preset
from validation.runs.spec import RunSpec, bin_labels
from validation.runs.store import InProgress, Problem, Store, StoredRun


def outcome(accuracy: Sequence[float], trained: int = 0) -> Outcome:
    """The outcome of accuracies per bin known without an interval (published numbers), by the
    rule of :func:`validation.reports.statistics.decide` (index ``trained``: the training bin).

    >>> outcome((0.3, 1.0, 0.9), trained=1), outcome((0.3, 1.0, 0.1), trained=1)
    (<Outcome.BETWEEN: 'in between'>, <Outcome.COLLAPSED: 'collapsed'>)
    """
    return decide([point(a) for a in accuracy], trained)


EXPECTED = {"generalizes": Outcome.KEPT, "does not generalize": Outcome.COLLAPSED}


@dataclass(frozen=True)
class Row:
    """One task, variant and model: prediction, observation over seeds, publication."""

    task: str
    variant: str
    preset: str
    model: str
    bins: tuple[tuple[int, int], ...]
    published_bins: tuple[tuple[int, int], ...]
    trained: int
    """The index of the training bin in ``bins`` (and in ``published_bins``)."""
    predicted: str
    basis: str
    runs: int
    counted: int
    mean: tuple[float, ...]
    spread: tuple[float, ...]
    observed: Outcome
    published: tuple[float, ...] | None
    published_outcome: Outcome | None
    intervals: tuple[Interval, ...] = ()
    """Per bin, the mean over counted seeds with its interval (empty when no seed counted)."""
    seeds: tuple[tuple[float, ...], ...] = ()
    """Per counted seed, its accuracy on each bin."""
    examples: int | None = None
    """The test inputs per bin of each run."""
    training_seconds: float = 0.0
    """Wall time the row's runs trained, each group of seeds trained together counted once
    (:func:`training_seconds`)."""
    baseline: tuple[float, ...] = ()
    """Per bin, the best constant answer's accuracy on the runs' test sets
    (:mod:`validation.data.baseline`); empty where unknown."""
    strength: str | None = None
    """The prediction's strength (proof, verified, extrapolated; None when undetermined)."""
    prediction_source: str = ""
    """Where the prediction comes from: recorded with the runs when they trained, or computed for
    the report (runs recorded before stores kept it), and at which budget."""

    @property
    def prediction(self) -> str:
        """``generalizes (verified)``: the verdict and its strength."""
        return f"{self.predicted} ({self.strength})" if self.strength else self.predicted

    @property
    def agreement(self) -> str:
        """"yes", "no", or "inconclusive" with the reason."""
        expected = EXPECTED.get(self.predicted)
        if expected is None:
            return "inconclusive: no prediction"
        if self.counted == 0:
            return "inconclusive: no counted seed"
        if self.observed is Outcome.TRIVIAL:
            return f"inconclusive: trivial test (the best constant answer scores {_cells(self.baseline)})"
        if self.observed is Outcome.NOT_LEARNED:
            at = self.intervals[self.trained] if self.intervals else None
            if at is not None and self.baseline and at.low <= self.baseline[self.trained]:
                return (f"inconclusive: not learned in-distribution (at the best constant answer, "
                        f"{self.baseline[self.trained]:.3f})")
            return "inconclusive: not learned in-distribution"
        if self.observed is Outcome.BETWEEN:
            return "inconclusive: in between"
        if self.observed is Outcome.INCONCLUSIVE:
            return "inconclusive: an interval straddles a threshold"
        return "yes" if self.observed is expected else "no"

    def to_json(self) -> dict:
        """Every field by name (outcomes as their words, intervals as
        :meth:`~validation.reports.statistics.Interval.to_json`), and the agreement."""
        data = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return {**data, "bins": [list(b) for b in self.bins], "published_bins": [list(b) for b in self.published_bins],
                "mean": list(self.mean), "spread": list(self.spread), "observed": self.observed.value,
                "published": list(self.published) if self.published is not None else None,
                "published_outcome": self.published_outcome.value if self.published_outcome else None,
                "intervals": [i.to_json() for i in self.intervals], "seeds": [list(s) for s in self.seeds],
                "baseline": list(self.baseline), "prediction": self.prediction, "agreement": self.agreement}


PERCENT_FAMILIES = frozenset({"formal", "arithmetic"})
"""Families whose published anchors are in percent (tasks/data anchors, from the papers' tables:
Huang et al.'s formal languages, and the arithmetic papers); the algorithmic ones are fractions."""


def _published(task, variant: str) -> tuple[float, ...] | None:
    """The published accuracy per bin of ``task`` for ``variant``, as fractions; None where the
    paper gives none for every bin (a number for one tested length is listed apart, with it)."""
    for anchor in task.anchors:
        if (anchor.variant == variant and len(anchor.bins) == len(task.bins)
                and all(isinstance(b, float) for b in anchor.bins)):
            values = tuple(anchor.bins)
            return tuple(v / 100 for v in values) if task.family in PERCENT_FAMILIES else values
    return None


def relative_verdict(task, variant: str):
    """For relative (``rpe``) or uniform (``upe``) positions on an operand format, the engine's
    verdict for that scheme (a ``ClassVerdict``); None for anything else.

    >>> from tasks import registry
    >>> relative_verdict(registry.get("sabbaghi_multiplication"), "upe").verdict.value
    'generalizes'
    """
    from tasks.evidence.alignment import applies
    from tasks.predict import predict

    scheme = scheme_of(variant)
    if scheme not in ("relative", "uniform") or not applies(task):
        return None
    return predict(task, schemes=[scheme], quick=True, synthesis=False).verdict(scheme)


def _recorded(runs: Sequence[StoredRun]) -> tuple[RecordedPrediction | None, int]:
    """The prediction the latest of ``runs`` recorded, and how many of the others recorded another
    (a run trained by an earlier version of the toolkit, or with other programs)."""
    records = [(run.finished_at, RecordedPrediction.from_json(run.compared_with["prediction"]))
               for run in runs if "prediction" in run.compared_with]
    if not records:
        return None, 0
    latest = max(records, key=lambda item: item[0])[1]
    return latest, sum(record != latest for _, record in records)


def _prediction(runs: Sequence[StoredRun], task: Task, variant: str, cache: dict) -> tuple[RecordedPrediction, str]:
    """The prediction ``runs`` are compared with and where it comes from: recorded when they
    trained, else computed now as ``crasp predict`` computes it (``cache``: by task and variant)."""
    recorded, others = _recorded(runs)
    if recorded is not None:
        source = f"recorded when trained (budget {recorded.budget})"
        if others:
            source += f"; {others} of {len(runs)} runs recorded another prediction"
        return recorded, source
    key = (task.name, variant)
    if key not in cache:
        cache[key] = prediction_for(task, variant)
    record = cache[key]
    return record, f"computed for this report (budget {record.budget}): the runs recorded none"


def _baseline(runs: Sequence[StoredRun], task: Task | None, cache: dict) -> tuple[float, ...]:
    """Per bin, the best constant answer on the runs' test sets: as recorded when they trained, else
    computed from the test sets drawn again (empty where the task is unknown)."""
    for run in runs:
        recorded = run.compared_with.get("baseline")
        if recorded is not None and len(recorded) == len(run.accuracy):
            return tuple(float(b) for b in recorded)
    if task is None:
        return ()
    first = runs[0].spec
    key = ("baseline", task.name, task.bins, first.train.test_size)
    if key not in cache:
        cache[key] = baselines(task, first.train.test_size)
    return cache[key]


def training_seconds(runs: Sequence[StoredRun]) -> float:
    """The wall time during which at least one of ``runs`` was training.

    A run trained from its recording time less its wall time (a seed's wall time is its group's
    time until that seed stopped, evaluation included), so the seeds of a group trained together
    are counted once, groups trained one after another add up, and groups trained side by side
    count the time they overlap once. Runs without a recording time add their own wall time.

    >>> from validation.config import ModelConfig, TrainConfig
    >>> spec = RunSpec("parity", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
    >>> def run(wall, end):  # a run that trained ``wall`` seconds and was recorded at 10:``end``
    ...     return StoredRun(spec, (1.0,), 10, wall, False, (), "", f"2026-01-01T10:{end}")
    >>> training_seconds([run(300, "05:00"), run(240, "04:00"), run(300, "10:00")])  # two groups
    600.0
    """
    spans: list[tuple[datetime, datetime]] = []
    total = 0.0
    for run in runs:
        try:
            end = datetime.fromisoformat(run.finished_at)
        except ValueError:
            total += run.wall_time
            continue
        spans.append((end - timedelta(seconds=run.wall_time), end))
    covered_to: datetime | None = None
    for start, end in sorted(spans):
        if covered_to is None or start > covered_to:
            total += (end - start).total_seconds()
        elif end > covered_to:
            total += (end - covered_to).total_seconds()
        covered_to = end if covered_to is None else max(covered_to, end)
    return total


def as_planned(spec: RunSpec, preset: Preset) -> bool:
    """Whether the run ``spec`` trains with the settings ``preset`` plans for its task and variant
    now (not an earlier budget of the preset, nor a ``--set`` override)."""
    try:
        plan = preset.plan(registry.get(spec.task), Variant.parse(spec.variant))
    except (TaskError, ValidationError):  # a task or variant the preset no longer plans; a user's task
        return False
    return (spec.model, spec.train, spec.train_range, spec.bins) == \
        (plan.model, plan.train, plan.task.train_range, plan.task.bins)


def _chooser(preset: str | None, tasks: Iterable[str] | None, planned: bool):
    """Whether a run's spec is of ``preset`` (None: any) and ``tasks`` (None: any), and, with
    ``planned``, trained as the preset plans it now (:func:`as_planned`)."""
    if planned and preset not in PRESETS:
        raise ValidationError(f"only the runs a preset plans now: name the preset ({', '.join(PRESETS)}), "
                              f"not {preset!r}")
    wanted = set(tasks) if tasks is not None else None

    def chosen(spec: RunSpec) -> bool:
        return ((preset is None or spec.preset == preset) and (wanted is None or spec.task in wanted)
                and (not planned or as_planned(spec, PRESETS[str(preset)])))

    return chosen


def selected(store: Store, *, preset: str | None = None, tasks: Iterable[str] | None = None,
             planned: bool = False) -> list[StoredRun]:
    """The store's intact runs of ``preset`` (None: any) and ``tasks`` (None: any); ``planned``: only
    those trained as the preset plans them now (:func:`as_planned`)."""
    chosen = _chooser(preset, tasks, planned)
    return [run for run in store.runs(preset=preset) if chosen(run.spec)]


def in_progress(store: Store, *, preset: str | None = None, tasks: Iterable[str] | None = None,
                planned: bool = False) -> list[InProgress]:
    """The store's groups in training that :func:`selected` would choose once finished; a group saved
    before checkpoints named their configuration is kept."""
    chosen = _chooser(preset, tasks, planned)
    return [g for g in store.in_progress() if g.spec is None or chosen(g.spec)]


def rows(store: Store, *, preset: str | None = None, tasks: Iterable[str] | None = None,
         planned: bool = False, known: Mapping[str, Task] | None = None) -> list[Row]:
    """A row per (task, variant, model, preset) among the store's intact runs; ``planned``: only the
    runs of ``preset`` trained as it plans them now (:func:`as_planned`). ``known``: tasks by name
    that the registry does not hold (a user's, given as ``MODULE:TASK``); a stored task neither
    holds still gets its row, from what its runs' specs say, without a prediction."""
    groups: dict[tuple, list[StoredRun]] = defaultdict(list)
    for run in selected(store, preset=preset, tasks=tasks, planned=planned):
        groups[(run.spec.task, run.spec.variant, run.spec.preset, _model(run.spec), run.spec.train)].append(run)
    predictions: dict = {}
    settings = _settings_apart(list(groups))
    ordered = sorted(groups.items(), key=lambda item: (item[0][:4], settings.get(item[0], "")))
    return [_labelled(row_of(runs, predictions, _task_named(key[0], known)), settings.get(key))
            for key, runs in ordered]


def _task_named(name: str, known: Mapping[str, Task] | None) -> Task | None:
    """The task of a stored run: one given, or the registry's; None where neither has it."""
    if known and name in known:
        return known[name]
    try:
        return registry.get(name)
    except TaskError:
        return None


def _settings_apart(keys: Sequence[tuple]) -> dict[tuple, str]:
    """For groups that share task, variant, preset and model but not their training settings (a run
    of ``crasp validate --set``, say, beside the preset's), the settings that tell them apart
    (``lr=0.001, steps=1000``); other groups have none."""
    by_row: dict[tuple, list[tuple]] = defaultdict(list)
    for key in keys:
        by_row[key[:4]].append(key)
    apart = {}
    for clashing in (k for k in by_row.values() if len(k) > 1):
        configs = [dataclasses.asdict(key[4]) for key in clashing]
        differing = [name for name in configs[0] if len({repr(c[name]) for c in configs}) > 1]
        for key, config in zip(clashing, configs):
            apart[key] = ", ".join(f"{name}={config[name]:g}" if isinstance(config[name], float)
                                   else f"{name}={config[name]}" for name in differing)
    return apart


def _labelled(row: Row, settings: str | None) -> Row:
    return dataclasses.replace(row, model=f"{row.model} [{settings}]") if settings else row


def _model(spec) -> str:
    """The model column: the model's label, and the sampler where runs were not drawn by the Python
    samplers (their seeds drew other examples, so they make a row of their own)."""
    sampler = spec.train.sampler
    return spec.model.label if sampler == "python" else f"{spec.model.label} ({sampler} batches)"


def row_of(runs: Sequence[StoredRun], predictions: dict | None = None, task: Task | None = None) -> Row:
    """The row of runs that share task, variant, preset and model (``predictions``: a cache;
    ``task``: the runs' task, else the registry's; where neither is known, the row has what the
    runs' specs say and no prediction)."""
    first = runs[0].spec
    if task is None:
        task = _task_named(first.task, None)
    cache = {} if predictions is None else predictions
    rule = PRESETS.get(first.preset)
    counted = rule.counted(runs) if rule else list(runs)
    columns = list(zip(*(r.accuracy for r in counted)))
    mean = tuple(statistics.fmean(c) for c in columns)
    spread = tuple(statistics.pstdev(c) for c in columns)
    bins = first.bins or (task.bins if task else ())
    as_trained = None if task is None else dataclasses.replace(
        task, train_range=first.train_range or task.train_range, bins=bins)  # a preset may train other lengths
    baseline = _baseline(runs, as_trained, cache)
    strength, source = None, ""
    if task is None:
        recorded, others = _recorded(runs)
        if recorded is None:
            predicted, basis = "undetermined", (f"task {first.task!r} is not in the suite: give it as MODULE:TASK "
                                                f"(crasp report MODULE:TASK) to predict it")
        else:
            predicted, basis, strength = recorded.verdict, recorded.basis, recorded.strength
            source = f"recorded when trained (budget {recorded.budget})"
        published, published_bins, published_trained = None, bins, first.training_bin
    else:
        record, source = _prediction(runs, task, first.variant, cache)
        predicted, basis, strength = record.verdict, record.basis, record.strength
        published, published_bins, published_trained = _published(task, first.variant), task.bins, task.training_bin
    trained = first.training_bin
    examples = first.train.test_size
    intervals = tuple(mean_interval(list(c), examples) for c in columns)
    observed = (decide(intervals, trained, baseline=baseline or None) if intervals else Outcome.NOT_LEARNED)
    return Row(first.task, first.variant, first.preset, _model(first), bins, published_bins,
               trained, predicted, basis, len(runs), len(counted), mean, spread, observed, published,
               outcome(published, published_trained) if published else None,
               intervals, tuple(tuple(r.accuracy) for r in counted), examples, training_seconds(runs),
               baseline, strength, source)


def _cells(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in values) if values else "-"


def duration_text(seconds: float) -> str:
    """A wall time as the report writes it.

    >>> duration_text(42), duration_text(1500), duration_text(4 * 3600 + 1800)
    ('42 s', '25 min', '4.5 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def interval_cells(intervals: Sequence[Interval]) -> str:
    """``1.000 [0.995, 1.000] / 0.950 [0.921, 0.970]``: each bin's mean and interval."""
    return " / ".join(i.text() for i in intervals) if intervals else "-"


def seed_cells(seeds: Sequence[Sequence[float]]) -> str:
    """Every counted seed's accuracies, seeds apart by ``;``."""
    return "; ".join(table_cells(values) for values in seeds) if seeds else "-"


def table_cells(values: Sequence[float], spread: Sequence[float] = ()) -> str:
    if not values:
        return "-"
    if spread:
        return " / ".join(f"{v:.3f}±{s:.3f}" for v, s in zip(values, spread))
    return " / ".join(f"{v:.3f}" for v in values)


@dataclass(frozen=True)
class Running:
    """One seed of a group saved in training: the group's configuration (None when the checkpoint
    does not name it), the step reached of how many, its length bins and its last evaluation."""

    group_key: str
    spec: RunSpec | None
    seed: int
    step: int
    total_steps: int | None
    bins: tuple[tuple[int, int], ...] | None
    last: tuple[float, ...] | None


def _bins_of(spec: RunSpec | None) -> tuple[tuple[int, int], ...] | None:
    """A group's length bins: its spec's, else its task's (None where neither is known)."""
    if spec is None:
        return None
    task = _task_named(spec.task, None)
    return tuple(spec.bins or (task.bins if task else ())) or None


def running(groups: Sequence[InProgress]) -> list[Running]:
    """A :class:`Running` per seed of each group in progress, as the report lists them."""
    return [Running(group.group_key, group.spec, seed, group.step, group.total_steps,
                    _bins_of(group.spec),
                    tuple(history[-1][1]) if history else None)
            for group in groups for seed, history in zip(group.seeds, group.history)]


def in_progress_lines(groups: Sequence[InProgress]) -> list[str]:
    """The report's section on groups saved in training: per seed, the last evaluation and the
    step reached (a killed or time-limited run shows what it had learned so far)."""
    if not groups:
        return []
    lines = ["", "## Runs in progress", "",
             "Saved at their last evaluation; `crasp validate` (or `crasp arithmetic`) continues them.", "",
             "| task | variant | preset | model | seed | step | length bins | last evaluation |",
             "|---|---|---|---|---|---|---|---|"]
    for r in running(groups):
        names = (r.spec.task, r.spec.variant, r.spec.preset, r.spec.model.label) if r.spec else (f"`{r.group_key}`",
                                                                                                "?", "?", "?")
        bins = " / ".join(bin_labels(r.bins)) if r.bins is not None else "-"
        step = f"{r.step} of {r.total_steps}" if r.total_steps else str(r.step)
        last = table_cells(r.last) if r.last is not None else "-"
        lines.append(f"| {' | '.join(names)} | {r.seed} | {step} | {bins} | {last} |")
    return lines


@dataclass(frozen=True)
class Agreement:
    """The tally under the table: rows agreeing with the prediction of all rows, and tasks with at
    least one agreeing row of all tasks."""

    rows: int
    of_rows: int
    tasks: int
    of_tasks: int


def agreement(table: Sequence[Row]) -> Agreement:
    """How many rows (and tasks, by at least one row) of ``table`` agree with the prediction."""
    return Agreement(sum(row.agreement == "yes" for row in table), len(table),
                     len({row.task for row in table if row.agreement == "yes"}), len({r.task for r in table}))


RULE = (f"Observed: per length bin, the mean over the counted seeds with its {CONFIDENCE:.0%} interval (Student t "
        "over the seeds, at least the Wilson interval of their test inputs pooled; one seed: its Wilson interval), "
        "and every seed's accuracy. Outcome, from the intervals: learned when the training bin (the first, but for "
        f"Xu et al.'s tasks) is entirely ≥ {LEARNED}; kept when every other bin is entirely ≥ {KEPT}; collapsed "
        f"when the longest is entirely ≤ {COLLAPSED}; in between when neither can hold; inconclusive when an "
        "interval straddles a threshold. Baseline: per bin, the accuracy of the best constant answer (the same "
        "answer at each output position whatever the input) on the same test inputs; a bin the constant answer "
        f"alone passes (the training bin at {LEARNED}, another at {KEPT}) tells nothing and is left out, and a row "
        "left with nothing to tell is trivial (the sampler makes the test easy), never kept. Published numbers are "
        "read with the same rule as points (the papers give no intervals). Prediction: the verdict and its "
        "strength as `crasp predict` gives them, recorded with the runs when they trained.")
"""The report's statement of its rule, above the table."""


def markdown(table: list[Row], problems: Sequence[Problem] = (), plots: dict[str, str] | None = None,
             title: str = "Length generalization: predicted, observed, published",
             in_progress: Sequence[InProgress] = (), left_out: int = 0) -> str:
    """The report as markdown: the table, the tally of agreements and training time, plots, runs in
    progress and any damaged runs (``left_out``: runs of the preset trained with other settings than
    it plans now, when the table holds only those it plans)."""
    lines = [f"# {title}", "", RULE, "",
             "| task | variant | preset | model | seeds (counted/run) | training time | test inputs per bin | prediction | "
             f"length bins | observed: mean [{CONFIDENCE:.0%} interval] | each seed | baseline | outcome | "
             "published (paper's bins) | published outcome | agrees |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in table:
        lines.append(
            f"| {row.task} | {row.variant} | {row.preset} | {row.model} | {row.counted}/{row.runs} | "
            f"{duration_text(row.training_seconds)} | {row.examples or '-'} | {row.prediction} | "
            f"{' / '.join(bin_labels(row.bins))} | {interval_cells(row.intervals)} | {seed_cells(row.seeds)} | "
            f"{_cells(row.baseline)} | {row.observed.value} | "
            f"{table_cells(row.published or ())} | "
            f"{row.published_outcome.value if row.published_outcome else '-'} | {row.agreement} |")
    tally = agreement(table)
    lines += ["", f"**{tally.rows} of {tally.of_rows} rows agree with the prediction "
                  f"({tally.tasks} of {tally.of_tasks} tasks with at least one agreeing row).**"]
    if table:
        lines += ["", f"Training time of these runs, the rows' added up: {duration_text(sum(r.training_seconds for r in table))} "
                      "(wall time on the machines that trained them, evaluation included; each group of seeds trained "
                      "together counted once, rows trained side by side each their own)."]
    sources = sorted({row.prediction_source for row in table if row.prediction_source})
    if sources:
        lines += ["", "Predictions: " + "; ".join(sources) + "."]
    trivial = [row for row in table if any(b >= TRIVIAL_SHARE for b in row.baseline)]
    if trivial:
        lines += ["", "Warning: on " + ", ".join(sorted({f"{row.task} ({' / '.join(bin_labels(row.bins))})" for row in trivial}))
                  + f" one constant answer is right on {TRIVIAL_SHARE:.0%} or more of a bin's test inputs: the sampler "
                  "makes those bins easy, and they say nothing about length generalization."]
    if left_out:
        lines += ["", f"{left_out} stored run{'s' if left_out != 1 else ''} of this preset trained with other settings "
                      "than it plans now (an earlier budget, or `--set`) are left out."]
    if plots:
        lines += ["", "## Accuracy against length", ""]
        lines += [f"![{name}]({path})" for name, path in sorted(plots.items())]
    lines += in_progress_lines(in_progress)
    if problems:
        lines += ["", "## Damaged runs (not used)", ""]
        lines += [f"- `{p.key}`: {p.what}" for p in problems]
    return "\n".join(lines) + "\n"


def figure(**options):
    """A new matplotlib ``Figure`` (``options`` as ``Figure`` takes them), built without pyplot:
    matplotlib's backend and pyplot's figures are left as they were. A clear error when matplotlib
    is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        from validation.config import ValidationError

        raise ValidationError("plots need matplotlib: pip install 'crasp-lengthgen[plot]'") from None
    return Figure(**options)


def save(figure, path: str | Path) -> Path:
    """Lay out ``figure`` and write it to ``path`` as a PNG (making its folder)."""
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def plot(table: list[Row], task: str):
    """Accuracy per length bin for one task, as a matplotlib ``Figure`` (:func:`save` writes it):
    observed (mean, with its interval) and published, one colour per variant; the training bin
    shaded. A preset that rescales lengths keeps the paper's ratios, so bin k is compared with the
    paper's bin k (both are labelled)."""
    chosen = [row for row in table if row.task == task]
    if not chosen:
        raise ValueError(f"no rows for task {task!r}")
    centres = list(range(1, len(chosen[0].bins) + 1))
    drawn = figure(figsize=(5.5, 3.6))
    axes = drawn.subplots()
    trained = chosen[0].trained + 1
    axes.axvspan(trained - 0.3, trained + 0.3, color="0.92", label="training lengths")
    for k, row in enumerate(chosen):
        colour = f"C{k}"
        if row.mean:
            yerr = ([m - i.low for m, i in zip(row.mean, row.intervals)],
                    [i.high - m for m, i in zip(row.mean, row.intervals)]) if row.intervals else row.spread
            axes.errorbar(centres, row.mean, yerr=yerr, color=colour, marker="o", capsize=3,
                          label=f"{row.variant} {row.model} ({row.preset}, {row.counted} seeds)")
        if row.published:
            axes.plot(centres, row.published, color=colour, linestyle="--", marker="x",
                      label=f"{row.variant} published")
        if row.baseline:
            axes.plot(centres, row.baseline, color=colour, linestyle=":", alpha=0.7,
                      label=f"{row.variant} best constant answer")
    predicted = ", ".join(sorted({f"{r.variant}: {r.predicted}" for r in chosen}))
    ticks = [label if label == paper else f"{label}\n(paper {paper})"
             for label, paper in zip(bin_labels(chosen[0].bins), bin_labels(chosen[0].published_bins))]
    axes.set_xticks(centres, ticks, fontsize=7)
    axes.set(title=f"{task}\npredicted {predicted}", xlabel="input length bin",
             ylabel="exact-match accuracy", ylim=(-0.03, 1.03))
    axes.title.set_fontsize(9)
    axes.legend(fontsize=7, loc="lower left")
    return drawn


def write(store: Store, out: str | Path, *, preset: str | None = None, tasks: Iterable[str] | None = None,
          table: list[Row] | None = None, planned: bool = False, known: Mapping[str, Task] | None = None) -> Path:
    """Write ``report.md`` and one PNG per task under ``out`` (``out/TASK.png``); returns the
    markdown's path. ``table``: the store's :func:`rows` for ``preset``, ``tasks`` and ``planned``,
    if known; ``known``: as for :func:`rows`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = rows(store, preset=preset, tasks=tasks, planned=planned, known=known) if table is None else table
    left_out = 0
    if planned:
        left_out = len(selected(store, preset=preset, tasks=tasks)) - sum(row.runs for row in table)
    plots = {}
    for task in sorted({row.task for row in table}):
        save(plot(table, task), out / f"{task}.png")
        plots[task] = f"{task}.png"
    running = in_progress(store, preset=preset, tasks=tasks, planned=planned)
    path = out / "report.md"
    path.write_text(markdown(table, store.problems, plots, in_progress=running, left_out=left_out), encoding="utf-8")
    return path
