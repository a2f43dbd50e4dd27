"""tasks.regular: regex parser, minimal DFAs, the C-RASP (NoPE) decider, the learner and tasks.

The decider is checked against every labelled row of tasks/data/regular_languages.csv, against a
literal second implementation of the published method (simple cycles, exact null spaces with
sympy, relabelling by potentials: slow, but independent of the cycle-space shortcut) on random
small automata, and against the algebraic necessary and sufficient conditions.
"""

from __future__ import annotations

import collections
import itertools
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp.checker import check
from crasp.interpreter import run_in_chunks
from tasks.registry import Format, TaskError
from tasks.regular import (
    Dfa,
    RegexError,
    algebraic_class,
    aperiodic,
    decide_nope,
    decide_nope_last_position,
    dfa_task,
    from_regex,
    from_table,
    languages,
    learn,
    minimize,
    parse_regex,
    program_for,
    regex_task,
    words,
)
from tasks.regular.decide import PROCEDURE

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- random regexes


def regex_texts(alphabet: str = "ab", max_leaves: int = 7) -> st.SearchStrategy[str]:
    """Random expressions in the syntax shared with Python's re (no stacked postfix operators:
    Python 3.11 reads ``a*+`` as possessive)."""
    leaves = st.one_of(st.sampled_from(list(alphabet)), st.sampled_from([f"[{alphabet[:2]}]", ".", "()"]))

    def extend(children):
        return st.one_of(
            st.tuples(children, children).map("".join),
            st.tuples(children, children).map(lambda p: f"({p[0]}|{p[1]})"),
            children.map(lambda c: f"({c})*"),
            children.map(lambda c: f"({c})+"),
            children.map(lambda c: f"({c})?"),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def word_ids(alphabet: str, max_length: int) -> list[tuple[str, ...]]:
    return list(words(tuple(alphabet), max_length))


def agrees_with_re(text: str, alphabet: str, max_length: int) -> list[str]:
    dfa, pattern = from_regex(text, alphabet), re.compile(text)
    return ["".join(w) for w in word_ids(alphabet, max_length)
            if dfa.accepts(w) != bool(pattern.fullmatch("".join(w)))]


# ---------------------------------------------------------------- a literal second decider


def literal_decider(dfa: Dfa) -> bool:
    """The published method step by step, for small automata: in each strongly connected
    component, the simple cycles' Parikh vectors over the current edge labels, their exact null
    space (sympy), potentials from a root, and new labels (potential of the source plus the label's
    weight, old label); transitions that leave the component (for letters used inside it) carry
    labels too but lie on no cycle; parallel edges stay distinct. Stop when the labels stop
    splitting; the component passes iff no two states have the same set of outgoing labels."""
    graph = nx.DiGraph((q, t) for q, row in enumerate(dfa.table) for t in row)
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        states = sorted(component)
        inner = sorted({k for q in states for k, t in enumerate(dfa.table[q]) if t in component})
        edges = [(q, dfa.table[q][k] if dfa.table[q][k] in component else None) for q in states for k in inner]
        labels: list = [k for _ in states for k in inner]
        between = collections.defaultdict(list)
        for i, (u, v) in enumerate(edges):
            if v is not None:
                between[u, v].append(i)
        cycles = [combo for cycle in nx.simple_cycles(graph.subgraph(states))
                  for combo in itertools.product(*(between[cycle[j], cycle[(j + 1) % len(cycle)]]
                                                   for j in range(len(cycle))))]
        while True:
            distinct = sorted(set(labels), key=repr)
            column = {label: j for j, label in enumerate(distinct)}
            parikh = sympy.zeros(len(cycles), len(distinct))
            for r, cycle in enumerate(cycles):
                for i in cycle:
                    parikh[r, column[labels[i]]] += 1
            basis = parikh.nullspace()
            weight = {label: tuple(b[column[label]] for b in basis) for label in distinct}
            potential = {states[0]: tuple(0 for _ in basis)}
            frontier = [states[0]]
            while frontier:
                u = frontier.pop()
                for i, (a, v) in enumerate(edges):
                    if a == u and v is not None and v not in potential:
                        potential[v] = tuple(x + y for x, y in zip(potential[u], weight[labels[i]]))
                        frontier.append(v)
            new = [(tuple(x + y for x, y in zip(potential[u], weight[labels[i]])), labels[i])
                   for i, (u, _) in enumerate(edges)]
            splits = len(set(new)) > len(set(labels))
            labels = new
            if not splits:
                break
        outgoing = {q: frozenset(labels[i] for i, (u, _) in enumerate(edges) if u == q) for q in states}
        if len(set(outgoing.values())) < len(states):
            return False
    return True


# ---------------------------------------------------------------- (1) the labelled data


def test_every_row_of_the_data_set_agrees():
    rows = languages()
    assert len(rows) == 847 and sum(r.nope for r in rows) == 409
    mismatches = []
    for row in rows:
        decision = decide_nope(from_regex(row.regex, row.alphabet))
        if decision.member != row.nope:
            mismatches.append(f"{row.regex} over {row.alphabet}: label {row.nope}, decided {decision.member} "
                              f"({decision.criterion})")
    assert not mismatches, f"{len(mismatches)} of {len(rows)} rows disagree:\n" + "\n".join(mismatches)


def test_data_notes_agree_sizes_classes_and_criteria():
    """The note's minimal DFA size and monoid class, and which test settles each row."""
    expected_criterion = {"R-trivial": "R-trivial", "C-RASP not R-trivial": PROCEDURE,
                          "R^omega but not C-RASP": PROCEDURE, "aperiodic, not R^omega": "fails R^omega",
                          "not aperiodic": "not aperiodic"}
    expected_class = {"C-RASP not R-trivial": "R^omega", "R^omega but not C-RASP": "R^omega"}
    problems = []
    for row in languages():
        dfa = from_regex(row.regex, row.alphabet)
        size = int(re.search(r"min DFA (\d+) states", row.note).group(1))
        note_class = row.note.split(";")[0].removeprefix("class: ")
        decision = decide_nope(dfa)
        got = (dfa.n_states, decision.criterion, algebraic_class(dfa))
        want = (size, expected_criterion[note_class], expected_class.get(note_class, note_class))
        if got != want:
            problems.append(f"{row.regex}: {got} != {want}")
    assert not problems, "\n".join(problems[:20])


def test_data_file_is_the_shared_file_with_a_header():
    ours = (Path(__file__).parents[1] / "tasks" / "data" / "regular_languages.csv").read_text()
    first, rest = ours.split("\n", 1)
    assert first.startswith("# Regular languages with published C-RASP labels") and "2608.13433" in first
    shared = Path("/work/shared/data/regular/languages.csv")
    if shared.exists():
        assert rest == shared.read_text()


def test_published_examples_and_the_upstream_parallel_edge_bug():
    # Table 1 / the decider's own test list (union written | here)
    cases = {"(aa(ba)*abb(ab)*b)*": True, "(a|b)*bb(a|b)*": False, "(a|b)*b": False, "(aa*bb*)(aa*bb*)*": False,
             "(aa*bb*)(aa*bb*)(aa*bb*)": True, "((ab)(ab)*bb*)*": False, "(ab|ba)*": True, "(ab|bba)*": False,
             "(ab|aabb)*": False, "(ab)(ab)*b(ab)(ab)*": True}
    for text, label in cases.items():
        assert decide_nope(from_regex(text, "ab")).member is label, text
    # two letters from one state to another: crasp_reg@71daa01 merges them and says yes; Table 1 says no
    assert decide_nope(from_regex("(cab|c)*", "abc")).member is False


def test_decisions_carry_their_evidence():
    yes = decide_nope(from_regex("(ab|ba)*", "ab"))
    assert yes.criterion == PROCEDURE and yes.obstruction is None
    assert "component {0, 1, 2}" in yes.certificate and "balanced potentials" in yes.certificate
    group = decide_nope(from_regex("(aa)*", "a"))
    assert group.criterion == "not aperiodic" and "'a' permutes the states 0 -> 1 -> 0" in group.obstruction
    gap = decide_nope(from_regex("(ab|bba)*", "ab"))
    assert gap.criterion == PROCEDURE and "not separated by any balanced counting term" in gap.obstruction
    assert "R^omega holds" in gap.certificate
    two = decide_nope(from_regex("(a*c)*", "abc"))
    assert two.criterion == "fails R^omega" and "idempotents" in two.obstruction
    assert all(d.references for d in (yes, group, gap, two))


# ---------------------------------------------------------------- (2) the parser against Python's re


def test_parser_matches_re_on_a_sample_of_rows():
    rows = languages()
    sample = [r for k, r in enumerate(rows) if k % 25 == 0 or len(r.alphabet) != 3]
    for row in sample:
        length = 6 if len(row.alphabet) <= 3 else 4
        assert not agrees_with_re(row.regex, row.alphabet, length), row.regex


@SETTINGS
@given(text=regex_texts("abc"))
def test_parser_matches_re_on_random_regexes(text):
    assert not agrees_with_re(text, "abc", 5), text


def test_character_classes_and_postfix_operators():
    for text in ("[a-c]*b?", "[^a]+|a", ".a.", "(a|())c+", "[ab][bc]"):
        assert not agrees_with_re(text, "abc", 5), text
    assert from_regex("a**", "ab") == from_regex("a*", "ab")
    assert from_regex("a+?", "ab") == from_regex("a*", "ab")


# ---------------------------------------------------------------- (3) properties of the decision


@SETTINGS
@given(text=regex_texts("ab"), other=regex_texts("ab"))
def test_decision_is_invariant(text, other):
    member = decide_nope(from_regex(text, "ab")).member
    # renaming the symbols, and the order of the alphabet
    assert decide_nope(from_regex(text.translate(str.maketrans("ab", "ba")), "ab")).member is member
    assert decide_nope(from_regex(text, "ba")).member is member
    # equivalent rewrites give the identical canonical automaton
    assert from_regex(f"({text}|{other})", "ab") == from_regex(f"({other}|{text})", "ab")
    assert from_regex(f"({text})**", "ab") == from_regex(f"({text})*", "ab")
    # a symbol that is never used, the empty word, the complement (C-RASP can test emptiness and negate)
    if "." not in text:  # '.' is any symbol of the alphabet: over {a, b, c} it reads c too
        assert decide_nope(from_regex(text, "abc")).member is member
    assert decide_nope(from_regex(f"{text}|()", "ab")).member is member
    assert decide_nope(from_regex(text, "ab").complement()).member is member


@SETTINGS
@given(text=regex_texts("ab"), other=regex_texts("ab"))
def test_decision_is_closed_under_boolean_operations(text, other):
    first, second = from_regex(text, "ab"), from_regex(other, "ab")
    if decide_nope(first).member and decide_nope(second).member:
        assert decide_nope(from_regex(f"({text})|({other})", "ab")).member
        product = {((p, q), s): (first.table[p][k], second.table[q][k])
                   for p in range(first.n_states) for q in range(second.n_states) for k, s in enumerate("ab")}
        both = {(p, q) for p in first.accepting for q in second.accepting}
        assert decide_nope(from_table("ab", (0, 0), both, product)).member


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alphabet=st.sampled_from(["ab", "abc"]), data=st.data())
def test_decision_agrees_with_the_literal_method_and_the_algebra(alphabet, data):
    text = data.draw(regex_texts(alphabet, max_leaves=8))
    dfa = from_regex(text, alphabet)
    decision = decide_nope(dfa)
    if dfa.n_states <= 12:
        assert literal_decider(dfa) is decision.member, text
    algebra = algebraic_class(dfa)
    if algebra == "R-trivial":
        assert decision.member and decision.criterion == "R-trivial"
    if not decision.member and decision.criterion == PROCEDURE:
        assert algebra == "R^omega"
    if algebra in ("not aperiodic", "aperiodic, not R^omega"):
        assert not decision.member


def test_literal_method_on_every_row():
    """The slow literal method agrees with every label of the data set."""
    mismatches = [row.regex for row in languages() if literal_decider(from_regex(row.regex, row.alphabet)) is not row.nope]
    assert not mismatches


def test_aperiodic():
    assert aperiodic(from_regex("(a|b)*b", "ab")) == (True, None)
    ok, witness = aperiodic(from_regex("((a|b)(a|b))*", "ab"))
    assert not ok and "cycle of length 2" in witness


# ---------------------------------------------------------------- (4) learning


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=regex_texts("ab", max_leaves=6))
def test_learn_recovers_the_minimal_dfa(text):
    target = from_regex(text, "ab")
    if target.n_states > 7:
        return
    learned = learn(target.accepts, "ab", max(2 * target.n_states - 2, 1))
    assert learned.dfa == target, text
    assert learned.queries > 0


def test_learn_agrees_up_to_max_length_and_refuses_too_many_states():
    balanced = learn(lambda w: w.count("a") == w.count("b"), "ab", 6)
    assert all(balanced.dfa.accepts(w) == (w.count("a") == w.count("b")) for w in word_ids("ab", 6))
    with pytest.raises(TaskError, match="no DFA with at most 3 states"):
        learn(lambda w: len(w) % 5 == 0, "a", 10, max_states=3)


# ---------------------------------------------------------------- (5) bad input


@pytest.mark.parametrize("text, column, problem", [
    ("(ab", 4, "expected ')'"),
    ("ab)", 3, "unbalanced ')'"),
    ("", 1, "empty regular expression"),
    ("a|", 3, "empty alternative"),
    ("(|a)", 2, "empty alternative"),
    ("*a", 1, "nothing to repeat"),
    ("ad", 2, "symbol 'd' is not in the alphabet {a, b, c}"),
    ("[ab", 4, "expected ']'"),
    ("[c-a]", 2, "empty range"),
    ("a]", 2, "unbalanced ']'"),
])
def test_regex_errors_name_the_column(text, column, problem):
    with pytest.raises(RegexError) as caught:
        parse_regex(text, "abc")
    assert caught.value.column == column and problem in str(caught.value)
    assert str(caught.value).startswith(f"regex {text!r}: column {column}: ")


def test_bad_alphabets_tables_and_words():
    with pytest.raises(TaskError):
        from_regex("a", "a|")
    with pytest.raises(TaskError):
        from_regex("a", "")
    with pytest.raises(TaskError, match="outside the alphabet"):
        from_table("ab", 0, {0}, {(0, "c"): 0})
    with pytest.raises(TaskError, match="not in the alphabet"):
        from_regex("a*", "ab").accepts("abc")
    assert from_regex("()", "ab").accepts("") and not from_regex("()", "ab").accepts("a")


# ---------------------------------------------------------------- (6) last-position acceptance


def test_last_position_hand_cases():
    # (a|b)*b: no under EOS (fails R^omega), but the last-position formula Q_b defines it directly.
    d = decide_nope_last_position(from_regex("(a|b)*b", "ab"))
    assert d.member and "unpublished" in d.criterion
    # (a|b)*bb(a|b)*: the quotient by 'a' is the language itself (appending a creates no bb), which
    # is not EOS-definable; a last-position formula with EOS read as 'a' would define it: no.
    d = decide_nope_last_position(from_regex("(a|b)*bb(a|b)*", "ab"))
    assert not d.member and "right quotient La^-1" in d.obstruction
    # (aa)*: the quotient by 'a' is a(aa)*, not aperiodic: no.
    assert not decide_nope_last_position(from_regex("(aa)*", "a")).member
    # a*b*: EOS-definable, and EOS acceptance can be simulated at the last position: yes.
    d = decide_nope_last_position(from_regex("a*b*", "ab"))
    assert d.member and d.criterion.startswith("EOS-definable")


def test_last_position_agrees_with_the_data_notes():
    problems = [row.regex for row in languages()
                if decide_nope_last_position(from_regex(row.regex, row.alphabet)).member
                != (row.nope or row.last_position_flip)]
    assert not problems


# ---------------------------------------------------------------- DFAs and tasks


def test_canonical_dfas():
    assert from_regex("(a|b)*", "ab") == from_regex("(a*b*)*", "ab")
    partial = from_table("ab", "s", {"t"}, {"s": {"a": "t"}, "t": {"b": "s"}})
    assert partial == from_regex("a(ba)*", "ab")
    unreduced = Dfa(("a",), 0, frozenset({0, 2}), ((1,), (2,), (3,), (0,)))
    assert minimize(unreduced) == from_regex("(aa)*", "a")
    assert decide_nope(unreduced).member is False


def test_regex_task():
    task = regex_task("(a|b)*bb(a|b)*", "ab")
    assert task.format is Format.ACCEPT and task.family == "regular" and task.symbols == ("a", "b")
    assert task.bins == ((0, 50), (51, 100), (101, 150)) and task.prefix == ("<bos>",) and task.separator is None
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 7, 40):
        xs = [task.sample_input(n, rng) for _ in range(200)]
        assert all(len(x) == n for x in xs)
        share = np.mean([task.answer(x) for x in xs])
        if n >= 7:
            assert 0.35 < share < 0.65
    assert task.sample(12, rng).targets in ((True,), (False,))
    ids = rng.integers(0, 2, size=(64, 9))
    expected = [[int(task.answer(tuple(task.symbols[k] for k in row)))] for row in ids]
    assert task.batch_answer(ids).tolist() == expected and task.batch_answer(ids).dtype == np.int64
    odd = dfa_task(from_regex("(ab)*", "ab"), "ab_star")
    assert not odd.answer(odd.sample_input(5, rng))  # no word of odd length is accepted


# ---------------------------------------------------------------- programs built from the certificate


def program_disagreements(dfa: Dfa, inputs) -> list[str]:
    checked = check(program_for(dfa))
    inputs = list(inputs)
    wrong = []
    for indices, result in run_in_chunks(checked, [("<bos>", *w) for w in inputs]):
        wrong += ["".join(inputs[i]) for i, verdict in zip(indices, result.accept) if bool(verdict) != dfa.accepts(inputs[i])]
    return wrong


def test_programs_for_the_data_set():
    """Every member of the data set gets a program; binary rows are checked on every word up to
    length 10, the others (a sample of one in four) up to length 6, and all on long random words."""
    rng = np.random.default_rng(0)
    members = [row for row in languages() if row.nope]
    for n, row in enumerate(members):
        dfa = from_regex(row.regex, row.alphabet)
        if len(row.alphabet) > 2 and n % 4:
            continue
        length = 10 if len(row.alphabet) <= 2 else 6 if len(row.alphabet) == 3 else 4
        sampler = dfa_task(dfa, "row")
        long_words = [sampler.sample_input(int(k), rng) for k in rng.integers(20, 120, size=10)]
        assert not program_disagreements(dfa, [*words(dfa.symbols, length), *long_words]), row.regex
    assert program_for(from_regex("(ab|bba)*", "ab")) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=regex_texts("ab", max_leaves=7))
def test_programs_for_random_members(text):
    dfa = from_regex(text, "ab")
    if decide_nope(dfa).member:
        assert not program_disagreements(dfa, words(("a", "b"), 8)), text
    else:
        assert program_for(dfa) is None


def test_programs_on_every_word_up_to_length_10_over_abc():
    """The six largest members over {a, b, c} that are not R-trivial, on all 88,573 words up to length 10."""
    rows = [row for row in languages() if row.nope and row.alphabet == "abc" and "not R-trivial" in row.note]
    largest = sorted(rows, key=lambda row: from_regex(row.regex, "abc").n_states)[-6:]
    for row in largest:
        dfa = from_regex(row.regex, "abc")
        assert not program_disagreements(dfa, words(dfa.symbols, 10)), row.regex
