"""The report of an arithmetic experiment: the paper's claim per run, the toolkit's prediction,
observed and published accuracy per bin, the probes (accuracy per number of digits, answers on
truncated operands, carry cascades) and accuracy along training, as tables and plots."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tasks import registry
from validation.config import Variant
from validation.reports.arithmetic_claims import ABOVE, CASCADES_ABOVE, DOWNWARD, Cascades, Curve, Experiment, Kept, Run
from validation.reports.generalization import (
    RULE,
    Row,
    figure,
    interval_cells,
    relative_verdict,
    row_of,
    save,
    seed_cells,
    table_cells,
)
from validation.reports.statistics import (
    KEPT,
    Outcome,
    allowed_values,
    compare_counts,
    compare_seeds,
    decide,
    point,
    successes,
)
from validation.runs.spec import bin_labels
from validation.runs.store import StoredRun
from validation.runs.sweep import Validation

CLAIMED = {"generalizes": (Outcome.KEPT,), "does not generalize": (Outcome.COLLAPSED,),
           "declines": (Outcome.BETWEEN, Outcome.COLLAPSED)}
"""The outcomes that agree with each claim about one run (comparative claims: :func:`_agrees`)."""


def _agrees(row: Row | None, claimed: str, table: Sequence[Row] = (), found: Sequence[Cascades] = ()) -> str:
    """Whether the observed row agrees with the paper's claim about it; a comparative claim
    (``above <variant>``) reads the row of that variant on the same task in ``table``, one about
    carry cascades (``CASCADES_ABOVE + task``) the cascade probes ``found`` of both tasks."""
    if row is None or row.counted == 0:
        return "inconclusive: no counted seed"
    if claimed.startswith(CASCADES_ABOVE):
        other_task = claimed[len(CASCADES_ABOVE):]
        return (_uncomparable(row, table, other_task, row.variant, f"{other_task} {row.variant}")
                or _cascades_above(row, other_task, found, table))
    if claimed.startswith(ABOVE):
        variant = claimed[len(ABOVE):]
        reason = _uncomparable(row, table, row.task, variant, variant)
        if reason:
            return reason
        other = _row(table, row.task, variant)
        assert other is not None  # else _uncomparable gives a reason
        return _above(row, other)
    if any(i.low < i.high for i in row.intervals):
        return _across_intervals(row, claimed)
    return _at_points(row, claimed)


def _at_points(row: Row, claimed: str) -> str:
    """The agreement of a row about one run read from its outcome and means, as if they were exact."""
    if claimed == DOWNWARD:
        return _downward_only(row)
    accepted = CLAIMED[claimed]
    if row.observed in (Outcome.NOT_LEARNED, Outcome.INCONCLUSIVE) or (
            row.observed is Outcome.BETWEEN and Outcome.BETWEEN not in accepted):
        return f"inconclusive: {row.observed.value}"  # in between settles neither "kept" nor "collapsed"
    return "yes" if row.observed in accepted else "no"


def _at_values(row: Row, values: Sequence[float], claimed: str) -> str:
    points = tuple(point(v) for v in values)
    exact = dataclasses.replace(row, mean=tuple(values), intervals=points, observed=decide(points, row.trained))
    return _at_points(exact, claimed)


def _across_intervals(row: Row, claimed: str) -> str:
    """The agreement of a row about one run, read from its intervals: "yes" or "no" (worded at the
    means) only when every accuracy the intervals allow gives that answer; inconclusive when they
    allow both, or the same inconclusive answer everywhere.

    >>> from validation.reports.statistics import Interval
    >>> from validation.reports.generalization import Row
    >>> bins = (Interval(1.0, 0.981, 1.0, "Wilson"), Interval(0.8, 0.739, 0.85, "Wilson"))
    >>> row = Row("t", "abc", "cpu", "m", ((1, 6), (7, 60)), (), 0, "undetermined", "", 1, 1, (1.0, 0.8), (0.0, 0.0),
    ...           Outcome.INCONCLUSIVE, None, None, bins)
    >>> _across_intervals(row, "generalizes")
    'inconclusive: an interval straddles a threshold'
    """
    straddles = "inconclusive: an interval straddles a threshold"
    if len(row.intervals) != len(row.bins) or len(row.bins) < 2:
        return straddles
    answers = {_at_values(row, values, claimed) for values in allowed_values(row.intervals)}
    words = {answer.split(":")[0] for answer in answers}
    if len(words) > 1 or (words == {"inconclusive"} and len(answers) > 1):
        return straddles
    return _at_values(row, row.mean, claimed)  # the means lie inside the intervals: the same answer


def _beyond_training(row: Row) -> list[float]:
    """Each counted seed's mean accuracy over the bins beyond the training bin (the row's mean, as
    one value, where the row does not list its seeds)."""
    beyond = slice(row.trained + 1, None)
    seeds = row.seeds or (row.mean,)
    return [statistics.fmean(values[beyond]) for values in seeds]


def _above(row: Row, other: Row) -> str:
    """``ABOVE + variant``: the seeds' accuracy beyond training against the other variant's, by the
    one-sided Mann-Whitney U test; "yes" only when significant at 5%, and a single seed on either
    side is untested."""
    mine, theirs = _beyond_training(row), _beyond_training(other)
    test = compare_seeds(mine, theirs)
    means = f"mean beyond training {statistics.fmean(mine):.3f} against {statistics.fmean(theirs):.3f}"
    if statistics.fmean(mine) <= statistics.fmean(theirs):
        return f"no: {means}"
    if not test.tested:
        return f"inconclusive: {test.text()} ({means})"
    if test.significant():
        return f"yes ({test.text()}; {means})"
    return f"inconclusive: not significant ({test.text()}; {means})"


def _downward_only(row: Row) -> str:
    """:data:`DOWNWARD`: every bin shorter than the training bin kept, the longer ones collapsed. A
    "no" names the direction that disagrees."""
    if row.observed is Outcome.NOT_LEARNED:
        return f"inconclusive: {row.observed.value}"
    low = [f"{label} digits {a:.3f}" for label, a in zip(bin_labels(row.bins), row.mean[:row.trained]) if a < KEPT]
    if low:
        return f"no: fails downward ({', '.join(low)})"
    if row.observed is Outcome.KEPT:
        return "no: generalizes upward"
    return "yes" if row.observed is Outcome.COLLAPSED else f"inconclusive: {row.observed.value}"


def _row(table: Sequence[Row], task: str, variant: str) -> Row | None:
    return next((r for r in table if r.task == task and r.variant == variant), None)


def _uncomparable(row: Row, table: Sequence[Row], task: str, variant: str, named: str) -> str | None:
    """Why ``row`` cannot be compared with the row of (``task``, ``variant``), or None when it can."""
    other = _row(table, task, variant)
    if other is None or other.counted == 0:
        return f"inconclusive: no counted {named} seed"
    if Outcome.NOT_LEARNED in (row.observed, other.observed):
        return "inconclusive: not learned"
    return None


def _cascades_above(row: Row, other_task: str, found: Sequence[Cascades], table: Sequence[Row] = ()) -> str:
    """``CASCADES_ABOVE + other_task``: mean accuracy over the cascades longer than in training."""
    probed = [next((c for c in found if c.task == task and c.variant == row.variant), None)
              for task in (row.task, other_task)]
    probes = [c for c in probed if c is not None]
    if len(probes) < len(probed):
        return "inconclusive: no carry-cascade probe"
    longer = [[a for n, a in zip(c.lengths, c.accuracy) if n > c.trained] for c in probes]
    if not all(longer):
        return "inconclusive: the probe has no cascade longer than in training"
    means = f"mean on longer cascades {statistics.fmean(longer[0]):.3f} against {statistics.fmean(longer[1]):.3f}"
    if statistics.fmean(longer[0]) <= statistics.fmean(longer[1]):
        return f"no: {means}"
    other = _row(table, other_task, row.variant)
    if min(row.counted, other.counted if other else 0) < 2:
        return f"inconclusive: single seed: untested ({means})"
    counts = [(sum(successes(a, c.count) for a in accuracy), c.count * len(accuracy))
              for c, accuracy in zip(probes, longer)]
    test = compare_counts(*counts)
    verdict = "yes" if test.significant() else "inconclusive: not significant"
    return f"{verdict} ({test.text()}, the probe's inputs of every seed pooled; {means})"


@dataclass(frozen=True)
class Claim:
    """One run of an experiment: the paper's claim about it, its row (None when it has no runs),
    and whether the observation agrees with the claim ("yes", "no" or "inconclusive: ...")."""

    run: Run
    row: Row | None
    agrees: str


def rows(results: Sequence[Validation]) -> list[Row]:
    """The report's row of each validation that has runs."""
    predictions: dict = {}
    return [row_of(result.runs, predictions) for result in results if result.runs]


def claims(experiment: Experiment, preset: str, table: Sequence[Row], found: Sequence[Cascades] = ()) -> list[Claim]:
    """A :class:`Claim` per run of the experiment under ``preset``, in its order."""
    return [Claim(item, row, _agrees(row, item.claimed, table, found))
            for item in experiment.runs(preset) for row in (_row(table, item.task, item.variant),)]


def claims_table(experiment: Experiment, preset: str, table: list[Row], found: Sequence[Cascades] = ()) -> list[str]:
    """One line per run: prediction, observation, publication, and agreement with the paper's claim."""
    lines = ["| task | variant | model | seeds (counted/run) | toolkit's prediction | length bins | "
             "observed: mean [95% interval] | each seed | outcome | published (per bin) | paper's claim | "
             "observed agrees with the claim |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    found_claims = claims(experiment, preset, table, found)
    for claim in found_claims:
        item, row, verdict = claim.run, claim.row, claim.agrees
        if row is None:
            lines.append(f"| {item.task} | {item.variant} | - | 0/0 | - | - | - | - | - | - | {item.claimed} | {verdict} |")
            continue
        lines.append(f"| {item.task} | {item.variant} | {row.model} | {row.counted}/{row.runs} | {row.predicted} | "
                     f"{' / '.join(bin_labels(row.bins))} | {interval_cells(row.intervals)} | {seed_cells(row.seeds)} | "
                     f"{row.observed.value} | {_published_cell(row)} | "
                     f"{item.claimed} | {verdict} |")
    agreeing = sum(claim.agrees == "yes" for claim in found_claims)
    lines += ["", f"**{agreeing} of {len(found_claims)} runs agree with the paper's claim.**"]
    return lines


def _published_cell(row: Row) -> str:
    """The published accuracy per bin; where the paper gives numbers only for single tested lengths,
    a pointer to them (they are listed with their lengths under "Published")."""
    if row.published:
        return table_cells(row.published)
    if any(anchor.variant == row.variant for anchor in registry.get(row.task).anchors):
        return "bin unknown: see Published"
    return "-"


def curves_table(curves: Sequence[Curve]) -> list[str]:
    """Accuracy per number of digits, one column per run (and the truncated-operand share)."""
    if not curves:
        return []
    heads, columns = [], []
    for c in curves:
        heads.append(f"{c.task} {c.variant}")
        columns.append(dict(zip(c.lengths, c.accuracy)))
        if c.truncated is not None:
            heads.append(f"{c.task} {c.variant}: truncated")
            columns.append(dict(zip(c.lengths, c.truncated)))
    lengths = sorted({n for c in curves for n in c.lengths})
    lines = ["| digits | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for n in lengths:
        cells = [f"{column[n]:.2f}" if n in column else "-" for column in columns]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def cascades_table(found: Sequence[Cascades]) -> list[str]:
    """One table per range of test lengths: a row per run, a column per longest carry cascade."""
    lines = []
    for digits in dict.fromkeys(c.digits for c in found):
        rows = [c for c in found if c.digits == digits]
        lengths = max((c.lengths for c in rows), key=len)
        lines += [f"Inputs of {digits[0]}-{digits[1]} digits, {rows[0].count} per cascade length; exact match by "
                  f"the longest carry cascade:", "",
                  "| task | variant | " + " | ".join(map(str, lengths)) + " |", "|---|---|" + "---|" * len(lengths)]
        for c in rows:
            by = dict(zip(c.lengths, c.accuracy))
            lines.append(f"| {c.task} | {c.variant} | " +
                         " | ".join(f"{by[n]:.2f}" if n in by else "-" for n in lengths) + " |")
        lines.append("")
    return lines


def plot_curves(curves: Sequence[Curve], title: str):
    """Accuracy against number of digits, one panel per task (each with its legend), one colour per
    variant across panels; dashed: the share answered as on truncated operands; grey: the trained
    digits (a matplotlib ``Figure``)."""
    tasks = list(dict.fromkeys(c.task for c in curves))
    colour = {variant: f"C{k}" for k, variant in enumerate(dict.fromkeys(c.variant for c in curves))}
    drawn = figure(figsize=(3.4 * len(tasks), 3.2))
    panels = drawn.subplots(1, len(tasks), squeeze=False, sharey=True)
    for axes, task in zip(panels[0], tasks):
        chosen = [c for c in curves if c.task == task]
        low, high = chosen[0].trained
        axes.axvspan(low - 0.5, high + 0.5, color="0.92", label="trained digits")
        for c in chosen:
            axes.plot(c.lengths, c.accuracy, marker="o", markersize=3, color=colour[c.variant],
                      label=f"{c.variant} accuracy")
            if c.truncated is not None:
                axes.plot(c.lengths, c.truncated, linestyle="--", color=colour[c.variant],
                          label=f"{c.variant}: truncated answer")
        axes.set(title=task, xlabel="digits", ylim=(-0.03, 1.03))
        axes.title.set_fontsize(9)
        axes.legend(fontsize=6, loc="center left")
    panels[0][0].set_ylabel("exact match")
    drawn.suptitle(title, fontsize=10)
    return drawn


def plot_cascades(found: Sequence[Cascades]):
    """Accuracy against longest carry cascade, one line per run; grey: the cascades training
    inputs can have (a matplotlib ``Figure``)."""
    drawn = figure(figsize=(4.5, 3.2))
    axes = drawn.subplots()
    axes.axvspan(-0.5, found[0].trained + 0.5, color="0.92", label="cascades possible in training")
    for k, c in enumerate(found):
        axes.plot(c.lengths, c.accuracy, marker="o", color=f"C{k}", label=f"{c.task} {c.variant}")
    low, high = found[0].digits
    axes.set(xlabel="longest carry cascade (digits)", ylabel="exact match", ylim=(-0.03, 1.03),
             title=f"{low}-{high} digit sums, by carry cascade")
    axes.title.set_fontsize(9)
    axes.legend(fontsize=7)
    return drawn


LEARNED = 0.99
"""From the first evaluation at which a run's training bin is at this accuracy or more, the history
table spreads the other bins. Not 1.0: with dropout a learned range often sits at 0.998
(one miss in the 400 test inputs) for the whole run."""


def after_learned(run: StoredRun) -> list[tuple[int, tuple[float, ...]]]:
    """The evaluations of a run from the first at which its training bin was learned
    (:data:`LEARNED`) on."""
    trained = run.spec.training_bin
    first = next((k for k, (_, accuracy) in enumerate(run.history) if accuracy[trained] >= LEARNED),
                 len(run.history))
    return list(run.history[first:])


@dataclass(frozen=True)
class Spread:
    """How a run's other bins moved once its training bin was learned: the step it was first
    learned at, how many evaluations followed (that one included), and per other bin, first bin
    first, its lowest, highest and last accuracy over them."""

    task: str
    variant: str
    seed: int
    learned_at: int
    evaluations: int
    bins: tuple[tuple[float, float, float], ...]


def spreads(results: Sequence[Validation]) -> list[Spread]:
    """A :class:`Spread` per run that went on for at least one evaluation after its training range
    was first learned."""
    found = []
    for result in results:
        for run in result.runs:
            later = after_learned(run)
            if len(later) < 2:
                continue
            other = [b for b in range(len(later[0][1])) if b != run.spec.training_bin]
            bins = tuple((min(a[b] for _, a in later), max(a[b] for _, a in later), later[-1][1][b]) for b in other)
            found.append(Spread(result.task, result.variant, run.spec.seed, later[0][0], len(later), bins))
    return found


def history_table(results: Sequence[Validation]) -> list[str]:
    """:func:`spreads` as a Markdown table (no lines when no run went on)."""
    rows = spreads(results)
    if not rows:
        return []
    lines = [f"| task | variant | seed | training bin first at {LEARNED:g} or more (step) | evaluations from then | "
             "other bins: lowest–highest (last) |", "|---|---|---|---|---|---|"]
    for row in rows:
        spans = " / ".join(f"{low:.2f}–{high:.2f} ({last:.2f})" for low, high, last in row.bins)
        lines.append(f"| {row.task} | {row.variant} | {row.seed} | {row.learned_at} | {row.evaluations} | {spans} |")
    return lines


def plot_history(results: Sequence[Validation]):
    """Accuracy per bin at every evaluation, one panel per run (seed), five panels a row (a
    matplotlib ``Figure``)."""
    runs = [(result, run) for result in results for run in result.runs if run.history]
    columns = min(5, len(runs))
    rows = -(-len(runs) // columns)
    drawn = figure(figsize=(3.2 * columns, 2.9 * rows))
    panels = drawn.subplots(rows, columns, squeeze=False, sharey=True)
    for axes in panels.flat[len(runs):]:
        axes.set_visible(False)
    for axes, (result, run) in zip(panels.flat, runs):
        steps = [step for step, _ in run.history]
        for b, label in enumerate(bin_labels(run.spec.bins)):
            axes.plot(steps, [a[b] for _, a in run.history], marker="o", markersize=2, color=f"C{b}", label=label)
        axes.set(title=f"{result.task} {result.variant} s{run.spec.seed}", xlabel="step", ylim=(-0.03, 1.03))
        axes.title.set_fontsize(8)
        axes.legend(fontsize=6, title="digits", title_fontsize=6)
    for axes in panels[:, 0]:
        axes.set_ylabel("exact match")
    return drawn


def uncounted(results: Sequence[Validation]) -> list[tuple[Validation, StoredRun]]:
    """Each seed that did not count, beside its validation, in the order of ``results``."""
    return [(r, run) for r in results for run in r.runs if run not in r.counted]


def uncounted_table(results: Sequence[Validation]) -> list[str]:
    """One line per seed that did not count: its accuracy per bin where it stopped, and its steps
    (empty when every seed counted). The claims table leaves these seeds out; a run with none
    counted reads "inconclusive" there, and this table shows what its seeds did learn."""
    lines = [f"| {r.task} | {r.variant} | {run.spec.seed} | {table_cells(run.accuracy)} | {run.steps} |"
             for r, run in uncounted(results)]
    return ["| task | variant | seed | accuracy per bin | steps |", "|---|---|---|---|---|", *lines] if lines else []


def kept_table(kept: Sequence[Kept]) -> list[str]:
    """One line per ABC seed and head: the lines its biases keep."""
    lines = ["| task | variant | seed | head | self-attention lines | cross-attention lines |", "|---|---|---|---|---|---|"]
    for k in kept:
        for head, (own, source) in enumerate(zip(k.self_lines, k.cross_lines)):
            lines.append(f"| {k.task} | {k.variant} | {k.seed} | {head} | {', '.join(own) or 'none'} | "
                         f"{', '.join(source) or 'none'} |")
    return lines


def markdown(experiment: Experiment, preset: str, results: Sequence[Validation], curves: Sequence[Curve],
             found: Sequence[Cascades], plots: dict[str, str], kept: Sequence[Kept] = (), overrides: str = "") -> str:
    table = rows(results)
    changed = f", its training changed: {overrides}" if overrides else ""
    lines = [f"# {experiment.name}: {experiment.reference}", "", f"Preset `{preset}`{changed}.", "",
             f"**The claim.** {experiment.claim}", "",
             RULE + " Xu et al.'s shorter lengths are a bin of their own, before the training bin. A comparison of "
             "two runs names its test, p-value and seeds; a single seed on either side is untested. "
             "The toolkit's prediction for absolute positions comes from its theory (APE and NoPE); for relative "
             "and uniform positions from the alignment check (does shifting the operands one digit move the answer "
             "as far as their digits, in token positions?); for attention biases it reads 'undetermined'.", "",
             *claims_table(experiment, preset, table, found), ""]
    uncounted = uncounted_table(results)
    if uncounted:
        lines += ["Seeds that did not count (their training range below the preset's threshold), left out above:",
                  "", *uncounted, ""]
    lines += ["## The toolkit's reasoning", "", *_reasoning(results), ""]
    notes = sorted({f"- {v.task} {v.variant}: {v.plan.note}" for v in results if v.plan.note})
    if notes:
        lines += ["Plans:", "", *notes, ""]
    if curves:
        lines += ["## Accuracy by number of digits", "",
                  "Mean over counted seeds of exact match on inputs with exactly that many digits" +
                  ("; *truncated*: the share the model answers as if every operand digit above the trained ones "
                   "were 0 (Xu et al.'s test)." if any(c.truncated for c in curves) else "."), "",
                  *curves_table(curves), "", f"![accuracy by digits]({plots['curves']})", ""]
    if found:
        lines += ["## Carry cascades", "", *cascades_table(found), f"![carry cascades]({plots['cascades']})", ""]
    if plots.get("history"):
        spread = history_table(results)
        lines += ["## Accuracy along training", "", "Exact match per bin at every evaluation." + (
            f" Where a run trained on after its training range was learned (at {LEARNED:g} or more), the table gives "
            "the spread of the other bins from then on: a wide one means the reported (last) value is one draw from "
            "a moving target."
            if spread else ""), ""]
        lines += [*spread, ""] if spread else []
        lines += [f"![accuracy along training]({plots['history']})", ""]
    if kept:
        lines += ["## Calibrated attention biases", "",
                  "The lines each ABC seed trained with, calibrated from the sinusoidal run of the same seed "
                  "(`family offset`: `end:moving 0` is output i reading the i-th source token from the right, "
                  "`target:moving -1` the previous output; a head with no cross line is unbiased).", "",
                  *kept_table(kept), ""]
    published = [_published_line(registry.get(name)) for name in dict.fromkeys(i.task for i in experiment.runs(preset))]
    if any(published):
        lines += ["## Published", "", *[line for line in published if line]]
    return "\n".join(lines).rstrip() + "\n"


POSITIONS = {"rpe": "relative positions", "upe": "uniform and relative positions"}


ENCODER_DECODER = ("sin", "abs", "abc")
"""Positions of Duan et al.'s encoder-decoder, about which the toolkit predicts nothing."""


@dataclass(frozen=True)
class Reason:
    """The toolkit's prediction for a task as trained under some positions: its verdict, basis and
    evidence (the headline's detail, then any test of fewer digits)."""

    task: str
    positions: str
    verdict: str
    basis: str
    evidence: tuple[str, ...]


def reasons(results: Sequence[Validation]) -> list[Reason]:
    """Per task as trained (the preset's digits), the prediction for absolute positions and its
    first piece of evidence (for Xu et al.'s tasks also the test of fewer digits); per task and
    relative or uniform variant, the alignment check's."""
    from tasks.predict import predict

    found, seen = [], set()
    for result in results:
        relative = relative_verdict(result.plan.task, result.variant)
        key = (result.task, result.variant if relative else "ape")
        if key in seen:
            continue
        seen.add(key)
        what = POSITIONS[Variant.parse(result.variant).positions] if relative else "absolute positions"
        verdict = relative or predict(result.plan.task, schemes=["ape"], quick=True, synthesis=False).ape
        detail = verdict.headline.split(" (", 1)[1].rstrip(")") if " (" in verdict.headline else verdict.headline
        below = [line.removeprefix("fewer digits: ") for line in verdict.evidence
                 if line.startswith("fewer digits") and line not in detail]
        found.append(Reason(result.task, what, verdict.verdict.value, verdict.basis, (detail, *below)))
    return found


def unpredicted(results: Sequence[Validation]) -> list[str]:
    """The variants among ``results`` of Duan et al.'s encoder-decoder (no prediction), in order."""
    return [r.variant for r in results if Variant.parse(r.variant).positions in ENCODER_DECODER]


def _reasoning(results: Sequence[Validation]) -> list[str]:
    """The reasoning section: a line per :func:`reasons` entry, and one for the encoder-decoder."""
    lines = [f"- **{r.task}** ({r.positions}): {r.verdict} [{r.basis}]. {'; '.join(r.evidence)}"
             for r in reasons(results)]
    if unpredicted(results):
        lines.append("- Duan et al.'s encoder-decoder (`sinusoidal`, `abs`, `abc`): no prediction; the theory is about "
                     "causal decoders with absolute positions or none.")
    return lines


def _published_line(task) -> str:
    """The task's anchors in its own bins (the paper preset's) and the paper's units (percent), e.g.
    ``ape: 100% at 1-3, 100% at 4, 0% at 5-9``."""
    parts = []
    for anchor in task.anchors:
        if len(anchor.bins) == len(task.bins):
            values = [f"{v:g}% at {label}" for v, label in zip(anchor.bins, bin_labels(task.bins)) if isinstance(v, float)]
        else:
            values = [f"{v:g}%" if isinstance(v, float) else str(v) for v in anchor.bins]
        parts.append(f"{anchor.variant}: {', '.join(values)} ({anchor.config}; {anchor.source})")
    return f"- {task.name}: " + "; ".join(parts) if parts else ""


def write(experiment: Experiment, preset: str, results: Sequence[Validation], curves: Sequence[Curve],
          found: Sequence[Cascades], out: str | Path, kept: Sequence[Kept] = (), overrides: str = "") -> Path:
    """Write ``<experiment>.md`` and its PNGs under ``out``; returns the markdown's path.
    ``overrides``: the training settings changed from the preset's, as ``--set`` takes them."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots = {}
    if curves:
        plots["curves"] = save(plot_curves(curves, f"{experiment.name} ({preset})"),
                               out / f"{experiment.name}-digits.png").name
    if found:
        plots["cascades"] = save(plot_cascades(found), out / f"{experiment.name}-cascades.png").name
    if any(run.history for result in results for run in result.runs):
        plots["history"] = save(plot_history(results), out / f"{experiment.name}-training.png").name
    path = out / f"{experiment.name}.md"
    path.write_text(markdown(experiment, preset, results, curves, found, plots, kept, overrides), encoding="utf-8")
    return path
