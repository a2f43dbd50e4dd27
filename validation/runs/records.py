"""Runs that travel: a store's finished runs written to one small SQLite file, and merged into
another store, so that a rented GPU, a cluster and a laptop pool their runs.

A records file holds, per run, the store's own row (spec, accuracy per bin, steps, wall time,
history, when it was recorded, with the row's digest) and where it trained (device, its name, how
its steps were taken, torch's version); with ``weights``, the run's checkpoint file as it is in
the store (a safetensors file, checked against the row's digest). Without weights a run is
recorded as a store keeps a run imported without them: its row reads as any other, and
:meth:`~validation.runs.store.Store.weights` says the weights are elsewhere.

Importing is all or nothing and idempotent: every record is checked first (its digest, its
weights), a record whose key the store holds with other results is a conflict that refuses the
whole import, naming the run, and a record the store already holds is left as it is (or, where
the store lacks the weights the file carries, given them).

>>> import tempfile, torch
>>> from validation.config import ModelConfig, TrainConfig
>>> from validation.runs.spec import RunSpec
>>> from validation.runs.store import Store
>>> here, there = Store(tempfile.mkdtemp()), Store(tempfile.mkdtemp())
>>> spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
>>> _ = here.record(spec, (1.0, 0.9, 0.8), 100, 1.0, False, [(100, (1.0, 0.9, 0.8))], {"w": torch.zeros(2)})
>>> path = f"{tempfile.mkdtemp()}/runs.records"
>>> export(here, path).runs, import_records(there, path).added, import_records(there, path).unchanged
(1, 1, 1)
>>> there.finished(spec).accuracy, there.finished(spec).has_weights
((1.0, 0.9, 0.8), False)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from crasp.version import VERSION
from validation.config import ValidationError
from validation.runs.spec import spec_from_json
from validation.runs.store import Store, StoredRun, _replace_all_atomically, _replace_atomically, _row_digest, _run_fields

FORMAT = 1
"""The layout of a records file; a file of another layout is refused, naming both."""

SCHEMA = """
CREATE TABLE records (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    key TEXT PRIMARY KEY, fields TEXT NOT NULL, trained_on TEXT NOT NULL
);
CREATE TABLE weights (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, data BLOB NOT NULL);
"""

RESULT_FIELDS = ("key", "task", "variant", "model", "preset", "seed", "spec", "accuracy", "steps", "wall_time",
                 "stopped_early", "history", "finished_at")
"""The fields of a run's row that say what it is and what it gave (not where its weights lie):
two records of one key with different values here are two different runs."""


@dataclass(frozen=True)
class Exported:
    """What :func:`export` wrote."""

    path: Path
    runs: int
    weights: int
    size: int
    skipped: tuple[str, ...] = ()
    """Runs of the store left out because they are damaged (the store's problems say why)."""


@dataclass(frozen=True)
class Imported:
    """What :func:`import_records` did."""

    path: Path
    added: int
    unchanged: int
    weights: int
    """Runs whose weights came with the file (added ones, and ones the store held without them)."""
    given_weights: int
    """Of those, runs the store held already, without their weights."""

    def line(self) -> str:
        return (f"{self.path}: {self.added} runs added, {self.unchanged} already in the store"
                + (f", {self.given_weights} given their weights" if self.given_weights else "")
                + f" ({self.weights} runs' weights came with the file)")


def selected(store: Store, *, tasks: Iterable[str] | None = None, preset: str | None = None) -> list[StoredRun]:
    """The store's intact finished runs of ``tasks`` (all: None) under ``preset`` (any: None)."""
    wanted = set(tasks) if tasks else None
    return [run for run in store.runs(preset=preset) if wanted is None or run.spec.task in wanted]


def export(store: Store, path: str | os.PathLike, *, tasks: Iterable[str] | None = None, preset: str | None = None,
           weights: bool = False) -> Exported:
    """Write the records of the store's runs (of ``tasks`` and ``preset``, where given) to ``path``,
    replacing it atomically; with ``weights``, each run's checkpoint too."""
    path = Path(path)
    if path.is_dir():
        raise ValidationError(f"{path}: a folder; give the file to write the records to")
    if not path.parent.is_dir():
        raise ValidationError(f"{path.parent}: no such folder to write the records into")
    runs = selected(store, tasks=tasks, preset=preset)
    with_weights = 0

    def write(temporary: Path) -> None:
        nonlocal with_weights
        temporary.unlink()  # sqlite writes a file of its own
        with closing(sqlite3.connect(temporary)) as db:
            db.executescript(SCHEMA)
            db.executemany("INSERT INTO records VALUES (?, ?)", [
                ("format", str(FORMAT)), ("written_by", f"crasp-lengthgen {VERSION}"),
                ("written_at", time.strftime("%Y-%m-%dT%H:%M:%S")), ("source", str(store.root))])
            for run in runs:
                carried = weights and run.has_weights
                fields = _fields(run, carried)
                where = json.dumps(run.provenance, sort_keys=True)
                db.execute("INSERT INTO runs VALUES (?, ?, ?)", (run.spec.key, json.dumps(fields, sort_keys=True), where))
                if carried:
                    data = (store.root / run.checkpoint).read_bytes()
                    db.execute("INSERT INTO weights VALUES (?, ?, ?)",
                               (run.spec.key, fields["checkpoint_sha256"], data))
                    with_weights += 1
            db.commit()

    _replace_atomically(path, write)
    return Exported(path, len(runs), with_weights, path.stat().st_size,
                    tuple(p.key for p in store.problems))


def _fields(run: StoredRun, with_weights: bool) -> dict:
    """A run's row as the store writes it, its checkpoint named where the weights travel with it."""
    history = [(step, accuracy) for step, accuracy in run.history]
    record = {"spec": run.spec.to_json(), "accuracy": run.accuracy, "steps": run.steps, "wall_time": run.wall_time,
              "stopped_early": run.stopped_early, "history": history, "finished_at": run.finished_at}
    if not with_weights:
        return _run_fields(run.spec, record, "", "")
    return _run_fields(run.spec, record, run.checkpoint, run.checkpoint_sha256)


def import_records(store: Store, path: str | os.PathLike) -> Imported:
    """Merge the records of ``path`` into ``store`` (see the module's text): everything is checked
    before anything changes."""
    path = Path(path)
    records, carried = _read(path)
    existing = {run.spec.key: run for run in store.runs()}
    added, unchanged, upgrades = [], 0, []
    for key, (fields, trained_on) in records.items():
        old = existing.get(key)
        if old is None:
            added.append(key)
            continue
        mine = {name: value for name, value in _fields(old, False).items() if name in RESULT_FIELDS}
        theirs = {name: value for name, value in fields.items() if name in RESULT_FIELDS}
        if mine != theirs:
            changed = sorted(name for name in RESULT_FIELDS if mine.get(name) != theirs.get(name))
            raise ValidationError(
                f"{path}: run {key} ({old.spec.task} {old.spec.variant} {old.spec.model.label} seed {old.spec.seed}, "
                f"preset {old.spec.preset!r}) is in the store with other results ({', '.join(changed)} differ): "
                f"two trainings of one run; nothing was imported")
        if not old.has_weights and key in carried:
            upgrades.append(key)
        else:
            unchanged += 1
    _write(store, records, carried, added, upgrades)
    return Imported(path, len(added), unchanged, len(upgrades) + sum(1 for key in added if key in carried),
                    len(upgrades))


def _read(path: Path) -> tuple[dict[str, tuple[dict, dict]], dict[str, bytes]]:
    """Every record of a records file, checked: (row fields, where it trained) by key, and the
    weights it carries by key."""
    if not path.is_file():
        raise ValidationError(f"{path}: no such records file")
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as db:
            meta = dict(db.execute("SELECT name, value FROM records").fetchall())
            if meta.get("format") != str(FORMAT):
                raise ValidationError(f"{path}: records of format {meta.get('format')!r}; this version reads "
                                      f"format {FORMAT}")
            rows = db.execute("SELECT key, fields, trained_on FROM runs").fetchall()
            carried = dict(db.execute("SELECT key, data FROM weights").fetchall())
            digests = dict(db.execute("SELECT key, sha256 FROM weights").fetchall())
    except sqlite3.DatabaseError as error:
        raise ValidationError(f"{path}: not a readable records file ({error})") from None
    records: dict[str, tuple[dict, dict]] = {}
    for key, text, where in rows:
        try:
            fields, trained_on = json.loads(text), json.loads(where)
            content = {name: value for name, value in fields.items() if name != "digest"}
            spec = spec_from_json(json.loads(fields["spec"]))
            Store._parse(content)
        except (ValueError, KeyError, TypeError, ValidationError) as error:
            raise ValidationError(f"{path}: record {key} cannot be read ({error}); nothing was imported") from None
        if _row_digest(content) != fields.get("digest") or spec.key != key or fields["key"] != key:
            raise ValidationError(f"{path}: record {key} does not match its digest (edited or damaged); nothing was "
                                  f"imported")
        if key in carried:
            actual = hashlib.sha256(carried[key]).hexdigest()
            if not (actual == digests[key] == fields["checkpoint_sha256"]):
                raise ValidationError(f"{path}: the weights of run {key} do not match their digest (damaged); "
                                      f"nothing was imported")
        elif fields["checkpoint"]:
            raise ValidationError(f"{path}: record {key} names weights the file does not carry; nothing was "
                                  f"imported")
        records[key] = (fields, trained_on)
    return records, carried


def _write(store: Store, records: dict[str, tuple[dict, dict]], carried: dict[str, bytes], added: list[str],
           upgrades: list[str]) -> None:
    """Write the new runs (and the weights of runs the store had without them) under the store's
    lock: checkpoint files under temporary names first, then every row in one transaction, then
    the files renamed into place (as :meth:`Store.record` does); if writing or committing fails,
    nothing is left."""
    weighted = [key for key in [*added, *upgrades] if key in carried]

    def writer(data: bytes) -> Callable[[Path], object]:
        return lambda temporary: temporary.write_bytes(data)

    def insert_rows(_: list[Path]) -> None:
        with store._transaction():
            for key in [*added, *upgrades]:
                fields, trained_on = records[key]
                store.insert(dict(fields), trained_on)

    with store._locked(exclusive=True):
        _replace_all_atomically([(store.root / records[key][0]["checkpoint"], writer(carried[key]))
                                 for key in weighted], insert_rows)
