"""The communication checker against brute force, closed forms and the Python references."""

import dataclasses
import itertools

import numpy as np
import pytest

import tasks
from tasks.communication import (
    CommunicationError,
    Split,
    _DistinctRows,
    analyse,
    classify,
    count_rows,
    default_split,
    exact_polynomial,
)
from tasks import catalogue
from tasks.registry import INVALID, Format

VECTORISED = [t.name for t in tasks.all_tasks() if t.batch_answer is not None]


@pytest.mark.parametrize("name", VECTORISED)
def test_vectorised_references_equal_the_python_ones(name):
    task = tasks.get(name)
    symbols = task.symbols[:3] if len(task.symbols) > 4 else task.symbols
    for length in range(0, 7):
        strings = list(itertools.product(range(len(symbols)), repeat=length))
        codes = np.asarray(task.batch_answer(np.array(strings, dtype=np.int8).reshape(len(strings), length)))
        meaning: dict[tuple, object] = {}
        for row, x in zip(codes.tolist(), strings):
            tokens = tuple(symbols[k] for k in x)
            if length < task.min_length or not task.valid(tokens):
                assert set(row) == {INVALID}, tokens
                continue
            answer = tuple(task.answer(tokens))
            assert meaning.setdefault(tuple(row), answer) == answer, tokens  # one code, one answer
        assert len(set(meaning.values())) == len(meaning)  # one answer, one code


def brute_force_rows(task, n, split):
    """Distinct rows, by definition: Bob's output vector for every Bob string, per Alice string."""
    symbols = split.symbols(task)
    strings = list(itertools.product(symbols, repeat=split.block * n))
    bob_outputs = len(split.middle) + split.block * n + len(split.after)
    rows = set()
    for a in strings:
        row = []
        for b in strings:
            x = (*split.before, *a, *split.middle, *b, *split.after)
            if len(x) < task.min_length or not task.valid(x):
                row.append(None)
            elif task.format is Format.NEXT_SET:
                row.append(tuple(task.answer(x))[-bob_outputs:])
            else:
                row.append(tuple(task.answer(x)))
        if any(entry is not None for entry in row):
            rows.add(tuple(row))
    return len(rows)


@pytest.mark.parametrize("name, sizes", [
    ("bin_majority", (1, 2, 3, 4)), ("majority", (1, 2, 3)), ("parity", (1, 3, 4)),
    ("repeat_copy", (1, 2, 4)), ("addition", (1, 2, 3, 4)), ("bin_majority_interleave", (1,)),
    ("tomita_3", (1, 2, 4)), ("tomita_5", (2, 3)), ("d_2", (1, 2, 3)), ("012_star_0_2_star", (1, 2)),
    ("duan_successor", (1, 3)), ("duan_parity_scratchpad", (2, 3)),
])
def test_row_counts_equal_brute_force(name, sizes):
    task = tasks.get(name)
    for n in sizes:
        rows, _ = count_rows(task, n)
        assert rows == brute_force_rows(task, n, default_split(task)), n
        # The Python path (no vectorised reference) counts the same rows.
        plain = dataclasses.replace(task, batch_answer=None)
        assert count_rows(plain, n)[0] == rows


def test_closed_forms():
    assert [count_rows(tasks.get("bin_majority"), n)[0] for n in range(1, 9)] == [n + 1 for n in range(1, 9)]
    three_letters = [count_rows(tasks.get("majority"), n)[0] for n in range(1, 6)]
    assert three_letters == [(n + 1) * (n + 2) // 2 for n in range(1, 6)]  # count vectors of n draws of 3 letters
    assert [count_rows(tasks.get("repeat_copy"), n)[0] for n in range(1, 10)] == [2 ** n for n in range(1, 10)]
    assert {count_rows(tasks.get("parity"), n)[0] for n in range(1, 10)} == {2}
    # A regular language: R(N) is at most the number of states of its minimal automaton.
    tomita6 = [count_rows(tasks.get("tomita_6"), n)[0] for n in range(1, 9)]
    assert tomita6[2:] == [3] * 6


def test_growth_is_classified_with_its_evidence():
    growth = analyse(tasks.get("repeat_copy"), max_pairs=2 ** 16, sampled=1)
    assert growth.growth.kind == "exponential" and growth.growth.base == 2.0 and growth.total
    assert analyse(tasks.get("bin_majority"), max_pairs=2 ** 14).growth.exact_formula == "N + 1"
    assert analyse(tasks.get("parity"), max_pairs=2 ** 14).growth.kind == "constant"
    assert analyse(tasks.get("d_4"), max_pairs=2 ** 20, sampled=0).growth.kind == "constant"  # cycles 3, 4
    ns = list(range(1, 11))
    assert classify(ns, [3 ** n for n in ns]).base == 3.0
    assert classify(ns, [n ** 2 + 1 for n in ns]).exact_formula == "N^2 + 1"
    assert classify(ns, [round(5 * n ** 2.5) for n in ns]).kind == "polynomial"
    assert classify(ns[:3], [1, 2, 3]).kind == "undetermined"
    assert classify(ns, [7, 1, 9, 2, 30, 4, 8, 100, 3, 5]).kind == "undetermined"
    assert exact_polynomial(ns[:4], [1, 4, 9, 16]) is None  # degree 2 needs 5 points to be confirmed


@pytest.fixture
def scratch_registry(monkeypatch):
    """Tasks registered in a test disappear after it."""
    tasks.names()  # the built-in suite first
    monkeypatch.setattr(catalogue, "_REGISTRY", dict(catalogue._REGISTRY))


def test_a_sampled_lower_bound_overturns_a_constant_fit(scratch_registry):
    @tasks.task("prefix_ones_then_copy", symbols=("0", "1"), replace=True,
                sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)))
    def copy_when_long(x):
        """Constant information at short lengths, a copy beyond 12 symbols."""
        return tuple(x) if len(x) > 12 else (x.count("1") % 2,)

    analysis = analyse(tasks.get("prefix_ones_then_copy"), max_pairs=2 ** 12, sampled=2, samples=64)
    assert analysis.growth.kind == "undetermined" and "exceeds" in analysis.growth.statement


def test_rows_are_counted_exactly_even_when_every_digest_collides():
    rows = [bytes([k % 3, 1]) for k in range(10)]
    distinct = _DistinctRows(lambda key: rows[key], memory=2, digest=lambda row: b"same")
    for key, row in enumerate(rows):
        distinct.add(key, row)
    assert distinct.count == 3


def test_tasks_outside_the_theorem_are_refused_or_flagged():
    with pytest.raises(CommunicationError, match="bidirectional"):
        analyse(tasks.get("sabbaghi_addition"))
    bounded = analyse(tasks.get("unique_copy"))
    assert not bounded.applicable and bounded.table == () and "distinct symbols" in bounded.notes[0]
    with pytest.raises(CommunicationError, match="not a symbol"):
        count_rows(tasks.get("parity"), 2, split=Split(alphabet=("0", "2")))


def test_a_task_given_only_as_a_python_function(scratch_registry):
    @tasks.task("first_equals_last", symbols=("a", "b"), format="accept", replace=True,
                sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
    def first_equals_last(x):
        return len(x) > 0 and x[0] == x[-1]

    analysis = analyse(tasks.get("first_equals_last"), sampled=1)
    assert [s.rows for s in analysis.exact][:5] == [2, 2, 2, 2, 2]
    assert analysis.growth.kind == "constant" and "R(N) = 2" in analysis.summary()
