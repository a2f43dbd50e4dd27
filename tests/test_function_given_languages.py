"""A language given as a Python function reaches every construction its regular expression
reaches: the learned automaton (L*, checked minimal, complete and stable) goes through the same
regular decision, positional construction and synthesis as the expression's own, so the verdicts
agree (the strengths may not: a learned automaton is an extrapolation, the task's own a proof);
and languages defined by forbidden and required factors (random ones over up to six symbols, and
two over nine and ten) get their APE program."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import tasks
from crasp.interpreter import accepts
from tasks import catalogue
from tasks.predict import predict
from tasks.regular import regex_task

EXPRESSIONS = [
    ("(a|b)*aa(a|b)*", "ab"),  # a required factor: local, outside plain C-RASP
    ("((a|b|c)*(ab|ca)(a|b|c)*)?", "abc"),  # forbidden factors, or the empty word
    ("b(a|b)*a", "ab"),  # first and last symbols
    ("(a|b)*a(a|b)(a|b)", "ab"),  # the third symbol from the end
    ("((a|b)(a|b))*", "ab"),  # even length: the position mod 2
    ("(b|c)*a(b|c)*", "abc"),  # exactly one a: plain C-RASP
    ("a*b*c*", "abc"),  # blocks in order: plain C-RASP
    ("(b*ab*a)*b*", "ab"),  # an even number of a's: modular counting
]


def function_twin(regex: str, alphabet: str) -> tasks.Task:
    """The expression's task with its automaton taken away: the reference is Python's re."""
    pattern = re.compile(regex)
    return dataclasses.replace(regex_task(regex, alphabet), name=f"function {regex}", automaton=None,
                               batch_answer=None, answer=lambda x: pattern.fullmatch("".join(x)) is not None)


@pytest.mark.parametrize(("regex", "alphabet"), EXPRESSIONS)
def test_a_language_gets_the_same_verdicts_as_a_function_and_as_an_expression(regex, alphabet):
    given_as_regex = predict(regex_task(regex, alphabet), synthesis=False)
    given_as_function = predict(function_twin(regex, alphabet), synthesis=False)
    for scheme in ("ape", "nope"):
        ours, theirs = given_as_function.verdict(scheme), given_as_regex.verdict(scheme)
        assert ours.verdict is theirs.verdict, (scheme, ours.headline, theirs.headline)
        assert ours.verdict.value != "undetermined", (scheme, ours.headline)


def factor_language(symbols: tuple[str, ...], forbidden: tuple[str, ...], required: str | None):
    def reference(x):
        word = "".join(x)
        return not any(f in word for f in forbidden) and (required is None or required in word)
    return reference


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(2, 6).flatmap(lambda k: st.tuples(
    st.just(k),
    st.lists(st.text("abcdefghij"[:k], min_size=2, max_size=3), min_size=1, max_size=2, unique=True),
    st.one_of(st.none(), st.text("abcdefghij"[:k], min_size=2, max_size=2)))))
@example((9, ["cbb"], "aa")).via("large alphabets: exhaustive words stop at 4, longer random ones teach the rest")
@example((10, ["ab", "ca"], "bb")).via("large alphabets")
@example((9, ["af", "big"], "ad")).via("'big' before 'ad' escapes the learner: the program's counterexample teaches it")
def test_factor_languages_given_as_functions_get_their_ape_program(drawn):
    """Random forbidden and required factors over 2 to 6 symbols, and three over 9 and 10 (where a
    rare factor can escape the learner's random words: the program built from its automaton then
    fails verification, and its counterexample joins the learner's words)."""
    k, forbidden, required = drawn
    symbols = tuple("abcdefghij"[:k])
    reference = factor_language(symbols, tuple(forbidden), required)
    name = f"factors_{k}_{'_'.join(forbidden)}_{required}"
    tasks.task(name, symbols=symbols, format="accept", replace=True,
               sampler=lambda n, rng: tuple(rng.choice(list(symbols), size=n)))(reference)
    task = catalogue._REGISTRY.pop(name)
    verdict = predict(task, schemes=["ape"], synthesis=False).verdict("ape")
    assert verdict.verdict.value == "generalizes", verdict.headline
    program = next(f.program for f in verdict.findings if f.program is not None and f.claim is verdict.verdict)
    rng = np.random.default_rng(0)
    for _ in range(40):  # the program against the reference, on words the prediction did not choose
        word = tuple(rng.choice(list(symbols), size=int(rng.integers(1, 60))))
        if rng.random() < 0.5 and required:
            cut = int(rng.integers(0, len(word) + 1))
            word = word[:cut] + tuple(required) + word[cut:]
        assert accepts(program, ("<bos>", *word)) == reference(word), word


@pytest.mark.parametrize(("regex", "alphabet", "wrong"), [
    ("(b|c)*a(b|c)*", "abc", "(a|b|c)*a(a|b|c)*"),  # in C-RASP: the plain program is built, then refuted
    ("(a|b)*aa(a|b)*", "ab", "(a|b)*aaa(a|b)*"),  # outside: the positional program is built, then refuted
])
def test_a_learned_automaton_refuted_by_its_program_is_learned_again(regex, alphabet, wrong):
    """A learned automaton that is wrong (planted here) gives a program that fails verification;
    its counterexample joins the learner's words, and the program built again verifies."""
    from tasks.evidence import regular
    from tasks.evidence.context import Evidence
    from tasks.evidence.positional import construct
    from tasks.findings import DEFAULT
    from tasks.regular import from_regex

    task = function_twin(regex, alphabet)
    evidence = Evidence(task, DEFAULT, (), 0, None, False)
    evidence.keep(regular.automata, regular.Automata(((True, (from_regex(wrong, alphabet),)),), "planted", False,
                                                     False, True))
    built = regular.construct(evidence) if regular.buildable([from_regex(regex, alphabet)]) else construct(evidence)
    checked = built if isinstance(built, regular.programs.Checked) else built.checked
    assert checked is not None and checked.ok
    learned = evidence.get(regular.automata)
    assert learned.languages[0][1][0] == from_regex(regex, alphabet) and len(learned.counterexamples) == 1
    (word,) = learned.counterexamples  # the planted automaton and the reference differ on it
    assert from_regex(wrong, alphabet).accepts(word) != (re.fullmatch(regex, "".join(word)) is not None)
    if isinstance(built, regular.programs.Checked):  # the plain case: the NoPE decision follows the new automaton
        again = Evidence(task, DEFAULT, (), 0, None, False)
        again.keep(regular.automata, regular.Automata(((True, (from_regex(wrong, alphabet),)),), "planted", False,
                                                      False, True))
        assert regular.assess(again, "nope").claim.value == "generalizes"
