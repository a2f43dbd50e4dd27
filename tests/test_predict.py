"""predict(): one engine of findings, against the paper's labels, the combiner's rules, the
strengths, the arithmetic tasks and the command line."""

import dataclasses
import io
import json
import sys
import textwrap

import pytest

import tasks
from crasp.cli import main
from crasp.parser import parse
from tasks import catalogue, registry
from tasks.arithmetic import MODULI
from tasks.evidence import truncation as truncation_evidence
from tasks.findings import QUICK, Budget, Fact, Finding, Strength, TaskError
from tasks.predict import Verdict, combine, predict

PAPER_TASKS = [t.name for t in tasks.all_tasks() if t.family in ("algorithmic", "formal")]
ARITHMETIC = [t.name for t in tasks.all_tasks() if t.family == "arithmetic"]


def crasp(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def quick(task, **options):
    return predict(task, budget=QUICK, synthesis=False, **options)


def test_the_suite_is_the_paper_plus_copy_every_kth():
    assert len(PAPER_TASKS) == 8 + 6 + 17
    assert all(tasks.get(n).labels.ape is not None for n in PAPER_TASKS)


@pytest.mark.parametrize("name", PAPER_TASKS)
def test_predictions_agree_with_the_paper(name):
    prediction = quick(tasks.get(name))
    assert prediction.agrees, (prediction.ape.headline, prediction.nope.headline)
    for verdict in (prediction.ape, prediction.nope):
        assert verdict.evidence and verdict.references and verdict.strength is not None
        assert verdict.headline.startswith(verdict.verdict.value.upper() + f" ({verdict.strength.value}: ")
        # Every positive verdict rests on a program that passed verification here.
        if verdict.verdict is Verdict.GENERALIZES:
            assert verdict.basis == "program" and "program checked on all" in verdict.headline


def test_copying_and_addition_fail_by_computation_and_only_as_a_trend():
    for name in ("repeat_copy", "addition"):
        prediction = quick(tasks.get(name))
        assert prediction.ape.basis == prediction.nope.basis == "communication"
        assert prediction.ape.strength is Strength.EXTRAPOLATED  # an exponential fit over small N is no proof
        assert "(exact)" in prediction.ape.headline and "Theorem 12" in " ".join(prediction.ape.references)


def test_facts_are_fields_of_the_task_and_weighed_like_other_findings():
    parity = tasks.get("parity")
    assert [f.scheme for f in parity.facts] == ["ape"]
    bare = dataclasses.replace(parity, facts=())
    # Without the published fact, parity still fails: its answer counts 1s modulo 2.
    prediction = quick(bare)
    assert prediction.ape.verdict is Verdict.FAILS and prediction.ape.basis == "modular counting"
    for name in ("tomita_5", "012_star_0_2_star"):
        found = quick(dataclasses.replace(tasks.get(name), facts=()))
        expected = Verdict.FAILS if name == "tomita_5" else Verdict.UNDETERMINED  # 012*02* counts nothing
        assert found.ape.verdict is expected, found.ape.headline
    undetermined = quick(dataclasses.replace(tasks.get("012_star_0_2_star"), facts=()))
    assert "missing: a verified C-RASP[periodic, local] program" in undetermined.ape.headline
    assert any("not exponential" in line for line in undetermined.ape.evidence)


def test_a_user_task_gets_the_same_treatment_as_a_suite_task():
    """The same reference and facts under another name and family: the same verdicts."""
    suite = tasks.get("tomita_4")
    mine = dataclasses.replace(suite, name="my_tomita_4", family="user", aliases=())
    a, b = quick(suite), quick(mine)
    assert [(v.verdict, v.strength, v.basis) for v in a.schemes.values()] == \
           [(v.verdict, v.strength, v.basis) for v in b.schemes.values()]


def test_a_verified_program_and_a_proof_in_conflict_leave_it_undetermined():
    task = tasks.get("bin_majority")
    made_up = Fact("ape", False, "a made-up negative result", "nobody", Strength.PROOF)
    prediction = quick(dataclasses.replace(task, facts=(made_up,)))
    assert prediction.ape.verdict is Verdict.UNDETERMINED and prediction.ape.basis == "conflict"
    assert "conflict" in prediction.ape.headline and prediction.ape.conflicts


def test_the_combiner_ranks_strengths_and_shows_every_conflict():
    program = Finding("program", Verdict.GENERALIZES, Strength.VERIFIED, "program checked")
    trend = Finding("communication", Verdict.FAILS, Strength.EXTRAPOLATED, "R(N) = 2^N for N <= 8")
    proof = Finding("published", Verdict.FAILS, Strength.PROOF, "a theorem")
    silent = Finding("modular counting", Verdict.UNDETERMINED, None, "nothing", applies=False)
    verdict = combine([program, trend, silent])
    assert verdict.verdict is Verdict.GENERALIZES and verdict.strength is Strength.VERIFIED
    assert verdict.conflicts == ("communication (extrapolated) says does not generalize: R(N) = 2^N for N <= 8",)
    assert "conflicting, weaker" in verdict.headline
    assert combine([trend]).verdict is Verdict.FAILS and combine([trend]).strength is Strength.EXTRAPOLATED
    assert combine([program, proof]).verdict is Verdict.UNDETERMINED
    assert combine([proof, trend]).strength is Strength.PROOF
    assert combine([silent]).verdict is Verdict.UNDETERMINED and combine([]).basis == "none"


@pytest.mark.parametrize("name", ARITHMETIC)
def test_every_arithmetic_task_gets_a_justified_verdict(name):
    prediction = quick(tasks.get(name))
    for verdict in prediction.schemes.values():
        assert verdict.evidence
        if verdict.verdict is Verdict.UNDETERMINED:
            assert "missing" in verdict.headline or "no relative alignment" in verdict.headline \
                or "outside the theory" in verdict.headline or "leading operand" in verdict.headline


def test_arithmetic_verdicts():
    mod100, mod101 = (quick(tasks.get(n)) for n in ("xu_mod100_addition", "xu_mod101_addition"))
    assert mod100.ape.verdict is Verdict.GENERALIZES and "100 divides 10^2" in mod100.ape.headline
    assert mod101.ape.verdict is mod101.nope.verdict is Verdict.FAILS and mod101.ape.basis == "truncation"
    # mod 150 on 4-digit training: a third of longer inputs keep their answer (Xu et al. report 33%).
    share = float(quick(tasks.get("xu_mod150_addition")).ape.headline.split("5-9 digits: ")[1].split("%")[0])
    assert 20 < share < 45
    successor = quick(tasks.get("duan_successor"))
    assert successor.ape.verdict is Verdict.FAILS and successor.ape.basis == "communication"
    encoder = quick(tasks.get("sabbaghi_addition"))
    assert encoder.ape.verdict is Verdict.UNDETERMINED
    assert any("bidirectional" in line for line in encoder.ape.evidence)
    assert encoder.verdict("relative").verdict is Verdict.GENERALIZES
    multiplication = quick(tasks.get("sabbaghi_multiplication"))
    assert multiplication.verdict("relative").verdict is Verdict.UNDETERMINED
    assert multiplication.verdict("uniform").verdict is Verdict.GENERALIZES


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
        found = truncation_evidence.truncation(trained_on(tasks.get(f"xu_mod{p}_{operation}"), 3), 150, 0)
        assert [bins for bins, _ in found.below] == [(1, 2)]
        assert found.covers_below == ignores_digit_3(p) == (100 % p == 0), p
    plain = truncation_evidence.truncation(trained_on(tasks.get(f"xu_{operation}"), 3), 150, 0)
    assert not plain.covers_below and plain.below[0][1] < 0.05


def test_a_modulus_whose_answer_needs_the_top_trained_digit_is_undetermined_below():
    """Mod 200 on D_3: longer inputs keep their answer (200 divides 10^3), shorter ones are not covered."""
    from validation.protocol import trained_on

    mod200 = quick(trained_on(tasks.get("xu_mod200_addition"), 3)).ape
    assert mod200.verdict is Verdict.UNDETERMINED
    assert "missing: an argument for fewer digits" in mod200.headline
    on_d4 = quick(tasks.get("xu_mod200_addition")).ape  # the registry's D_4: digit 4 is ignored
    assert on_d4.verdict is Verdict.GENERALIZES and any("1-3 digits: 100.0%" in line for line in on_d4.evidence)


@pytest.fixture
def scratch_registry(monkeypatch):
    tasks.names()
    monkeypatch.setattr(catalogue, "_REGISTRY", dict(catalogue._REGISTRY))


def test_a_given_program_decides_and_a_wrong_one_is_refuted(scratch_registry):
    @tasks.task("more_ones", symbols=("0", "1"), sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)))
    def more_ones(x):
        return ("1" if x.count("1") > x.count("0") else "0",)

    undetermined = quick(tasks.get("more_ones"))
    assert undetermined.ape.verdict is Verdict.UNDETERMINED
    assert any("not exponential" in line for line in undetermined.ape.evidence)
    program = parse('alphabet {"<bos>", "<eos>"}\nA = #"1" > #"0"\n'
                    'next "1" = "<sep>" && A\nnext "0" = "<sep>" && !A\nnext "<eos>" = !"<sep>"\n')
    given = quick(tasks.get("more_ones"), programs=[program])
    assert given.ape.verdict is given.nope.verdict is Verdict.GENERALIZES and not given.rejected
    wrong = parse('alphabet {"<bos>", "<eos>"}\nA = #"1" >= #"0"\n'
                  'next "1" = "<sep>" && A\nnext "0" = "<sep>" && !A\nnext "<eos>" = !"<sep>"\n')
    rejected = quick(tasks.get("more_ones"), programs=[wrong])
    assert rejected.ape.verdict is Verdict.UNDETERMINED
    assert rejected.rejected and "shortest counterexample found (length 2)" in rejected.rejected[0]


def test_broken_references_are_errors_naming_the_input(scratch_registry):
    def register(name, reference, **options):
        tasks.task(name, symbols=("0", "1"), sampler=lambda n, rng: tuple(rng.choice(["0", "1"], size=n)),
                   **options)(reference)
        return tasks.get(name)

    with pytest.raises(TaskError, match="raised IndexError: tuple index out of range on input '0'"):
        quick(register("short_reference", lambda x: (x[3],)))
    with pytest.raises(TaskError, match="returned None on input"):
        quick(register("none_reference", lambda x: None))
    with pytest.raises(TaskError, match="must be a bool"):
        quick(register("accept_not_bool", lambda x: "yes", format="accept"))
    with pytest.raises(TaskError, match="not among the task's outputs"):
        quick(register("unknown_output", lambda x: ("T",)))
    flips = iter(range(10**6))
    with pytest.raises(TaskError, match="not deterministic"):
        quick(register("random_reference", lambda x: next(flips) % 2 == 0, format="accept"))
    accept_program = parse('A = #"1" > 0')  # a verdict, but the task wants next tokens
    prediction = quick(tasks.get("bin_majority"), programs=[accept_program])
    assert prediction.rejected and prediction.rejected[0].startswith("given program rejected")
    assert prediction.ape.verdict is Verdict.GENERALIZES  # the library program still counts


def test_budgets_parse_and_refuse_bad_settings():
    assert Budget.parse("quick").samples == QUICK.samples
    assert Budget.parse("samples=7,max_length=90").max_length == 90
    for bad in ("samples", "colour=3", "samples=x", "samples=-1"):
        with pytest.raises(TaskError, match="budget"):
            Budget.parse(bad)
    with pytest.raises(TaskError, match="unknown positional scheme"):
        predict(tasks.get("parity"), schemes=["sinusoidal"])


def test_predict_on_the_command_line(tmp_path, monkeypatch, scratch_registry):
    status, out, _ = crasp("predict", "parity", "--quick", "--no-synthesis")
    assert status == 0 and "DOES NOT GENERALIZE (proof:" in out and "R(N)" in out and "agrees" in out
    status, out, err = crasp("predict", "--all", "--family", "formal", "--quick", "--no-synthesis")
    assert status == 0 and "17 of 17 predictions with published labels agree" in out and "[17/17]" in err
    status, out, _ = crasp("predict", "d_4", "--quick", "--json", "--no-synthesis")
    row = json.loads(out)
    assert {"verdict", "strength", "headline", "basis", "evidence", "references", "findings"} <= set(row["ape"])
    assert row["agrees_with_paper"] and "relative" not in row  # relative positions: operand formats only
    status, out, _ = crasp("predict", "sabbaghi_multiplication", "--quick", "--no-synthesis")
    assert "relative positions: UNDETERMINED" in out and "uniform positions for the leading operand: GENERALIZES" in out
    status, out, _ = crasp("predict", "sabbaghi_addition", "--quick", "--json", "--schemes", "relative")
    assert set(json.loads(out)) >= {"relative"} and json.loads(out)["relative"]["verdict"] == "generalizes"

    (tmp_path / "my_predict_tasks.py").write_text(textwrap.dedent('''
        import tasks

        @tasks.task("first_is_last", symbols=("a", "b"), format="accept",
                    sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
        def first_is_last(x):
            return x[0] == x[-1]
    '''))
    (tmp_path / "wrong.cr").write_text('L = "a"\n')
    monkeypatch.chdir(tmp_path)
    status, out, _ = crasp("predict", "my_predict_tasks:first_is_last", "--quick", "--json", "--no-synthesis")
    assert status == 0
    row = json.loads(out)
    assert row["name"] == "first_is_last" and row["communication"]["growth"] == "constant"
    status, out, err = crasp("predict", "my_predict_tasks:first_is_last", "--quick", "--program", "wrong.cr",
                             "--no-synthesis")
    assert status == 1 and "shortest counterexample found (length 1): input (offset 0): <bos> b;" in err
    status, out, _ = crasp("verify", "my_predict_tasks:first_is_last", "--program", "wrong.cr")
    assert status == 1 and "FAIL" in out
    sys.modules.pop("my_predict_tasks", None)


def test_predict_errors():
    assert crasp("predict")[0] == 1
    status, _, err = crasp("predict", "parity", "--all")
    assert status == 1 and "--all" in err
    status, _, err = crasp("predict", "no_such_task")
    assert status == 1 and "no task named" in err
    status, _, err = crasp("predict", "parity", "--budget", "nonsense")
    assert status == 1 and "budget" in err
