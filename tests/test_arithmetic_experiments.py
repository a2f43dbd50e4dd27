"""The arithmetic experiments: probes of trained models, the carry-cascade measure, the report."""

import dataclasses
import functools
import io
import json
import re
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
import scipy.stats
import torch

from crasp.cli import main
from tasks import registry
from tasks.arithmetic import (cascade_pair, cascade_x, distribution_of, longest_cascade, sabbaghi_tasks,
                              truncate_operands)
from validation.experiments import arithmetic
from validation.reports import arithmetic as arithmetic_report
from validation.runs import protocol
from validation.reports.arithmetic import uncounted
from validation.data.encoding import Encoding
from validation.data.streams import TrainingStream, held_out_sets
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.models.build import Trained
from validation.experiments.probe import answered_as, by_length
from validation.runs.store import Store
from tasks.alignment import leading_operand_width
from validation.training.group import SeedGroup
from validation.models.build import build_model

def _reference_cascade(a: int, b: int) -> int:
    """The digit sums of a + b as letters, least significant first (G: >= 10, P: 9, N: other); a
    cascade is a G followed by P's (a carry generated, then passed on)."""
    width = max(len(str(a)), len(str(b)))
    letters = "".join("G" if s >= 10 else "P" if s == 9 else "N"
                      for s in (int(x) + int(y) for x, y in zip(str(a).zfill(width)[::-1], str(b).zfill(width)[::-1])))
    return max((len(m) for m in re.findall(r"GP*", letters)), default=0)


def test_longest_cascade_matches_its_definition():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        digits = int(rng.integers(1, 12))
        # digits drawn to make sums of 9 common, so long cascades occur
        a = int("".join(str(int(d)) for d in rng.integers(0, 10, size=digits)))
        b = int("".join(str(9 - int(c)) if rng.random() < 0.6 else str(int(rng.integers(0, 10)))
                        for c in str(a).zfill(digits)))
        assert longest_cascade(a, b) == _reference_cascade(a, b), (a, b)
    assert longest_cascade(0, 0) == 0


def test_cascade_pairs_and_the_balanced_training_distribution():
    rng = np.random.default_rng(2)
    for n in range(1, 9):
        for c in range(n + 1):
            a, b = cascade_pair(n, c, rng)
            assert a < 10 ** n and b < 10 ** n and _reference_cascade(a, b) == c
    with pytest.raises(ValueError, match="does not fit"):
        cascade_pair(3, 4, rng)
    # uniform among the pairs of that cascade: brute force over all 2-digit pairs, chi-square per pair
    for c in (0, 1, 2):
        pairs = [(a, b) for a in range(100) for b in range(100) if _reference_cascade(a, b) == c]
        drawn = Counter(cascade_pair(2, c, rng) for _ in range(10 * len(pairs)))
        assert set(drawn) <= set(pairs)
        assert scipy.stats.chisquare([drawn[p] for p in pairs]).pvalue > 1e-3
    uniform, balanced = sabbaghi_tasks(width=8)[0], sabbaghi_tasks(width=8, distribution="balanced")[0]
    assert balanced.name == "sabbaghi_addition_balanced" and balanced.bins == uniform.bins

    def cascades(task, draws):
        found = []
        for _ in range(draws):
            example = task.sample_train(rng)
            a, b = (int("".join(t for t in part if t.isdigit()) or 0) for part in (example.tokens[1:9], example.tokens[10:18]))
            assert example.targets == uniform.example(example.tokens[1:]).targets  # the same task, drawn differently
            found.append(_reference_cascade(a, b))
        return np.bincount(found, minlength=6)

    # uniform in [0, n] for n uniform in [1, 5]: P(cascade >= 3) = (1/4 + 2/5 + 1/2) / 5 = 0.23;
    # plain random operands rarely carry that far (under 0.05)
    long_balanced, long_uniform = (cascades(t, 2000)[3:].sum() / 2000 for t in (balanced, uniform))
    assert 0.19 < long_balanced < 0.27 and long_uniform < 0.05
    # the mixed distribution draws each input from one of the two with equal chance
    mixed = sabbaghi_tasks(width=8, distribution="mixed")[0]
    assert mixed.name == "sabbaghi_addition_mixed" and distribution_of(mixed.name) == "mixed"
    long_mixed = cascades(mixed, 2000)[3:].sum() / 2000
    assert abs(long_mixed - (long_balanced + long_uniform) / 2) < 0.04
    with pytest.raises(ValueError, match="training distribution 'hard': expected one of uniform, balanced, mixed"):
        sabbaghi_tasks(width=8, distribution="hard")


def test_cascade_inputs_have_the_cascade_and_the_lengths_asked_for():
    task = sabbaghi_tasks(width=12)[0]
    rng = np.random.default_rng(4)
    for cascade in range(11):
        lengths = Counter()
        for _ in range(30):
            x = cascade_x(cascade, (6, 10), 12, rng)
            a, b = (int("".join(t for t in part if t != "<pad>")) for part in (x[:12], x[13:]))
            assert task.valid(x) and _reference_cascade(a, b) == cascade
            lengths[task.measure(x)] += 1
        assert set(lengths) <= set(range(max(6, cascade), 11))
        assert cascade > 8 or len(lengths) >= 2  # the lengths vary where several hold the cascade
    for bad in ((11, (6, 10), 12), (3, (6, 13), 12), (3, (0, 4), 12)):
        with pytest.raises(ValueError, match="carry cascade"):
            cascade_x(*bad, rng)


def test_answered_as_targets_the_other_inputs_answer():
    task = registry.get("xu_mod101_addition")
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = task.sample_input(int(rng.integers(5, 21)), rng)
        short = truncate_operands(x, 3)
        example = answered_as(task, x, short)
        assert example.tokens[:43] == task.example(x).tokens[:43]  # the real input, then the other answer
        assert example.targets == task.example(short).targets
        assert example.tokens[43:] == task.example(short).tokens[43:]
    with pytest.raises(ValidationError, match="seq2seq"):
        answered_as(registry.get("sabbaghi_addition"), (), ())


def test_trained_exact_match_agrees_with_training_evaluation():
    """Two code paths for the same measure: the probe's single model and the vmapped seed group."""
    task = protocol.trained_on(registry.get("xu_addition"), 2)
    group = SeedGroup(task, Variant.parse("rpe"), ModelConfig(1, 2, 16), TrainConfig(steps=30, lr=3e-3, test_size=64,
                      eval_every=30), [0])
    for _ in range(30):
        group.train_step()
    weights = {n: p[0].detach() for n, p in group.params.items()}
    trained = Trained.from_weights(task, Variant.parse("rpe"), ModelConfig(1, 2, 16), weights)
    for batch, examples in zip(group.tests, held_out_sets(task, 64)):
        assert np.array_equal(trained.exact(examples), group.exact(batch)[0].numpy())
    with pytest.raises(ValidationError, match="do not fit"):
        Trained.from_weights(task, Variant.parse("ape"), ModelConfig(1, 2, 16), weights)


def test_by_length_draws_exact_lengths_reproducibly():
    task = registry.get("xu_addition")
    sets = by_length(task, (1, 7, 20), 10)
    assert {n: {e.length for e in examples} for n, examples in sets.items()} == {1: {1}, 7: {7}, 20: {20}}
    assert by_length(task, (7,), 10)[7] == sets[7]


def test_an_experiment_trains_probes_and_reports(tmp_path, monkeypatch):
    tiny = protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        protocol.trained_on(task, 2), ModelConfig(1, 2, 16), TrainConfig(steps=4, eval_every=4, test_size=8)),
        seeds=1, count_threshold=0.0)
    monkeypatch.setitem(protocol.PRESETS, "tiny", tiny)
    small = arithmetic.Experiment("xu", arithmetic.arithmetic.XU, "a claim",
                                  (arithmetic.Run("xu_mod100_addition", "ape", arithmetic.GENERALIZES),
                                   arithmetic.Run("xu_addition", "rpe", arithmetic.GENERALIZES)))
    monkeypatch.setitem(arithmetic.EXPERIMENTS, "xu", small)
    outcome = arithmetic.run("xu", preset="tiny", store=Store(tmp_path / "runs"), out=tmp_path / "out", probe_count=5)
    assert [c.lengths for c in outcome.curves] == [tuple(range(1, 21))] * 2
    assert all(c.truncated is not None and c.trained == (2, 2) for c in outcome.curves)
    text = outcome.report.read_text()
    assert "## The toolkit's reasoning" in text and "## Accuracy by number of digits" in text
    assert "95% interval (Student t over the seeds" in text and "standard deviation" not in text
    claims, reasons = _claims(outcome), _reasons(outcome)
    # The prediction is for the task as trained, D_2 (the registry's is D_4): mod 100 needs digit 2, which
    # every 1-digit input has at 0 in both operands and D_2 never does, so shorter inputs are not covered.
    for task, variant, positions in (("xu_mod100_addition", "ape", "absolute positions"),
                                     ("xu_addition", "rpe", "relative positions")):
        row = claims[task, variant].row
        assert (row.model, row.counted, row.runs, row.predicted) == ("1l2h16d", 1, 1, "undetermined")
        assert (reasons[task, positions].verdict, reasons[task, positions].basis) == ("undetermined", "none")
    assert any("training never has 0 at digit 2 of both operands" in e
               for e in reasons["xu_mod100_addition", "absolute positions"].evidence)
    assert reasons["xu_addition", "relative positions"].evidence[0].startswith("no relative alignment")
    assert list(claims) == [("xu_mod100_addition", "ape"), ("xu_addition", "rpe")]
    assert (tmp_path / "out" / "xu-digits.png").read_bytes()[:4] == b"\x89PNG"
    assert "## Accuracy along training" in text and (tmp_path / "out" / "xu-training.png").is_file()
    assert uncounted(outcome.results) == []

    alone = Store(tmp_path / "alone")  # --run: one process per run, e.g. several sharing a GPU
    outcome = arithmetic.run("xu", preset="tiny", store=alone, out=tmp_path / "alone-out", probe_count=5,
                             only=["xu_addition:rpe"])
    assert [(r.task, r.variant) for r in outcome.results] == [("xu_addition", "rpe")]
    assert {r.spec.task for r in alone.runs()} == {"xu_addition"}
    assert list(_claims(outcome)) == [("xu_addition", "rpe")]
    assert list(_reasons(outcome)) == [("xu_addition", "relative positions")]

    strict = dataclasses.replace(tiny, count_threshold=1.01, max_attempts=2)  # no seed can count
    monkeypatch.setitem(protocol.PRESETS, "tiny", strict)
    outcome = arithmetic.run("xu", preset="tiny", store=Store(tmp_path / "strict"), out=tmp_path / "strict-out",
                             probe_count=5, only=["xu_addition:rpe"])
    assert outcome.report.is_file()
    claim = _claims(outcome)["xu_addition", "rpe"]
    assert (claim.row.model, claim.row.counted, claim.row.runs) == ("1l2h16d", 0, 2)
    assert claim.agrees == "inconclusive: no counted seed"
    left_out = uncounted(outcome.results)
    assert [(r.task, r.variant, run.spec.seed, run.steps) for r, run in left_out] == [("xu_addition", "rpe", 0, 4),
                                                                                      ("xu_addition", "rpe", 1, 4)]
    assert len(left_out[0][1].accuracy) == 4  # bins 1/2/3-9/10-20


def test_crasp_arithmetic_takes_overrides_and_prints_json(tmp_path, monkeypatch):
    tiny = protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        protocol.trained_on(task, 2), ModelConfig(1, 2, 16), TrainConfig(steps=4, eval_every=4, test_size=8)),
        seeds=1, count_threshold=0.0)
    monkeypatch.setitem(protocol.PRESETS, "tiny", tiny)
    monkeypatch.setattr(arithmetic, "run", functools.partial(arithmetic.run, probe_count=5))
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert main(["arithmetic", "xu", "--preset", "tiny", "--run", "xu_addition:rpe", "--set", "stepz=2"],
                io.StringIO(), err) == 1
    assert "no setting 'stepz'" in err.getvalue() and list(tmp_path.iterdir()) == []  # refused before the store
    out = io.StringIO()
    assert main(["arithmetic", "xu", "--preset", "tiny", "--run", "xu_addition:rpe", "--set", "steps=2",
                 "--set", "eval_every=2", "--json", "--store", "runs", "--out", "report"], out, io.StringIO()) == 0
    document = json.loads(out.getvalue())
    assert (document["experiment"], document["preset"], document["overrides"]) == ("xu", "tiny",
                                                                                    {"steps": 2, "eval_every": 2})
    runs = [(r["task"], r["variant"], r["seed"], r["steps"]) for r in document["runs"]]
    assert runs == [("xu_addition", "rpe", 0, 2)]
    (claim,) = document["claims"]
    assert (claim["task"], claim["variant"], claim["claimed"]) == ("xu_addition", "rpe", arithmetic.GENERALIZES)
    assert claim["row"]["counted"] == 1
    assert claim["agrees"] in ("yes", "no") or claim["agrees"].startswith("inconclusive")
    text = (tmp_path / document["report"]).read_text()
    assert "Preset `tiny`, its training changed: steps=2, eval_every=2." in text


def _claims(outcome):
    """The report's claims of an experiment's outcome, by (task, variant)."""
    table = arithmetic_report.rows(outcome.results)
    return {(c.run.task, c.run.variant): c
            for c in arithmetic_report.claims(outcome.experiment, outcome.preset, table, outcome.cascades)}


def _reasons(outcome):
    """The report's reasoning of an experiment's outcome, by (task, positions)."""
    return {(r.task, r.positions): r for r in arithmetic_report.reasons(outcome.results)}


def test_the_history_table_spans_the_evaluations_after_the_training_range_is_learned():
    from validation.reports.arithmetic import LEARNED, Spread, after_learned, history_table, spreads
    from validation.runs.spec import RunSpec
    from validation.runs.store import StoredRun
    from validation.runs.sweep import Validation

    spec = RunSpec("sabbaghi_addition", "rpe", ModelConfig(1, 2, 16, encoder=True), TrainConfig(), 3, "cpu",
                   (1, 5), ((1, 5), (6, 10), (11, 20)))
    assert LEARNED == 0.99
    history = ((1000, (0.9, 0.5, 0.1)), (2000, (0.995, 0.8, 0.3)), (3000, (0.98, 0.4, 0.0)), (4000, (1.0, 0.6, 0.2)))
    moving = StoredRun(spec, history[-1][1], 4000, 1.0, False, history, "")
    stopped = StoredRun(dataclasses.replace(spec, seed=4), history[1][1], 2000, 1.0, True, history[:2], "")
    assert [step for step, _ in after_learned(moving)] == [2000, 3000, 4000] and len(after_learned(stopped)) == 1
    result = Validation("sabbaghi_addition", "rpe", "cpu", None, (moving, stopped), (moving, stopped))
    assert spreads([result]) == [Spread("sabbaghi_addition", "rpe", 3, 2000, 3, ((0.4, 0.8, 0.6), (0.0, 0.3, 0.2)))]
    assert len(history_table([result])) == 3  # a header, a rule and the one run's row
    only_stopped = Validation("sabbaghi_addition", "rpe", "cpu", None, (stopped,), (stopped,))
    assert spreads([only_stopped]) == [] and history_table([only_stopped]) == []


def test_seeds_that_did_not_count_are_listed_with_what_they_learned():
    from validation.reports.arithmetic import uncounted_table
    from validation.runs.spec import RunSpec
    from validation.runs.store import StoredRun
    from validation.runs.sweep import Validation

    spec = RunSpec("xu_addition", "ape", ModelConfig(3, 3, 48), TrainConfig(), 0, "cpu", (3, 3),
                   ((1, 3), (4, 9), (10, 20)))
    unlearned = StoredRun(spec, (0.055, 0.0, 0.0), 3000, 1.0, False, (), "")
    partial = StoredRun(dataclasses.replace(spec, seed=1), (0.61, 0.0, 0.0), 3000, 1.0, False, (), "")
    learned = StoredRun(dataclasses.replace(spec, seed=2), (1.0, 0.0, 0.0), 1500, 1.0, True, (), "")
    result = Validation("xu_addition", "ape", "cpu", None, (unlearned, partial, learned), (learned,))
    assert [(r.task, r.variant, run.spec.seed, run.accuracy, run.steps) for r, run in uncounted([result])] == [
        ("xu_addition", "ape", 0, (0.055, 0.0, 0.0), 3000), ("xu_addition", "ape", 1, (0.61, 0.0, 0.0), 3000)]
    assert len(uncounted_table([result])) == 2 + 2  # a heading, its rule and a line per seed
    assert uncounted_table([dataclasses.replace(result, runs=(learned,))]) == []


def test_sabbaghi_cascade_probe_groups_inputs_by_cascade(tmp_path, monkeypatch):
    small = dict(zip(("sabbaghi_addition", "sabbaghi_multiplication"), sabbaghi_tasks(width=8, multiplicand_width=6)))
    for distribution in ("balanced", "mixed"):
        small[f"sabbaghi_addition_{distribution}"] = sabbaghi_tasks(width=8, distribution=distribution)[0]
    small["sabbaghi_multiplication_1"] = sabbaghi_tasks(width=8, multiplier=1, multiplicand_width=6)[1]
    tiny = protocol.Preset("tiny", "tests", lambda t, variant: protocol.Plan(
        small[t.name], ModelConfig(1, 2, 16, encoder=True), TrainConfig(steps=2, eval_every=2, test_size=8)),
        seeds=1, count_threshold=0.0)
    monkeypatch.setitem(protocol.PRESETS, "tiny", tiny)
    outcome = arithmetic.run("sabbaghi", preset="tiny", store=Store(tmp_path), out=tmp_path / "out", probe_count=10)
    (found,) = [c for c in outcome.cascades if c.variant == "rpe" and c.task == "sabbaghi_addition"]
    assert found.digits == (6, 8) and found.lengths == tuple(range(9)) and found.count == 10
    assert len(found.accuracy) == 9 and all(0.0 <= a <= 1.0 for a in found.accuracy)
    assert "## Carry cascades" in outcome.report.read_text()
    assert (tmp_path / "out" / "sabbaghi-cascades.png").is_file()
    claims, reasons = _claims(outcome), _reasons(outcome)
    row = claims["sabbaghi_addition", "rpe"].row
    assert (row.counted, row.runs, row.predicted) == (1, 1, "generalizes")
    addition = reasons["sabbaghi_addition", "relative positions"]
    assert (addition.verdict, addition.basis) == ("generalizes", "alignment")
    compared = claims["sabbaghi_multiplication_1", "upe"]
    assert compared.run.claimed == "above rpe"
    assert compared.agrees in ("yes", "no") or compared.agrees.startswith("inconclusive")
    assert reasons["sabbaghi_multiplication_1", "uniform and relative positions"].verdict == "generalizes"


def test_crasp_arithmetic_refuses_unknown_experiments_and_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert main(["arithmetic", "huang"], io.StringIO(), err) == 1
    assert "experiment 'huang': expected one of xu, sabbaghi, duan" in err.getvalue()
    err = io.StringIO()
    assert main(["arithmetic", "xu", "--preset", "gpu"], io.StringIO(), err) == 1
    assert "preset 'gpu'" in err.getvalue()
    err = io.StringIO()
    assert main(["arithmetic", "xu", "--run", "xu_addition:upe"], io.StringIO(), err) == 1
    assert "experiment 'xu' has no run xu_addition:upe under the cpu preset (its runs: xu_addition:ape," in err.getvalue()
    assert list(tmp_path.iterdir()) == []  # no run store left behind


def test_agreement_with_the_papers_claim_reads_the_outcome():
    from validation.reports.arithmetic import _agrees
    from validation.reports.generalization import Row
    from validation.reports.statistics import Outcome

    def row(observed, counted=1):
        return Row("xu_addition", "ape", "cpu", "3l3h48d", ((1, 3),), ((1, 4),), 0, "does not generalize",
                   "truncation", 1, counted, (1.0,), (0.0,), observed, None, None)

    assert _agrees(row(Outcome.COLLAPSED), arithmetic.FAILS) == "yes"
    assert _agrees(row(Outcome.KEPT), arithmetic.FAILS) == "no"
    assert _agrees(row(Outcome.KEPT), arithmetic.GENERALIZES) == "yes"
    assert _agrees(row(Outcome.BETWEEN), arithmetic.GENERALIZES) == "inconclusive: in between"
    assert _agrees(row(Outcome.KEPT, counted=0), arithmetic.GENERALIZES) == "inconclusive: no counted seed"
    assert _agrees(None, arithmetic.GENERALIZES) == "inconclusive: no counted seed"
    assert _agrees(row(Outcome.BETWEEN), arithmetic.DECLINES) == "yes"
    assert _agrees(row(Outcome.COLLAPSED), arithmetic.DECLINES) == "yes"
    assert _agrees(row(Outcome.KEPT), arithmetic.DECLINES) == "no"
    assert _agrees(row(Outcome.NOT_LEARNED), arithmetic.DECLINES) == "inconclusive: not learned"


def test_the_downward_claim_reads_shorter_and_longer_bins_apart():
    """Xu et al.'s claim for absolute positions: right below the training length, wrong above."""
    from validation.reports.arithmetic import _agrees
    from validation.reports.generalization import Row, outcome

    def row(mean, trained=1):
        bins = ((1, 2), (3, 3), (4, 9), (10, 20))[1 - trained:]
        return Row("xu_addition", "ape", "cpu", "3l3h48d", bins, bins, trained, "does not generalize", "truncation",
                   1, 1, mean, (0.0,) * len(mean), outcome(mean, trained), None, None)

    claim = arithmetic.DOWNWARD
    assert _agrees(row((1.0, 1.0, 0.0, 0.0)), claim) == "yes"
    assert _agrees(row((0.78, 1.0, 0.0, 0.0)), claim) == "no: fails downward (1-2 digits 0.780)"
    assert _agrees(row((0.78, 1.0, 0.0, 0.0)), arithmetic.FAILS) == "yes"  # the plain claim reads only longer bins
    assert _agrees(row((1.0, 1.0, 0.9, 0.85)), claim) == "no: generalizes upward"
    assert _agrees(row((0.9, 1.0, 0.75, 0.75)), claim) == "inconclusive: in between"
    assert _agrees(row((1.0, 0.5, 0.0, 0.0)), claim) == "inconclusive: not learned"
    assert _agrees(row((1.0, 0.1, 0.0), trained=0), claim) == "yes"  # no shorter bin: only the upward half


def _measured_row(correct, examples=200, trained=0):
    """A single-seed row whose bins are ``correct`` of ``examples`` inputs, with Wilson intervals."""
    from validation.reports.generalization import Row
    from validation.reports.statistics import decide, wilson

    bins = (((1, 2), (3, 3), (4, 9), (10, 20)) if trained else ((1, 6), (7, 10), (11, 20), (21, 60)))[:len(correct)]
    intervals = tuple(wilson(c, examples) for c in correct)
    mean = tuple(c / examples for c in correct)
    return Row("xu_addition" if trained else "duan_addition", "ape", "cpu", "m", bins, bins, trained,
               "undetermined", "", 1, 1, mean, (0.0,) * len(mean), decide(intervals, trained), None, None,
               intervals, (mean,), examples)


def test_a_straddling_row_is_never_yes_or_no():
    """Duan et al.'s abc-layers run read 0.800 [0.739, 0.850] on its longest bin: the claim
    "generalizes" (kept: >= 0.8) can be neither confirmed nor refuted by it."""
    from validation.reports.arithmetic import _agrees

    abc_layers = _measured_row((200, 197, 190, 160))
    assert abc_layers.observed.value == "inconclusive"
    assert _agrees(abc_layers, arithmetic.GENERALIZES) == "inconclusive: an interval straddles a threshold"
    assert _agrees(abc_layers, arithmetic.FAILS) == "inconclusive: an interval straddles a threshold"
    # a bin entirely below 0.8 settles "declines" (in between or collapsed: yes) though the longest
    # bin straddles 0.7, which leaves the others open (in between reads inconclusive for them)
    falling = _measured_row((200, 150, 140, 140))  # 0.70 [0.633, 0.759] on the longest
    assert falling.observed.value == "inconclusive"
    assert _agrees(falling, arithmetic.DECLINES) == "yes"
    assert _agrees(falling, arithmetic.GENERALIZES) == "inconclusive: an interval straddles a threshold"
    assert _agrees(falling, arithmetic.FAILS) == "inconclusive: an interval straddles a threshold"
    # Xu et al.'s downward claim: a shorter bin at 0.78 whose interval reaches 0.8 does not fail it
    assert _agrees(_measured_row((156, 200, 0, 0), trained=1), arithmetic.DOWNWARD) == \
        "inconclusive: an interval straddles a threshold"
    assert _agrees(_measured_row((130, 200, 0, 0), trained=1), arithmetic.DOWNWARD) == \
        "no: fails downward (1-2 digits 0.650)"
    assert _agrees(_measured_row((200, 200, 1, 0), trained=1), arithmetic.DOWNWARD) == "yes"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=3, max_size=4), st.integers(0, 1),
       st.sampled_from([arithmetic.GENERALIZES, arithmetic.FAILS, arithmetic.DECLINES, arithmetic.DOWNWARD]),
       st.randoms(use_true_random=False))
def test_a_yes_or_no_holds_at_every_accuracy_inside_the_intervals(correct, trained, claimed, rng):
    """Soundness against sampling: where the report answers yes or no, accuracies drawn anywhere
    inside the intervals (and their ends) read as exact give the same answer."""
    from validation.reports.arithmetic import _agrees, _at_values

    row = _measured_row(tuple(correct), trained=trained)
    answer = _agrees(row, claimed).split(":")[0]
    if answer == "inconclusive":
        return
    for _ in range(50):
        values = [rng.choice((i.low, i.high, rng.uniform(i.low, i.high))) for i in row.intervals]
        assert _at_values(row, values, claimed).split(":")[0] == answer, values


def test_xu_claims_say_which_moduli_generalize_in_both_directions():
    claimed = {run.task: run.claimed for run in arithmetic.EXPERIMENTS["xu"].runs("paper") if run.variant == "ape"}
    both = {task for task, claim in claimed.items() if claim == arithmetic.GENERALIZES}
    assert both == {f"xu_mod{p}_{kind}" for p in (50, 100, 200) for kind in ("addition", "multiplication")}
    assert all(claim == arithmetic.DOWNWARD for task, claim in claimed.items() if task not in both)


def test_a_comparative_claim_reads_both_rows():
    from validation.reports.arithmetic import _agrees
    from validation.reports.generalization import Row
    from validation.reports.statistics import Outcome

    def row(variant, mean, observed=Outcome.COLLAPSED, counted=1):
        return Row("sabbaghi_multiplication_1", variant, "cpu", "2l4h64d-enc", ((1, 5), (6, 10), (11, 15)),
                   ((1, 5), (6, 10), (11, 15)), 0, "undetermined", "none", 1, counted, mean, (0.0,) * 3, observed,
                   None, None)

    rpe, upe = row("rpe", (0.99, 0.07, 0.02)), row("upe", (0.99, 0.74, 0.35), Outcome.BETWEEN)
    claim = arithmetic.ABOVE + "rpe"
    # one seed each: above on the mean, but untested
    assert _agrees(upe, claim, [rpe, upe]) == ("inconclusive: single seed: untested (mean beyond training 0.545 "
                                               "against 0.045)")
    assert _agrees(row("upe", (1.0, 0.04, 0.0)), claim, [rpe]).startswith("no: ")  # below rpe beyond training
    assert _agrees(row("upe", (1.0, 0.07, 0.02)), claim, [rpe]).startswith("no: ")  # a tie is not above

    def seeded(variant, seeds, observed=Outcome.COLLAPSED):
        mean = tuple(sum(c) / len(c) for c in zip(*seeds))
        return dataclasses.replace(row(variant, mean, observed, counted=len(seeds)), seeds=tuple(seeds), runs=len(seeds))

    five_rpe = seeded("rpe", [(0.99, 0.07 + k / 100, 0.02) for k in range(5)])
    five_upe = seeded("upe", [(0.99, 0.70 + k / 100, 0.35) for k in range(5)], Outcome.BETWEEN)
    found = _agrees(five_upe, claim, [five_rpe, five_upe])
    assert found.startswith("yes (Mann-Whitney U (one-sided, exact), 5 vs 5 seeds, p = 0.00397")
    two = seeded("upe", [(0.99, 0.70, 0.35), (0.99, 0.71, 0.35)], Outcome.BETWEEN)
    two_rpe = seeded("rpe", [(0.99, 0.07, 0.02), (0.99, 0.08, 0.02)])
    # with 2 seeds against 2 the exact test cannot go below 1/6: never significant
    assert _agrees(two, claim, [two_rpe, two]).startswith("inconclusive: not significant (Mann-Whitney U")
    assert _agrees(upe, claim, []) == "inconclusive: no counted rpe seed"
    assert _agrees(upe, claim, [row("rpe", (0.5, 0.0, 0.0), Outcome.NOT_LEARNED)]) == "inconclusive: not learned"


def test_the_balanced_distribution_claim_reads_both_cascade_probes():
    from validation.reports.arithmetic_claims import Cascades
    from validation.reports.arithmetic import _agrees
    from validation.reports.generalization import Row
    from validation.reports.statistics import Outcome

    def row(task, observed=Outcome.COLLAPSED, counted=1):
        return Row(task, "rpe", "cpu", "2l4h64d-enc", ((1, 5), (6, 10)), ((1, 5), (6, 10)), 0, "generalizes",
                   "relative alignment", 1, counted, (1.0, 0.8), (0.0, 0.0), observed, None, None)

    def probe(task, accuracy):
        return Cascades(task, "rpe", (6, 10), 5, tuple(range(len(accuracy))), accuracy, 100)

    claim = arithmetic.CASCADES_ABOVE + "sabbaghi_addition"
    plain, balanced = row("sabbaghi_addition"), row("sabbaghi_addition_balanced")
    # cascades 0-5 are within training and do not count: only 6-10 are compared, by their mean
    low = probe("sabbaghi_addition", (1.0,) * 6 + (0.10, 0.04, 0.02, 0.02, 0.0))
    high = probe("sabbaghi_addition_balanced", (0.0,) * 6 + (0.75, 0.54, 0.0, 0.0, 0.0))
    assert _agrees(balanced, claim, [plain, balanced], [low, high]).startswith("inconclusive: single seed: untested")
    assert _agrees(plain, arithmetic.CASCADES_ABOVE + "sabbaghi_addition_balanced", [plain, balanced],
                   [low, high]).startswith("no: ")
    assert _agrees(balanced, claim, [plain, balanced],
                   [high, probe("sabbaghi_addition", high.accuracy)]).startswith("no: ")
    plain5, balanced5 = row("sabbaghi_addition", counted=5), row("sabbaghi_addition_balanced", counted=5)
    found = _agrees(balanced5, claim, [plain5, balanced5], [low, high])
    assert found.startswith("yes (Fisher's exact") and "pooled" in found
    assert _agrees(balanced, claim, [balanced], [low, high]) == "inconclusive: no counted sabbaghi_addition rpe seed"
    assert _agrees(balanced, claim, [plain], [high]) == "inconclusive: no carry-cascade probe"
    assert _agrees(row("sabbaghi_addition_balanced", Outcome.NOT_LEARNED), claim, [plain],
                   [low, high]) == "inconclusive: not learned"
    short = [probe(c.task, c.accuracy[:6]) for c in (low, high)]
    assert _agrees(balanced, claim, [plain], short).startswith("inconclusive: the probe has no cascade longer")


def test_every_paper_preset_run_builds_its_model_and_reads_its_training_data():
    """The paper presets are ready to run: every (task, variant) of every experiment plans, and its
    full-size model (built on the meta device: shapes only, no memory) takes a training batch."""
    paper = protocol.PRESETS["paper"]
    for experiment in arithmetic.EXPERIMENTS.values():
        for run in experiment.runs("paper"):
            variant = Variant.parse(run.variant)
            plan = paper.plan(registry.get(run.task), variant)
            encoding = Encoding.of(plan.task)
            uniform = leading_operand_width(plan.task) if variant.positions == "upe" else 0
            with torch.device("meta"):
                model = build_model(encoding, variant, plan.model, uniform)
            batch = encoding.collate(TrainingStream(plan.task, 0).next(4))
            logits = model(batch.ids.to("meta"), batch.positions.to("meta"))
            assert logits.shape == (4, batch.ids.shape[1], len(encoding.vocabulary)), (run, plan.model.label)


def test_published_numbers_keep_their_units_and_bins():
    """Duan et al. publish percentages at single tested lengths, not per bin: the table says "bin
    unknown" instead of setting 100 beside a fraction, and the list under "Published" keeps the
    paper's unit and the tested length of each number."""
    from types import SimpleNamespace

    from validation.reports.arithmetic import _published_cell, _published_line

    line = _published_line(registry.get("duan_addition"))
    assert "abc: 99.8% (trained on 6 digits, tested on 60" in line
    unbinned = SimpleNamespace(published=(), variant="abc", task="duan_addition")
    assert _published_cell(unbinned) == "bin unknown: see Published"
    assert _published_cell(SimpleNamespace(published=(), variant="abs", task="duan_successor")) == "-"
