"""The algorithmic task suite: published formats and distributions, references, verified programs."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

import tasks
from crasp import parse
from tasks.registry import TaskError
from tasks.verify import verify

ALGORITHMIC = ["bin_majority", "majority", "bin_majority_interleave", "unique_copy", "repeat_copy",
               "sort", "parity", "addition"]


def draws(name, count=400, seed=0, train=False, low=None, high=None):
    task = tasks.get(name)
    rng = np.random.default_rng(seed)
    if train:
        return [task.sample_train(rng) for _ in range(count)]
    return task.sample_bin(low, high, count, rng)


def test_every_algorithmic_task_and_copy_every_kth_is_registered():
    names = tasks.names()
    for name in ALGORITHMIC + [f"copy_every_kth_k{k}{s}" for k in (1, 2, 3) for s in ("", "_long")]:
        assert name in names
    with pytest.raises(TaskError, match="no task named 'majorty'"):
        tasks.get("majorty")


def test_hand_checked_references():
    get = tasks.get
    assert get("bin_majority").answer(tuple("0110100")) == ("0",)
    assert get("majority").answer(tuple("abcbcb")) == ("b",)
    assert get("bin_majority_interleave").answer(tuple("011" "001" "111")) == ("0", "1", "1")
    assert get("sort").answer(("12", "3", "100")) == ("3", "12", "100")
    assert get("parity").answer(tuple("1101")) == ("o",) and get("parity").answer(()) == ("e",)
    assert get("addition").answer(tuple("101+11=")) == tuple("1000")
    assert get("copy_every_kth_k3").answer(tuple("abcdef")) == ("a", "d")
    ex = get("addition").example(tuple("1+1="))
    assert ex.tokens == ("<bos>", "1", "+", "1", "=", "1", "0", "<eos>")
    assert [ex.tokens[k] for k in ex.checked] == ["=", "1", "0"] and ex.targets == ("1", "0", "<eos>")
    ex = get("copy_every_kth_k2").example(("7", "8", "9", "10"))
    assert ex.tokens[:2] == ("<bos>", "#") and ex.length == 5 and ex.targets == ("7", "9", "<eos>")


def test_majority_inputs_have_no_ties_and_lengths_fill_the_bin():
    for name in ("bin_majority", "majority"):
        examples = draws(name, low=51, high=100)
        assert {e.length for e in examples} <= set(range(51, 101))
        assert len({e.length for e in examples}) > 35
        for e in examples:
            x = e.tokens[1:e.length + 1]
            top = Counter(x).most_common(2)
            assert len(top) < 2 or top[0][1] > top[1][1]
    answers = Counter(e.targets[0] for e in draws("bin_majority", count=2000, low=1, high=50))
    assert abs(answers["0"] - answers["1"]) < 200


def test_training_offsets_follow_the_published_ranges():
    for name, bound in [("bin_majority", lambda e: 150 - e.length),
                        ("unique_copy", lambda e: (150 - e.length) * 2),
                        ("addition", lambda e: 300 - len(e.tokens))]:
        examples = draws(name, train=True)
        assert all(0 <= e.offset <= bound(e) for e in examples)
        assert max(e.offset for e in examples) > 50
        assert all(0 <= e.length <= 50 for e in examples)


def test_interleave_lengths_and_streams():
    for e in draws("bin_majority_interleave", low=101, high=150):
        assert 101 <= e.length <= 150 and e.length % 3 == 0
        x = e.tokens[1:e.length + 1]
        for k in range(3):
            assert x[k::3].count("0") * 2 != len(x) // 3


def test_distinct_symbol_tasks():
    for name in ("unique_copy", "sort"):
        for e in draws(name, low=101, high=150):
            x = e.tokens[1:e.length + 1]
            assert len(set(x)) == len(x)
    for k in (1, 2, 3):
        for e in draws(f"copy_every_kth_k{k}", low=51, high=100):
            assert 51 <= e.length <= 100 and e.length % k == k - 1
            x = e.tokens[k:k + e.length - (k - 1)]
            assert len(set(x)) == len(x) and "#" not in x


def test_addition_operands():
    for e in draws("addition", low=4, high=50):
        text = "".join(e.tokens[1:e.length + 1])
        left, right = text[:-1].split("+")
        assert len(left) + len(right) + 2 == e.length and len(left) <= e.length - 3
        for operand in (left, right):
            assert len(operand) == 1 or operand[0] == "1"
        assert e.targets[:-1] == tuple(bin(int(left, 2) + int(right, 2))[2:])


def test_parity_allows_empty_input():
    examples = draws("parity", low=0, high=3, count=200)
    assert any(e.length == 0 for e in examples)


def test_a_task_whose_training_lengths_fall_in_no_bin_is_refused():
    bad = dataclasses.replace(tasks.get("majority"), name="majority_gap", bins=((60, 100),))
    with pytest.raises(TaskError, match="no length bin among .* holds the longest training length 50"):
        tasks.register(bad)
    assert "majority_gap" not in tasks.names()


def test_anchors_and_labels():
    task = tasks.get("unique_copy")
    assert (task.labels.ape, task.labels.nope) == (True, False)
    ape = next(a for a in task.anchors if a.variant == "ape")
    assert ape.bins == (1.0, 0.9986, 0.9874)
    assert len(tasks.get("copy_every_kth_k2").anchors) == 2


PROGRAMS = [(n, v) for n in tasks.names("algorithmic") for v in ("ape", "nope") if tasks.get(n).programs.get(v)]


@pytest.mark.parametrize("name, variant", PROGRAMS)
def test_library_programs_are_verified(name, variant):
    task = tasks.get(name)
    report = verify(task, scheme=variant, samples=8, max_length=160)
    assert report.ok, report.counterexample.describe()
    assert report.checks > 0 and report.exhaustive_inputs > 0


def test_every_task_has_programs_or_reasons():
    for task in (t for t in tasks.all_tasks() if t.family in ("algorithmic", "formal", "arithmetic")):
        for variant in ("ape", "nope"):
            assert task.programs.get(variant) or task.no_program.get(variant), (task.name, variant)
        if task.labels.ape:
            assert task.programs.get("ape"), task.name
        if task.labels.nope:
            assert task.programs.get("nope") and parse_plain(task), task.name


def parse_plain(task):
    from crasp import check
    return check(task.program("nope")).info.plain


def test_a_wrong_program_is_caught_with_a_counterexample():
    wrong = parse('alphabet {"<bos>", "<eos>"}\nC0 = #"0"\nC1 = #"1"\n'
                  'next "0" = "<sep>" && C0 >= C1\nnext "1" = "<sep>" && C1 > C0 + 1\nnext "<eos>" = !"<sep>"')
    report = verify(tasks.get("bin_majority"), wrong, exhaustive_length=3, samples=0)
    assert not report.ok
    bad = report.counterexample
    assert bad.expected == "1" and bad.got is None
    assert "expected '1', program gives nothing" in bad.describe()
    assert [row.name for row in bad.trace.rows][:2] == ["C0", "C1"]


def test_an_offset_dependent_program_is_caught():
    # Reads absolute positions instead of positions relative to <bos>: wrong at some offset.
    shaky = parse('alphabet {"<bos>", "<eos>", "0", "1"}\nFirst = #"<sep>" == 0 && i mod 2 in {0}\n'
                  'next "0" = "<sep>" && #"0" > #"1" && #First >= 0\nnext "1" = "<sep>" && #"1" > #"0" && '
                  '#(First && "<bos>") == 0\nnext "<eos>" = !"<sep>"')
    report = verify(tasks.get("bin_majority"), shaky, exhaustive_length=3, samples=0, random_offsets=0)
    assert not report.ok and report.counterexample.offset == 1
