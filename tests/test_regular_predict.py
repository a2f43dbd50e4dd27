"""Regular languages through the whole pipeline: a regular expression becomes a task, a verdict
with its certificate, a program that passes `crasp verify`, and a Limit Transformer that computes
it exactly; `crasp predict --regex` and `--regex-file` on the command line."""

import io
import json

import pytest

import tasks

from crasp.checker import check
from crasp.cli import main
from tasks.findings import QUICK, Strength
from tasks.predict import Verdict, predict
from tasks.regular import decide_nope, from_regex, languages, program_for, regex_task
from tasks.verify import verify


def crasp(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def quick(task):
    return predict(task, budget=QUICK, synthesis=False)


YES_ROWS = [row for row in languages() if row.nope is True and len(row.alphabet) <= 3][:: 40]


@pytest.mark.parametrize("row", YES_ROWS, ids=lambda row: row.regex)
def test_a_constructed_program_passes_verify_and_compiles_exactly(row):
    from limit_transformer import compile
    from limit_transformer.agreement import verify as verify_compiled

    task = regex_task(row.regex, row.alphabet)
    program = program_for(from_regex(row.regex, row.alphabet), end=task.end)
    assert verify(task, program, samples=20, max_length=120, derived=20).ok
    checked = check(program)
    report = verify_compiled(compile(checked), checked, max_length=40, count=12)
    assert report.ok


def test_regex_verdicts_have_their_certificates():
    # (ab|bba)*: R^omega but outside C-RASP (Yang et al. 2026, Appendix I): a "no" with its obstruction.
    hard = quick(regex_task("(ab|bba)*", "ab"))
    assert hard.nope.verdict is Verdict.FAILS and hard.nope.strength is Strength.PROOF
    assert hard.nope.basis == "regular language" and any("obstruction" in line for line in hard.nope.evidence)
    # a*b*: R-trivial, a "yes" by proof on the automaton, and a built program verified against it.
    easy = quick(regex_task("a*b*", "ab"))
    assert easy.nope.verdict is easy.ape.verdict is Verdict.GENERALIZES and easy.nope.strength is Strength.PROOF
    assert any("program built from the automaton" in line for line in easy.nope.evidence)
    # (aa)*: not aperiodic; counting modulo 2 on a single symbol is no family of two symbols, and
    # periodic positions express it: APE is left to a program.
    even = quick(regex_task("(aa)*", "a"))
    assert even.nope.verdict is Verdict.FAILS and even.ape.verdict is not Verdict.FAILS


def test_the_decision_does_not_depend_on_how_the_language_is_written():
    for first, second in (("(a|b)*", "(b|a)*"), ("(ab)*a", "a(ba)*"), ("a**b", "a*b")):
        one, two = quick(regex_task(first, "ab")), quick(regex_task(second, "ab"))
        assert (one.nope.verdict, one.ape.verdict) == (two.nope.verdict, two.ape.verdict)


def test_predict_a_regex_on_the_command_line(tmp_path):
    status, out, _ = crasp("predict", "--regex", "(ab|bba)*", "--alphabet", "ab", "--quick", "--no-synthesis", "--json")
    row = json.loads(out)
    assert status == 0 and row["nope"]["verdict"] == "does not generalize" and set(row) >= {"ape", "nope"}
    listing = tmp_path / "languages.txt"
    listing.write_text("a*b*\n(ab\n\n(c|a)*\n")
    status, out, err = crasp("predict", "--regex-file", str(listing), "--alphabet", "abc", "--quick", "--no-synthesis",
                             "--json")
    rows = json.loads(out)
    assert status == 1 and [r["regex"] for r in rows] == ["a*b*", "(ab", "(c|a)*"]
    assert rows[1]["line"] == 2 and "languages.txt:2" in rows[1]["error"] and "column" in rows[1]["error"]
    assert rows[0]["nope"]["verdict"] == rows[2]["nope"]["verdict"] == "generalizes"
    assert "error:" in err
    status, out, _ = crasp("predict", "--regex-file", str(listing), "--alphabet", "abc", "--quick", "--no-synthesis")
    assert status == 1 and "a*b*" in out and "generalizes" in out
    status, out, _ = crasp("predict", "--regex-file", str(listing), "--alphabet", "abc", "--quick", "--no-synthesis",
                           "--schemes", "nope")  # the APE column left out: shown as "-", 2 verdicts counted
    assert status == 1 and "2 of 2 verdicts decided" in out and " - " in out
    status, _, err = crasp("predict", "--regex", "a*", "--quick")
    assert status == 1 and "--alphabet" in err
    status, _, err = crasp("predict", "--regex", "a*d", "--alphabet", "ab")
    assert status == 1 and "column" in err


def test_a_learned_automaton_decides_an_accept_task_of_a_user():
    """'The number of a's is divisible by 3' given as a Python function: its automaton is learned
    (the empty word is no input, so it is read both ways and must give the same decision), and NoPE
    fails by the decision as well as by the modular family; the prediction stops at the family's
    verified claim, so the learner (a costlier source) does not run there."""
    from tasks.evidence import Evidence
    from tasks.evidence import regular as regular_evidence

    from . import user_tasks

    task = user_tasks.TASKS["user_a_count_div3"]
    regular = regular_evidence.SOURCE.assess(Evidence(task, QUICK), "nope")
    assert regular.claim is Verdict.FAILS and regular.strength is Strength.EXTRAPOLATED
    assert "is not in C-RASP" in regular.summary and "learned from the reference" in regular.summary
    assert decide_nope(from_regex("(b*ab*ab*ab*)*b*", "ab")).criterion == "not aperiodic"
    prediction = quick(task)
    assert prediction.nope.verdict is Verdict.FAILS and prediction.nope.basis == "modular counting"
    assert "regular language" in prediction.nope.skipped


def test_a_regular_expression_is_a_task_everywhere_a_task_is_named(tmp_path):
    """re:ALPHABET:REGEX for predict, verify and the program behind a verdict."""
    saved = tmp_path / "built.cr"
    status, _, err = crasp("predict", "re:ab:(ab|ba)*", "--quick", "--no-synthesis", "--program-out", str(saved))
    assert status == 0 and saved.is_file() and "program written" in err
    status, out, _ = crasp("verify", "re:ab:(ab|ba)*", "--program", str(saved), "--samples", "20")
    assert status == 0 and out.startswith("PASS re:ab:(ab|ba)*")
    status, out, _ = crasp("verify", "re:ab:(ab|bb)*", "--program", str(saved), "--samples", "20")
    assert status == 1 and "FAIL" in out
    status, _, err = crasp("predict", "re:(ab)*", "--quick")
    assert status == 1 and "re:ALPHABET:REGEX" in err
    # the parity of b's: outside plain C-RASP, and no tracker of the positional construction separates it
    status, _, err = crasp("predict", "re:ab:a*(ba*ba*)*", "--quick", "--no-synthesis", "--program-out", str(saved))
    assert status == 1 and "no verified program" in err


def test_the_demo_decides_new_tasks():
    from validation.experiments.demo import new_tasks

    found = new_tasks()
    ape = found.divisible.ape
    assert (ape.verdict, ape.strength) == (Verdict.FAILS, Strength.VERIFIED)
    assert (found.language.nope.verdict, found.language.nope.strength) == (Verdict.GENERALIZES, Strength.PROOF)
    assert found.compiled_agrees and found.built.definitions
    hard = found.hard.nope
    assert (hard.verdict, hard.strength) == (Verdict.FAILS, Strength.PROOF)
    assert hard.basis == "regular language"
    assert found.found.found
    assert verify(tasks.get("tomita_1"), program=found.found.program, exhaustive_length=8, samples=20).ok


def test_a_batch_of_the_data_set_never_disagrees_with_its_labels(tmp_path, monkeypatch):
    """`crasp predict --regex-file` on every row of the data set (decided, no search: the first pass
    of a batch): no verdict contradicts a published label, every NoPE label is decided, and nearly
    every APE label is."""
    monkeypatch.setenv("CRASP_CACHE_DIR", str(tmp_path / "cache"))
    by_alphabet: dict[str, list] = {}
    for row in languages():
        by_alphabet.setdefault(row.alphabet, []).append(row)
    outcomes = {"agree": 0, "disagree": [], "undetermined": 0}
    for alphabet, rows in by_alphabet.items():
        listing = tmp_path / f"{alphabet}.txt"
        listing.write_text("\n".join(row.regex for row in rows) + "\n")
        status, out, err = crasp("predict", "--regex-file", str(listing), "--alphabet", alphabet, "--json", "-q",
                                 "--batch-seconds", "0", "--jobs", "2")
        assert status == 0, err
        for row, entry in zip(rows, json.loads(out)):
            assert entry["regex"] == row.regex
            for scheme, label in (("nope", row.nope), ("ape", row.ape)):
                verdict = entry[scheme]["verdict"]
                if label is None:
                    continue
                if verdict == "undetermined":
                    outcomes["undetermined"] += 1
                    assert scheme == "ape", row.regex
                elif verdict == ("generalizes" if label else "does not generalize"):
                    outcomes["agree"] += 1
                else:
                    outcomes["disagree"].append((row.regex, scheme, entry[scheme]["headline"]))
    assert outcomes["disagree"] == []
    assert outcomes["agree"] >= 847 + 400 and outcomes["undetermined"] <= 15


def test_one_expression_prints_its_progress_lines_unless_quiet():
    import io

    from crasp.cli import main

    argv = ["predict", "--regex", "a*b", "--alphabet", "ab", "--no-cache", "--budget", "seconds=0"]
    err = io.StringIO()
    assert main(argv, io.StringIO(), err) == 0
    assert "  verifying program built from the automaton" in err.getvalue()
    err = io.StringIO()
    assert main([*argv, "-q"], io.StringIO(), err) == 0 and err.getvalue() == ""
