"""``crasp theory``: listing, running, the exit status, JSON, the thorough profile's time budget."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from tasks.regular.blocks import recognizer
from tasks.theory import run as theory_run
from tasks.theory.statements import CATALOGUE, NAMES, depth_hierarchy_programs
from tests.test_cli import crasp

CHEAP = "depth-hierarchy-programs"
"""The cheapest statement (well under a second on the quick profile)."""


def test_list_names_every_statement_with_its_citation():
    status, out, _ = crasp("theory", "--list")
    assert status == 0
    for statement in CATALOGUE:
        assert f"{statement.name}\n  citation:   {statement.citation}" in out
    status, out, _ = crasp("theory", "--list", "--json", "--only", CHEAP, "theorem12-protocol")
    listed = json.loads(out)
    assert status == 0 and [s["name"] for s in listed] == [n for n in NAMES if n in (CHEAP, "theorem12-protocol")]
    assert all(s["citation"] and s["hypotheses"] and s["checks"] for s in listed)
    cited = {s["name"]: s["citation"] for s in listed}
    assert "Theorem 12" in cited["theorem12-protocol"] and "2506.16055" in cited[CHEAP]


def test_a_passing_statement_prints_pass_and_exits_0():
    status, out, err = crasp("theory", "--only", CHEAP)
    lines = out.splitlines()
    assert status == 0 and lines[0].startswith(f"PASS {CHEAP} (30 examples, ")
    assert lines[-1].startswith("1 of 1 statements held on every example tried (30 examples")
    assert "profile quick" in err and f"{CHEAP}: 30 examples a run" in err  # progress on standard error
    assert crasp("theory", "--only", CHEAP, "-q")[2] == ""


def test_json_gives_every_outcome():
    status, out, _ = crasp("theory", "--only", CHEAP, "--json", "-q", "--seed", "3")
    found = json.loads(out)
    assert status == 0 and (found["profile"], found["seed"], found["passed"]) == ("quick", 3, True)
    (outcome,) = found["outcomes"]
    assert (outcome["name"], outcome["passed"], outcome["examples"]) == (CHEAP, True, 30)
    assert outcome["counterexample"] is None and outcome["seconds"] >= 0
    assert outcome["citation"] == next(s.citation for s in CATALOGUE if s.name == CHEAP)


@pytest.fixture
def planted(monkeypatch):
    """The catalogue with the depth statement's recognizer one block too deep."""
    wrong = functools.partial(depth_hierarchy_programs, recognizer=lambda k: recognizer(k + 1))
    catalogue = tuple(dataclasses.replace(s, check=wrong) if s.name == CHEAP else s for s in CATALOGUE)
    monkeypatch.setattr(theory_run, "CATALOGUE", catalogue)


def test_a_failing_statement_prints_its_counterexample_and_exits_1(planted):
    status, out, _ = crasp("theory", "--only", CHEAP, "-q")
    assert status == 1
    assert out.startswith(f"FAIL {CHEAP} (")
    assert "  violated: the recognizer of L_2" in out and "  counterexample:\n    k: 2\n    word: a b" in out
    assert "0 of 1 statements held" in out
    status, out, _ = crasp("theory", "--only", CHEAP, "--json", "-q")
    found = json.loads(out)
    assert status == 1 and not found["passed"] and "k: 2" in found["outcomes"][0]["counterexample"]


@pytest.mark.parametrize("argv, flag", [
    (["--only", "no-such-statement"], "--only"),
    (["--seconds", "-1"], "--seconds"),
    (["--profile", "slow"], "--profile"),
    (["--seed", "x"], "--seed"),
])
def test_bad_arguments_are_usage_errors_naming_the_flag(argv, flag):
    status, _, err = crasp("theory", *argv)
    assert status == 2 and f"argument {flag}" in err


def test_the_thorough_profile_runs_for_its_time_budget():
    status, out, err = crasp("theory", "--profile", "thorough", "--seconds", "1", "--only", CHEAP)
    assert status == 0 and "profile thorough" in err and "1 s in all" in err
    assert f"{CHEAP}: 8 examples a run for 1 s" in err  # a quarter of the quick profile's 30
    examples, seconds = out.splitlines()[0].split("(")[1].split(" examples, ")
    assert int(examples) > 8 and 1.0 <= float(seconds.split()[0]) < 10  # runs repeated until the second is spent


def test_run_catalogue_refuses_unknown_names_and_budgets():
    from crasp.errors import UsageError

    with pytest.raises(UsageError, match="no statement 'nope' in the catalogue"):
        theory_run.run_catalogue(only=["nope"])
    with pytest.raises(UsageError, match="unknown profile"):
        theory_run.run_catalogue("fast")
    with pytest.raises(UsageError, match="at least 0 seconds"):
        theory_run.run_catalogue(only=[CHEAP], seconds=-1)


def test_the_console_sessions_of_the_docs_page_run_as_shown():
    """docs/theory.md's ```console blocks (deterministic ones: listings) print what they show."""
    import pathlib
    import shlex

    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "theory.md").read_text(encoding="utf-8")
    blocks = [block[len("console\n"):] for block in page.split("```")[1::2] if block.startswith("console\n")]
    assert blocks, "docs/theory.md shows no console session"
    for block in blocks:
        command, *shown = block.rstrip("\n").split("\n")
        assert command.startswith("$ crasp ")
        status, out, _ = crasp(*shlex.split(command)[2:])
        assert status == 0 and out == "\n".join(shown) + "\n", command
