"""The kit's strategies draw valid objects only, each checked against a brute-force reference of
its own (tasks.theory.strategies), and shrink to minimal ones."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import crasp
from crasp import parse
from tasks.evidence.reference import check_reference
from tasks.regular.dfa import Dfa, from_regex, minimize
from tasks.regular.regex import parse_regex
from tasks.theory.strategies import (
    automata, compiled, inputs, landmarks, locally_testable, regexes, size, tasks,
)
from tasks.types import EOS, Format
from tasks.verify import verify

FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=15, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# ---------------------------------------------------------------- brute-force references



def smallest(strategy, condition):
    """Hypothesis's ``find``, the same search on every run and machine (no example database)."""
    return find(strategy, condition, settings=settings(database=None, derandomize=True, max_examples=2000))

def all_words(symbols, longest):
    return [w for n in range(longest + 1) for w in itertools.product(symbols, repeat=n)]


def transformations(dfa: Dfa) -> set[tuple[int, ...]]:
    """Every q -> q.w for the words w of length 1..(n^n bound), by closing the letters' maps."""
    n = dfa.n_states
    letters = [tuple(dfa.table[q][k] for q in range(n)) for k in range(len(dfa.symbols))]
    found, frontier = set(letters), list(letters)
    while frontier:
        f = frontier.pop()
        for g in letters:
            h = tuple(g[f[q]] for q in range(n))
            if h not in found:
                found.add(h)
                frontier.append(h)
    return found


def power(f, k):
    out = tuple(range(len(f)))
    for _ in range(k):
        out = tuple(f[q] for q in out)
    return out


def brute_aperiodic(dfa: Dfa) -> bool:
    """x^n == x^(n+1) for every element x of the transition monoid (n = the number of states)."""
    n = dfa.n_states
    return all(power(f, n) == power(f, n + 1) for f in transformations(dfa))


def brute_group(dfa: Dfa) -> bool:
    """Every letter maps the states one to one."""
    return all(sorted(dfa.table[q][k] for q in range(dfa.n_states)) == list(range(dfa.n_states))
               for k in range(len(dfa.symbols)))


def profile(word, k):
    if len(word) < k - 1:
        return ("short", word)
    return (word[:k - 1], word[len(word) - k + 1:], frozenset(word[i:i + k] for i in range(len(word) - k + 1)))


PROFILE_BOUNDS = {"a": (12, 4), "ab": (10, 4), "abc": (7, 4)}
"""Per alphabet (the longest word, the largest k) for :func:`order_of_testability`: a word longer
than 2 (k - 1) is not determined by its profile, so the check is not vacuous. (Locally testable
automata of up to 4 states drawn at random have order at most 4.)"""


def order_of_testability(dfa: Dfa) -> int | None:
    """The least k (at most the alphabet's largest) such that, on the words up to the alphabet's
    longest, words of one (prefix, suffix, set of k-factors) profile are all accepted or all
    rejected (None: no such k)."""
    longest, most = PROFILE_BOUNDS["".join(dfa.symbols)]
    assert longest > 2 * (most - 1)
    words = all_words(dfa.symbols, longest)
    verdicts = [dfa.accepts(w) for w in words]
    for k in range(1, most + 1):
        seen: dict = {}
        if all(seen.setdefault(profile(w, k), v) == v for w, v in zip(words, verdicts)):
            return k
    return None


def brute_minimal(dfa: Dfa) -> bool:
    """Every state reachable and no two states accept the same words up to length n."""
    n = dfa.n_states
    reached = {dfa.run(w) for w in all_words(dfa.symbols, n)}
    signatures = {tuple(dfa.run(w, q) in dfa.accepting for w in all_words(dfa.symbols, n)) for q in range(n)}
    return len(reached) == n and len(signatures) == n and dfa.start == 0


# ---------------------------------------------------------------- regexes


@FAST
@given(st.data())
def test_every_regex_parses_within_its_size(data):
    alphabet = data.draw(st.sampled_from(["ab", "abc", "x", ("0", "1")]))
    max_size = data.draw(st.integers(1, 12))
    text = data.draw(regexes(alphabet, max_size=max_size))
    assert size(parse_regex(text, alphabet)) <= max_size
    from_regex(text, alphabet)  # and it has an automaton


def test_regex_shrinks_to_the_shortest():
    assert smallest(regexes(), lambda r: "*" in r) == "a*"
    assert len(smallest(regexes("xy"), lambda r: len(r) >= 3)) == 3
    assert smallest(regexes(), lambda r: "|" in r) == "a|a"


# ---------------------------------------------------------------- automata


@FAST
@given(st.data())
def test_every_automaton_is_minimal_complete_and_of_its_kind(data):
    alphabet = data.draw(st.sampled_from(["ab", "abc", "a"]))
    kind = data.draw(st.sampled_from([None, "aperiodic", "local", "group"]))
    most = data.draw(st.integers(1, 4))
    dfa = data.draw(automata(alphabet, max_states=most, kind=kind))
    assert dfa == minimize(dfa) and brute_minimal(dfa)
    assert dfa.symbols == tuple(alphabet) and 1 <= dfa.n_states <= most
    if kind == "aperiodic":
        assert brute_aperiodic(dfa)
    if kind == "group":
        assert brute_group(dfa)
    if kind == "local":
        assert order_of_testability(dfa) is not None


@FAST
@given(automata("ab", max_states=4))
def test_locally_testable_agrees_with_factor_profiles(dfa):
    # A locally testable language is k-testable for some k; one whose profiles up to k = 4
    # conflict on the words up to length 10 is not (over a, b with 4 states, such k is at most 4).
    if order_of_testability(dfa) is None:
        assert not locally_testable(dfa)
    if locally_testable(dfa):
        assert brute_aperiodic(dfa)


@pytest.mark.parametrize("regex,expected", [
    ("(ab)*", True), ("a*b*", True), ("(a|b)*ab(a|b)*", True), ("b(a|b)*", True), ("(a|b)*b", True),
    ("a*ba*", False), ("(aa)*", False), ("(a|b)*ab(a|b)*ba(a|b)*", False), ("a*", True),
])
def test_locally_testable_on_known_languages(regex, expected):
    assert locally_testable(from_regex(regex, "ab")) is expected


def test_every_kind_is_drawn_with_more_than_one_state():
    for kind in (None, "aperiodic", "local", "group"):
        assert 3 <= smallest(automata(max_states=4, kind=kind), lambda d: d.n_states >= 3).n_states <= 4


def test_automata_shrink_to_fewest_states():
    assert smallest(automata(), lambda d: len(d.table) >= 2).n_states == 2
    periodic = smallest(automata(max_states=4), lambda d: not brute_aperiodic(d))
    assert periodic.n_states == 2 and not brute_aperiodic(periodic)


# ---------------------------------------------------------------- tasks


def consistent(task, rng) -> None:
    """The reference check passes, and framed examples carry the reference's answers."""
    check_reference(task, inputs=40)
    for length in (0, 1, 3, 7):
        x = task.sample_input(length, rng)
        assert len(x) == length and set(x) <= set(task.symbols)
        example = task.example(x)
        answer = task.answer(x)
        if task.format is Format.ACCEPT:
            assert example.targets == (answer,)
        elif task.format is Format.SEQ2SEQ:
            assert example.targets == (*answer, EOS)
        else:
            assert example.targets == tuple(answer) and len(answer) == length + 1


@pytest.mark.parametrize("form", ["accept", "seq2seq", "next_set", "one_token"])
@pytest.mark.parametrize("source", ["program", "automaton", "function"])
def test_every_task_passes_its_reference_check(form, source):
    rng = np.random.default_rng(0)

    @FEW
    @given(tasks(form, "ab", source=source))
    def check_one(task):
        consistent(task, rng)
        if form == "one_token":
            assert all(len(task.answer(x)) == 1 for x in all_words("ab", 3))
        if source == "program":
            report = verify(task, exhaustive_length=4, samples=6, max_length=24, derived=6)
            assert report.ok, report.counterexample and report.counterexample.describe()
        if source == "automaton" and form == "accept":
            assert all(task.answer(x) == task.automaton.accepts(x) for x in all_words("ab", 5))
        if source == "automaton" and form == "next_set":
            dfa = task.automaton
            for x in all_words("ab", 4):
                last = task.answer(x)[-1]
                assert (EOS in last) == dfa.accepts(x)
                # a symbol is legal exactly where some word continues through it (brute force, 4 more)
                assert all((s in last) == any(dfa.accepts((*x, s, *w)) for w in all_words("ab", 4)) for s in "ab")

    check_one()


def test_tasks_over_other_alphabets_and_any_source():
    @FEW
    @given(tasks("one_token", ("T", "u", "v"), source="any"))
    def check_one(task):
        assert not set(task.outputs) & {"u", "v"} or task.outputs == task.symbols
        check_reference(task, inputs=30)

    check_one()


# ---------------------------------------------------------------- inputs


THRESHOLD = parse('L = #"a" >= 7')
PERIODIC = parse('alphabet {"a", "b"}\nL = i mod 5 in {0} && #"a" > #"b"')


@FAST
@given(st.data())
def test_inputs_respect_their_bounds(data):
    program = data.draw(st.sampled_from([THRESHOLD, PERIODIC, parse('L = #[i - j in {3}] "b" == 1')]))
    longest = data.draw(st.integers(0, 30))
    shortest = data.draw(st.integers(0, longest))
    furthest = data.draw(st.integers(0, 50))
    tokens, offset = data.draw(inputs(program, alphabet="abc", max_length=longest, max_offset=furthest,
                                      min_length=shortest))
    assert shortest <= len(tokens) <= longest and 0 <= offset <= furthest and set(tokens) <= set("abc")


def drawn(strategy, count=300):
    found = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        found.append(value)

    collect()
    return found


def test_inputs_land_near_the_flips():
    near = [x for x, _ in drawn(inputs(THRESHOLD, alphabet="ab", max_length=40)) if x.count("a") in (6, 7, 8)]
    assert len(near) >= 40  # a uniform word of up to 40 symbols rarely holds 6 to 8 a's
    found = drawn(inputs(PERIODIC, max_length=40))
    assert sum(len(x) % 5 in (4, 0, 1) for x, _ in found) >= 0.7 * len(found)
    assert sum(x.count("a") - x.count("b") in (-1, 0, 1) for x, _ in found) >= 40
    assert landmarks(PERIODIC).period == 5


def test_inputs_shrink_to_short_words_at_offset_zero():
    word, offset = smallest(inputs(THRESHOLD, alphabet="ab"), lambda io: len(io[0]) >= 3)
    assert (len(word), offset) == (3, 0)
    assert smallest(inputs(THRESHOLD, alphabet="ab"), lambda io: io[0].count("a") >= 7) == (("a",) * 7, 0)
    assert smallest(inputs(PERIODIC), lambda io: io[1] >= 1) == (("a",), 1)


# ---------------------------------------------------------------- compiled


@settings(max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_compiled_models_agree_with_the_interpreter(data):
    import limit_transformer

    positions = data.draw(st.sampled_from(["ape", "nope"]))
    checked, model = data.draw(compiled("ab", positions=positions, max_definitions=3))
    assert checked.info.plain or positions == "ape"
    drawn_inputs = data.draw(st.lists(inputs(checked, alphabet="ab", max_length=16), min_size=1, max_size=3))
    words = [list(x) for x, _ in drawn_inputs]
    offs = [o for _, o in drawn_inputs]
    want = crasp.run(checked, words, offset=offs, allow_unknown=True, raw=True)
    have = limit_transformer.run(model, words, offset=offs, allow_unknown=True, raw=True)
    if want.accept is not None:
        assert have.accept.tolist() == want.accept.tolist()
    else:
        for row, x in enumerate(words):
            assert have.next_tokens(row) == want.next_tokens(row), x


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("make,message", [
    (lambda: regexes("a|"), "one-character symbols"),
    (lambda: regexes("ab", max_size=0), "max_size"),
    (lambda: regexes(""), "empty"),
    (lambda: automata("aa"), "repeats"),
    (lambda: automata(max_states=0), "max_states"),
    (lambda: automata(kind="cyclic"), "kind must be one of"),
    (lambda: tasks("aligned"), "format must be one of"),
    (lambda: tasks(source="oracle"), "source must be one of"),
    (lambda: tasks(alphabet=("a", "<sep>")), "reserve"),
    (lambda: inputs(THRESHOLD, max_length=-1), "max_length"),
    (lambda: inputs(THRESHOLD, min_length=5, max_length=2), "exceeds"),
    (lambda: inputs(parse("L = #true >= 1")), "alphabet="),
    (lambda: compiled(positions="rope"), "positions must be one of"),
])
def test_bad_arguments_are_value_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()
