"""A new user's walk, in an empty folder, through the command line alone: a task in a module of
one's own and its program; predict, verify, compile, validate, report. Every step works on the
user's task, and the report and predict say the same."""

from __future__ import annotations

import io
import json

from crasp.cli import main

MODULE = '''
import tasks

def more_c(x):
    return x.count("c") > x.count("a")

uniform = lambda n, rng: tuple(rng.choice(["a", "c"], size=n))
tasks.task("walk_more_c", symbols=("a", "c"), format="accept", replace=True, train_range=(1, 8),
           bins=((1, 8), (9, 16)), sampler=tasks.balanced(uniform, more_c))(more_c)
'''

PROGRAM = '''alphabet {"<bos>"}
accept #"c" > #"a"
'''


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_a_users_task_goes_from_program_to_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "walk_tasks.py").write_text(MODULE)
    (tmp_path / "more_c.cr").write_text(PROGRAM)
    task = "walk_tasks:walk_more_c"

    status, out, err = _cli("predict", task, "--program", "more_c.cr", "--json", "--quiet")
    assert status == 0, err
    predicted = json.loads(out)
    assert predicted["ape"]["verdict"] == "generalizes" and predicted["nope"]["verdict"] == "generalizes"

    status, out, err = _cli("verify", task, "--program", "more_c.cr", "--samples", "20", "--max-length", "60")
    assert status == 0, out + err

    status, out, err = _cli("compile", "more_c.cr", "--verify-length", "40", "--count", "20")
    assert status == 0, out + err

    store = str(tmp_path / "runs")
    status, out, err = _cli("validate", task, "--program", "more_c.cr", "--preset", "cpu", "--seeds", "1",
                            "--set", "steps=20", "--set", "eval_every=20", "--set", "test_size=50",
                            "--store", store, "--device", "cpu")
    assert status == 0, err
    assert "warning" not in err  # the balanced sampler leaves no bin to one answer

    status, out, err = _cli("report", task, "--store", store, "--out", str(tmp_path / "report"), "--json")
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    assert (row["predicted"], row["strength"]) == (predicted["ape"]["verdict"], predicted["ape"]["strength"])
    assert all(b < 0.9 for b in row["baseline"])
    assert (tmp_path / "report" / "report.md").is_file() and (tmp_path / "report" / "walk_more_c.png").is_file()
