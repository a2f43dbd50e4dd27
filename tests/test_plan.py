"""Plans (crasp.plan): the pure-Python evaluator agrees with the numpy interpreter and with the
naive definitional evaluator, on random programs, inputs and offsets."""

import marshal

from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.checker import check
from crasp.interpreter import run
from crasp.parser import parse
from crasp.plan import evaluate, lower, first_unknown, verdict
from crasp.strategies import offsets, programs, token_sequences
from crasp.cli import verdict as interpreter_verdict

from .reference import NaiveEvaluator


def _same_verdict(checked, tokens, offset):
    plan = lower(checked)
    assert marshal.loads(marshal.dumps(plan)) == plan  # a plan is stored as it is
    expected = interpreter_verdict(run(checked, [tokens], offset=offset, allow_unknown=True), 0)
    assert verdict(plan, tokens, offset) == expected


@settings(max_examples=300, deadline=None)
@given(programs(), token_sequences(max_size=40), offsets())
def test_plans_agree_with_the_interpreter(program, tokens, offset):
    _same_verdict(check(program), tokens, offset)


@settings(max_examples=150, deadline=None)
@given(programs(outputs="default"), token_sequences(max_size=24), offsets(50))
def test_every_definition_agrees_with_the_naive_evaluator(program, tokens, offset):
    checked = check(program)
    plan = lower(checked)
    values = evaluate(plan, tokens, offset)
    naive = NaiveEvaluator(program, tokens, offset)
    # The default output is the last definition: its instruction is the plan's output.
    assert [bool(v) for v in values[plan[2][0]]] == [bool(v) for v in naive.values[program.definitions[-1].name]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("ab"), min_size=1, max_size=60), st.integers(0, 40), st.integers(1, 45),
       st.integers(0, 30))
def test_windows_of_every_width_and_offset(tokens, start, width, offset):
    """#[i - j in {start, ..., start + width - 1}] "a", against the definition, including windows
    that begin or end beyond the input."""
    window = ", ".join(map(str, range(start, start + width)))
    text = f'C = #[i - j in {{{window}}}] "a"\nB = C == {len(tokens) // 3}'
    checked = check(parse(text))
    plan = lower(checked)
    (window,) = [index for index, instruction in enumerate(plan[1]) if instruction[0] == "window"]
    counts = evaluate(plan, tokens, offset)[window]
    for k in range(len(tokens)):
        expected = sum(tokens[j] == "a" for j in range(k + 1) if start <= k - j < start + width)
        assert counts[k] == expected
    _same_verdict(checked, tokens, offset)


def test_huge_moduli_and_windows_cost_what_small_ones_do():
    checked = check(parse('P = i mod 1000000000000 >= 5\nC = #[i - j < 10000000000] "a"\nA = P && C >= 2'))
    tokens = ["a", "b"] * 5
    assert verdict(lower(checked), tokens, offset=0) == "accept"
    assert verdict(lower(checked), tokens[:3], offset=0) == "reject"
    _same_verdict(checked, tokens, offset=999999999990)


def test_next_token_programs_print_one_token_or_a_question_mark():
    checked = check(parse('alphabet {"a", "b"}\nC = #"a"\nnext "a" = C < 2\nnext "b" = C >= 1'))
    assert verdict(lower(checked), ["b", "a", "a"]) == "a ? b"
    _same_verdict(checked, ["b", "a", "a"], 0)


def test_first_unknowns_are_found():
    plan = lower(check(parse('A = #"a" >= 1')))
    known = frozenset(plan[0])
    assert first_unknown(["a", "a"], known) is None and first_unknown(["a", "c", "d"], known) == 1


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_last_position_evaluation_equals_the_full_one(data):
    """Evaluating only what the last position needs gives the full evaluation's last values."""
    from crasp.plan import demand

    program = data.draw(programs(outputs=data.draw(st.sampled_from(["accept", "default"]))))
    plan = lower(check(program))
    full = demand(plan)
    tokens = data.draw(st.lists(st.sampled_from(("a", "b", "c")), min_size=1, max_size=30))
    offset = data.draw(st.integers(0, 20))
    everything = evaluate(plan, tokens, offset)
    last = evaluate(plan, tokens, offset, full)
    for index, needed in enumerate(full):
        assert (last[index] == everything[index]) if needed else (last[index] == everything[index][-1])
    assert verdict(plan, tokens, offset) == ("accept" if everything[plan[2][0]][-1] else "reject")


@st.composite
def token_count_programs(draw):
    """Acceptance programs that read counts of tokens and the last token only (plan.demand all False)."""
    terms = [f'{draw(st.integers(-3, 3))} * #"{s}"' for s in draw(st.lists(st.sampled_from("abc"), min_size=1,
                                                                          max_size=3))]
    comparisons = [f'{" + ".join(terms)} {draw(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]))} '
                   f'{draw(st.integers(-5, 5))}' for _ in range(draw(st.integers(1, 3)))]
    last = draw(st.sampled_from(['"a"', '!"b"', "true"]))
    return parse(f"A = ({' || '.join(comparisons)}) && {last}\n")


@settings(max_examples=40, deadline=None)
@given(token_count_programs(), st.lists(st.sampled_from("abc"), min_size=700, max_size=1200), st.integers(0, 9))
def test_counting_tokens_with_numpy_equals_the_full_evaluation(program, tokens, offset):
    """Long inputs of token-count programs take the token-count path; the traced run takes numpy's."""
    from crasp.plan import demand

    checked = check(program)
    assert not any(demand(lower(checked)))
    fast = run(checked, [tokens, tokens[: len(tokens) // 2]], offset=offset, allow_unknown=True)
    traced = run(checked, [tokens, tokens[: len(tokens) // 2]], offset=offset, allow_unknown=True, trace=True)
    assert fast.accept.tolist() == traced.accept.tolist()  # the traced run is checked against the naive evaluator
