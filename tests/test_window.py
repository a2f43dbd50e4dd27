"""The bounded-window construction (tasks.evidence.window): seq2seq answers that copy symbols at
fixed indices from the start or fixed distances from the end (or write fixed tokens) are found,
the program built for them predicts every answer token the reference gives (run by the
interpreter on inputs the construction never saw, at random offsets), reads only from the start
where it is plain C-RASP, and answers that are no bounded window are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tasks
from crasp.checker import check
from crasp.interpreter import run
from tasks import catalogue
from tasks.evidence.window import build, window
from tasks.predict import predict

SYMBOLS = ("a", "b", "c", "d")


def user_task(name: str, reference, symbols=("a", "b", "c"), min_length: int = 1, outputs=None) -> tasks.Task:
    tasks.task(name, symbols=symbols, replace=True, min_length=min_length, outputs=outputs,
               sampler=lambda n, rng: tuple(rng.choice(list(symbols), size=n)))(reference)
    return catalogue._REGISTRY.pop(name)


def predicted_right(task: tasks.Task, program, inputs, rng) -> bool:
    """Every checked position of every input's example predicts its target (teacher forcing)."""
    checked = check(program)
    for x in inputs:
        example = task.example(x)
        offset = int(rng.integers(0, 1000))
        tokens = run(checked, [" ".join(example.tokens)], offset=offset).next_tokens(0)
        if [tokens[p] for p in example.checked] != list(example.targets):
            return False
    return True


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(2, 4), st.lists(st.tuples(st.sampled_from(["start", "end", "token"]), st.integers(0, 4),
                                             st.sampled_from(["x", "y"])), min_size=1, max_size=4))
def test_random_windows_are_found_and_their_programs_answer_like_the_reference(letters, drawn):
    symbols = SYMBOLS[:letters]
    needed = 1 + max([i for kind, i, _ in drawn if kind != "token"], default=0)

    def reference(x):
        return tuple(x[i] if kind == "start" else x[len(x) - 1 - i] if kind == "end" else token
                     for kind, i, token in drawn)

    task = user_task(f"window_{letters}_{abs(hash(tuple(drawn)))}", reference, symbols, min_length=needed,
                     outputs=(*symbols, "x", "y"))
    found = window(task)
    assert found is not None, drawn
    program = build(task, found)
    rng = np.random.default_rng(1)
    inputs = [tuple(rng.choice(symbols, size=int(n))) for n in rng.integers(needed, 300, size=40)]
    assert predicted_right(task, program, inputs, rng), (drawn, found)
    assert found.plain == check(program).info.plain
    assert found.plain == all(kind != "end" for kind, _ in found.generic)


@pytest.mark.parametrize(("name", "reference", "plain"), [
    ("first_three", lambda x: tuple(x[:3]), True),
    ("last_three", lambda x: tuple(x[-3:]), False),
    ("first_and_last", lambda x: (x[0], x[-1]), False),
    ("second_then_first", lambda x: tuple(x[1:2]) + tuple(x[:1]), True),
])
def test_python_slices_shorter_than_their_window_get_rules_of_their_own(name, reference, plain):
    """x[:3] of a two-symbol input is two symbols long: each short length has its own rule."""
    task = user_task(name, reference)
    found = window(task)
    assert found is not None and found.plain is plain
    prediction = predict(task, synthesis=False)
    assert prediction.ape.verdict.value == "generalizes", prediction.ape.headline
    assert prediction.ape.basis == "bounded window"
    if plain:  # read through counts alone: NoPE too
        assert prediction.nope.verdict.value == "generalizes" and prediction.nope.basis == "bounded window"
    else:
        assert prediction.nope.basis != "bounded window"
    rng = np.random.default_rng(2)
    inputs = [tuple(rng.choice(["a", "b", "c"], size=int(n))) for n in (*range(1, 8), *rng.integers(8, 400, 20))]
    assert predicted_right(task, prediction.ape.findings[[f.source for f in prediction.ape.findings]
                                                        .index("bounded window")].program, inputs, rng)


@pytest.mark.parametrize("reference", [lambda x: tuple(reversed(x)), lambda x: tuple(sorted(x)),
                                       lambda x: (max(set(x), key=x.count),) if x else ("a",),
                                       lambda x: tuple(x[: len(x) // 2])])
def test_answers_that_are_no_bounded_window_are_left_alone(reference):
    assert window(user_task("not_a_window", reference)) is None


def test_a_window_that_changes_past_the_lengths_read_is_refused_by_verification():
    """x[0] up to length 99, x[1] beyond: the rule read on lengths up to 60 is x[0], and the
    program built from it fails verification, so nothing is claimed."""
    task = user_task("late_change", lambda x: (x[0],) if len(x) < 100 else (x[1],))
    assert window(task) is not None
    prediction = predict(task, synthesis=False)
    assert prediction.ape.basis != "bounded window" and prediction.nope.basis != "bounded window"


def test_nope_fails_where_the_first_answer_token_reads_the_end():
    """x[-3:] starts with the third symbol from the end: a NoPE program would decide, at <sep>,
    the inputs whose answer starts with 'a', a language outside C-RASP (the learned automaton's
    decision). x[0] then x[-1] starts with a language inside C-RASP: nothing is claimed."""
    last = predict(user_task("last_three_nope", lambda x: tuple(x[-3:])), synthesis=False)
    assert last.nope.verdict.value == "does not generalize" and last.nope.basis == "regular language"
    assert "whose answer starts with" in last.nope.headline
    ends = predict(user_task("ends_nope", lambda x: (x[0], x[-1])), synthesis=False)
    assert ends.nope.verdict.value != "does not generalize"
    first = predict(user_task("first_three_nope", lambda x: tuple(x[:3])), synthesis=False)
    assert first.nope.verdict.value == "generalizes"
    assert not any(f.claim.value == "does not generalize" for f in first.nope.findings)


def test_synthesize_falls_back_on_the_constructions(tmp_path, monkeypatch):
    """A bounded window the search does not reach within its time: `crasp synthesize` prints the
    program built for it, verified, and says so; --positions nope takes only plain ones."""
    import io
    import json
    import sys

    from crasp.cli import main

    (tmp_path / "window_tasks.py").write_text(
        "import tasks\n"
        "@tasks.task('cli_last_three', symbols=('a', 'b', 'c'), replace=True,\n"
        "            sampler=lambda n, rng: tuple(rng.choice(['a', 'b', 'c'], size=n)))\n"
        "def last_three(x):\n    return tuple(x[-3:])\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = io.StringIO()
    assert main(["synthesize", "window_tasks:cli_last_three", "--time", "1", "--json", "-q"], out, io.StringIO()) == 0
    found = json.loads(out.getvalue())
    assert found["constructed"] == "program built from the bounded window" and "#[i - j in {3}]" in found["program"]
    assert main(["synthesize", "window_tasks:cli_last_three", "--time", "1", "--positions", "nope", "-q"],
                io.StringIO(), io.StringIO()) == 1
    sys.modules.pop("window_tasks", None)
