"""The positional construction (tasks.regular.positional): the product reads a word as the
automaton does, the programs built from it accept exactly the language at every offset (with
``<bos>``, at an end token, and on the bare word), the suite's periodic and local languages get
their APE verdict from it and compile exactly, and nothing it does is a wrong verdict."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp.checker import check
from crasp.interpreter import run_in_chunks
from limit_transformer import compile
from limit_transformer.agreement import compare
from tasks import registry
from crasp.cli import main
from tasks.predict import predict
from tasks.regular import from_regex, languages
from tasks.regular.dfa import words
from tasks.regular.positional import BOS, NOTHING, Limits, NotFound, build, product, search, trackers
from tests.test_regular import regex_texts


def relabel(word, window: int, modulus: int):
    """What a program reads at each position of ``<bos> word``, written out directly: the symbol,
    the ``window`` tokens before it (NOTHING before <bos>) and its index modulo ``modulus``."""
    tokens = (BOS, *word)
    out = []
    for i in range(1, len(tokens)):
        before = tuple(tokens[j] if j >= 0 else NOTHING for j in range(i - window, i))
        out.append((tokens[i], before, i % modulus))
    return out


def product_accepts(found, dfa, word) -> bool:
    """Run the product on the relabelled word, letter by letter (a missing transition rejects)."""
    from tasks.regular import minimize

    minimal = minimize(dfa)
    state = found.start
    for letter in relabel(word, found.window, found.modulus):
        step = {found.letters[k]: t for k, t in found.edges[state]}
        matching = [t for x, t in step.items() if (x.symbol, x.before, x.residue) == letter]
        if not matching:
            return False
        state = matching[0]
    return found.origin[state] in minimal.accepting


def disagreements(dfa, program_of, inputs, framing: str, seed: int = 0) -> list[str]:
    """The words (of ``inputs``) on which the program's verdict is not the automaton's, each run at
    a random offset; ``framing``: "last" (<bos> w), "end" (<bos> w <eos>) or "bare" (w)."""
    rng = np.random.default_rng(seed)
    checked = check(program_of(framing))
    inputs = [w for w in inputs if framing != "bare" or w]
    framed = [{"last": ("<bos>", *w), "end": ("<bos>", *w, "<eos>"), "bare": tuple(w)}[framing] for w in inputs]
    wrong = []
    for indices, result in run_in_chunks(checked, framed, offset=rng.integers(0, 60, size=len(framed))):
        wrong += ["".join(inputs[i]) for i, verdict in zip(indices, result.accept)
                  if bool(verdict) != dfa.accepts(inputs[i])]
    return wrong


def programs_of(dfa, found):
    def program_of(framing: str):
        return build(dfa, found.product, end="<eos>" if framing == "end" else None, framed=framing != "bare")
    return program_of


def long_words(symbols, rng, count: int = 20, low: int = 20, high: int = 120):
    return [tuple(rng.choice(symbols, size=int(n))) for n in rng.integers(low, high, size=count)]


# ---------------------------------------------------------------- the product


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=regex_texts("ab", max_leaves=7), window=st.integers(0, 3), modulus=st.integers(1, 4))
def test_the_product_reads_every_word_as_the_automaton(text, window, modulus):
    dfa = from_regex(text, "ab")
    found = product(dfa, window, modulus)
    for word in words(dfa.symbols, 7):
        assert product_accepts(found, dfa, word) == dfa.accepts(word), (text, word)


def test_trackers_come_smallest_first_and_the_limits_are_kept():
    dfa = from_regex("(aa)*", "ab")
    pairs = trackers(dfa, Limits(window=2, modulus=3))
    assert pairs[0] == (0, 1) and len(pairs) == 3 * 3
    sizes = [3 ** w * m for w, m in pairs]
    assert sizes == sorted(sizes)
    assert product(from_regex("(a|b)*abb(a|b)*", "ab"), 3, 1, max_states=4) is None
    assert isinstance(search(from_regex("(aa)*", "a"), Limits(window=0, modulus=1)), NotFound)
    with pytest.raises(ValueError, match="no tracker"):
        product(dfa, -1, 2)


# ---------------------------------------------------------------- the programs


@pytest.mark.parametrize("text,alphabet,window,modulus", [
    ("(aa)*", "a", 0, 2),
    ("(aaaa)*", "a", 0, 4),
    ("(abab)*", "ab", 0, 4),
    ("(a|b)*b", "ab", 1, 1),            # the last symbol: outside plain C-RASP (fails R^omega)
    ("(0|1)*000(0|1)*|(0|1)*", "01", 0, 1),  # every word: no positions needed
    ("(0|1)*000(0|1)*", "01", 2, 1),    # a required factor (Tomita 4's complement): outside plain C-RASP
    ("(1|01|001)*(()|0|00)", "01", 2, 1),  # Tomita 4, no factor 000
    ("((a|b)(a|b))*b", "ab", 1, 2),     # the last symbol at an even position
])
def test_programs_accept_exactly_the_language_at_every_offset(text, alphabet, window, modulus):
    dfa = from_regex(text, alphabet)
    found = search(dfa)
    assert (found.window, found.modulus) == (window, modulus)
    rng = np.random.default_rng(1)
    inputs = [*words(dfa.symbols, 9 if len(alphabet) <= 2 else 6), *long_words(dfa.symbols, rng)]
    for framing in ("last", "end", "bare"):
        assert not disagreements(dfa, programs_of(dfa, found), inputs, framing), (text, framing)


def test_programs_for_the_data_set_rows_outside_plain_crasp():
    """A sample of the data set's rows outside plain C-RASP that the construction reaches, on every
    word up to length 6 (8 for two symbols) and long random words, at random offsets."""
    rng = np.random.default_rng(2)
    rows = [row for row in languages() if not row.nope]
    built = 0
    for n, row in enumerate(rows):
        dfa = from_regex(row.regex, row.alphabet)
        found = search(dfa)
        if isinstance(found, NotFound) or n % 16:
            continue
        built += 1
        inputs = [*words(dfa.symbols, 8 if len(row.alphabet) <= 2 else 6), *long_words(dfa.symbols, rng, 10)]
        for framing in ("last", "end"):
            assert not disagreements(dfa, programs_of(dfa, found), inputs, framing, seed=n), (row.regex, framing)
    assert built >= 15


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=regex_texts("ab", max_leaves=8))
def test_random_languages_are_built_exactly_or_not_at_all(text):
    dfa = from_regex(text, "ab")
    found = search(dfa, Limits(window=3, modulus=4))
    if isinstance(found, NotFound):
        return
    rng = np.random.default_rng(3)
    inputs = [*words(dfa.symbols, 8), *long_words(dfa.symbols, rng, 8)]
    assert not disagreements(dfa, programs_of(dfa, found), inputs, "end"), text


def test_a_language_that_needs_an_unbounded_memory_is_not_built():
    """Parity of b's (a group) and 'the last symbol other than 2 is 0' (it can lie arbitrarily far
    back) have no tracker at any window or modulus; the search says so and claims nothing."""
    for text, alphabet in (("a*(ba*ba*)*", "ab"), ("(0|1|2)*02*", "012")):
        result = search(from_regex(text, alphabet))
        assert isinstance(result, NotFound) and "no tracker within" in result.why


def test_the_data_sets_ape_labels_are_never_contradicted():
    """Every row labelled APE-false has no tracker (a program would refute the label), and every
    row labelled APE-true outside plain C-RASP that the construction reaches is built."""
    rows = [row for row in languages() if not row.nope and row.ape is not None]
    outcomes = {(row.ape, not isinstance(search(from_regex(row.regex, row.alphabet)), NotFound)) for row in rows}
    assert (False, True) not in outcomes
    assert (True, True) in outcomes


# ---------------------------------------------------------------- the suite and predict


@pytest.mark.parametrize("name", ["aa_star", "aaaa_star", "abab_star", "tomita_4"])
def test_the_suites_periodic_and_local_languages_get_their_ape_verdict_from_the_construction(name):
    task = registry.get(name)
    found = predict(task, schemes=["ape"], synthesis=False)
    verdict = found.verdict("ape")
    (built,) = [f for f in verdict.findings if f.source == "positional construction"]
    assert built.claim.value == "generalizes", built.headline()
    # as strong as its verification (tasks.evidence.programs.strength); a stronger finding decides
    assert built.strength.value == ("verified" if "every constant exercised" in built.summary else "extrapolated")
    assert verdict.verdict.value == "generalizes" and verdict.strength.rank >= built.strength.rank, verdict.headline
    assert verdict.basis == "positional construction" or verdict.strength.rank > built.strength.rank
    checked = check(built.program)
    assert not checked.info.plain
    model = compile(checked)
    rng = np.random.default_rng(4)
    examples = [task.sample_train(rng) for _ in range(6)]
    report = compare(model, checked, [list(e.tokens) for e in examples], [e.offset for e in examples])
    assert report.ok, report.summary()


def test_a_user_accept_task_with_a_learned_automaton():
    """'The word ends in ab': the last two symbols (no plain C-RASP program: under the
    end-of-sequence convention R^omega fails, and so does the last-position quotient); the
    automaton is learned from the reference and the program reads the last symbols."""
    import tasks
    from tasks import catalogue

    tasks.task("user_ends_in_ab", symbols=("a", "b"), format="accept", replace=True,
               sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))(lambda x: tuple(x[-2:]) == ("a", "b"))
    ends_in_ab = catalogue._REGISTRY.pop("user_ends_in_ab")
    found = predict(ends_in_ab, schemes=["ape"], synthesis=False)
    verdict = found.verdict("ape")
    assert verdict.verdict.value == "generalizes", verdict.headline
    assert verdict.basis == "positional construction"


def test_program_out_on_the_regex_route_runs_on_bare_words(tmp_path):
    path = tmp_path / "ends.cr"
    out, err = io.StringIO(), io.StringIO()
    assert main(["predict", "--regex", "(a|b)*bb", "--alphabet", "ab", "--schemes", "ape", "--program-out",
                 str(path), "--no-cache", "-q"], out, err) == 0, err.getvalue()
    dfa = from_regex("(a|b)*bb", "ab")
    inputs = [w for w in words(("a", "b"), 7) if w]
    lines = "\n".join(" ".join(w) for w in inputs) + "\n"
    ran = io.StringIO()
    import sys

    stdin, sys.stdin = sys.stdin, io.StringIO(lines)
    try:
        assert main(["run", str(path), "--no-cache"], ran, io.StringIO()) == 0
    finally:
        sys.stdin = stdin
    verdicts = ran.getvalue().split()
    assert verdicts == ["accept" if dfa.accepts(w) else "reject" for w in inputs]


def test_program_out_refuses_a_batch_and_an_undetermined_scheme(tmp_path):
    listed = tmp_path / "list.txt"
    listed.write_text("(aa)*\n")
    err = io.StringIO()
    assert main(["predict", "--regex-file", str(listed), "--alphabet", "a", "--program-out",
                 str(tmp_path / "p.cr")], io.StringIO(), err) == 1
    assert "--program-out" in err.getvalue()
    err = io.StringIO()
    assert main(["predict", "--regex", "a*(ba*ba*)*", "--alphabet", "ab", "--schemes", "ape", "--quick",
                 "--no-synthesis", "--no-cache", "-q", "--program-out", str(tmp_path / "q.cr")],
                io.StringIO(), err) == 1
    assert "no verified program" in err.getvalue() and not (tmp_path / "q.cr").exists()


def test_window_letters_only_where_they_occur():
    """The product keeps only transitions whose letters can occur in their state: a window never
    disagrees with the symbols just read (checked on every reachable state)."""
    found = search(from_regex("(1|01|001)*(()|0|00)", "01")).product
    for state, out in enumerate(found.edges):
        befores = {(found.letters[k].before, found.letters[k].residue) for k, _ in out}
        assert len(befores) <= 1
        for k, target in out:
            if found.edges[target]:
                (nxt, _), = {(found.letters[j].before, found.letters[j].residue) for j, _ in found.edges[target]}
                assert nxt == (found.letters[k].before + (found.letters[k].symbol,))[1:]
    assert any(len(set(itertools.chain(out))) for out in found.edges)




@given(st.integers(1, 6), st.integers(1, 5_000))
def test_exhaustive_lengths_are_bounded_by_symbols(letters, budget):
    """longest_within against the words themselves: every word up to the length fits the symbol
    budget (the empty word counts one), and one more length does not."""
    from tasks.regular.dfa import longest_within

    def symbols(length: int) -> int:
        return 1 + sum(n * letters ** n for n in range(1, length + 1))

    n = longest_within(letters, budget)
    assert symbols(n) <= budget < symbols(n + 1)
    assert longest_within(letters, budget, cap=2) == min(n, 2)


def test_an_agreement_over_one_letter_checks_words_of_hundreds_not_thousands_of_symbols():
    """One letter used to mean every word up to 20,000 symbols (2 x 10^8 in all)."""
    from tasks.regular.dfa import longest_within
    from tasks.regular.positional import EXHAUSTIVE_SYMBOLS, agreement, bare_program

    dfa = from_regex("(aa)*", "a")
    found = agreement(bare_program(dfa), dfa, framed=False, sampled=5)
    assert found.ok and found.exhaustive_length == longest_within(1, EXHAUSTIVE_SYMBOLS) < 1_000
