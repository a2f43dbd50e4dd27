"""How deep and how long: the L_k tasks, the layer bounds, the training-length bounds, the experiments.

References are independent of the code under test: block counting by hand for L_k, words
enumerated for automata questions (Moore's bound makes a finite enumeration exact), every DFA of
a few states enumerated with its languages for the idealized learner.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tasks
from crasp.checker import check
from crasp.interpreter import run
from limit_transformer.compiler import compile_program, model_depth
from tasks import depth_languages as dl
from tasks.types import INVALID
from tasks.evidence import Evidence
from tasks.findings import QUICK
from tasks.layers import layers
from tasks.regular import blocks
from tasks.regular.dfa import Dfa, from_regex, minimize, words
from tasks.training_length import dfa_bound, idealized_length, shortest_difference
from tests.test_cli import crasp


# ---------------------------------------------------------------- the L_k tasks


def _blocks_by_hand(word) -> int:
    count, last = 0, None
    for symbol in word:
        if symbol != last:
            count, last = count + 1, symbol
    return count


@pytest.mark.parametrize("k", [3, 4, 6])
def test_words_are_drawn_from_l_k_uniformly_over_block_boundaries(k):
    task = tasks.get(f"L{k}")
    rng = np.random.default_rng(k)
    seen = set()
    for _ in range(1500):
        word = task.sample_window(k, k + 2, rng)
        assert k <= len(word) <= k + 2 and word[0] == "a" and _blocks_by_hand(word) == k
        seen.add(word)
    # every word of L_k with k to k + 2 letters appears (there are sum_n C(n-1, k-1) of them)
    assert len(seen) == sum(len(list(itertools.combinations(range(n - 1), k - 1))) for n in range(k, k + 3))


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_next_sets_carry_exactly_the_papers_label(k):
    """On the domain the target is {current letter} + {other letter if not in L_k} + {<eos> if in L_k}."""
    task = tasks.get(f"L{max(k, 3)}") if k >= 3 else dl.depth_language(k)
    for prefix in dl.prefixes(k, 9):
        target = task.answer(prefix)[-1]
        member = len(prefix) > 0 and _blocks_by_hand(prefix) == k
        assert dl.membership_label(target) == member
        if not prefix:
            assert target == frozenset({"a"})
        else:
            other = "b" if prefix[-1] == "a" else "a"
            assert target == frozenset({prefix[-1], *([] if member else [other]), *(["<eos>"] if member else [])})


def test_prefixes_enumerates_the_domain():
    for k in (2, 3, 4):
        listed = list(dl.prefixes(k, 7))
        expected = [w for w in words("ab", 7) if dl.is_prefix(w, k)]
        assert sorted(listed) == sorted(expected) and len(set(listed)) == len(listed)


@pytest.mark.parametrize("k", [3, 4, 5, 6, 8])
def test_the_l_k_program_has_count_depth_k_minus_2_and_is_right(k):
    program = dl.alternating_blocks(k)
    assert check(program).info.depth == k - 2 and check(program).info.plain
    rng = np.random.default_rng(k)
    inputs = [dl.word(int(rng.integers(k, 120)), k, rng) for _ in range(40)]
    result = run(program, [" ".join(("<bos>",) + w) for w in inputs])
    for b, w in enumerate(inputs):
        labels = [bool(result.next["<eos>"][b, i]) for i in range(len(w) + 1)]
        assert labels == [i > 0 and _blocks_by_hand(w[:i]) == k for i in range(len(w) + 1)]


def test_the_vectorised_reference_marks_inputs_outside_the_domain():
    task = tasks.get("L3")
    ids = np.array([[0, 1, 0], [1, 0, 0], [0, 1, 0]])  # aba (in L_3), baa (starts with b), aba
    codes = task.batch_answer(ids)
    assert (codes[1] == INVALID).all() and (codes[0] != INVALID).all()
    assert (task.batch_answer(np.array([[0, 1, 0, 1]])) == INVALID).all()  # abab: 4 blocks


# ---------------------------------------------------------------- L_k inside other languages


def _restricted_words(dfa, x, y, longest):
    return [w for w in words((x, y), longest)]


def _recognizes_by_words(dfa: Dfa, k: int, x: str, y: str) -> bool:
    target = blocks.alternation(k)
    longest = dfa.n_states + target.n_states  # Moore: differing automata differ below this length
    rename = {x: "a", y: "b"}
    return all(dfa.accepts(w) == target.accepts(tuple(rename[c] for c in w)) for w in words((x, y), longest))


def _predicts_by_words(dfa: Dfa, k: int, x: str, y: str) -> bool:
    target = blocks.alternation(k)
    longest = dfa.n_states * (k + 2) + target.n_states
    back = {"a": x, "b": y}
    return all(dfa.accepts(tuple(back[c] for c in w)) == target.accepts(w) for w in dl.prefixes(k, longest))


@st.composite
def small_dfas(draw, symbols="ab"):
    n = draw(st.integers(1, 5))
    table = [[draw(st.integers(0, n - 1)) for _ in symbols] for _ in range(n)]
    accepting = draw(st.sets(st.integers(0, n - 1)))
    return minimize(Dfa(tuple(symbols), 0, frozenset(accepting), tuple(map(tuple, table))))


@settings(max_examples=150, deadline=None)
@given(small_dfas())
def test_recognition_and_prediction_match_an_enumeration_of_words(dfa):
    found = blocks.recognizes(dfa)
    for x, y in (("a", "b"), ("b", "a")):
        for k in range(1, 6):
            if _recognizes_by_words(dfa, k, x, y):
                assert found is not None and found[0] == k
    if found is not None:
        assert _recognizes_by_words(dfa, *found)
    predicted = blocks.predicts(dfa)
    if predicted is not None:
        assert _predicts_by_words(dfa, *predicted)
        assert not any(_predicts_by_words(dfa, k, x, y) for k in range(predicted[0] + 1, dfa.n_states + 3)
                       for x, y in (("a", "b"), ("b", "a")))
    else:
        assert not any(_predicts_by_words(dfa, k, x, y) for k in range(1, dfa.n_states + 3)
                       for x, y in (("a", "b"), ("b", "a")))


def test_l_k_is_found_under_other_names_and_beside_other_symbols():
    assert blocks.recognizes(from_regex("y+x+y+x+", "xy")) == (4, "y", "x")
    assert blocks.recognizes(from_regex("c*a+b+a+c*", "abc")) == (3, "a", "b")
    assert blocks.recognizes(from_regex("(a|b)*", "ab")) is None


# ---------------------------------------------------------------- the idealized DFA learner


def _languages_up_to(n: int, symbols=("a", "b")) -> set[Dfa]:
    found = set()
    for m in range(1, n + 1):
        for flat in itertools.product(range(m), repeat=m * len(symbols)):
            table = tuple(tuple(flat[q * len(symbols):(q + 1) * len(symbols)]) for q in range(m))
            for accept in itertools.product((False, True), repeat=m):
                found.add(minimize(Dfa(symbols, 0, frozenset(q for q in range(m) if accept[q]), table)))
    return found


def _learner_length_by_enumeration(dfa: Dfa, languages: set[Dfa]) -> int:
    """The least N at which the only language of at most n states agreeing on every word up to N is the task's."""
    rivals = [d for d in languages if d != dfa and d.n_states <= dfa.n_states]
    n = 0
    while any(all(d.accepts(w) == dfa.accepts(w) for w in words(dfa.symbols, n)) for d in rivals):
        n += 1
    return n


def test_the_idealized_length_matches_the_learner_enumerated_on_every_small_language():
    """Every language of at most three states over two symbols (1,054 of them): the search equals
    the learner run on the words themselves, never exceeds 2n - 2, and reaches it."""
    languages = _languages_up_to(3)
    worst = {}
    for dfa in languages:
        exact = idealized_length(dfa)
        assert exact == _learner_length_by_enumeration(dfa, languages)
        assert exact <= dfa_bound(dfa)  # Chen, Ma & Li / Moore: 2n - 2 suffices
        worst[dfa.n_states] = max(worst.get(dfa.n_states, 0), exact)
    assert len(languages) == 1054 and worst == {1: 0, 2: 2, 3: 4}  # the bound is reached: tight here


def test_the_idealized_length_of_larger_automata_is_within_the_bound():
    for regex, expected in (("a+b+a+", 7), ("(a|b)*abab", 8), ("(ab|ba)*", 4)):
        dfa = from_regex(regex, "ab")
        assert idealized_length(dfa) == expected <= dfa_bound(dfa)
        # the search's rival, checked on words: as few states, right up to expected - 1, wrong after
        from tasks.training_length import _rival_agreeing_up_to

        rival = _rival_agreeing_up_to(dfa, expected - 1, dfa.n_states, [10**7])
        assert rival.n_states <= dfa.n_states
        assert all(rival.accepts(w) == dfa.accepts(w) for w in words("ab", expected - 1))
        assert any(rival.accepts(w) != dfa.accepts(w) for w in words("ab", expected, min_length=expected))
        assert _rival_agreeing_up_to(dfa, expected, dfa.n_states, [10**7]) is False


def test_shortest_difference_matches_words():
    for first, second in itertools.combinations([from_regex(r, "ab") for r in ("a*b*", "(ab)*", "a(a|b)*", "b*")], 2):
        found = shortest_difference(first, second)
        brute = next(len(w) for w in words("ab", 8) if first.accepts(w) != second.accepts(w))
        assert found == brute
    assert shortest_difference(from_regex("(ab)*", "ab"), from_regex("(ab)*(ab)*", "ab")) is None


def test_the_search_declines_past_its_limit():
    big = from_regex("(a|b)*abab", "ab")
    assert idealized_length(big, limit=50) is None and idealized_length(big) is not None


# ---------------------------------------------------------------- layers in the prediction


def _json(name: str, *extra: str, capsys=None) -> dict:
    status, out, err = crasp("predict", name, "--json", "--quick", "--no-synthesis", *extra)
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize("k", [3, 5])
def test_predict_gives_the_depth_hierarchys_bounds_for_l_k(k):
    found = _json(f"L{k}")["layers"]
    nope = found["schemes"]["nope"]
    program = compile_program(dl.alternating_blocks(k))
    assert nope["at_most"] == nope["at_least"] == k - 2 and nope["unit"] == "attention layers (count depth)"
    assert nope["compiled_layers"] == program.spec.n_layers
    assert nope["attention_layers"] == sum(1 for layer in program.spec.heads if layer)
    (bound,) = [f for f in nope["findings"] if f["bound"] == "at_least"]
    assert bound["strength"] == "proof" and "2506.16055" in bound["citation"]
    assert found["schemes"]["ape"]["at_least"] is None and found["at_least"] is None  # nothing published for APE
    assert found["at_most"] == k - 2  # both bounds in one unit: they meet


def test_predict_finds_l_k_in_a_regular_expression_with_an_end_marker():
    found = _json("re:abc:c*a+b+a+b+c*")["layers"]["schemes"]["nope"]
    assert found["at_least"] == 4 and found["at_most"] >= 4 and found["compiled_layers"] >= found["at_most"]


def test_no_lower_bound_without_a_citation_and_none_for_other_languages():
    for name in ("re:ab:(ab)*", "tomita_7", "bin_majority", "d_2"):
        found = _json(name)["layers"]
        assert all(s["at_least"] is None for s in found["schemes"].values())
        assert all(f["citation"] for f in found["findings"] if f["bound"] in ("at_least", "at_most"))


LIBRARY = [(t.name, v) for t in tasks.all_tasks() for v in ("ape", "nope")
           if t.programs.get(v) and t.family in ("algorithmic", "formal", "depth")]


@pytest.mark.parametrize("name", sorted({n for n, _ in LIBRARY}))
def test_at_most_is_the_count_depth_of_the_shallowest_library_program(name):
    from tasks.layers import COMPILED_LIMIT

    task = tasks.get(name)
    found = layers(task, ("ape", "nope"), QUICK)
    for scheme in ("ape", "nope"):
        programs = [check(task.program(v)) for v in ("ape", "nope") if task.program(v) is not None]
        programs = [p for p in programs if scheme == "ape" or p.info.plain]
        if not programs:
            assert found.schemes[scheme].at_most is None
            continue
        shallowest = min(programs, key=lambda p: (p.info.depth, len(p.definitions)))
        assert found.schemes[scheme].at_most == shallowest.info.depth
        compiled = found.schemes[scheme].compiled_layers
        if len(shallowest.definitions) > COMPILED_LIMIT:
            assert compiled is None
        else:
            assert compiled == compile_program(shallowest).spec.n_layers >= found.schemes[scheme].at_most


def test_model_depth_is_the_compilers_on_every_library_program():
    for task in tasks.all_tasks():
        for variant in ("ape", "nope"):
            program = task.program(variant)
            if program is None or task.family == "arithmetic":
                continue
            model = compile_program(program)
            depth = model_depth(program)
            assert (depth.layers, depth.attention_layers) == (model.spec.n_layers,
                                                             sum(1 for layer in model.spec.heads if layer))


def test_a_shallower_program_than_a_lower_bound_is_a_reported_conflict():
    """A wrong 'program' for L_5 of count depth 1 that passes on the few inputs it is checked on."""
    from crasp import builder as b

    task = dataclasses.replace(tasks.get("L5"), programs={})
    pb = b.ProgramBuilder()
    pb.alphabet(["<bos>"])
    member = pb.let("M", b.tok("a") & (b.count(b.tok("b")) >= 2))
    pb.next("a", b.tok("<bos>") | b.tok("a") | (b.tok("b") & ~member))
    pb.next("b", b.tok("b") | (b.tok("a") & ~member))
    pb.next("<eos>", member)
    shallow = pb.build()
    tiny = dataclasses.replace(QUICK, exhaustive=5, samples=0, derived=0)
    found = layers(task, ("nope",), tiny, Evidence(task, tiny, (shallow,), synthesis=False)).schemes["nope"]
    assert found.at_most is None and found.at_least is None
    assert any(f.claim.startswith("conflict: a verified program of count depth 1 and a lower bound of 3")
               for f in found.findings)
    honest = layers(task, ("nope",), QUICK, Evidence(task, QUICK, (shallow,), synthesis=False)).schemes["nope"]
    # checked on more inputs, it is rejected
    assert honest.at_least == 3 and honest.at_most is None


def test_training_length_in_the_prediction():
    found = _json("re:ab:a*b*")["training_length"]
    assert found["at_most"] == 3 and found["exact"] == 3 and "fewest states" in found["learner"]
    kinds = {f["kind"]: f for f in found["findings"]}
    assert kinds["at_most"]["length"] == 4 and kinds["at_most"]["strength"] == "proof"
    assert "fewest states" in kinds["at_most"]["learner"]
    # the automaton's bound is about this task: the class-level statement about C-RASP is left out
    assert "no_computable_bound" not in kinds
    deep = _json("L5")["training_length"]  # a next-set task over prefixes only: no automaton bound
    (note,) = [f for f in deep["findings"] if f["kind"] == "no_computable_bound"]
    assert note["strength"] is None and "statement about the class" in note["claim"]
    majority = _json("bin_majority")["training_length"]
    assert majority["at_most"] is None and all(f["length"] is None for f in majority["findings"])


def test_the_text_prediction_shows_both():
    status, out, _ = crasp("predict", "L4", "--quick", "--no-synthesis")
    assert status == 0 and "layers: APE ?..2; NoPE 2..2 attention layers" in out and "training length:" in out
    status, out, _ = crasp("predict", "L4", "--quick", "--no-synthesis", "--explain")
    assert status == 0 and "layers (attention layers" in out and "at least 2" in out and "training length" in out


# ---------------------------------------------------------------- the experiments


def test_the_experiments_run_and_report(tmp_path, monkeypatch):
    from validation.experiments import depth
    from validation.runs.store import Store

    monkeypatch.setattr(depth, "DEPTH_TRAIN", dataclasses.replace(depth.DEPTH_TRAIN, steps=4, eval_every=2,
                                                                  test_size=8, batch_size=4))
    monkeypatch.setattr(depth, "LENGTH_TRAIN", dataclasses.replace(depth.LENGTH_TRAIN, steps=4, eval_every=2,
                                                                   test_size=8, batch_size=4))
    store = Store(tmp_path / "runs")
    outcome = depth.run("depth", store=store, out=tmp_path / "report", seeds=1,
                        cells=(depth.DepthCell(3, 1), depth.DepthCell(4, 1)))
    text = outcome.report.read_text()
    assert "| L4 | 1 | 1 |" in text and "| fails |" in text and "21.7" in text
    assert (tmp_path / "report" / "depth.png").stat().st_size > 0
    outcome = depth.run("training-length", store=store, out=tmp_path / "report", seeds=1,
                        cells=(depth.LengthRun("re:ab:a*b*", 4),))
    text = outcome.report.read_text()
    assert "| re:ab:a*b* | 4 | 1 |" in text and "2n - 2 = 4" in text
    assert [run.spec.train_range for run in outcome.results[0].runs] == [(0, 4)]


def test_the_experiment_flag_is_checked():
    status, _, err = crasp("validate", "--experiment", "nosuch")
    assert status != 0 and "depth, training-length" in err
    status, _, err = crasp("validate", "--experiment", "depth", "majority")
    assert status != 0 and "brings its own tasks" in err
    status, _, err = crasp("validate", "--experiment", "training-length", "--preset", "paper")
    assert status != 0 and "--preset" in err


def _accept_task(name, answer, min_length=1):
    return tasks.Task(name=name, family="user", format=tasks.Format.ACCEPT, symbols=("a", "b"), outputs=(),
                      sample_input=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)), answer=answer,
                      valid=lambda x: True, train_range=(0, 50), bins=((0, 50), (51, 100)), separator=None,
                      min_length=min_length)


def test_a_python_task_that_is_l_3_gets_an_extrapolated_lower_bound():
    task = _accept_task("user_l3", lambda x: dl.in_language(x, 3))
    found = layers(task, ("nope",), QUICK).schemes["nope"]
    (bound,) = [f for f in found.findings if f.bound == "at_least"]
    assert found.at_least == 3 and bound.strength.value == "extrapolated" and "learned" in bound.claim


def test_an_unread_empty_word_is_read_both_ways_and_longer_unread_words_refuse():
    from tasks.predict import predict

    two = predict(_accept_task("user_two_as", lambda x: x.count("a") >= 2), quick=True, synthesis=False)
    (moore,) = [f for f in two.training_length.findings if f.kind == "at_most"]
    assert moore.length == 6 and "either way" in moore.claim  # "at least two a's": 3 states, 4 with the empty word
    assert two.training_length.exact is None
    longer = predict(_accept_task("user_two_as_long", lambda x: x.count("a") >= 2, min_length=3), quick=True,
                     synthesis=False)
    assert longer.training_length.at_most is None
    assert any("no inputs shorter than 3" in f.claim for f in longer.training_length.findings)


def test_synthesis_finds_a_shallower_program_than_the_automatons():
    from tasks.predict import predict

    prediction = predict(tasks.get("re:ab:a*b*"), schemes=["nope"], quick=True)
    nope = prediction.layers.schemes["nope"]
    (bound,) = [f for f in nope.findings if f.bound == "at_most"]
    assert bound.claim.startswith("synthesized program") and nope.at_most == 2
    from tasks.regular import program_for

    built = program_for(from_regex("a*b*", "ab"), end="<eos>")
    assert check(built).info.depth > 2 and nope.compiled_layers < model_depth(built).layers


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("end", [None, "<eos>"])
def test_the_l_k_recognizer_has_depth_k_and_accepts_l_k(k, end):
    program = blocks.recognizer(k, "y", "x", end=end)
    assert check(program).info.depth == k
    inputs = [w for w in words("xy", 9) if w]
    framed = [("<bos>", *w, *([end] if end else [])) for w in inputs]
    accepted = run(program, framed).accept.tolist()
    assert accepted == [dl.in_language(tuple({"y": "a", "x": "b"}[c] for c in w), k) for w in inputs]


def test_a_regular_expression_that_is_l_k_gets_its_exact_depth():
    found = _json("re:ab:a+b+a+b+")["layers"]["schemes"]["nope"]
    assert found["at_most"] == found["at_least"] == 4  # the hierarchy's depth, reached
    assert found["compiled_layers"] == compile_program(blocks.recognizer(4, end="<eos>")).spec.n_layers


def test_a_next_set_task_over_every_word_gets_the_recognition_bound():
    """Its <eos> target at the last symbol says whether the whole input is in L_3: at least 3 layers,
    not the prediction problem's 1."""
    task = dataclasses.replace(tasks.get("L3"), name="l3_every_word", valid=lambda x: True, programs={},
                               enumerate_inputs=None)
    found = layers(task, ("nope",), QUICK).schemes["nope"]
    (bound,) = [f for f in found.findings if f.bound == "at_least"]
    assert found.at_least == 3 and "recognizes L_3" in bound.claim


def test_the_depth_report_reads_cells_with_their_intervals():
    """Synthetic cells whose right reading is known: one that never fit its training lengths is
    not learned (never a failure), seeds that split leave the cell inconclusive and are all shown,
    a learned cell far below 90% on the longest bin fails, and the published number is marked as of
    an unknown bin."""
    from validation.reports.depth import DepthRow, Observed, depth_markdown

    def observed(seeds, examples=200):
        return Observed.of_seeds(seeds, examples)

    bins = ((0, 100), (101, 200))
    never_fit = DepthRow(5, 2, bins, observed([(0.18, 0.0), (0.28, 0.0), (0.22, 0.0)]), 21.0, 3, 3)
    split = DepthRow(5, 3, bins, observed([(1.0, 0.55), (1.0, 0.73), (1.0, 1.0)]), 50.64, 3, 3)
    failing = DepthRow(4, 1, bins, observed([(0.99, 0.05), (1.0, 0.1), (0.98, 0.02)]), None, 2, 2)
    kept = DepthRow(3, 1, bins, observed([(1.0, 1.0), (1.0, 0.995), (1.0, 1.0)]), 100.0, 1, 1)
    assert (never_fit.outcome, never_fit.expected, never_fit.agreement(never_fit.expected)) == \
        ("not learned", "fails", "- (not learned)")
    assert (split.outcome, split.agreement("generalizes")) == ("inconclusive", "- (inconclusive)")
    assert (failing.outcome, failing.agreement(failing.expected)) == ("fails", "agrees")
    assert (kept.outcome, kept.agreement(kept.expected), kept.agreement(kept.published_outcome)) == \
        ("generalizes", "agrees", "agrees")
    # a seed that never fit its training lengths is listed but not read: the other two decide
    one_unfit = DepthRow(6, 4, bins, observed([(0.0, 0.0), (1.0, 0.99), (1.0, 1.0)]), None, 4, 4)
    assert (one_unfit.outcome, one_unfit.observed.counted(), one_unfit.observed.mean) == \
        ("generalizes", "2/3", (1.0, 0.995))
    text = depth_markdown([never_fit, split, failing, kept, one_unfit], None)
    assert "55.0 / 73.0 / 100.0" in text and "published (bin unknown)" in text
    assert "| L5 | 2 | 3 | 22.7 [" in text and "| not learned | - (not learned) |" in text
    assert "| L6 | 4 | 2/3 | 100.0 [" in text and "99.0 / 100.0 / 0.0 (not fit) |" in text
