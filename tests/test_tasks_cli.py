"""crasp tasks / crasp verify, and tasks a user defines in a module of their own."""

import io
import json
import sys
import textwrap

from crasp.cli import main


def crasp(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_tasks_table_and_json():
    status, out, _ = crasp("tasks", "--family", "algorithmic")
    assert status == 0
    assert "bin_majority_interleave" in out and "mod 3; i-j 1..3" in out
    status, out, _ = crasp("tasks", "--family", "formal")
    assert "aa_star ((aa)*)" in out and "tomita_4 (tomita-4)" in out and "i-j 1,2" in out
    status, out, _ = crasp("tasks", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["sort"]["nope"]["plain"] is True
    assert rows["parity"]["ape"]["program"] is None and "PARITY" in rows["parity"]["ape"]["reason"]
    assert rows["majority"]["anchors"][0]["bins"][0] == 1.0
    suite = [r for r in rows.values() if r["family"] in ("algorithmic", "formal", "arithmetic")]
    assert len(suite) == 14 + 17 + 25 and rows["xu_mod100_addition"]["family"] == "arithmetic"


def test_verify_passes_and_fails(tmp_path):
    status, out, _ = crasp("verify", "bin_majority", "--samples", "5", "--max-length", "40")
    assert status == 0 and out.startswith("PASS bin_majority")
    wrong = tmp_path / "wrong.cr"
    wrong.write_text('alphabet {"<bos>", "<eos>"}\nnext "0" = "<sep>" && #"0" > #"1" + 1\n'
                     'next "1" = "<sep>" && #"1" > #"0"\nnext "<eos>" = !"<sep>"\n')
    trace = tmp_path / "bad.html"
    status, out, err = crasp("verify", "bin_majority", "--program", str(wrong), "--trace", str(trace))
    assert status == 1 and out.startswith("FAIL bin_majority")
    assert "first counterexample" in out and "position" in out
    assert trace.exists() and "trace written" in err


def _one_document(out: str) -> dict:
    """The JSON document that is all of ``out``."""
    document, end = json.JSONDecoder().raw_decode(out)
    assert out[end:].strip() == "", "stdout holds more than the JSON document"
    return document


VERIFY_KEYS = {"ok", "status", "task", "program", "exhaustive_length", "exhaustive_symbols", "exhaustive_inputs",
               "sampled_inputs", "max_sampled_length", "derived_inputs", "reach", "largest_constant",
               "reaches_constants", "offsets", "checks", "exercised", "counterexample", "trace"}


def test_verify_json_passes_and_fails(tmp_path):
    status, out, _ = crasp("verify", "bin_majority", "--samples", "5", "--max-length", "40", "--json")
    document = _one_document(out)
    assert status == 0 and set(document) == VERIFY_KEYS
    assert (document["ok"], document["status"], document["task"]) == (True, "PASS", "bin_majority")
    assert document["counterexample"] is None and document["trace"] is None
    assert all(isinstance(document[k], int) for k in ("exhaustive_length", "exhaustive_inputs", "sampled_inputs",
                                                      "derived_inputs", "checks"))
    assert isinstance(document["offsets"], list) and document["exhaustive_symbols"] == ["0", "1"]
    assert document["exercised"] and set(document["exercised"][0]) == {"comparison", "true", "false", "boundary",
                                                                        "both_sides"}
    wrong = tmp_path / "wrong.cr"
    wrong.write_text('alphabet {"<bos>", "<eos>"}\nnext "0" = "<sep>" && #"0" > #"1" + 1\n'
                     'next "1" = "<sep>" && #"1" > #"0"\nnext "<eos>" = !"<sep>"\n')
    trace = tmp_path / "bad.html"
    status, out, err = crasp("verify", "bin_majority", "--program", str(wrong), "--trace", str(trace), "--json")
    document = _one_document(out)
    assert status == 1 and (document["ok"], document["status"]) == (False, "FAIL")
    bad = document["counterexample"]
    assert set(bad) == {"tokens", "offset", "position", "token", "expected", "got"}
    assert bad["tokens"][bad["position"]] == bad["token"] and bad["expected"] != bad["got"]
    assert document["trace"] == str(trace) and trace.exists() and "trace written" in err


def test_verify_errors():
    status, _, err = crasp("verify", "parity")
    assert status == 1 and "has no ape program" in err
    status, _, err = crasp("verify", "no_such_task")
    assert status == 1 and "no task named" in err


def test_a_task_defined_in_a_users_module(tmp_path, monkeypatch):
    (tmp_path / "my_tasks.py").write_text(textwrap.dedent('''
        import tasks

        @tasks.task("count_a_parity_free", symbols=("a", "b"),
                    sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
        def more_a(x):
            """'a' if there are at least as many a's as b's, else 'b'."""
            return ("a" if x.count("a") >= x.count("b") else "b",)
    '''))
    program = tmp_path / "more_a.cr"
    program.write_text('alphabet {"<bos>", "<eos>"}\nA = #"a" >= #"b"\n'
                       'next "a" = "<sep>" && A\nnext "b" = "<sep>" && !A\nnext "<eos>" = !"<sep>"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    status, out, _ = crasp("verify", "my_tasks:more_a", "--program", str(program), "--samples", "10")
    assert status == 0, out
    assert "PASS count_a_parity_free" in out
    sys.modules.pop("my_tasks", None)
