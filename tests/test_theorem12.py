"""Theorem 12's protocol: Bob's reconstruction from Alice's message equals full evaluation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.checker import check
from crasp.errors import InputError
from crasp.interpreter import run
from crasp.library import load
from crasp.parser import parse
from crasp.theorem12 import alice, bob, counts_of, message_size
from crasp.strategies import offsets, programs, token_sequences


def _assert_bob_equals_full_run(program, tokens, split, offset):
    checked = check(program)
    full = run(checked, [tokens], offset=offset, trace=True, allow_unknown=True)
    message = alice(checked, tokens, split=split, offset=offset, allow_unknown=True)
    part = bob(checked, message, tokens[split:], allow_unknown=True)
    for name, values in full.values.items():
        assert part.values[name][0].tolist() == values[0, split:].tolist(), name
    if full.accept is not None:
        assert part.accept_values[0].tolist() == full.accept_values[0, split:].tolist()
        assert bool(part.accept[0]) == bool(full.accept[0])
    else:
        for token, values in full.next.items():
            assert part.next[token][0].tolist() == values[0, split:].tolist(), token


@settings(max_examples=150, deadline=None)
@given(programs(), token_sequences(max_size=40), st.data(), offsets(60))
def test_bob_reconstructs_every_value_on_random_programs(program, tokens, data, offset):
    split = data.draw(st.integers(0, len(tokens) - 1))
    _assert_bob_equals_full_run(program, tokens, split, offset)


@pytest.mark.parametrize("name", ["dyck1", "anbncn", "contains_ab", "aa_star"])
def test_library_programs_at_every_split(name):
    program = load(name)
    alphabet = sorted(check(program).info.alphabet)
    rng = np.random.default_rng(0)
    for length in (1, 5, 23):
        tokens = [alphabet[k] for k in rng.integers(0, len(alphabet), size=length)]
        for split in range(length):
            _assert_bob_equals_full_run(program, tokens, split, offset=int(rng.integers(0, 9)))


def test_message_bits_grow_logarithmically():
    program = load("dyck1")
    size = message_size(program, splits=[2 ** k for k in range(1, 16)])
    counts = len(counts_of(check(program)))
    assert size.bits == tuple(counts * math.ceil(math.log2(2 ** k + 1)) for k in range(1, 16))
    # The measured message of a real run has exactly that size.
    tokens = ["("] * 600 + [")"] * 400
    assert alice(program, tokens, split=1000).bits == counts * math.ceil(math.log2(1001))


def test_guarded_counts_send_only_a_tail():
    program = parse('A = #[i - j in {1, 2}] "a" > 0')
    message = alice(program, "a b a b b".split(), split=5, alphabet=["b"])
    assert list(message.tails.values()) == [(False, False)]
    assert not message.totals and message.bits == 2
    near_start = alice(program, ["a"], split=1)
    assert list(near_start.tails.values()) == [(False, True)]


def test_bob_refuses_a_message_for_another_program():
    message = alice(parse('A = #"a" > 0'), ["a"], split=1)
    with pytest.raises(InputError, match="another program"):
        bob(parse('B = #"b" > 0'), message, ["b"])
    with pytest.raises(InputError, match="no tokens"):
        bob(parse('A = #"a" > 0'), message, [])
