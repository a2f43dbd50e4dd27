"""The relative-alignment check against an independent reference: where each digit of each
significance sits in the token sequence, found by putting one nonzero digit into an operand."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks import get
from tasks.alignment import operand_fields, relative_alignment, shifted
from tasks.arithmetic import PAD, operands_x, sabbaghi_tasks
from tasks.predict import Verdict, predict


def _padded(value: int, width: int) -> tuple[str, ...]:
    return (*[PAD] * (width - len(str(value))), *str(value))


def _answer_position(task, x, digit="1") -> int:
    """The position of the one nonzero digit of the answer to ``x``."""
    example = task.example(x)
    (position,) = [q for q, t in zip(example.checked, example.targets) if t == digit]
    return position


def _offsets(task, inputs, operand_digit) -> set[int]:
    """Answer digit j's position minus operand digit j's, over inputs that put a lone 1 at
    significance j of one operand (found by ``operand_digit``) and so have the answer 10^j."""
    return {_answer_position(task, x) - (len(task.prefix) + operand_digit(x)) for x in inputs}


def _first(x) -> int:
    return x.index("1")


def _last(x) -> int:
    return len(x) - 1 - x[::-1].index("1")


def test_sabbaghi_addition_aligns_and_xu_addition_mirrors_by_the_reference():
    sabbaghi, xu = get("sabbaghi_addition"), get("xu_addition")
    # Sabbaghi et al.: the answer digit of significance j sits a fixed distance from both operands' digits j
    assert len(_offsets(sabbaghi, [(*_padded(10**j, 50), "+", *_padded(0, 50)) for j in range(20)], _first)) == 1
    assert len(_offsets(sabbaghi, [(*_padded(0, 50), "+", *_padded(10**j, 50)) for j in range(20)], _last)) == 1
    # Xu et al.: operands most significant first, the answer reversed: 19 different distances
    assert len(_offsets(xu, [operands_x(10**j, 0, "+") for j in range(19)], _first)) == 19
    assert len(_offsets(xu, [operands_x(0, 10**j, "+") for j in range(19)], _last)) == 19
    assert relative_alignment(sabbaghi).aligned and not relative_alignment(xu).aligned
    verdict = predict(xu, schemes=["relative"], quick=True, synthesis=False).verdict("relative")
    assert verdict.verdict is Verdict.UNDETERMINED and "changes by 2" in verdict.headline


def test_the_multiplier_stays_put_so_only_uniform_positions_align_multiplication():
    task = get("sabbaghi_multiplication")
    # 100 * 10^j = 10^(j+2): the answer's 1 moves with the multiplicand's, the multiplier stays
    xs = [("1", "0", "0", "*", *_padded(10**j, 20)) for j in range(15)]
    answers = [_answer_position(task, x) for x in xs]
    multiplicand = [len(task.prefix) + len(x) - 1 - x[::-1].index("1") for x in xs]
    assert len({a - m for a, m in zip(answers, multiplicand)}) == 1 and len(set(answers)) == 15
    rpe, upe = relative_alignment(task), relative_alignment(task, uniform=3)
    single = get("sabbaghi_multiplication_1")  # a multiplier of 0 gives answers that move by any step
    assert not relative_alignment(single).aligned and relative_alignment(single, uniform=1).aligned
    assert not rpe.aligned and upe.aligned
    assert "stay put without uniform positions" in rpe.evidence and "uniform positions" in upe.evidence
    assert predict(task, schemes=["uniform"], quick=True, synthesis=False).verdict("uniform").verdict is \
        Verdict.GENERALIZES
    # uniform positions on a field that moves hide its digits from one another
    hidden = relative_alignment(get("sabbaghi_addition"), uniform=50)
    assert not hidden.aligned and "cannot be told apart" in hidden.evidence


@pytest.mark.parametrize("name", ["xu_mod100_addition", "xu_mod101_addition", "xu_mod50_multiplication"])
def test_a_modular_answer_has_no_shift_symmetry(name):
    # (10a + 10b) mod p is not (a + b) mod p moved one digit: its top digit is lost
    alignment = relative_alignment(get(name))
    assert alignment.symmetries == () and "no translation symmetry" in alignment.evidence


def test_a_format_without_padding_is_outside_the_check():
    alignment = relative_alignment(get("duan_addition"))
    assert not alignment.aligned and "does not apply" in alignment.evidence


def test_shifting_multiplies_a_padded_operand_by_ten_and_refuses_without_room():
    task = get("sabbaghi_addition")
    x = (*_padded(123, 50), "+", *_padded(45, 50))
    fields = operand_fields(task, x)
    assert fields == ((1, 51), (52, 102))
    moved = shifted(task, x, fields[:1])
    assert "".join(t for t in moved[:50] if t != PAD) == "1230" and moved[50:] == x[50:]
    full = (*"9" * 50, "+", *_padded(1, 50))
    assert shifted(task, full, fields[:1]) is None


@settings(max_examples=12, deadline=None)
@given(width=st.integers(4, 30), multiplicand=st.integers(4, 20), multiplier=st.integers(1, 3))
def test_every_padded_width_keeps_the_verdicts(width, multiplicand, multiplier):
    addition, multiplication = sabbaghi_tasks(width=width, multiplier=multiplier, multiplicand_width=multiplicand)
    found = relative_alignment(addition)
    assert found.aligned and found.symmetries[0].fields == found.fields
    assert not relative_alignment(multiplication).aligned
    assert relative_alignment(multiplication, uniform=multiplier).aligned
    assert not relative_alignment(multiplication, uniform=multiplier - 1).aligned  # part of the multiplier moves


def test_the_check_is_reproducible_and_rests_on_enough_inputs():
    task = get("sabbaghi_addition")
    assert relative_alignment(task, seed=3) == relative_alignment(task, seed=3)
    assert all(s.samples >= 8 for s in relative_alignment(task).symmetries)
    product = relative_alignment(get("xu_multiplication"))
    assert not product.aligned and {(len(s.fields), s.output_step) for s in product.symmetries} == {(1, 1), (2, 2)}
