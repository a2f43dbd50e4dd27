"""Every source of evidence is sound where "does not generalize" is false: on finite languages (a
plain Python reference, and a regular expression with its own automaton), on count thresholds
``#a >= c`` and ``#a > #b + d`` (accept and one-token seq2seq tasks) and on random C-RASP programs
taken as tasks, all of which are expressible (plain C-RASP for the first two; a program is its own
witness), no source may claim "does not generalize" for APE or NoPE (for APE only, where the
program reads periodic predicates or local guards: NoPE may then legitimately fail). Each source
is called directly for every scheme it speaks to, since :func:`predict` stops gathering once a
scheme is settled and would hide an unsound source behind a sound one; the whole prediction is
checked too."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tasks
from crasp import ast
from crasp.checker import check
from crasp.interpreter import run
from crasp.printer import format_program
from crasp.strategies import programs as random_programs
from tasks import catalogue
from tasks.evidence import SOURCES, Evidence
from tasks.evidence.guard import guarded, watchdog
from tasks.evidence.reference import check_reference
from tasks.findings import QUICK, Verdict
from tasks.predict import predict
from tasks.regular import regex_task

BUDGET = dataclasses.replace(QUICK, pairs=1 << 12, comm_samples=128, seconds=1.0)
BOTH = frozenset({"ape", "nope"})
ALPHABETS = (("a", "b"), ("a", "b", "c"))
SEEDS = st.integers(0, 10**6)


def examples(count: int) -> settings:
    """Few examples each (every one runs each source and a whole prediction, about a second)."""
    return settings(max_examples=count, deadline=None, suppress_health_check=list(HealthCheck))


def failures(task: tasks.Task, seed: int, schemes: frozenset[str] = BOTH) -> list[str]:
    """Every claim of "does not generalize" for ``schemes``: each source's own, asked directly for
    every scheme it speaks to, then the whole prediction's verdicts."""
    found = []
    with watchdog():
        guarded_task = guarded(task, BUDGET.reference_seconds)
        check_reference(guarded_task, inputs=60, seed=seed)
        evidence = Evidence(guarded_task, BUDGET, seed=seed, synthesis=False)
        for source in SOURCES:
            for scheme in sorted(source.schemes):
                finding = source.assess(evidence, scheme)
                if scheme in schemes and finding.decisive and finding.claim is Verdict.FAILS:
                    found.append(f"source {source.name!r}, {scheme}: {finding.summary}")
    prediction = predict(task, budget=BUDGET, seed=seed, synthesis=False)
    for scheme in sorted(schemes):
        verdict = prediction.verdict(scheme)
        if verdict.verdict is Verdict.FAILS:
            found.append(f"predict, {scheme}: {verdict.headline}")
    return found


def _uniform(symbols):
    return lambda n, rng: tuple(rng.choice(symbols, size=n))


# ---------------------------------------------------------------- finite languages

WORDS = st.lists(st.sampled_from("abc"), max_size=4).map(tuple)


def finite_task(words: frozenset[tuple[str, ...]]) -> tasks.Task:
    """Membership in ``words`` as a user writes it: a Python reference (no automaton), drawing a
    member of the asked length half of the time where there is one."""
    symbols = ("a", "b", "c")

    def sample(n, rng):
        members = sorted(w for w in words if len(w) == n)
        if members and rng.random() < 0.5:
            return members[rng.integers(len(members))]
        return tuple(rng.choice(symbols, size=n))

    return tasks.Task(name="finite_language", family="user", format=tasks.Format.ACCEPT, symbols=symbols,
                      outputs=(), sample_input=sample, answer=lambda x: tuple(x) in words,
                      valid=lambda x: True, train_range=(0, 20), bins=((0, 20), (21, 40)), min_length=0,
                      separator=None)


def finite_regex(words: frozenset[tuple[str, ...]]) -> str:
    """The union of ``words`` as a regular expression (``()`` is the empty word)."""
    return "|".join("".join(w) or "()" for w in sorted(words))


@examples(6)
@given(st.frozensets(WORDS, max_size=6), SEEDS)
def test_no_source_calls_a_finite_language_a_failure(words, seed):
    assert failures(finite_task(words), seed) == [], sorted(words)


@examples(6)
@given(st.frozensets(WORDS, min_size=1, max_size=6), SEEDS)
def test_no_source_calls_a_finite_regular_expression_a_failure(words, seed):
    task = regex_task(finite_regex(words), "abc")
    assert task.automaton is not None
    assert all(task.answer(w) for w in words) and not task.answer(("a",) * 5)
    assert failures(task, seed) == [], finite_regex(words)


# ---------------------------------------------------------------- thresholds


def threshold_task(rule, symbols: tuple[str, ...], accept: bool) -> tasks.Task:
    """``rule(x)`` as an accept task or a one-token seq2seq task (y/n), defined with ``@tasks.task``
    and taken out of the registry (other tests iterate over the suite)."""
    name = "soundness_threshold"
    if accept:
        tasks.task(name, symbols=symbols, format="accept", sampler=_uniform(symbols), replace=True)(rule)
    else:
        tasks.task(name, symbols=symbols, outputs=("y", "n"), sampler=_uniform(symbols), replace=True)(
            lambda x: ("y" if rule(x) else "n",))
    return catalogue._REGISTRY.pop(name)


@examples(6)
@given(st.integers(0, 12), st.sampled_from(ALPHABETS), st.booleans(), SEEDS)
def test_no_source_calls_at_least_c_a_failure(c, symbols, accept, seed):
    task = threshold_task(lambda x: x.count("a") >= c, symbols, accept)
    assert failures(task, seed) == [], (f"#a >= {c}", symbols, task.format.value)


@examples(6)
@given(st.integers(-3, 3), st.sampled_from(ALPHABETS), st.booleans(), SEEDS)
def test_no_source_calls_more_a_than_b_plus_d_a_failure(d, symbols, accept, seed):
    task = threshold_task(lambda x: x.count("a") > x.count("b") + d, symbols, accept)
    assert failures(task, seed) == [], (f"#a > #b + {d}", symbols, task.format.value)


def test_the_check_reports_every_claim_of_failure_where_there_are_some():
    """The control: counting a's modulo 2 is outside C-RASP[periodic, local], and both the sources
    and the prediction say so, so an empty list above means no source claimed a failure."""
    found = failures(threshold_task(lambda x: x.count("a") % 2 == 0, ("a", "b"), accept=True), seed=0)
    claims = {line.split(":")[0] for line in found}
    assert {"source 'modular counting', ape", "source 'modular counting', nope", "predict, ape",
            "predict, nope"} <= claims, found


# ---------------------------------------------------------------- random programs


def program_task(program: ast.Program, symbols: tuple[str, ...]) -> tasks.Task:
    """The task whose reference is ``program`` run by the interpreter (at offset 0)."""
    checked = check(program)
    alphabet = (*symbols, "<bos>")

    def answer(x):
        return bool(run(checked, [("<bos>", *x)], alphabet=alphabet).accept[0])

    def batch(ids):
        inputs = [("<bos>", *(symbols[k] for k in row)) for row in ids.tolist()]
        return run(checked, inputs, alphabet=alphabet).accept.astype(np.int64)[:, None]

    return tasks.Task(name="random_program_task", family="user", format=tasks.Format.ACCEPT, symbols=symbols,
                      outputs=(), sample_input=_uniform(symbols), answer=answer, valid=lambda x: True,
                      train_range=(0, 20), bins=((0, 20), (21, 40)), min_length=1, separator=None,
                      batch_answer=batch)


def programs_over(positions: bool):
    """(program, alphabet): plain C-RASP, or with periodic predicates and local guards allowed."""
    return st.sampled_from(ALPHABETS).flatmap(lambda symbols: st.tuples(
        random_programs(alphabet=symbols, outputs="accept", periodic=positions, local=positions,
                        max_definitions=4, max_depth=2), st.just(symbols)))


@examples(6)
@given(programs_over(positions=False), SEEDS)
def test_no_source_calls_a_plain_program_a_failure(drawn, seed):
    program, symbols = drawn
    assert check(program).info.plain
    assert failures(program_task(program, symbols), seed) == [], format_program(program)


@examples(6)
@given(programs_over(positions=True), SEEDS)
def test_no_source_calls_a_program_with_positions_an_ape_failure(drawn, seed):
    program, symbols = drawn
    schemes = BOTH if check(program).info.plain else frozenset({"ape"})
    assert failures(program_task(program, symbols), seed, schemes) == [], format_program(program)
