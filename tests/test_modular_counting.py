"""Modular counting by restriction to two letters (tasks.evidence.modular): a weighted count
sum_i c_i #s_i = r (mod k) over any alphabet is found on the two letters whose weights differ, at
the modulus the reference implies; and the family never fires on a language that has a
C-RASP[periodic, local] program (the suite's and the library's, and those the positional
construction builds for random expressions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tasks
from tasks import catalogue, registry
from tasks.evidence.modular import family
from tasks.findings import DEFAULT
from tasks.regular import from_regex, regex_task
from tasks.regular.positional import Limits, NotFound, search
from crasp.strategies import programs as random_programs
from tests.test_regular import regex_texts

LETTERS = "abcdefghij"


def weighted_count_task(weights: tuple[int, ...], modulus: int, residue: int) -> tasks.Task:
    symbols = tuple(LETTERS[: len(weights)])

    def sample(n, rng):
        return tuple(rng.choice(list(symbols), size=n))

    def reference(x):
        return sum(w * x.count(s) for w, s in zip(weights, symbols)) % modulus == residue

    name = f"weighted_{'_'.join(map(str, weights))}_mod_{modulus}_{residue}"
    tasks.task(name, symbols=symbols, format="accept", sampler=sample, replace=True)(reference)
    return catalogue._REGISTRY.pop(name)


def implied_modulus(weights: tuple[int, ...], modulus: int) -> int:
    """The largest k' with which some two letters' strings count one letter: k / gcd(c_x - c_y, k)."""
    return max(modulus // math.gcd(x - y, modulus) for x in weights for y in weights)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(3, 10).flatmap(lambda n: st.tuples(st.lists(st.integers(-3, 3), min_size=n, max_size=n),
                                                      st.integers(2, 8), st.integers(0, 7))))
def test_a_weighted_count_modulo_k_is_found_on_two_letters_of_any_alphabet(drawn):
    weights, modulus, residue = tuple(drawn[0]), drawn[1], drawn[2] % drawn[1]
    task = weighted_count_task(weights, modulus, residue)
    found = family(task, DEFAULT)
    if implied_modulus(weights, modulus) == 1:  # every weight equal mod k: a function of the length alone
        assert found is None
        return
    assert found is not None, (weights, modulus, residue)
    x, y = (LETTERS.index(s) for s in (found.counted, found.filler))
    assert found.modulus == modulus // math.gcd(weights[x] - weights[y], modulus) > 1


def test_opposite_signs_over_three_letters_decide_ape_and_nope():
    from tasks.predict import predict

    task = weighted_count_task((1, -1, 0), 5, 0)
    prediction = predict(task, synthesis=False)
    for scheme in ("ape", "nope"):
        verdict = prediction.verdict(scheme)
        assert verdict.verdict.value == "does not generalize" and verdict.basis == "modular counting", verdict.headline


def test_a_count_and_a_parity_in_one_language_count_modulo_their_product():
    """#a - #b even and #c = 0 (mod 3): on strings over {a, c} the answer counts modulo 6 (two
    counts per cell of the pattern need counts past 8, so the short strings alone missed it)."""
    def reference(x):
        return (x.count("a") - x.count("b")) % 2 == 0 and x.count("c") % 3 == 0

    tasks.task("parity_and_thirds", symbols=("a", "b", "c"), format="accept", replace=True,
               sampler=lambda n, rng: tuple(rng.choice(["a", "b", "c"], size=n)))(reference)
    found = family(catalogue._REGISTRY.pop("parity_and_thirds"), DEFAULT)
    assert found is not None and found.modulus == 6


@pytest.mark.parametrize("name", sorted(t.name for t in registry.all_tasks() if t.program("ape") is not None))
def test_never_on_a_suite_task_with_a_program(name):
    assert family(registry.get(name), DEFAULT) is None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=regex_texts("abc", max_leaves=8))
def test_never_on_a_language_the_positional_construction_builds(text):
    """A built program is a C-RASP[periodic, local] program for the language (tests/test_positional.py
    checks it on every word): the family must find nothing."""
    dfa = from_regex(text, "abc")
    if isinstance(search(dfa, Limits(window=2, modulus=4)), NotFound):
        return
    assert family(regex_task(text, "abc"), DEFAULT) is None, text


def test_the_family_holds_on_strings_it_did_not_draw():
    """Adding k * m counted symbols keeps a string in its cell (count mod k, length mod m), so
    the answer must stay; and some count changes it."""
    task = weighted_count_task((2, -1, 0, 0), 7, 3)
    found = family(task, DEFAULT)
    assert found is not None and found.modulus == 7
    rng = np.random.default_rng(0)
    step = found.modulus * found.length_period
    changed = False
    for _ in range(200):
        n = int(rng.integers(1, 300))
        x = list(rng.choice([found.counted, found.filler], size=n))
        longer = x[:]
        for _ in range(step):
            longer.insert(int(rng.integers(0, len(longer) + 1)), found.counted)
        assert task.answer(tuple(x)) == task.answer(tuple(longer))
        changed |= task.answer(tuple(x)) != task.answer(tuple([found.counted] + x[1:] if x[0] == found.filler else x))
    assert changed


@pytest.mark.parametrize("name", ["aa_star", "anbncn", "contains_ab", "contains_ab_crasp", "dyck1"])
def test_never_on_a_library_program(name):
    """The library's programs taken as tasks (the interpreter is the reference). aa_star_crasp
    reads one symbol: no pair to restrict to."""
    from crasp import check, library
    from tests.test_sources_soundness import program_task

    program = library.load(name)
    symbols = tuple(sorted(check(program).info.alphabet))
    assert family(program_task(program, symbols), DEFAULT) is None


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([("a", "b"), ("a", "b", "c")]).flatmap(
    lambda symbols: st.tuples(random_programs(alphabet=symbols, outputs="accept", periodic=True, local=True,
                                              max_definitions=4, max_depth=2), st.just(symbols))))
def test_never_on_a_random_program_with_positions(drawn):
    from tests.test_sources_soundness import program_task

    program, symbols = drawn
    assert family(program_task(program, symbols), DEFAULT) is None
