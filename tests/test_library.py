"""The literature's example programs decide their languages, checked exhaustively on short inputs."""

import itertools
import re

import pytest

from crasp import check, run
from crasp.library import load, names

from .reference import naive_accepts


def dyck1(s):
    depth = 0
    for t in s:
        depth += 1 if t == "(" else -1
        if depth < 0:
            return False
    return depth == 0


def anbncn(s):
    m = re.fullmatch(r"(a+)(b+)(c+)", "".join(s))
    return bool(m) and len(m.group(1)) == len(m.group(2)) == len(m.group(3))


def contains_ab(s):
    return "ab" in "".join(s)


def aa_star(s):
    return all(t == "a" for t in s) and len(s) % 2 == 0


CASES = [
    ("dyck1", dyck1, "()", 12, [0]),
    ("anbncn", anbncn, "abc", 7, [0]),
    ("contains_ab", contains_ab, "ab", 10, [0, 1, 5]),
    ("contains_ab_crasp", contains_ab, "ab", 10, [0, 3]),
    ("aa_star", aa_star, "ab", 10, [0, 1, 2, 7]),
    ("aa_star_crasp", aa_star, "ab", 10, [0]),
]


@pytest.mark.parametrize("name, reference, alphabet, max_length, offsets", CASES)
def test_library_program_decides_its_language(name, reference, alphabet, max_length, offsets):
    checked = check(load(name))
    inputs = [list(w) for n in range(1, max_length + 1) for w in itertools.product(alphabet, repeat=n)]
    expected = [reference(w) for w in inputs]
    for offset in offsets:
        verdicts = run(checked, inputs, offset=offset, alphabet=alphabet).accept.tolist()
        wrong = [w for w, got, want in zip(inputs, verdicts, expected) if got != want]
        assert not wrong, f"{name} at offset {offset} is wrong on {' '.join(wrong[0])}"
    assert any(expected) and not all(expected)


@pytest.mark.parametrize("name", names())
def test_library_programs_agree_with_naive_evaluator(name):
    program = load(name)
    checked = check(program)
    alphabet = sorted(checked.info.alphabet)
    for n in range(1, 7):
        for w in itertools.product(alphabet, repeat=n):
            assert run(checked, [list(w)]).accept[0] == naive_accepts(program, list(w))


def test_offset_dependence_is_real():
    # The c-rasp (aa)* program reads absolute positions, so a shifted input changes its answer;
    # the library's offset-robust version does not.
    assert run(load("aa_star_crasp"), ["a a"], offset=1).accept.tolist() == [False]
    assert run(load("aa_star"), ["a a"], offset=1).accept.tolist() == [True]


def test_program_info():
    info = check(load("dyck1")).info
    assert (info.plain, info.depth, info.model_class) == (True, 2, "C-RASP (NoPE)")
    info = check(load("aa_star")).info
    assert (info.plain, info.period, info.offsets) == (False, 2, frozenset())
    info = check(load("contains_ab")).info
    assert (info.plain, info.periods, info.offsets, info.depth) == (False, frozenset(), frozenset({1}), 2)
