"""The best constant answer beside every report row: its accuracy is the best any input-blind
answer gets (checked against enumerating every such answer), a row at it is never kept, and a
sampler that makes a bin trivial is warned about before training and reported as trivial."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.cli import main
from tasks.types import Example
from validation.data.baseline import best_constant
from validation.reports.statistics import KEPT, LEARNED, Interval, Outcome, decide, wilson

ANSWERS = ("x", "y", "z")


def _examples(targets: list[tuple[str, ...]]) -> list[Example]:
    return [Example((), tuple(range(len(t))), t, len(t)) for t in targets]


def _enumerated(targets: list[tuple[str, ...]]) -> float:
    """The best constant answer by trying every answer sequence as long as the longest target: an
    example counts when its targets are the answer's first positions."""
    longest = max(len(t) for t in targets)
    best = 0
    for answer in itertools.product(ANSWERS, repeat=longest):
        best = max(best, sum(tuple(answer[:len(t)]) == t for t in targets))
    return best / len(targets)


@given(st.lists(st.lists(st.sampled_from(ANSWERS), min_size=0, max_size=4).map(tuple), min_size=1, max_size=25))
@settings(max_examples=200, deadline=None)
def test_the_best_constant_answer_is_the_best_of_every_answer(targets):
    assert best_constant(_examples(targets)) == pytest.approx(_enumerated(targets))


def test_the_best_constant_answer_of_the_formats():
    verdicts = [Example(("a",), (1,), (v,), 1) for v in (True,) * 7 + (False,) * 3]
    assert best_constant(verdicts) == 0.7  # accept: the majority verdict
    sets = [Example((), (0, 1), (frozenset("a"), frozenset("ab")), 1)] * 2 + \
           [Example((), (0, 1), (frozenset("a"), frozenset("b")), 1)]
    assert best_constant(sets) == pytest.approx(2 / 3)  # next-set: the most common run of sets
    with pytest.raises(ValueError, match="empty test set"):
        best_constant([])


_interval = st.tuples(st.floats(0, 1), st.floats(0, 1)).map(sorted).map(
    lambda pair: Interval((pair[0] + pair[1]) / 2, pair[0], pair[1], "drawn"))


@given(st.lists(_interval, min_size=2, max_size=4).flatmap(
    lambda bins: st.tuples(st.just(bins), st.lists(st.floats(0, 1), min_size=len(bins), max_size=len(bins)))))
@settings(max_examples=400, deadline=None)
def test_no_row_at_its_baseline_is_kept(drawn):
    bins, baseline = drawn
    decided = decide(bins, 0, baseline=baseline)
    if decided is Outcome.KEPT:
        assert baseline[0] < LEARNED and bins[0].low > baseline[0]
        told = [k for k in range(1, len(bins)) if baseline[k] < KEPT]
        assert told and all(bins[k].low >= KEPT > baseline[k] for k in told)
    if baseline[0] >= LEARNED or (bins[0].low >= LEARNED and all(b >= KEPT for b in baseline[1:])):
        assert decided is Outcome.TRIVIAL  # the sampler
    elif bins[0].high < LEARNED:
        assert decided is Outcome.NOT_LEARNED  # the model
    if all(b == 0.0 for b in baseline):  # nothing answers by chance: the rule without baselines
        assert decided is decide(bins, 0)


def test_a_model_at_the_majority_answer_is_not_learned_and_said_so():
    from validation.reports.generalization import Row

    at_majority = tuple(wilson(272, 400) for _ in range(3))  # 0.680 on every bin
    row = Row("t", "ape", "cpu", "1l1h16d", ((1, 5), (6, 10), (11, 15)), ((1, 5), (6, 10), (11, 15)), 0,
              "generalizes", "program", 1, 1, (0.68,) * 3, (0.0,) * 3,
              decide(at_majority, 0, baseline=(0.68, 0.68, 0.68)), None, None, at_majority, ((0.68,) * 3,), 400,
              baseline=(0.68, 0.68, 0.68))
    assert row.observed is Outcome.NOT_LEARNED
    assert row.agreement == "inconclusive: not learned in-distribution (at the best constant answer, 0.680)"


TRIVIAL_TASK = '''
import tasks

@tasks.task("c_rare_test", symbols=("a", "b", "c"), format="accept", replace=True, train_range=(1, 6),
            bins=((1, 6), (16, 24)), sampler=lambda n, rng: tuple(rng.choice(["a", "b", "c"], size=n)))
def c_dominates(x):
    return x.count("c") > x.count("a") + x.count("b")
'''


def test_a_trivial_sampler_is_warned_about_and_its_row_is_trivial(tmp_path, monkeypatch, capsys):
    (tmp_path / "trivial_tasks.py").write_text(TRIVIAL_TASK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = str(tmp_path / "runs")
    assert main(["validate", "trivial_tasks:c_rare_test", "--preset", "cpu", "--seeds", "1", "--set", "steps=40",
                 "--set", "eval_every=20", "--set", "test_size=200", "--store", store, "--device", "cpu"]) == 0
    err = capsys.readouterr().err
    assert "crasp: warning: c_rare_test: one constant answer is right on 16-24 (" in err
    assert "a model that learned nothing scores that much" in err
    assert main(["report", "trivial_tasks:c_rare_test", "--store", store, "--out", str(tmp_path / "report"),
                 "--json"]) == 0
    import json

    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["baseline"][1] >= 0.9 and row["observed"] in ("trivial", "not learned", "inconclusive")
    assert row["observed"] != "kept" and row["agreement"] != "yes"
    text = (tmp_path / "report" / "report.md").read_text()
    assert "one constant answer is right on 90% or more of a bin's test inputs" in text
