"""Runs that come home: records exported from one store and imported into another read as the
original runs (and give the same report); importing is idempotent, all or nothing, and refuses a
conflicting or damaged record, naming it; a time limit stops training at a checkpoint from which
the same command resumes to the uninterrupted result; groups trained side by side store what they
store one after another."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
import torch

from crasp.cli import main
from tasks import registry
from validation.config import ModelConfig, TrainConfig, ValidationError, Variant
from validation.reports import generalization as report
from validation.runs import protocol
from validation.runs.executors import Sequential, SideBySide, Settings, plan_jobs
from validation.runs.records import export, import_records
from validation.runs.spec import RunSpec
from validation.runs.store import Store, repair
from validation.runs.sweep import Stopped, train_specs
from validation.training.device import Machine

QUICK = TrainConfig(steps=30, batch_size=8, eval_every=10, test_size=8)


def tiny(steps: int = 30) -> protocol.Preset:
    """Two seeds of a one-layer model, a few steps: every seed counts."""
    return protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(steps=steps, batch_size=8, eval_every=10, test_size=8)),
        seeds=2, count_threshold=0.0)


def _specs(task: str, seeds=(0, 1), train=QUICK) -> list[RunSpec]:
    t = registry.get(task)
    return [RunSpec(task, "ape", ModelConfig(1, 1, 16), train, seed, "tiny", t.train_range, t.bins) for seed in seeds]


def _plan(task: str, train=QUICK) -> protocol.Plan:
    return protocol.Plan(registry.get(task), ModelConfig(1, 1, 16), train)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Store:
    """A store of four runs: bin_majority and parity, two seeds each."""
    store = Store(tmp_path_factory.mktemp("trained"))
    for task in ("bin_majority", "parity"):
        train_specs(_plan(task), Variant.parse("ape"), _specs(task), store=store)
    return store


def _summary(store: Store) -> list[tuple]:
    return sorted((r.spec.key, r.spec.task, r.spec.seed, r.accuracy, r.steps, r.wall_time, r.history, r.finished_at,
                   json.dumps(r.trained_on, sort_keys=True)) for r in store.runs())


def test_imported_records_read_as_the_original_runs_and_give_the_same_report(trained, tmp_path):
    path = tmp_path / "runs.records"
    done = export(trained, path)
    assert (done.runs, done.weights) == (4, 0)
    home = Store(tmp_path / "home")
    assert import_records(home, path).added == 4
    assert _summary(home) == _summary(trained)
    assert all(r.trained_on["device"] == "cpu" and r.trained_on["step"] == "eager" for r in home.runs())
    assert report.markdown(report.rows(home)) == report.markdown(report.rows(trained))
    run = home.runs()[0]
    with pytest.raises(ValidationError, match="without its weights: it was imported from records exported without"):
        home.weights(run)
    assert Store(tmp_path / "home").runs() and not Store(tmp_path / "home").problems  # checked on open, intact


def test_weights_travel_when_asked_and_join_runs_imported_without_them(trained, tmp_path):
    plain, heavy = tmp_path / "plain.records", tmp_path / "heavy.records"
    export(trained, plain)
    assert export(trained, heavy, weights=True).weights == 4
    home = Store(tmp_path / "home")
    import_records(home, plain)
    again = import_records(home, plain)
    assert (again.added, again.unchanged) == (0, 4)  # idempotent
    upgraded = import_records(home, heavy)
    assert (upgraded.added, upgraded.unchanged, upgraded.given_weights) == (0, 0, 4)
    for run in trained.runs():
        theirs = home.weights(home.finished(run.spec))
        assert all(torch.equal(t, theirs[name]) for name, t in trained.weights(run).items())
    assert import_records(home, heavy).unchanged == 4


def test_exports_choose_runs_by_task_and_preset(trained, tmp_path):
    assert export(trained, tmp_path / "a.records", tasks=["parity"]).runs == 2
    assert export(trained, tmp_path / "b.records", preset="cpu").runs == 0
    with pytest.raises(ValidationError, match="no such folder"):
        export(trained, tmp_path / "missing" / "c.records")


def test_a_conflicting_record_refuses_the_whole_import_naming_the_run(trained, tmp_path):
    path = tmp_path / "runs.records"
    export(trained, path)
    home = Store(tmp_path / "home")
    spec = _specs("parity", seeds=(1,))[0]
    home.record(spec, (0.5, 0.5, 0.5), 30, 1.0, False, [(30, (0.5, 0.5, 0.5))], {"w": torch.zeros(1)})
    before = _summary(home)
    with pytest.raises(ValidationError, match=rf"run {spec.key} \(parity ape 1l1h16d seed 1.*other results "
                                              r"\(accuracy, .*nothing was imported"):
        import_records(home, path)
    assert _summary(home) == before


@pytest.mark.parametrize("damage, message", [
    (lambda db: db.execute("UPDATE runs SET fields = replace(fields, '\"steps\": 30', '\"steps\": 31')"),
     "does not match its digest"),
    (lambda db: db.execute("UPDATE weights SET data = zeroblob(length(data))"), "weights of run .* do not match"),
    (lambda db: db.execute("UPDATE records SET value = '99' WHERE name = 'format'"), "records of format '99'"),
])
def test_a_damaged_records_file_is_refused_and_changes_nothing(trained, tmp_path, damage, message):
    path = tmp_path / "runs.records"
    export(trained, path, weights=True)
    with sqlite3.connect(path) as db:
        damage(db)
    home = Store(tmp_path / "home")
    with pytest.raises(ValidationError, match=message):
        import_records(home, path)
    assert not home.runs() and not list((tmp_path / "home" / "checkpoints").iterdir())
    (tmp_path / "text.records").write_text("not a database")
    with pytest.raises(ValidationError, match="not a readable records file"):
        import_records(home, tmp_path / "text.records")


def test_repair_keeps_the_runs_imported_without_weights(trained, tmp_path):
    path = tmp_path / "runs.records"
    export(trained, path)
    home = tmp_path / "home"
    import_records(Store(home), path)
    with sqlite3.connect(home / "runs.sqlite") as db:  # damaged: a table lacks a column the store needs
        db.execute("ALTER TABLE partial_summary DROP COLUMN summary")
    with pytest.raises(ValidationError, match="lacks column summary"):
        Store(home)
    repaired = repair(home)
    assert repaired.moved_to is not None and len(repaired.runs) == 4  # their rows are all there is of them
    assert _summary(Store(home)) == _summary(trained)


def test_the_store_command_exports_and_imports(trained, tmp_path, capsys):
    path = tmp_path / "runs.records"
    assert main(["store", "export", str(path), "--store", str(trained.root), "--weights", "--tasks", "parity"]) == 0
    assert "2 runs (2 with their weights)" in capsys.readouterr().out
    assert main(["store", "import", str(path), "--store", str(tmp_path / "home")]) == 0
    assert "2 runs added, 0 already in the store (2 runs' weights came with the file)" in capsys.readouterr().out
    assert main(["store", "import", str(tmp_path / "none.records"), "--store", str(tmp_path / "home")]) == 1
    assert "no such records file" in capsys.readouterr().err


# ---------------------------------------------------------------- time limits


def test_a_time_limit_stops_at_a_checkpoint_and_the_run_resumes_to_the_same_result(tmp_path):
    """Stopped mid-interval, saved; resumed by the same call: the results an uninterrupted run gives."""
    whole = Store(tmp_path / "whole")
    expected = train_specs(_plan("bin_majority"), Variant.parse("ape"), _specs("bin_majority"), store=whole)
    store = Store(tmp_path / "stopped")
    with pytest.raises(Stopped, match="stopped at the time limit at step 1 of 30"):
        train_specs(_plan("bin_majority"), Variant.parse("ape"), _specs("bin_majority"), store=store,
                    device=Machine("cpu", deadline=time.time()))
    assert store.in_progress()[0].step == 1 and not store.runs()
    resumed = train_specs(_plan("bin_majority"), Variant.parse("ape"), _specs("bin_majority"), store=store)
    assert [(r.accuracy, r.steps, r.history) for r in resumed] == [(r.accuracy, r.steps, r.history) for r in expected]
    assert not store.in_progress()


def test_the_command_stops_at_its_time_limit_and_says_how_to_resume(tmp_path, capsys):
    arguments = ["validate", "bin_majority", "--preset", "cpu", "--seeds", "1", "--set", "steps=400",
                 "--store", str(tmp_path / "runs"), "--device", "cpu", "--time-limit", "0.01"]
    assert main(arguments + ["--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["stopped"] is True
    assert "stopped at the time limit" in captured.err and "run the same command again to resume" in captured.err
    assert Store(tmp_path / "runs").in_progress()


# ---------------------------------------------------------------- groups side by side


def test_groups_side_by_side_store_what_they_store_one_after_another(tmp_path):
    jobs = plan_jobs([("bin_majority", "ape"), ("parity", "ape"), ("sort", "nope")], tiny())
    alone = Sequential().run(jobs, Settings(str(tmp_path / "sequential"), tiny()))
    lines: list[str] = []
    together = SideBySide(3).run(jobs, Settings(str(tmp_path / "side"), tiny()), report=lines.append)
    assert alone.done == together.done == 3 and not together.failed
    assert lines[-1].startswith("sweep: 3/3 done, 0 running, 0 failed")

    def runs(root: Path) -> list[tuple]:
        return sorted((r.spec.key, r.accuracy, r.steps, r.history) for r in Store(root).runs())

    assert len(runs(tmp_path / "side")) == 6 and runs(tmp_path / "side") == runs(tmp_path / "sequential")


def test_side_by_side_refuses_what_threads_cannot_share(tmp_path):
    jobs = plan_jobs([("bin_majority", "ape")], tiny())
    with pytest.raises(ValidationError, match="--step compiled is not safe in threads"):
        SideBySide().run(jobs, Settings(str(tmp_path), tiny(), step="compiled"))
    mixed = protocol.Preset("mixed", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(precision="bf16" if task.name == "parity" else "tf32")))
    with pytest.raises(ValidationError, match="must share a precision"):
        SideBySide().run(plan_jobs([("bin_majority", "ape"), ("parity", "ape")], mixed), Settings(str(tmp_path), mixed))


# ---------------------------------------------------------------- a user's task through validate and report


USER_TASKS = '''
import dataclasses

import tasks

@tasks.task("c_dominates_test", symbols=("a", "b", "c"), format="accept", replace=True, train_range=(1, 6),
            bins=((1, 6), (7, 12)), sampler=lambda n, rng: tuple(rng.choice(["a", "b", "c"], size=n)))
def c_dominates(x):
    return x.count("c") > x.count("a") + x.count("b")

attribute = dataclasses.replace(tasks.get("bin_majority"), name="majority_copy_test")  # a Task, not registered
'''


def test_a_users_task_is_validated_and_reported_by_its_spec(tmp_path, monkeypatch, capsys):
    import sys

    (tmp_path / "my_tasks_records.py").write_text(USER_TASKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = str(tmp_path / "runs")
    quick = ["--preset", "cpu", "--seeds", "1", "--set", "steps=10", "--set", "eval_every=10", "--set", "test_size=8",
             "--store", store, "--device", "cpu"]
    for spec in ("my_tasks_records:c_dominates_test", "my_tasks_records:attribute"):
        assert main(["validate", spec, *quick]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert "plan: c_dominates_test ape: " in captured.err and "c_dominates_test ape 2l2h64d seed 0: 1-6: " in captured.out
    sys.modules.pop("my_tasks_records")  # a later command knows the module only if told
    assert main(["report", "--store", store, "--out", str(tmp_path / "all")]) == 0
    everything = capsys.readouterr().out
    assert "| c_dominates_test | ape | cpu |" in everything and "| majority_copy_test | ape | cpu |" in everything
    assert main(["report", "my_tasks_records:c_dominates_test", "--store", store, "--out", str(tmp_path / "one")]) == 0
    one = capsys.readouterr().out
    assert "| c_dominates_test |" in one and "majority_copy_test" not in one
    assert main(["report", "parity", "--store", store, "--out", str(tmp_path / "none")]) == 1
    assert "no finished runs of tasks parity" in capsys.readouterr().err


def test_an_import_killed_at_its_commit_leaves_a_store_that_opens_unchanged(trained, tmp_path):
    """The importing process dies (no clean-up runs) as it commits the rows: no checkpoint is
    left without its row, so the store opens as it was and the import can be run again."""
    import subprocess
    import sys

    heavy = tmp_path / "heavy.records"
    export(trained, heavy, weights=True)
    Store(tmp_path / "home").close()
    script = ("import os, sys\n"
              "from validation.runs.store import Store\n"
              "from validation.runs.records import import_records\n"
              "Store._transaction = lambda self: os._exit(3)  # dies as a SIGKILL would: nothing cleans up\n"
              "import_records(Store(sys.argv[1]), sys.argv[2])\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "home"), str(heavy)], timeout=120)
    assert done.returncode == 3
    reopened = Store(tmp_path / "home")  # not refused
    assert reopened.runs() == [] and not list((tmp_path / "home" / "checkpoints").glob("*.safetensors"))
    assert import_records(reopened, heavy).added == 4
