"""The arithmetic tasks: published formats, D_n distributions, references and the Xu et al. programs."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tasks
from crasp import check
from crasp.interpreter import run
from tasks.arithmetic import MODULI, operands_x, sabbaghi_tasks, set_digit
from tasks.verify import predictions, verify

XU = ["xu_addition", "xu_multiplication"] + [f"xu_mod{p}_{k}" for p in MODULI for k in ("addition", "multiplication")]
OTHERS = ["duan_successor", "duan_addition", "duan_parity_scratchpad", "duan_n_times_1",
          "sabbaghi_addition", "sabbaghi_multiplication", "sabbaghi_addition_balanced", "sabbaghi_addition_mixed",
          "sabbaghi_multiplication_1"]


def test_every_arithmetic_task_is_registered():
    assert tasks.names("arithmetic") == XU + OTHERS


def test_xu_format_and_references():
    task = tasks.get("xu_addition")
    example = task.example(operands_x(123, 4095, "+"))
    assert len(example.tokens) == 1 + 42 + 22 + 1 and example.tokens[42] == "="
    assert "".join(example.targets) == "8124" + "0" * 17 + ";<eos>"
    assert example.checked[0] == 42 and example.length == 4
    assert tasks.get("xu_mod101_addition").answer(operands_x(10**19, 10**19, "+"))[:3] == tuple(
        str((2 * 10**19) % 101).zfill(21)[::-1][:3])
    assert tasks.get("xu_multiplication").answer(operands_x(999, 999, "*"))[:6] == tuple("100899")
    assert not tasks.get("xu_multiplication").valid(operands_x(10**15, 10**15, "*"))  # 31 digits


def test_xu_bins_test_shorter_lengths_apart_and_published_ranges_spread_only_when_exact():
    """Xu et al. train on D_n alone: its bins are 1..n-1, n (the training bin), n+1..9 and above. A
    published range covering several bins gives each of them its value only at 0% or 100%."""
    addition, mod150, mod51 = (tasks.get(f"xu_{name}") for name in ("addition", "mod150_addition",
                                                                     "mod51_multiplication"))
    assert addition.bins == ((1, 3), (4, 4), (5, 9), (10, 20)) and addition.training_bin == 1
    assert addition.anchors[0].bins == (100.0, 100.0, 0.0, "-")  # published: 100% on 1-4, 0% on 5-9
    assert mod150.anchors[0].bins == (100.0, 100.0, 33.0, "-")  # 33% on 5-9 is that bin's own value
    assert mod51.bins[:3] == ((1, 2), (3, 3), (4, 9))
    assert mod51.anchors[0].bins == ("-", 99.7, "-", "-")  # 2.6% at 4 digits alone says nothing of 4-9


def test_xu_d_n_distribution():
    rng = np.random.default_rng(0)
    task = tasks.get("xu_mod51_multiplication")
    first_exact = Counter()
    for n in (1, 3, 7, 20):
        for example in task.sample_bin(n, n, 200, rng):
            text = "".join(example.tokens[1:43])
            a, b = int(text[:20]), int(text[21:41])
            assert max(len(str(a)), len(str(b))) == n == example.length
            first_exact["a"] += len(str(a)) == n
            first_exact["b"] += len(str(b)) == n
    # Either operand is the exact-n one with equal chance, so both have n digits equally often.
    assert abs(first_exact["a"] - first_exact["b"]) < 60
    train = [task.sample_train(rng) for _ in range(50)]
    assert {e.length for e in train} == {3}


def test_duan_references():
    assert tasks.get("duan_successor").answer(tuple("0999")) == tuple("00010")
    assert tasks.get("duan_addition").answer(tuple("56+79")) == tuple("531")
    assert tasks.get("duan_parity_scratchpad").answer(tuple("1101")) == tuple("1001")
    assert tasks.get("duan_n_times_1").answer(tuple("125*8")) == tuple("0001")
    example = tasks.get("duan_successor").sample(5, np.random.default_rng(1))
    assert example.length == 5 and example.tokens[6] == "<sep>" and len(example.targets) == 7


def test_sabbaghi_examples_from_the_paper():
    # "123 + 4095 = 4218" with l = 20: 17 pads then 4218 under the '+' and the second operand.
    addition, multiplication = sabbaghi_tasks(width=20, multiplier=2)
    pad = "<pad>"
    x = (*[pad] * 17, "1", "2", "3", "+", *[pad] * 16, "4", "0", "9", "5")
    example = addition.example(x)
    assert example.checked == tuple(range(21, 42))
    assert example.targets == (*[pad] * 17, "4", "2", "1", "8")
    # "56 x 4297" with a 2-digit multiplier: pad x 16, then 2 4 0 6 3 2.
    x = ("5", "6", "*", *[pad] * 16, "4", "2", "9", "7")
    assert multiplication.example(x).targets == (*[pad] * 16, "2", "4", "0", "6", "3", "2")
    assert multiplication.valid(x) and not multiplication.valid(("0", *x[1:]))


@pytest.mark.parametrize("name", XU)
def test_xu_programs_are_verified(name):
    report = verify(tasks.get(name), exhaustive_length=1, samples=4)
    assert report.ok, report.counterexample.describe()
    assert report.exhaustive_inputs == 100 and report.max_sampled_length >= 9


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["xu_addition", "xu_mod101_addition", "xu_mod150_multiplication", "xu_mod200_multiplication"]),
       st.integers(0, 10**20 - 1), st.integers(0, 10**20 - 1), st.integers(0, 10**6))
def test_xu_programs_on_random_operands_and_offsets(name, a, b, offset):
    task = tasks.get(name)
    example = task.example(operands_x(a, b, "+" if name.endswith("addition") else "*"))
    result = run(task.program("ape"), [example.tokens], offset=offset)
    assert predictions(task, result, 0, example) == list(example.targets)


@given(st.integers(0, 10**20 - 1), st.integers(0, 10**20 - 1), st.integers(0, 1), st.integers(0, 19),
       st.integers(0, 9))
def test_set_digit_changes_one_digit_of_one_operand(a, b, operand, place, digit):
    written = "".join(set_digit(operands_x(a, b, "+"), operand, place, digit))
    before = "".join(operands_x(a, b, "+"))
    changed = [k for k in range(len(before)) if written[k] != before[k]]
    column = operand * 21 + 19 - place  # operands are written most significant first, 20 digits each
    assert changed in ([], [column]) and written[column] == str(digit)


def test_a_modulus_dividing_a_power_of_ten_reads_only_the_low_digits():
    for p, k in ((50, 2), (100, 2), (200, 3)):
        info = check(tasks.get(f"xu_mod{p}_multiplication").program("ape")).info
        # Outputs read '=' at distances 0..21; operand digits a_i sit 22 + i back, b_i 1 + i back.
        assert max(info.offsets) == 21 + k
    info = check(tasks.get("xu_mod101_addition").program("ape")).info
    assert max(info.offsets) == 41  # every digit of a matters


def test_tasks_without_programs_say_why():
    for name in OTHERS:
        task = tasks.get(name)
        assert not task.programs and len(task.no_program["ape"]) > 80, name
