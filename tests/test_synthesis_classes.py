"""Synthesis of one-token answers chosen among three classes by comparing counts, and of counter
languages (a^n b^n, a^n b^n c^n, a^n b^m c^(n+m)), at the default budget, from the relation atoms
(tasks.synthesis.atoms.relation_atoms). Each task is declared as a user declares one; each program
found is run by the interpreter against the reference on inputs enumerated here."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
import tasks
from crasp import ast
from crasp.checker import check
from tasks import catalogue
from tasks.registry import Example
from tasks.synthesis import SynthesisConfig, synthesize

TASKS = {}


def user_task(name, **options):
    """``@tasks.task``, keeping the task here instead of in the registry."""
    def define(reference):
        tasks.task(name, replace=True, **options)(reference)
        TASKS[name] = catalogue._REGISTRY.pop(name)
        return reference
    return define


def words(symbols, max_length):
    return [x for n in range(max_length + 1) for x in itertools.product(symbols, repeat=n)]


def uniform(symbols):
    return lambda n, rng: tuple(str(s) for s in rng.choice(list(symbols), size=n))


def counts(x, symbols="abc"):
    return tuple(x.count(s) for s in symbols)


# ---------------------------------------------------------------- one token among three classes


def unique_maximum(x):
    ranked = sorted(counts(x), reverse=True)
    return ranked[0] > ranked[1]


def with_unique_maximum(n, rng):
    while True:
        x = uniform("abc")(n, rng)
        if unique_maximum(x):
            return x


@user_task("most_frequent", symbols=("a", "b", "c"), sampler=with_unique_maximum, valid=unique_maximum)
def most_frequent(x):
    """The letter that occurs most often (inputs have one)."""
    return ("abc"[int(np.argmax(counts(x)))],)


@user_task("three_way", symbols=("a", "b", "c"), outputs=("x", "y", "z"), sampler=uniform("abc"))
def three_way(x):
    """x if #a > #b, y if #a == #b, z otherwise."""
    a, b, _ = counts(x)
    return ("x",) if a > b else ("y",) if a == b else ("z",)


def one_token_answers(program, inputs, answer, offset=0):
    """The program's answer after the separator and what it says after that, by the interpreter."""
    framed = [("<bos>", *x, "<sep>", *answer(x)) for x in inputs]
    result = crasp.run(program, framed, offset=offset, raw=True)
    return [tuple(result.next_tokens(row)[len(tokens) - 2:len(tokens)]) for row, tokens in enumerate(framed)]


@pytest.mark.parametrize("name", ["most_frequent", "three_way"])
@pytest.mark.parametrize("positions", ["ape", "nope"])
def test_one_token_answers_among_three_classes(name, positions):
    task = TASKS[name]
    result = synthesize(task, SynthesisConfig(positions=positions))
    assert result.found, result.searched
    rng = np.random.default_rng(1)
    inputs = [x for x in words("abc", 7) if task.valid(x) and x] + [task.sample_input(n, rng) for n in range(8, 300, 7)]
    for offset in {0, 1, check(result.program).info.period - 1, 1001}:
        got = one_token_answers(result.program, inputs, task.answer, offset)
        assert got == [(*task.answer(x), "<eos>") for x in inputs], offset


def test_three_classes_read_as_a_decision_list():
    """One class at a time (``<eos>`` first), each a conjunction of at most two comparisons of
    the input's counts (``In_a > In_b``), or "none of the others"."""
    lines = []
    result = synthesize(TASKS["most_frequent"], SynthesisConfig(), progress=lines.append)
    assert any("searching the others with it among the atoms" in line for line in lines)
    for statement in check(result.program).program.statements:
        if isinstance(statement, ast.NextToken) and statement.token in ("a", "b", "c"):
            comparisons = [n for n in ast.walk(statement.expr) if isinstance(n, ast.Compare)]
            assert len(comparisons) <= 2 or isinstance(statement.expr, ast.Not), result.text
            assert all(isinstance(n.left, ast.Ref) and n.left.name.startswith("In_") for n in comparisons)


# ---------------------------------------------------------------- counter languages


def blocks(sizes, symbols="abc"):
    return tuple(s for s, k in zip(symbols, sizes) for _ in range(k))


def in_blocks(x, symbols="abc"):
    return tuple(x) == blocks(counts(x, symbols), symbols)


def language(name, symbols, member, members):
    """An accept task: ``member(x)`` says whether x is in; ``members(n)`` lists the block sizes
    of its words of length n. Its sampler draws a word of the language half of the time where
    there is one, else a near miss (blocks in order with two neighbours swapped) or any word."""
    def sample(n, rng):
        sizes = members(n)
        if sizes and rng.random() < 0.5:
            return blocks(sizes[rng.integers(len(sizes))], symbols)
        if rng.random() < 0.5:
            cuts = np.sort(rng.integers(0, n + 1, size=len(symbols) - 1))
            x = list(blocks(np.diff([0, *cuts, n]), symbols))
            if n > 1:
                k = int(rng.integers(n - 1))
                x[k], x[k + 1] = x[k + 1], x[k]
            return tuple(x)
        return uniform(symbols)(n, rng)

    user_task(name, symbols=tuple(symbols), format="accept", min_length=0, sampler=sample)(member)


language("a_n_b_n", "ab", lambda x: in_blocks(x, "ab") and x.count("a") == x.count("b"),
         lambda n: [] if n % 2 else [(n // 2, n // 2)])
language("a_n_b_n_c_n", "abc", lambda x: in_blocks(x) and len(set(counts(x))) == 1,
         lambda n: [] if n % 3 else [(n // 3,) * 3])
language("a_n_b_m_c_n_plus_m", "abc", lambda x: in_blocks(x) and x.count("a") + x.count("b") == x.count("c"),
         lambda n: [] if n % 2 else [(i, n // 2 - i, n // 2) for i in range(n // 2 + 1)])


def near_words(symbols, top):
    """Words of blocks in order with counts near each other, and each with two neighbours swapped."""
    found = set()
    for sizes in itertools.product(range(top + 1), repeat=len(symbols)):
        x = blocks(sizes, symbols)
        found.add(x)
        for k in range(len(x) - 1):
            found.add(x[:k] + (x[k + 1], x[k]) + x[k + 2:])
    return sorted(found, key=lambda x: (len(x), x))


@pytest.mark.parametrize("name", ["a_n_b_n", "a_n_b_n_c_n", "a_n_b_m_c_n_plus_m"])
@pytest.mark.parametrize("positions", ["ape", "nope"])
def test_counter_languages(name, positions):
    task = TASKS[name]
    result = synthesize(task, SynthesisConfig(positions=positions))
    assert result.found, result.searched
    symbols = "".join(task.symbols)
    inputs = words(symbols, 7) + near_words(symbols, 9)
    inputs += [blocks(sizes, symbols) for n in range(10, 60, 7) for sizes in ((n,) * 3, (n, n + 1, n), (n, 2 * n, 3 * n))]
    want = [bool(task.answer(x)) for x in inputs]
    assert 20 <= sum(want) < len(want) - 100
    for offset in {0, 1, check(result.program).info.period - 1, 777}:
        got = crasp.run(result.program, inputs, offset=offset).accept.tolist()
        assert got == want, offset


# ---------------------------------------------------------------- the atoms


def relation_reference(name, prefix):
    """A relation atom's value after ``prefix`` (the input's symbols so far), from its name."""
    if " before " in name:  # every x before every y
        x, y = name.split(" before ")
        return all(not (a == y and b == x) for a, b in itertools.combinations(prefix, 2))
    if "#" not in name:  # the blocks in the order named
        order = name.split()
        rank = [order.index(s) for s in prefix]
        return rank == sorted(rank)
    left, op, right = name.replace(" + ", "+").split()
    total = sum(prefix.count(s) for s in left.replace("#", "").split("+"))
    other = prefix.count(right[1:])
    return {"<": total < other, "==": total == other, ">": total > other}[op]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from("abc"), max_size=10), st.lists(st.sampled_from("abc"), max_size=4))
def test_relation_atoms_are_what_they_say(x, y):
    """At every position, in an accept task (the whole prefix) and in a seq2seq one (the input's
    symbols before the separator only)."""
    from tasks.synthesis.atoms import evaluate, relation_atoms
    from tasks.synthesis.evaluator import Batch

    for task, tokens in ((TASKS["a_n_b_n_c_n"], ("<bos>", *x)), (TASKS["three_way"], ("<bos>", *x, "<sep>", *y))):
        atoms = relation_atoms(task)
        assert len(atoms) == 3 * 3 + 3 + 2 + 6
        batch = Batch([(Example(tokens, (), (), len(x)), 5)], task.alphabet, seed=0)
        for atom, values in zip(atoms, evaluate(atoms, batch)):
            inputs = [tuple(t for t in tokens[1:k + 1] if t in "abc")[:len(x)] for k in range(len(tokens))]
            assert values.tolist() == [relation_reference(atom.name, p) for p in inputs], (atom.name, tokens)


def test_relation_atoms_are_seeded_where_they_bear_on_an_output():
    from tasks.synthesis.atoms import bears_on, relation_atoms
    from tasks.synthesis.examples import Output

    names = [a.name for a in relation_atoms(TASKS["a_n_b_n"])]
    assert names == ["#a < #b", "#a == #b", "#a > #b", "a before b", "b before a"]
    assert relation_atoms(tasks.get("majority")) == ()  # 26 symbols
    where = np.arange(6)
    output = Output("accept", where, np.array([1, 1, 0, 0, 0, 0], bool))
    necessary, sufficient = np.array([1, 1, 1, 0, 0, 0], bool), np.array([1, 0, 0, 0, 0, 0], bool)
    crossing, constant = np.array([1, 0, 1, 0, 0, 0], bool), np.ones(6, bool)
    assert bears_on(necessary, [output]) and bears_on(sufficient, [output])
    assert bears_on(~necessary, [output]) and bears_on(~sufficient, [output])
    assert not bears_on(crossing, [output]) and not bears_on(constant, [output])
    lines = []
    synthesize(TASKS["a_n_b_n_c_n"], SynthesisConfig(), progress=lines.append)
    # The three equalities and the six strict comparisons (false on every word of the language),
    # "a b c" and the three pairs in that order; not the sums (true on the empty word, false on
    # abc), "c b a" or the pairs reversed (true on the empty word, false on abc, both rejected too).
    assert lines[0].endswith("1 output to find, 13 atoms")
