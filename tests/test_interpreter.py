"""Interpreter behaviour beyond the property tests: batching, offsets, limits, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp import InputError, check, parse, run
from crasp.interpreter import run_in_chunks
from crasp.strategies import programs, token_sequences

from .reference import naive_values

GUARDED = parse('#import pred4\nA = #[i - j in {0, 2, 5}] "a" - #[pred4] "b" + #[i - j < 3] i mod 3 in {1}\nB = A > 0')


def test_guarded_counts_at_the_sequence_start():
    # Offsets larger than the position count nothing: j must be >= 1.
    tokens = list("aabab")
    assert run(GUARDED, [tokens], trace=True).values_at(0)["A"].tolist() == naive_values(GUARDED, tokens)["A"]


def test_per_input_offsets():
    program = parse("P = i mod 3 in {0}\nC = #P\nA = C >= 1")
    result = run(program, ["a", "a", "a"], offset=[0, 1, 2], alphabet=["a"], trace=True)
    assert result.values["P"][:, 0].tolist() == [False, False, True]


def test_padding_does_not_leak_between_inputs():
    program = parse('C = #"a"\nA = C == 1')
    together = run(program, ["a", "b b b a", "a a"], alphabet=["b"]).accept.tolist()
    alone = [bool(run(program, [w], alphabet=["b"]).accept[0]) for w in ["a", "b b b a", "a a"]]
    assert together == alone == [True, True, False]


@settings(max_examples=50, deadline=None)
@given(programs(outputs="default"), st.lists(token_sequences(max_size=30), min_size=1, max_size=12))
def test_chunked_runs_equal_one_batch(program, inputs):
    whole = run(program, inputs, alphabet="abc").accept
    chunked = np.zeros(len(inputs), dtype=bool)
    for indices, result in run_in_chunks(program, inputs, cells=40, alphabet="abc"):
        chunked[indices] = result.accept
    assert chunked.tolist() == whole.tolist()


def test_empty_input_is_an_error():
    with pytest.raises(InputError, match="input 2 is empty"):
        run(parse('A = "a"'), ["a", ""])


def test_unknown_tokens():
    with pytest.raises(InputError, match=r"input 1, position 3: token 'z'"):
        run(parse('A = "a"'), ["a a z"])
    result = run(parse('A = !"a"'), ["a a z"], allow_unknown=True)
    assert result.accept.tolist() == [True]


def test_counts_that_could_overflow_are_refused():
    program = parse('C = 1000000000000000000 * (5 * #"a")\nA = C > 0')
    with pytest.raises(InputError, match="could exceed int64"):
        run(program, ["a"])
    nested = parse('A = #(1000000000000000000 * (5 * #"a") > 0) > 0')
    with pytest.raises(InputError, match="could exceed int64"):
        run(nested, ["a"])


def test_offsets_past_int64_refuse_inputs_but_not_an_empty_batch():
    program = parse("P = i mod 3 in {0}\nA = #P >= 1")
    with pytest.raises(InputError, match="int64"):
        run(program, ["a"], offset=2**70)
    assert len(run(program, [], offset=2**70, alphabet=["a"]).accept) == 0


def test_check_once_run_many():
    checked = check(parse('A = #"a" > #"b"'))
    assert run(checked, ["a", "b"]).accept.tolist() == [True, False]


def test_long_input_is_linear_and_exact():
    n = 200_000
    tokens = ["a"] * n
    result = run(parse('C = #"a" + #[i - j in {0, 1, 7}] "a"\nA = C == #true + 3'), [tokens], trace=True)
    assert result.values["C"][0, -1] == n + 3 and bool(result.accept[0])
