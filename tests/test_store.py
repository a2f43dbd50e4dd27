"""The run store loses nothing and says when something is wrong: integrity checked on open, repair,
unique temporary files and concurrent writers."""

from __future__ import annotations

import dataclasses
import io
import json
import multiprocessing
import sqlite3
import time

import pytest
import torch

import validation.runs.store
from validation.config import ModelConfig, TrainConfig, ValidationError
from validation.runs.spec import RunSpec
from validation.runs.store import RUN_METADATA, Store, repair

SPEC = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(steps=6, eval_every=3), 0, "tiny")
HISTORY = [(3, (0.5, 0.4, 0.3)), (6, (1.0, 0.9, 0.8))]


def _record(store: Store, seed: int, value: float = 0.0):
    spec = dataclasses.replace(SPEC, seed=seed)
    return store.record(spec, (1.0, 0.9, 0.8), 6, 1.5, True, HISTORY, {"w": torch.full((4,), value)})


def _report(*args: str) -> tuple[int, str, str]:
    from crasp.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = main(["report", *args], out, err)
    return status, out.getvalue(), err.getvalue()


def test_a_finished_runs_checkpoint_carries_its_spec_and_results(tmp_path):
    from safetensors import safe_open

    run = _record(Store(tmp_path), 3)
    with safe_open(str(tmp_path / run.checkpoint), "pt") as handle:
        saved = json.loads(handle.metadata()[RUN_METADATA])
    assert saved["spec"] == json.loads(json.dumps(run.spec.to_json()))
    assert (saved["accuracy"], saved["steps"], saved["stopped_early"]) == ([1.0, 0.9, 0.8], 6, True)
    assert saved["history"] == [[3, [0.5, 0.4, 0.3]], [6, [1.0, 0.9, 0.8]]]


def test_a_damaged_page_is_refused_and_repaired(tmp_path):
    store = Store(tmp_path)
    runs = [_record(store, seed) for seed in range(40)]
    store.save_partial("g0", {"step": 3, "seeds": [0], "history": [[(3, [1.0, 0.5])]]})
    store.close()
    path = tmp_path / "runs.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) >= 8 * 4096
    middle = len(data) // 4096 // 2 * 4096
    data[middle:middle + 512] = b"\xff" * 512  # a page's header and cells
    path.write_bytes(bytes(data))

    with pytest.raises(ValidationError) as refused:
        Store(tmp_path)
    message = str(refused.value)
    assert str(path) in message and "crasp report --repair" in message
    assert "malformed" in message or "quick_check" in message, message
    status, _, err = _report("--store", str(tmp_path), "--out", str(tmp_path / "report"))
    assert status == 1 and err.startswith("crasp: error: ") and "--repair" in err and "Traceback" not in err

    status, out, err = _report("--repair", "--store", str(tmp_path), "--out", str(tmp_path / "report"))
    assert status == 0, err
    (damaged,) = tmp_path.glob("runs.sqlite.damaged-*")
    assert damaged.read_bytes() == bytes(data)  # moved aside, untouched
    assert f"moved the damaged file to {damaged}" in out
    assert "40 finished runs recovered (40 from their checkpoints' metadata)" in out
    assert "1 run in progress recovered" in out
    assert "| bin_majority | ape | tiny | 1l1h16d | 40/40 |" in out
    fresh = Store(tmp_path)
    assert fresh.runs() == sorted(runs, key=lambda r: r.spec.seed) and fresh.problems == []
    assert [g.group_key for g in fresh.in_progress()] == ["g0"]
    assert fresh.load_partial("g0")["step"] == 3


@pytest.mark.parametrize("how", ["emptied", "deleted", "dropped table"])
def test_lost_rows_are_named_not_reported_as_an_empty_store(tmp_path, how):
    store = Store(tmp_path)
    _record(store, 0), _record(store, 1)
    store.save_partial("g0", {"step": 3, "seeds": [2], "history": [[]]})
    store.close()
    path = tmp_path / "runs.sqlite"
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "deleted":
        path.unlink()
    else:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE runs")

    status, out, err = _report("--store", str(tmp_path), "--out", str(tmp_path / "report"))
    assert status == 1 and out == ""
    lost = 2 if how == "dropped table" else 3  # dropping the table of finished runs leaves the group's row
    assert f"{lost} checkpoints on disk have no row (2 of finished runs in" in err
    assert f"{lost - 2} of runs in progress" in err
    expected = {"emptied": "the file is empty", "deleted": "the file is missing", "dropped table": "table runs missing"}
    assert expected[how] in err
    expected = expected[how]
    assert "crasp report --repair" in err
    if how == "dropped table":
        assert [c[1] for c in sqlite3.connect(path).execute("PRAGMA table_info(runs)")] == []  # left as it was
    from crasp.cli import main

    err = io.StringIO()  # training refuses it too, before it trains anything
    assert main(["validate", "bin_majority", "--store", str(tmp_path)], io.StringIO(), err) == 1
    assert err.getvalue().startswith("crasp: error: ") and "no row" in err.getvalue()

    status, out, err = _report("--repair", "--store", str(tmp_path), "--out", str(tmp_path / "report"))
    assert status == 0, err
    assert out.startswith(f"{path}: {expected}\n")
    assert "2 finished runs recovered" in out and f"{lost - 2} run{'s' * (lost == 2)} in progress recovered" in out
    assert not list(tmp_path.glob("runs.sqlite.damaged-*"))  # nothing damaged to move aside
    fresh = Store(tmp_path)
    assert [r.spec.seed for r in fresh.runs()] == [0, 1] and fresh.problems == []
    assert _report("--repair", "--store", str(tmp_path), "--out", str(tmp_path / "report"))[1].startswith(
        f"{path}: intact, nothing to repair (3 rows)")


def test_repair_says_what_it_could_not_recover_and_sets_it_aside(tmp_path, monkeypatch):
    import safetensors.torch

    store = Store(tmp_path)
    _record(store, 0)
    real = safetensors.torch.save_file
    monkeypatch.setattr(safetensors.torch, "save_file", lambda tensors, path, metadata=None: real(tensors, path))
    old = _record(store, 1)  # as versions before checkpoints carried their run wrote it
    monkeypatch.setattr(safetensors.torch, "save_file", real)
    store.save_partial("g0", {"step": 3, "seeds": [0], "history": [[]]})
    store.close()
    (tmp_path / "partial" / "g1.pt").write_bytes(b"not a checkpoint")
    (tmp_path / "partial" / ".g0.pt.x1y2.tmp").write_bytes(b"left by a killed writer")
    (tmp_path / "runs.sqlite").write_bytes(b"")

    repaired = repair(tmp_path)
    assert [source for _, source in repaired.runs] == ["their checkpoints' metadata"]
    assert repaired.groups == ["partial/g0.pt"] and repaired.temporary == 1
    assert [checkpoint for checkpoint, _ in repaired.unusable] == [old.checkpoint, "partial/g1.pt"]
    text = "\n".join(repaired.lines())
    assert "2 checkpoints could not be used" in text and "no run metadata" in text
    assert "partial/g1.pt: not a readable checkpoint of a run in progress" in text
    assert (tmp_path / "unrecovered" / old.checkpoint).is_file()  # kept, not deleted
    assert (tmp_path / "unrecovered" / "partial" / "g1.pt").read_bytes() == b"not a checkpoint"
    fresh = Store(tmp_path)
    assert [r.spec.seed for r in fresh.runs()] == [0] and fresh.finished(old.spec) is None


def test_repair_takes_intact_rows_from_a_damaged_file(tmp_path, monkeypatch):
    """A checkpoint without metadata is still recovered from its old row when that row is intact
    and matches the file (here the file is damaged in another table's columns)."""
    import safetensors.torch

    real = safetensors.torch.save_file
    monkeypatch.setattr(safetensors.torch, "save_file", lambda tensors, path, metadata=None: real(tensors, path))
    old = _record(Store(tmp_path), 1)
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        db.execute("ALTER TABLE partial_summary DROP COLUMN summary")
    with pytest.raises(ValidationError, match="table partial_summary lacks column summary"):
        Store(tmp_path)
    repaired = repair(tmp_path)
    assert repaired.runs == [(old.checkpoint, "intact rows of the damaged file")] and repaired.moved_to.is_file()
    assert Store(tmp_path).finished(old.spec) == old


def test_a_store_locked_by_another_program_is_not_called_damaged(tmp_path, monkeypatch):
    _record(Store(tmp_path), 0)
    monkeypatch.setattr(validation.runs.store, "BUSY_TIMEOUT", 0.1)
    other = sqlite3.connect(tmp_path / "runs.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    for opening in (Store, repair):
        with pytest.raises(ValidationError, match="locked by another program"):
            opening(tmp_path)
    other.execute("ROLLBACK")
    assert not list(tmp_path.glob("runs.sqlite.damaged-*")) and len(Store(tmp_path).runs()) == 1


def test_checkpoints_are_written_under_unique_temporary_names(tmp_path, monkeypatch):
    store = Store(tmp_path)
    real, seen = torch.save, []

    def save(state, path):
        seen.append(path)
        real(state, path)

    monkeypatch.setattr(torch, "save", save)
    (tmp_path / "partial" / ".g0.pt.stale.tmp").write_bytes(b"left by a killed writer")
    for step in (1, 2):
        store.save_partial("g0", {"step": step, "seeds": [0], "history": [[]]})
    assert len(set(seen)) == 2 and all(p.parent == tmp_path / "partial" and p.name.endswith(".tmp") for p in seen)
    assert sorted(p.name for p in (tmp_path / "partial").iterdir()) == ["g0.pt"]  # the stale one removed too
    assert store.load_partial("g0")["step"] == 2


WORKERS, ROUNDS = 4, 50


def _hammer(root: str, worker: int) -> list[str]:
    """One of the processes of the acceptance test: finished runs of its own, and one group's
    checkpoint that every process saves and reads. Writes are not flushed to disk (a power cut is
    not what this tests), which makes each some ten times faster."""
    validation.runs.store.SYNC = False
    store = Store(root)
    wrong = []
    for k in range(ROUNDS):
        run = _record(store, 1000 * worker + k, float(k))
        if store.finished(run.spec) != run:
            wrong.append(f"run {run.spec.seed} not found as recorded")
        store.save_partial("g0", {"step": k, "worker": worker, "seeds": [worker], "history": [[]],
                                  "w": torch.full((3,), float(1000 * worker + k))})
        state = store.load_partial("g0")
        if state is None or state["w"].tolist() != [float(1000 * state["worker"] + state["step"])] * 3:
            wrong.append(f"group checkpoint read as {state}")
    store.close()
    return wrong + [f"{p.key}: {p.what}" for p in store.problems]


def test_four_processes_share_one_store_without_losing_anything(tmp_path):
    Store(tmp_path).close()
    # fork starts in milliseconds where spawn imports torch anew in each process (seconds); the
    # workers' tensors are too small for torch's thread pool, which a fork must not inherit in use
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    started = time.perf_counter()
    with context.Pool(WORKERS) as pool:
        results = pool.starmap(_hammer, [(str(tmp_path), w) for w in range(WORKERS)])
    assert results == [[]] * WORKERS
    store = Store(tmp_path)
    runs = store.runs()
    assert sorted(r.spec.seed for r in runs) == sorted(1000 * w + k for w in range(WORKERS) for k in range(ROUNDS))
    assert all(float(store.weights(r)["w"][0]) == r.spec.seed % 1000 for r in runs) and store.problems == []
    assert store.load_partial("g0")["step"] == ROUNDS - 1
    assert not list(tmp_path.rglob("*.tmp"))
    assert time.perf_counter() - started < 60


class _Killed(BaseException):
    """Stands for the signal that kills a writer between its commit and its rename."""


@pytest.mark.parametrize("what", ["finished run", "group in progress"])
@pytest.mark.parametrize("when", ["at its commit", "before its rename"])
def test_a_killed_writer_leaves_a_store_that_opens(tmp_path, monkeypatch, what, when):
    """Killed at any point of a write, a writer leaves no checkpoint without its row (a store every
    reader would refuse until repaired): at most a row whose file is missing, a damaged run."""
    store = Store(tmp_path)
    _record(store, 0)

    def killed(*_, **__):
        raise _Killed

    if when == "at its commit":
        monkeypatch.setattr(Store, "_transaction", killed)
    else:
        monkeypatch.setattr(validation.runs.store.os, "replace", killed)
    with pytest.raises(_Killed):
        if what == "finished run":
            _record(store, 1)
        else:
            store.save_partial("g1", {"step": 3, "seeds": [1], "history": [[]]})
    monkeypatch.undo()
    store.close()
    reopened = Store(tmp_path)  # not refused
    assert [r.spec.seed for r in reopened.runs()] == [0]
    lost = f"checkpoint checkpoints/{dataclasses.replace(SPEC, seed=1).key}.safetensors is missing"
    assert [p.what for p in reopened.problems] == ([lost] if (what, when) == ("finished run", "before its rename")
                                                   else [])
    if what == "finished run":
        _record(reopened, 1)  # trained again: its row is replaced and its file is in place
        assert sorted(r.spec.seed for r in Store(tmp_path).runs()) == [0, 1]
    else:
        assert reopened.load_partial("g1") is None  # its file never arrived: the group starts again
    assert not list(tmp_path.glob("*/.*.tmp"))
