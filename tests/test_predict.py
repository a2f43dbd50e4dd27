"""predict(): verdicts with evidence, against the paper's labels, for new tasks and on the command line."""

import io
import json
import sys
import textwrap

import pytest

import tasks
from crasp.cli import main
from crasp.parser import parse
from tasks import predict as engine
from tasks import registry
from tasks.arithmetic import MODULI
from tasks.predict import Verdict, predict

PAPER_TASKS = [t.name for t in tasks.all_tasks() if t.family in ("algorithmic", "formal")]
ARITHMETIC = [t.name for t in tasks.all_tasks() if t.family == "arithmetic"]


def crasp(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_the_suite_is_the_paper_plus_copy_every_kth():
    assert len(PAPER_TASKS) == 8 + 6 + 17
    assert all(tasks.get(n).labels.ape is not None for n in PAPER_TASKS)


@pytest.mark.parametrize("name", PAPER_TASKS)
def test_predictions_agree_with_the_paper(name):
    prediction = predict(tasks.get(name), quick=True)
    assert prediction.agrees, (prediction.ape, prediction.nope)
    for verdict in (prediction.ape, prediction.nope):
        assert verdict.evidence and verdict.references
        # Every positive verdict rests on a program that passed verification here.
        if verdict.verdict is Verdict.GENERALIZES:
            assert verdict.basis == "program" and "verified on" in verdict.evidence[0]


def test_copying_and_addition_fail_by_computation_not_by_table():
    for name in ("repeat_copy", "addition"):
        prediction = predict(tasks.get(name), quick=True)
        assert prediction.ape.basis == prediction.nope.basis == "communication"
        assert "exponential" in prediction.ape.evidence[0] and "Theorem 12" in prediction.ape.references[0]


def test_without_documented_results_the_open_cases_are_undetermined(monkeypatch):
    monkeypatch.setattr(engine, "DOCUMENTED", {})
    for name in ("parity", "tomita_5", "012_star_0_2_star"):
        prediction = predict(tasks.get(name), quick=True)
        assert prediction.ape.verdict is prediction.nope.verdict is Verdict.UNDETERMINED
        assert any(line.startswith("missing: a verified") for line in prediction.ape.evidence)
        assert any("proves nothing" in line for line in prediction.ape.evidence)


def test_a_program_and_a_negative_result_in_conflict_are_reported(monkeypatch):
    monkeypatch.setitem(engine.DOCUMENTED, ("bin_majority", "ape"), "a made-up negative result")
    prediction = predict(tasks.get("bin_majority"), quick=True)
    assert prediction.ape.verdict is Verdict.UNDETERMINED and prediction.ape.basis == "conflict"


@pytest.mark.parametrize("name", ARITHMETIC)
def test_every_arithmetic_task_gets_a_justified_verdict(name):
    prediction = predict(tasks.get(name), quick=True)
    for verdict in (prediction.ape, prediction.nope):
        assert verdict.evidence and verdict.references
        if verdict.verdict is Verdict.UNDETERMINED:
            assert any(line.startswith("missing:") for line in verdict.evidence)


def test_arithmetic_verdicts():
    mod100, mod101 = (predict(tasks.get(n), quick=True) for n in ("xu_mod100_addition", "xu_mod101_addition"))
    assert mod100.ape.verdict is Verdict.GENERALIZES and "100 divides 10^2" in mod100.ape.evidence[0]
    assert mod101.ape.verdict is mod101.nope.verdict is Verdict.FAILS and mod101.ape.basis == "truncation"
    # mod 150 on 4-digit training: a third of longer inputs keep their answer (Xu et al. report 33%).
    share = float(predict(tasks.get("xu_mod150_addition"), quick=True).ape.evidence[0]
                  .split("5-9 digits: ")[1].split("%")[0])
    assert 20 < share < 45
    successor = predict(tasks.get("duan_successor"), quick=True)
    assert successor.ape.verdict is Verdict.FAILS and successor.ape.basis == "communication"
    encoder = predict(tasks.get("sabbaghi_addition"), quick=True)
    assert encoder.ape.verdict is Verdict.UNDETERMINED and "bidirectional" in encoder.ape.evidence[0]


@pytest.mark.parametrize("operation", ["addition", "multiplication"])
def test_fewer_digits_are_covered_exactly_when_the_answer_ignores_the_top_trained_digit(operation):
    """Trained on D_3, a shorter input differs from training inputs only in its digit-3 pair (0, 0). By
    brute force over every 1-2 digit pair: the answer ignores any nonzero digit there exactly when
    p divides 100, and only then does the prediction count the shorter inputs as covered."""
    from validation.protocol import trained_on

    def ignores_digit_3(p):
        apply = (lambda a, b: a + b) if operation == "addition" else (lambda a, b: a * b)
        return all(apply(a + 100 * d, b) % p == apply(a, b + 100 * d) % p == apply(a, b) % p
                   for a in range(100) for b in range(100) for d in range(1, 10))

    for p in MODULI:
        truncation = engine._truncation(trained_on(tasks.get(f"xu_mod{p}_{operation}"), 3), 150, 0)
        assert [bins for bins, _ in truncation.below] == [(1, 2)]
        assert truncation.covers_below == ignores_digit_3(p) == (100 % p == 0), p
    plain = engine._truncation(trained_on(tasks.get(f"xu_{operation}"), 3), 150, 0)
    assert not plain.covers_below and plain.below[0][1] < 0.05


def test_a_modulus_whose_answer_needs_the_top_trained_digit_is_undetermined_below():
    """Mod 200 on D_3: longer inputs keep their answer (200 divides 10^3), shorter ones are not covered."""
    from validation.protocol import trained_on

    mod200 = predict(trained_on(tasks.get("xu_mod200_addition"), 3), quick=True).ape
    assert mod200.verdict is Verdict.UNDETERMINED
    assert mod200.evidence[1].startswith("missing: an argument for fewer digits")
    on_d4 = predict(tasks.get("xu_mod200_addition"), quick=True).ape  # the registry's D_4: digit 4 is ignored
    assert on_d4.verdict is Verdict.GENERALIZES and "1-3 digits: 100.0%" in on_d4.evidence[1]


@pytest.fixture
def scratch_registry(monkeypatch):
    tasks.names()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def test_a_new_task_given_only_as_a_python_function(scratch_registry):
    @tasks.task("reverse_bits", symbols=("0", "1"), sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)))
    def reverse(x):
        return tuple(reversed(x))

    prediction = predict(tasks.get("reverse_bits"), quick=True)
    assert prediction.ape.verdict is prediction.nope.verdict is Verdict.FAILS
    assert prediction.ape.basis == "communication" and prediction.agrees is None

    @tasks.task("more_ones", symbols=("0", "1"), sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)))
    def more_ones(x):
        return ("1" if x.count("1") > x.count("0") else "0",)

    undetermined = predict(tasks.get("more_ones"), quick=True)
    assert undetermined.ape.verdict is Verdict.UNDETERMINED and "polynomial" in " ".join(undetermined.ape.evidence)
    program = parse('alphabet {"<bos>", "<eos>"}\nA = #"1" > #"0"\n'
                    'next "1" = "<sep>" && A\nnext "0" = "<sep>" && !A\nnext "<eos>" = !"<sep>"\n')
    given = predict(tasks.get("more_ones"), programs=[program], quick=True)
    assert given.ape.verdict is given.nope.verdict is Verdict.GENERALIZES
    wrong = parse('alphabet {"<bos>", "<eos>"}\nA = #"1" >= #"0"\n'
                  'next "1" = "<sep>" && A\nnext "0" = "<sep>" && !A\nnext "<eos>" = !"<sep>"\n')
    rejected = predict(tasks.get("more_ones"), programs=[wrong], quick=True)
    assert rejected.ape.verdict is Verdict.UNDETERMINED
    assert any("fails verification" in line for line in rejected.ape.evidence)


def test_broken_references_and_programs_are_reported(scratch_registry):
    @tasks.task("broken_reference", symbols=("0", "1"), sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)))
    def broken(x):
        return (x[3],)  # fails on short inputs

    with pytest.raises(tasks.TaskError, match="raised IndexError: tuple index out of range on input '0 0'"):
        predict(tasks.get("broken_reference"), quick=True)
    accept_program = parse('A = #"1" > 0')  # a verdict, but the task wants next tokens
    prediction = predict(tasks.get("bin_majority"), programs=[accept_program], quick=True)
    assert any(line.startswith("given program rejected") for line in prediction.ape.evidence)
    assert prediction.ape.verdict is Verdict.GENERALIZES  # the library program still counts


def test_predict_on_the_command_line(tmp_path, monkeypatch, scratch_registry):
    status, out, _ = crasp("predict", "parity", "--quick")
    assert status == 0 and "DOES NOT GENERALIZE" in out and "R(N)" in out and "agrees" in out
    status, out, err = crasp("predict", "--all", "--family", "formal", "--quick")
    assert status == 0 and "17 of 17 predictions with published labels agree" in out and "[17/17]" in err
    status, out, _ = crasp("predict", "d_4", "--quick", "--json")
    row = json.loads(out)
    assert set(row["ape"]) == {"verdict", "basis", "evidence", "references"} and row["agrees_with_paper"]
    assert "relative" not in row  # the alignment check is for arithmetic formats
    status, out, _ = crasp("predict", "sabbaghi_multiplication", "--quick")
    assert "Relative alignment, relative positions: UNDETERMINED" in out
    assert "Relative alignment, uniform positions for the first 3 input tokens: GENERALIZES" in out
    status, out, _ = crasp("predict", "sabbaghi_addition", "--quick", "--json")
    assert json.loads(out)["relative"] == {"relative positions": {
        "verdict": "generalizes", "basis": "relative alignment", "evidence": [
            "shifting the operand(s) at positions 1-50 and 52-101 one digit moves every answer digit one position "
            "left, as it moves their digits: output digit i reads them at the same relative offsets for every i "
            "(checked on 48 inputs); carry cascades longer than in training are not covered"],
        "references": ["Sabbaghi et al. 2024, Appendix E (relative positions and carry cascades)"]}}

    (tmp_path / "my_predict_tasks.py").write_text(textwrap.dedent('''
        import tasks

        @tasks.task("first_is_last", symbols=("a", "b"), format="accept",
                    sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
        def first_is_last(x):
            return x[0] == x[-1]
    '''))
    monkeypatch.chdir(tmp_path)
    status, out, _ = crasp("predict", "my_predict_tasks:first_is_last", "--quick", "--json")
    assert status == 0
    row = json.loads(out)
    assert row["name"] == "first_is_last" and row["ape"]["verdict"] == "undetermined"
    assert row["communication"]["growth"] == "constant"
    sys.modules.pop("my_predict_tasks", None)


def test_predict_errors():
    assert crasp("predict")[0] == 1
    status, _, err = crasp("predict", "parity", "--all")
    assert status == 1 and "--all" in err
    status, _, err = crasp("predict", "no_such_task")
    assert status == 1 and "no task named" in err
