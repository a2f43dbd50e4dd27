"""The crasp command: verdicts, traces, checks, formatting, exit codes and error messages."""

import argparse
import io
import json
import subprocess
import sys

import pytest

from crasp.cli import build_parser, main
from crasp.library import path as library_path

DYCK = str(library_path("dyck1"))


def crasp(*argv, stdin=None, monkeypatch=None):
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_run_tokens_on_the_command_line():
    assert crasp("run", DYCK, "(", "(", ")", ")") == (0, "accept\n", "")
    assert crasp("run", DYCK, "( ) ) (")[:2] == (0, "reject\n")


def test_run_reads_one_input_per_line(monkeypatch):
    stdin = "( )\n\n// a comment line\n) (\n( ( ) )\n"
    status, out, _ = crasp("run", "dyck1", stdin=stdin, monkeypatch=monkeypatch)
    assert (status, out.split()) == (0, ["accept", "reject", "accept"])


def test_run_offset_reaches_periodic_predicates():
    assert crasp("run", "aa_star_crasp", "a a")[1] == "accept\n"
    assert crasp("run", "aa_star_crasp", "--offset", "1", "a a")[1] == "reject\n"


def test_run_next_token_program(tmp_path):
    program = tmp_path / "maj.cr"
    program.write_text('A = #"a"\nB = #"b"\nnext "a" = A > B\nnext "b" = B > A\n')
    assert crasp("run", str(program), "a b b a a") == (0, "a ? b ? a\n", "")


@pytest.mark.parametrize("path", [[], ["--compiled"], ["--vectorised"]])
def test_run_json_gives_each_input_and_its_verdict(tmp_path, monkeypatch, path):
    if path == ["--vectorised"]:  # the numpy interpreter, which long or many inputs take
        monkeypatch.setattr("crasp.cli.PURE_PYTHON_WORK", 0)
        path = []
    repeat = 40
    program = tmp_path / "maj.cr"
    program.write_text('A = #"a"\nB = #"b"\nnext "a" = A > B\nnext "b" = B > A\n')
    word = "a b b a a " * repeat
    status, out, _ = crasp("run", str(program), "--json", *path, stdin=f"{word}\nb\n", monkeypatch=monkeypatch)
    rows = json.loads(out)
    assert status == 0 and [r["input"] for r in rows] == [word.split(), ["b"]]
    assert rows[0]["next"][:5] == ["a", None, "b", None, "a"] and rows[1] == {"input": ["b"], "next": ["b"]}
    plain = crasp("run", str(program), *path, stdin=f"{word}\nb\n", monkeypatch=monkeypatch)[1].splitlines()
    assert [" ".join(t or "?" for t in r["next"]) for r in rows] == plain
    status, out, _ = crasp("run", DYCK, "--json", *path, stdin="( ) " * repeat + "\n) (\n", monkeypatch=monkeypatch)
    assert [r["accept"] for r in json.loads(out)] == [True, False]


@pytest.mark.parametrize("suffix", [".html", ".txt"])
def test_run_writes_traces(tmp_path, monkeypatch, suffix):
    target = tmp_path / f"trace{suffix}"
    status, out, err = crasp("run", DYCK, "--trace", str(target), stdin="( )\n) (\n", monkeypatch=monkeypatch)
    assert status == 0 and "trace written" in err
    text = target.read_text()
    for name in ("C_open", "C_close", "V", "D"):
        assert name in text
    if suffix == ".html":
        assert text.startswith("<!DOCTYPE html>") and text.count("<table>") == 2
    else:
        assert "# input 2" in text


def test_unknown_token_is_a_clear_error():
    status, out, err = crasp("run", DYCK, "( x )")
    assert status == 1 and out == ""
    assert "token 'x' is not in the program's alphabet" in err and "position 2" in err
    assert crasp("run", DYCK, "--allow-unknown", "( x )")[:2] == (0, "accept\n")


def test_program_errors_are_located(tmp_path):
    bad = tmp_path / "bad.cr"
    bad.write_text('C = #"a"\nD = C && "b"\n')
    status, _, err = crasp("run", str(bad), "a")
    assert status == 1
    assert err.startswith(f"crasp: error: {bad}:2:5: '&&' combines Booleans")
    assert "Traceback" not in err


def test_missing_program_and_empty_input(monkeypatch):
    status, _, err = crasp("run", "no_such_program.cr", "a")
    assert status == 1 and "no program file 'no_such_program.cr'" in err
    status, _, err = crasp("run", DYCK, stdin="\n", monkeypatch=monkeypatch)
    assert status == 1 and "no input" in err
    for options in ((), ("--allow-unknown",), ("--trace", "-")):  # the plan's path and the interpreter's
        status, out, err = crasp("run", *options, DYCK, " ")
        assert status == 1 and "input 1 is empty" in err and "accept" not in out and "reject" not in out


def test_check_summarises_programs():
    status, out, _ = crasp("check", DYCK, "aa_star", "contains_ab")
    assert status == 0
    assert "class:       C-RASP (NoPE)" in out
    assert "periods:     2 (period 2)" in out
    assert "offsets:     1" in out
    status, out, _ = crasp("check", "--json", "contains_ab")
    summary = json.loads(out)
    assert summary["offsets"] == [1] and summary["plain"] is False and summary["depth"] == 2


def test_check_reports_each_bad_program(tmp_path):
    bad = tmp_path / "bad.cr"
    bad.write_text("D = x > 1\n")
    status, out, err = crasp("check", str(bad), DYCK)
    assert status == 1
    assert "undefined name 'x'" in err and f"{DYCK}: ok" in out


def test_fmt(tmp_path):
    messy = tmp_path / "messy.cr"
    messy.write_text('// keep me\nC=#"a"   // count\n\n\nD=C>=1&&!("b")\n')
    status, out, _ = crasp("fmt", str(messy))
    assert status == 0
    assert out == '// keep me\nC = #"a"  // count\n\nD = C >= 1 && !"b"\n'
    assert crasp("fmt", "--check", str(messy))[0] == 1
    assert crasp("fmt", "-i", str(messy))[0] == 0
    assert messy.read_text() == out
    assert crasp("fmt", "--check", str(messy))[0] == 0


def test_usage_errors_exit_2():
    assert crasp("run")[0] == 2
    assert crasp("frobnicate")[0] == 2


@pytest.mark.parametrize("argv, usage", [
    (["predict", "--bogus"], "crasp predict"),
    (["predict", "parity", "--quick", "--bogus", "1"], "crasp predict"),
    (["check", DYCK, "--bogus"], "crasp check"),
    (["run", DYCK, "--bogus", "("], "crasp run"),
    (["compile", "dyck1", "--bogus"], "crasp compile"),
    (["cache", "clear", "--bogus"], "crasp cache clear"),
])
def test_a_wrong_flag_prints_its_commands_usage(argv, usage):
    status, out, err = crasp(*argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"usage: {usage} [-h]")
    assert f"\n{usage}: error: unrecognized arguments: --bogus" in err


def test_a_wrong_flag_before_the_command_is_crasps_own():
    status, _, err = crasp("--bogus", "check", DYCK)
    assert status == 2 and err.startswith("usage: crasp [-h]") and "crasp: error: unrecognized arguments: --bogus" in err


def _parsers(parser: argparse.ArgumentParser):
    """``parser`` and every (sub)command's parser below it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                yield from _parsers(command)


def test_every_command_and_argument_says_what_it_is_for():
    missing = []
    for parser in _parsers(build_parser()):
        for action in parser._actions:
            name = action.option_strings[-1] if action.option_strings else action.dest
            if action.help is argparse.SUPPRESS:  # hidden on purpose: an older name of another flag
                assert action.option_strings and any(
                    other.dest == action.dest and other.help not in (None, argparse.SUPPRESS)
                    for other in parser._actions if other is not action), (parser.prog, name)
            elif not (action.help or "").strip():
                missing.append((parser.prog, name))
            if isinstance(action, argparse._SubParsersAction):
                missing += [(parser.prog, choice.dest) for choice in action._choices_actions
                            if not (choice.help or "").strip()]
    assert sorted(missing) == []


def test_console_script_long_input_and_no_traceback(tmp_path):
    tokens = " ".join(["("] * 50_000 + [")"] * 50_000)
    done = subprocess.run(
        [sys.executable, "-m", "crasp", "run", DYCK], input=tokens + "\n",
        capture_output=True, text=True, check=False,
    )
    assert (done.returncode, done.stdout) == (0, "accept\n")
    bad = tmp_path / "bad.cr"
    bad.write_text("A = #\n")
    done = subprocess.run([sys.executable, "-m", "crasp", "check", str(bad)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "syntax error: unexpected end of input" in done.stderr and "Traceback" not in done.stderr
