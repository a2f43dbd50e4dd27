"""Property tests on random programs: printing round-trips, the interpreter equals the reference."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp import check, format_program, parse, run
from crasp.strategies import DEFAULT_ALPHABET, offsets, programs, token_sequences

from .reference import NaiveEvaluator

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(programs())
def test_print_then_parse_gives_the_same_program(program):
    assert parse(format_program(program)) == program


@SETTINGS
@given(programs())
def test_generated_programs_are_well_sorted(program):
    check(program)


@SETTINGS
@given(
    programs(),
    st.lists(token_sequences(max_size=64), min_size=1, max_size=4),
    st.lists(offsets(), min_size=4, max_size=4),
)
def test_interpreter_equals_naive_evaluator(program, inputs, offs):
    checked = check(program)
    result = run(checked, inputs, offset=offs[: len(inputs)], trace=True, alphabet=DEFAULT_ALPHABET)
    for index, tokens in enumerate(inputs):
        naive = NaiveEvaluator(program, tokens, offs[index])
        values = result.values_at(index)
        for name, expected in naive.values.items():
            assert values[name].tolist() == expected, name
        if checked.accept is not None:
            assert bool(result.accept[index]) == bool(naive.at(checked.accept, len(tokens)))
        else:
            n = len(tokens)
            for token, expr in checked.next_tokens:
                assert result.next[token][index, :n].tolist() == naive.output(expr)
