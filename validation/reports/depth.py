"""The reports of the depth and training-length experiments (:mod:`validation.experiments.depth`): a table
and a plot each, with the prediction (:mod:`tasks.layers`, :mod:`tasks.training_length`) and the
published numbers beside what the runs show.

Every seed trains and is listed, but a seed that never fit its training lengths (below
:data:`LEARNED` on the training bin) says nothing about longer ones: a cell is read from the seeds
that fit them, each bin's mean with its 95% interval (:func:`validation.reports.statistics.mean_interval`),
and from all its seeds only when none did. A cell whose training bin is then entirely below
:data:`LEARNED` is *not learned*. Once learned, it
*generalizes* when its longest bin is entirely at or above :data:`LEARNED`, *fails* when entirely
below, and is *inconclusive* when the interval straddles it (or the training bin's does). A
published cell (a point: the paper gives no interval, nor its length bin) counts as learned at 90%
likewise.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tasks import anchors, registry
from tasks.evidence import Evidence
from tasks.evidence.regular import automata
from tasks.findings import QUICK
from tasks.layers import layers, shallowest_program
from tasks.training_length import TrainingLength, training_length
from validation.reports.generalization import figure, save
from validation.reports.statistics import Interval, mean_interval
from validation.runs.protocol import LEARNED
from validation.runs.sweep import Validation


@dataclass(frozen=True)
class Observed:
    """Accuracy per bin over the seeds read in one validation (those that fit their training bin,
    or all when none did): mean, lowest and highest, every seed's values, and each bin's mean with
    its interval; ``trained`` is the training bin, ``left_out`` the seeds that did not fit it while
    others did."""

    seeds: int
    mean: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    values: tuple[tuple[float, ...], ...] = ()
    intervals: tuple[Interval, ...] = ()
    trained: int = 0
    left_out: tuple[tuple[float, ...], ...] = ()

    @classmethod
    def of(cls, result: Validation) -> "Observed":
        runs = [tuple(run.accuracy) for run in result.counted]
        examples = result.counted[0].spec.train.test_size if runs else 0
        return cls.of_seeds(runs, examples, result.plan.task.training_bin)

    @classmethod
    def of_seeds(cls, runs: Sequence[tuple[float, ...]], examples: int, trained: int = 0) -> "Observed":
        """Read the seeds' accuracies per bin (``examples`` test inputs per bin).

        >>> o = Observed.of_seeds([(1.0, 0.8), (0.2, 0.0), (1.0, 0.9)], 200)
        >>> o.seeds, o.counted(), o.seeds_on_longest()
        (2, '2/3', '80.0 / 90.0 / 0.0 (not fit)')
        """
        if not runs:
            return cls(0, (), (), ())
        fit = [r for r in runs if r[trained] >= LEARNED]
        read = fit or list(runs)
        left_out = tuple(r for r in runs if fit and r[trained] < LEARNED)
        columns = list(zip(*read))
        return cls(len(read), tuple(statistics.fmean(c) for c in columns), tuple(min(c) for c in columns),
                   tuple(max(c) for c in columns), tuple(tuple(r) for r in read),
                   tuple(mean_interval(list(c), examples) for c in columns), trained, left_out)

    def counted(self) -> str:
        """The seeds read out of those run: ``3``, or ``2/3`` where one did not fit its training bin."""
        return f"{self.seeds}/{self.seeds + len(self.left_out)}" if self.left_out else str(self.seeds)

    @property
    def longest(self) -> float | None:
        return self.mean[-1] if self.mean else None

    @property
    def outcome(self) -> str | None:
        """"not learned", "generalizes", "fails" or "inconclusive" (see the module); None without seeds."""
        if not self.intervals:
            return None
        training, longest = self.intervals[self.trained], self.intervals[-1]
        if training.below(LEARNED):
            return "not learned"
        if not training.at_least(LEARNED):
            return "inconclusive"
        if longest.at_least(LEARNED):
            return "generalizes"
        return "fails" if longest.below(LEARNED) else "inconclusive"

    def seeds_on_longest(self) -> str:
        """Every seed's accuracy on the longest bin, in percent: a split between seeds shows."""
        if not self.values:
            return "-"
        return " / ".join([*(_percent(v[-1]) for v in self.values),
                           *(f"{_percent(v[-1])} (not fit)" for v in self.left_out)])

    def cells(self) -> list[str]:
        """Per bin: the mean in percent with its interval."""
        return [f"{_percent(i.estimate)} [{_percent(i.low)}-{_percent(i.high)}]" for i in self.intervals]


@dataclass(frozen=True)
class DepthRow:
    """One cell: L_k at ``depth`` layers, observed, published (percent; None where unread) and
    predicted: ``at_least`` the published lower bound, ``program_depth`` the count depth of the
    verified program; ``expected`` "generalizes" (depth >= program_depth), "fails" (depth <
    at_least) or "open"."""

    k: int
    depth: int
    bins: tuple[tuple[int, int], ...]
    observed: Observed
    published: float | None
    at_least: int | None
    program_depth: int | None

    @property
    def expected(self) -> str:
        if self.at_least is not None and self.depth < self.at_least:
            return "fails"
        if self.program_depth is not None and self.depth >= self.program_depth:
            return "generalizes"
        return "open"

    @property
    def outcome(self) -> str | None:
        return self.observed.outcome

    @property
    def published_outcome(self) -> str | None:
        return None if self.published is None else ("generalizes" if self.published >= 100 * LEARNED else "fails")

    def agreement(self, other: str | None) -> str:
        """Against an expected or published outcome; a cell not learned or inconclusive says so."""
        if other is None or self.outcome is None:
            return "-"
        if self.outcome in ("not learned", "inconclusive"):
            return f"- ({self.outcome})"
        return "agrees" if other == self.outcome else "DISAGREES"


def depth_rows(cells: Sequence, results: Sequence[Validation]) -> list[DepthRow]:
    published = anchors.depth_hierarchy()
    bounds = {}
    for k in sorted({cell.k for cell in cells}):
        found = layers(registry.get(f"L{k}"), ("nope",), QUICK).schemes["nope"]
        bounds[k] = (found.at_least, found.at_most)
    return [DepthRow(cell.k, cell.depth, tuple(result.plan.task.bins), Observed.of(result),
                     published.get((f"L{cell.k}", cell.depth)), *bounds[cell.k])
            for cell, result in zip(cells, results)]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _bin(low_high) -> str:
    return f"{low_high[0]}-{low_high[1]}"


def depth_markdown(rows: Sequence[DepthRow], plot: str | None) -> str:
    bins = rows[0].bins
    lines = ["# Depth experiment: L_k by NoPE transformers of 1 to 4 layers", "",
             "Accuracy in percent (a word counts when every position is right): per bin, the mean over the seeds "
             f"that fit their training lengths (at least {100 * LEARNED:.0f}% on {_bin(bins[rows[0].observed.trained])}; "
             "all seeds where "
             "none did) with its 95% interval, and every seed on the longest bin, those that did not fit marked "
             "and left out; *expected* comes from the layer bounds of "
             "`crasp predict` (fails: fewer layers than the published lower bound; generalizes: at least the count "
             "depth of the verified program). A cell whose training bin is entirely below "
             f"{100 * LEARNED:.0f}% is *not learned* and counts neither way; once learned, it generalizes when "
             f"the interval on {_bin(bins[-1])} is entirely at or above {100 * LEARNED:.0f}%, fails when entirely "
             "below, and is inconclusive when it straddles it. Published: Yang, Cadilhac & Chiang 2025, Figure 2 "
             "(rows L3 to L5 only; bin unknown: its length bin could not be read, so it is set beside our "
             "longest bin only as a label, not compared in value).", ""]
    if plot:
        lines += [f"![accuracy against depth]({plot})", ""]
    header = ["L_k", "layers", "seeds (read/run)", *(f"{_bin(b)}" for b in bins), f"each seed on {_bin(bins[-1])}",
              "expected", "observed", "vs expected", "published (bin unknown)", "vs published"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        o = row.observed
        cells = o.cells() or ["-"] * len(bins)
        lines.append("| " + " | ".join([
            f"L{row.k}", str(row.depth), o.counted(), *cells, o.seeds_on_longest(), row.expected, row.outcome or "-",
            row.agreement(None if row.expected == "open" else row.expected),
            "-" if row.published is None else f"{row.published:g}", row.agreement(row.published_outcome)]) + " |")
    predicted = sorted({(r.k, r.at_least, r.program_depth) for r in rows})
    lines += ["", "Predicted minimum depth (NoPE): " + "; ".join(
        f"L{k}: at least {low}, at most {high} (count depth of the verified program)" for k, low, high in predicted)]
    return "\n".join(lines) + "\n"


def plot_depth(rows: Sequence[DepthRow]):
    """A heat map of the mean accuracy on the longest bin, L_k by layers, with the predicted
    minimum depth as a staircase and the published numbers where known (a matplotlib ``Figure``)."""
    ks = sorted({r.k for r in rows})
    depths = sorted({r.depth for r in rows})
    grid = [[next((r.observed.longest for r in rows if r.k == k and r.depth == d), None) for d in depths] for k in ks]
    drawn = figure(figsize=(1.2 * len(depths) + 2.2, 0.8 * len(ks) + 1.4))
    axes = drawn.subplots()
    image = axes.imshow([[float("nan") if v is None else v for v in line] for line in grid], vmin=0, vmax=1,
                        cmap="viridis", aspect="auto")
    for i, k in enumerate(ks):
        for j, d in enumerate(depths):
            row = next((r for r in rows if r.k == k and r.depth == d), None)
            if row is None:
                continue
            text = _percent(row.observed.longest) + ("" if row.published is None else f"\npub {row.published:g}")
            axes.text(j, i, text, ha="center", va="center", fontsize=7,
                      color="black" if (row.observed.longest or 0) > 0.6 else "white")
        low = next(r.at_least for r in rows if r.k == k)
        if low is not None:
            axes.plot([low - 1.5 - depths[0] + 1, low - 1.5 - depths[0] + 1], [i - 0.5, i + 0.5], color="red", lw=2)
    axes.set_xticks(range(len(depths)), [str(d) for d in depths])
    axes.set_yticks(range(len(ks)), [f"L{k}" for k in ks])
    axes.set(xlabel="layers", ylabel="language",
             title=f"NoPE accuracy on lengths {_bin(rows[0].bins[-1])}\n"
                   "red: predicted minimum depth (left of it: cannot)")
    axes.title.set_fontsize(9)
    drawn.colorbar(image, ax=axes, fraction=0.05)
    return drawn


def write_depth(cells: Sequence, results: Sequence[Validation], out: Path) -> Path:
    rows = depth_rows(cells, results)
    out.mkdir(parents=True, exist_ok=True)
    plot = save(plot_depth(rows), out / "depth.png").name if any(r.observed.seeds for r in rows) else None
    path = out / "depth.md"
    path.write_text(depth_markdown(rows, plot), encoding="utf-8")
    return path


@dataclass(frozen=True)
class LengthRow:
    """One run of the training-length experiment: trained on inputs of at most ``longest``."""

    task: str
    longest: int
    bins: tuple[tuple[int, int], ...]
    observed: Observed


def length_bounds(task_name: str) -> TrainingLength:
    """The training-length findings of ``crasp predict`` for a task of the experiment."""
    evidence = Evidence(registry.get(task_name), QUICK, synthesis=False)
    if evidence.task.automaton is None:  # the experiment's bound asks for the task's automaton
        evidence.get(automata)
    return training_length(evidence, shallowest_program(evidence))


def length_markdown(rows: Sequence[LengthRow], bounds: dict[str, TrainingLength], plot: str | None) -> str:
    lines = ["# Training-length experiment", "",
             "NoPE decoders (2 layers, 2 heads, width 64) trained on inputs of at most N symbols, tested on "
             f"{_bin(rows[0].bins[-1])}; accuracy in percent: the mean over the seeds that fit their training "
             f"lengths (at least {100 * LEARNED:.0f}%; all where none did) with its 95% interval, and every seed. "
             "The bounds are those of `crasp predict` for idealized learners that see every input up to N.", ""]
    if plot:
        lines += [f"![accuracy against the longest training input]({plot})", ""]
    lines += ["| task | N | seeds (read/run) | training lengths | " + _bin(rows[0].bins[-1]) + " | each seed on "
              + _bin(rows[0].bins[-1]) + " | outcome |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        o = row.observed
        shown = o.cells() or ["-"] * len(row.bins)
        lines.append(f"| {row.task} | {row.longest} | {o.counted()} | " + " | ".join(shown)
                     + f" | {o.seeds_on_longest()} | {o.outcome or '-'} |")
    for task, found in bounds.items():
        lines += ["", f"{task}:", *(f"- {line}" for line in found.lines())]
    return "\n".join(lines) + "\n"


def plot_length(rows: Sequence[LengthRow], bounds: dict[str, TrainingLength]):
    """Accuracy on the longest bin against the longest training input, one panel per task, with the
    DFA learner's bounds (a matplotlib ``Figure``)."""
    tasks = list(dict.fromkeys(r.task for r in rows))
    drawn = figure(figsize=(3.6 * len(tasks), 3.2))
    panels = drawn.subplots(1, len(tasks), squeeze=False, sharey=True)
    for axes, task in zip(panels[0], tasks):
        chosen = [r for r in rows if r.task == task and r.observed.seeds]
        xs = [r.longest for r in chosen]
        ys = [r.observed.mean[-1] for r in chosen]  # their Observed.longest: a row with seeds has a mean per bin
        axes.errorbar(xs, ys, yerr=[[y - r.observed.low[-1] for y, r in zip(ys, chosen)],
                                    [r.observed.high[-1] - y for y, r in zip(ys, chosen)]],
                      marker="o", capsize=3, label=f"accuracy on {_bin(chosen[0].bins[-1])}" if chosen else None)
        found = bounds[task]
        moore = next((f.length for f in found.findings if f.kind == "at_most"), None)
        for value, style, label in ((moore, "--", "DFA learner: 2n - 2"), (found.exact, ":", "DFA learner: exact")):
            if value is not None:
                axes.axvline(max(value, 0.5), color="red", linestyle=style, label=f"{label} = {value}")
        axes.set_xscale("log", base=2)
        axes.set(title=task, xlabel="longest training input N", ylim=(-0.03, 1.03))
        axes.title.set_fontsize(9)
        axes.legend(fontsize=7, loc="lower right")
    panels[0][0].set_ylabel("exact-match accuracy")
    return drawn


def write_length(runs: Sequence, results: Sequence[Validation], out: Path) -> Path:
    rows = [LengthRow(run.task, run.longest, tuple(result.plan.task.bins), Observed.of(result))
            for run, result in zip(runs, results)]
    bounds = {task: length_bounds(task) for task in dict.fromkeys(r.task for r in rows)}
    out.mkdir(parents=True, exist_ok=True)
    plot = (save(plot_length(rows, bounds), out / "training-length.png").name if any(r.observed.seeds for r in rows)
            else None)
    path = out / "training-length.md"
    path.write_text(length_markdown(rows, bounds, plot), encoding="utf-8")
    return path


__all__ = ["write_depth", "write_length", "depth_rows", "DepthRow", "LengthRow", "Observed", "length_bounds"]
