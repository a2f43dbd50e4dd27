"""An embedded store of every run: one SQLite file plus checkpoint files beside it.

A finished run is one row (its spec, accuracy per bin, steps, wall time, history) and one
safetensors file of its weights, whose metadata repeats the row's content. Each row carries a
SHA-256 digest of its own content and of its checkpoint, so a damaged row or file is detected and
reported instead of used. A group of seeds in training saves its whole state (weights, optimizer,
data streams) after every evaluation, so a killed sweep resumes where it was: finished runs are
never repeated, and a run in progress loses at most the steps since its last evaluation.

Guarantees:

* **Atomic writes.** A checkpoint is written to a temporary file of a unique name in its own
  folder, flushed to disk, then renamed over the old one (``os.replace``); a reader sees the old
  file or the new one, never half of one. Rows are written in SQLite transactions, committed
  before the rename, so a writer killed in between leaves a row whose checkpoint is missing (a
  damaged run, trained again), never a checkpoint without a row (a store every reader refuses).
* **Concurrent use.** Any number of processes on one machine may read and write one store at
  once (several ``crasp validate`` or ``crasp arithmetic --run`` sharing a GPU). A lock file,
  ``store.lock`` (``fcntl.flock``; ``msvcrt`` on Windows), is held exclusively while a checkpoint
  and its row change together and shared while they are read, so a row and its file always match;
  SQLite's own locking, with a busy timeout, orders the transactions. The lock is released when
  a process dies. Locks on network file systems (NFS) may not hold: keep a shared store local.
* **Checked on open.** ``PRAGMA quick_check``, the tables and columns the store needs, and that
  every checkpoint on disk has its row. A damaged or emptied ``runs.sqlite`` raises
  :class:`~validation.config.ValidationError` naming the file and the damage, never a traceback
  or a silently empty store; :func:`repair` (``crasp report --repair``) mends it.
* **Repair** moves a damaged ``runs.sqlite`` aside (``runs.sqlite.damaged-<time>``, never
  deleted), builds a new one, and rebuilds every row the files allow: a finished run from its
  checkpoint's metadata (or from its old row where the damaged file still yields it intact), a
  group in progress from its checkpoint. A checkpoint that cannot be used (one written before
  checkpoints carried their run, or a damaged file) is moved to ``unrecovered/`` and its run is
  trained again. Run it while no other process has the store open.

>>> import tempfile
>>> from validation.config import ModelConfig, TrainConfig
>>> from validation.runs.spec import RunSpec
>>> store = Store(tempfile.mkdtemp())
>>> spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
>>> store.finished(spec) is None
True
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, Literal

import torch

from validation.config import ValidationError
from validation.runs.spec import RunSpec, spec_from_json

fcntl: ModuleType | None
msvcrt: ModuleType | None
try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None


SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL, variant TEXT NOT NULL, model TEXT NOT NULL, preset TEXT NOT NULL, seed INTEGER NOT NULL,
    spec TEXT NOT NULL, accuracy TEXT NOT NULL, steps INTEGER NOT NULL, wall_time REAL NOT NULL,
    stopped_early INTEGER NOT NULL, history TEXT NOT NULL, checkpoint TEXT NOT NULL,
    checkpoint_sha256 TEXT NOT NULL, finished_at TEXT NOT NULL, digest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS partial (
    group_key TEXT PRIMARY KEY, path TEXT NOT NULL, sha256 TEXT NOT NULL, step INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS partial_summary (
    group_key TEXT PRIMARY KEY, step INTEGER NOT NULL, summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS provenance (
    key TEXT PRIMARY KEY, trained_on TEXT NOT NULL
);
"""


def _schema_columns() -> dict[str, tuple[str, ...]]:
    with sqlite3.connect(":memory:") as db:
        db.executescript(SCHEMA)
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
        return {t: tuple(row[1] for row in db.execute(f"PRAGMA table_info({t})")) for t in tables}


COLUMNS = _schema_columns()
"""The tables of a store and the columns each must have."""


SUMMARY = ("spec", "seeds", "step", "total_steps", "history")
"""What a report needs of a group in progress, kept beside its row as JSON so that listing such
groups does not load their checkpoints (about 0.5 GB for a paper-size encoder with its optimizer
state). A table of its own leaves ``partial`` as older versions write it: a summary whose step is
not its row's (the row was saved by such a version) is not used."""


RUN_METADATA = "crasp.run"
"""The key, in a finished run's safetensors metadata, of the run's spec and results as JSON (what a
repair rebuilds its row from)."""


BUSY_TIMEOUT = 60.0
"""Seconds a connection waits for another process's SQLite lock before giving up."""


SYNC = True
"""Whether every write is flushed to disk (fsync) before it counts, so that a power cut loses
nothing committed. Only tests that hammer a store turn it off, for speed: ordering and atomicity
between processes do not depend on it."""


LOCK_FILE = "store.lock"


UNRECOVERED = "unrecovered"


COMPARED = "compared_with"
"""The key, in a run's provenance, of what it is compared with (:attr:`StoredRun.compared_with`)."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _repair_hint(root: Path) -> str:
    return (f"repair it with `crasp report --repair --store {root}` (moves a damaged runs.sqlite aside, never "
            f"deletes it, and rebuilds the rows its checkpoints allow)")


@dataclass(frozen=True)
class StoredRun:
    """A finished run as stored."""

    spec: RunSpec
    accuracy: tuple[float, ...]
    steps: int
    wall_time: float
    stopped_early: bool
    history: tuple[tuple[int, tuple[float, ...]], ...]
    checkpoint: str
    finished_at: str = ""
    """When the run was recorded, ``YYYY-MM-DDTHH:MM:SS`` in the recording machine's local time."""
    trained_on: dict = field(default_factory=dict, compare=False)
    """Where it trained: ``device``, ``device_name``, ``step`` (how its steps were taken) and
    ``torch``; empty for runs recorded before stores kept it."""
    checkpoint_sha256: str = field(default="", compare=False)
    """The digest of the checkpoint file ("" where the store holds no weights)."""
    compared_with: dict = field(default_factory=dict, compare=False)
    """What the run is compared with, recorded when it trained: ``prediction`` (a
    :class:`~validation.runs.prediction.RecordedPrediction` as JSON) and ``baseline`` (per bin,
    the best constant answer's accuracy on its test sets, :mod:`validation.data.baseline`); empty
    for runs recorded before stores kept them."""

    @property
    def has_weights(self) -> bool:
        """Whether the store holds the run's weights (a run imported without them has none)."""
        return bool(self.checkpoint)

    def to_json(self) -> dict:
        """The run as JSON: its store key, its spec as keyed (:meth:`RunSpec.to_json`), its results,
        where it trained and its checkpoint (relative to the store's folder; "" where the store
        holds no weights); not its history."""
        return {"key": self.spec.key, "spec": self.spec.to_json(), "accuracy": list(self.accuracy),
                "steps": self.steps, "wall_time": self.wall_time, "stopped_early": self.stopped_early,
                "trained_on": dict(self.trained_on), "compared_with": dict(self.compared_with),
                "checkpoint": self.checkpoint}

    @property
    def provenance(self) -> dict:
        """Where the run trained and what it is compared with, as the store's ``provenance`` table
        keeps them (one JSON object per run)."""
        return provenance_of(self.trained_on, self.compared_with)


def provenance_of(trained_on: dict | None, compared_with: dict | None) -> dict:
    """A run's ``provenance`` as the store keeps it: where it trained, with what it is compared
    with under :data:`COMPARED` (left out when nothing is)."""
    return {**(trained_on or {}), **({COMPARED: dict(compared_with)} if compared_with else {})}


@dataclass(frozen=True)
class InProgress:
    """A group of seeds saved in training: its configuration (None for a checkpoint saved before
    checkpoints named it), its seeds, the step reached of how many, and each seed's evaluations."""

    group_key: str
    spec: RunSpec | None
    seeds: tuple[int, ...]
    step: int
    total_steps: int | None
    history: tuple[tuple[tuple[int, tuple[float, ...]], ...], ...]


@dataclass(frozen=True)
class Problem:
    """A row or file that failed its integrity check."""

    key: str
    what: str


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _row_digest(fields: dict) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _run_fields(spec: RunSpec, run: dict, checkpoint: str, checkpoint_sha256: str) -> dict:
    """The row of a finished run: ``run`` holds what :meth:`Store.record` writes into the
    checkpoint's metadata (spec, accuracy, steps, wall_time, stopped_early, history, finished_at)."""
    fields = {
        "key": spec.key, "task": spec.task, "variant": spec.variant, "model": spec.model.label,
        "preset": spec.preset, "seed": spec.seed, "spec": json.dumps(spec.to_json(), sort_keys=True),
        "accuracy": json.dumps([float(a) for a in run["accuracy"]]), "steps": int(run["steps"]),
        "wall_time": float(run["wall_time"]), "stopped_early": int(bool(run["stopped_early"])),
        "history": json.dumps([[int(s), [float(a) for a in acc]] for s, acc in run["history"]]),
        "checkpoint": checkpoint, "checkpoint_sha256": checkpoint_sha256, "finished_at": str(run["finished_at"]),
    }
    fields["digest"] = _row_digest(fields)
    return fields


def _fsync(path: Path) -> None:
    """Flush a file (and on POSIX its folder's entry) to disk, so a rename survives a power cut."""
    if not SYNC:
        return
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())
    if os.name == "posix":
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        except OSError:  # some file systems cannot sync a folder
            pass
        finally:
            os.close(folder)


def _temporary_files(folder: Path, name: str | None = None) -> list[Path]:
    """Temporary files of writes into ``folder`` (of ``name`` only, if given)."""
    return sorted(folder.glob(f".{'*' if name is None else glob.escape(name)}.*.tmp"))


LOCKED = fcntl is not None or msvcrt is not None
"""Whether this platform has a file lock (POSIX ``fcntl`` or Windows ``msvcrt``). Without one the
store still writes atomically, but concurrent writers to one store are not ordered."""


def _replace_atomically(path: Path, write, then=None) -> None:
    """``write(temporary)``, then ``then(temporary)`` (the row that refers to it, committed), then
    rename the temporary file over ``path``: :func:`_replace_all_atomically` of one file."""
    _replace_all_atomically([(path, write)], None if then is None else lambda temporaries: then(temporaries[0]))


def _replace_all_atomically(files: list[tuple[Path, Callable[[Path], object]]],
                            then: Callable[[list[Path]], object] | None = None) -> None:
    """Per ``(path, write)`` of ``files``, ``write(temporary)`` into a temporary file beside
    ``path``; then ``then(temporaries)`` (the rows that refer to them, committed); then rename each
    temporary file over its ``path``. The caller holds the store's lock exclusively, so a temporary
    file left by a killed writer is removed. A writer killed before the renames leaves rows whose
    files are missing, which readers skip as damaged runs (trained again), never a file without a
    row, which would make every reader refuse the store until it is repaired."""
    temporaries: list[Path] = []
    try:
        for path, write in files:
            if LOCKED:
                for stale in _temporary_files(path.parent, path.name):
                    stale.unlink(missing_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(handle)
            temporaries.append(Path(name))
            if os.name == "posix":  # mkstemp makes it private: give it the mode a new file gets here
                os.chmod(temporaries[-1], path.parent.stat().st_mode & 0o666)
            write(temporaries[-1])
            _fsync(temporaries[-1])
        if then is not None:
            then(temporaries)
        for (path, _), temporary in zip(files, temporaries):
            os.replace(temporary, path)
    except BaseException:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
        raise


@contextmanager
def _file_lock(root: Path, exclusive: bool) -> Iterator[None]:
    """Hold the store's lock file: shared (readers) or exclusive (writers). Each holding opens the
    file anew, so a process forked while holding it does not share the lock."""
    with open(root / LOCK_FILE, "a+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield  # closing the file releases the lock
        elif msvcrt is not None:  # exclusive only: readers wait for each other too
            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
                    break
                except OSError:
                    time.sleep(0.05)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:  # no file lock on this platform: atomic renames still hold, ordering does not
            yield


def checkpoint_files(root: str | os.PathLike) -> list[str]:
    """The checkpoints on disk under ``root``, relative to it (``checkpoints/*.safetensors`` and
    ``partial/*.pt``; temporary files of writes in progress are not checkpoints)."""
    root = Path(root)
    return sorted([f"checkpoints/{p.name}" for p in (root / "checkpoints").glob("*.safetensors")]
                  + [f"partial/{p.name}" for p in (root / "partial").glob("*.pt")])


def has_store(root: str | os.PathLike) -> bool:
    """Whether ``root`` holds a run store (its SQLite file, or checkpoints that lost it)."""
    return (Path(root) / "runs.sqlite").is_file() or bool(checkpoint_files(root))


def _damage(db: sqlite3.Connection) -> list[str]:
    """What ``PRAGMA quick_check`` and the schema say is wrong (raises sqlite3.DatabaseError on a
    file too damaged to read)."""
    found = [row[0] for row in db.execute("PRAGMA quick_check").fetchall() if row[0] != "ok"]
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        return [f"quick_check found {'; '.join(found[:3])}{more}"]
    damage = []
    for table, wanted in COLUMNS.items():
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in wanted if c not in present]
        if present and missing:
            damage.append(f"table {table} lacks column{'s' * (len(missing) > 1)} {', '.join(missing)}")
    return damage


def _refuse_if_busy(path: Path, error: sqlite3.DatabaseError) -> None:
    """A file another connection kept locked past the busy timeout is not damaged: say so."""
    if getattr(error, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        raise ValidationError(f"{path}: locked by another program for over {BUSY_TIMEOUT:.0f} s ({error}); "
                              f"try again when it is done") from None


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _referenced(db: sqlite3.Connection) -> set[str]:
    tables = _tables(db)
    found = {row[0] for row in db.execute("SELECT checkpoint FROM runs")} if "runs" in tables else set()
    return found | ({row[0] for row in db.execute("SELECT path FROM partial")} if "partial" in tables else set())


class Store:
    """The runs under ``root`` (``runs.sqlite``, ``checkpoints/``, ``partial/``), checked when
    opened (see the module's guarantees): a damaged store raises
    :class:`~validation.config.ValidationError` that says how to repair it."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "checkpoints").mkdir(exist_ok=True)
        (self.root / "partial").mkdir(exist_ok=True)
        self.path = self.root / "runs.sqlite"
        self.problems: list[Problem] = []
        self._held: Literal["shared", "exclusive"] | None = None  # while this object holds the lock file
        with self._locked(exclusive=False):
            self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        if not self.path.is_file():  # refused before connecting, which would create it
            if checkpoint_files(self.root):
                raise self._lost_rows(checkpoint_files(self.root), "the file is missing")
        emptied = self.path.is_file() and self.path.stat().st_size == 0
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)  # transactions: explicit
        if not SYNC:
            db.execute("PRAGMA synchronous = OFF")
        try:
            damage = _damage(db)
            if not damage:
                missing = [t for t in COLUMNS if t not in _tables(db)]
                referenced = _referenced(db)
                orphans = [p for p in checkpoint_files(self.root) if p not in referenced]
        except sqlite3.DatabaseError as error:
            db.close()
            _refuse_if_busy(self.path, error)
            damage = [str(error)]
        if damage:
            db.close()
            raise ValidationError(f"{self.path}: not a readable run store: {'; '.join(damage)}; "
                                  f"{_repair_hint(self.root)}")
        if orphans:
            db.close()
            raise self._lost_rows(orphans, "the file is empty" if emptied else
                                  f"table{'s' * (len(missing) > 1)} {', '.join(missing)} missing" if missing else
                                  "their rows were lost")
        if missing:  # a new store, or one written by a version that had fewer tables
            db.executescript(SCHEMA)
        return db

    def _lost_rows(self, orphans: list[str], why: str) -> ValidationError:
        finished = sum(p.startswith("checkpoints/") for p in orphans)
        verb = "have" if len(orphans) > 1 else "has"
        return ValidationError(
            f"{self.path}: {_count(len(orphans), 'checkpoint')} on disk {verb} no row ({finished} of finished runs "
            f"in {self.root / 'checkpoints'}, {len(orphans) - finished} of runs in progress in "
            f"{self.root / 'partial'}, e.g. {orphans[0]}): {why}; {_repair_hint(self.root)}")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """The store's lock file (re-entrant within this object; a shared holding is never
        upgraded, which would let two upgrading readers deadlock)."""
        if self._held is not None:
            if exclusive and self._held == "shared":
                raise RuntimeError("store lock: exclusive access asked for while holding it shared")
            yield
            return
        with _file_lock(self.root, exclusive):
            self._held = "exclusive" if exclusive else "shared"
            try:
                yield
            finally:
                self._held = None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One SQLite write transaction (its write lock taken at once: waits, rather than fails,
        for other writers)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ finished runs

    def record(self, spec: RunSpec, accuracy, steps: int, wall_time: float, stopped_early: bool,
               history, weights: dict[str, torch.Tensor], *, trained_on: dict | None = None,
               compared_with: dict | None = None) -> StoredRun:
        """Store a finished run under the store's lock: its checkpoint file (whose metadata holds the
        run's spec, results, where it trained and what it is compared with, for :func:`repair`)
        written under a temporary name, then its rows committed, then the file renamed into place."""
        from safetensors.torch import save_file

        relative = f"checkpoints/{spec.key}.safetensors"
        tensors = {n: t.detach().cpu().contiguous() for n, t in weights.items()}
        where = provenance_of(trained_on, compared_with)
        run = {"spec": spec.to_json(), "accuracy": [float(a) for a in accuracy], "steps": int(steps),
               "wall_time": float(wall_time), "stopped_early": bool(stopped_early),
               "history": [[int(s), [float(a) for a in acc]] for s, acc in history],
               "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "trained_on": where}
        metadata = {RUN_METADATA: json.dumps(run, sort_keys=True)}
        written: dict = {}

        def insert_row(temporary: Path) -> None:
            written.update(_run_fields(spec, run, relative, _sha256_file(temporary)))
            with self._transaction():
                self.insert(written, where)

        with self._locked(exclusive=True):
            _replace_atomically(self.root / relative, lambda path: save_file(tensors, str(path), metadata=metadata),
                                then=insert_row)
        return self._parse({**written, "trained_on": json.dumps(where)})

    def insert(self, fields: dict, trained_on: dict) -> None:
        """Write a run's row (as :func:`_run_fields` makes it) and where it trained; the caller holds
        the lock and a transaction."""
        self.db.execute(f"INSERT OR REPLACE INTO runs ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))})",
                        tuple(fields.values()))
        if trained_on:
            self.db.execute("INSERT OR REPLACE INTO provenance VALUES (?, ?)",
                            (fields["key"], json.dumps(trained_on, sort_keys=True)))

    _SELECT = "SELECT runs.*, provenance.trained_on FROM runs LEFT JOIN provenance USING (key)"

    def finished(self, spec: RunSpec) -> StoredRun | None:
        """The stored run for ``spec``, or None if there is none or it is damaged (then listed in
        :attr:`problems`, and the run is trained again)."""
        with self._locked(exclusive=False):
            cursor = self.db.execute(f"{self._SELECT} WHERE key = ?", (spec.key,))
            row = cursor.fetchone()
            return None if row is None else self._verified(self._as_dict(cursor, row))

    def runs(self, task: str | None = None, preset: str | None = None) -> list[StoredRun]:
        """Every intact finished run (damaged ones go to :attr:`problems`)."""
        query = f"{self._SELECT} WHERE 1=1"
        args: list[str] = []
        if task is not None:
            query, args = query + " AND task = ?", [*args, task]
        if preset is not None:
            query, args = query + " AND preset = ?", [*args, preset]
        with self._locked(exclusive=False):
            cursor = self.db.execute(query + " ORDER BY task, variant, model, seed", args)
            verified = [self._verified(self._as_dict(cursor, row)) for row in cursor.fetchall()]
        return [run for run in verified if run is not None]

    def weights(self, run: StoredRun) -> dict[str, torch.Tensor]:
        """The trained weights of a run (load them with :class:`validation.models.build.Trained`)."""
        from safetensors.torch import load_file

        if not run.has_weights:
            raise ValidationError(f"run {run.spec.key} ({run.spec.task} {run.spec.variant} seed {run.spec.seed}) is "
                                  f"in {self.root} without its weights: it was imported from records exported "
                                  f"without --weights")
        with self._locked(exclusive=False):
            return load_file(str(self.root / run.checkpoint))

    @staticmethod
    def _as_dict(cursor, row) -> dict:
        return dict(zip([d[0] for d in cursor.description], row))

    def _verified(self, fields: dict) -> StoredRun | None:
        key = str(fields.get("key"))
        trained_on = fields.pop("trained_on", None)
        stored_digest = fields.pop("digest", None)
        if _row_digest(fields) != stored_digest:
            self._problem(key, "row content does not match its digest (edited or damaged)")
            return None
        if fields["checkpoint"]:  # "": imported without weights, nothing on disk to check
            path = self.root / fields["checkpoint"]
            if not path.is_file():
                self._problem(key, f"checkpoint {fields['checkpoint']} is missing")
                return None
            if _sha256_file(path) != fields["checkpoint_sha256"]:
                self._problem(key, f"checkpoint {fields['checkpoint']} does not match its digest (damaged)")
                return None
        try:
            return self._parse({**fields, "trained_on": trained_on})
        except (ValueError, KeyError, TypeError) as error:
            self._problem(key, f"row cannot be read: {error}")
            return None

    def _problem(self, key: str, what: str) -> None:
        problem = Problem(key, what)
        if problem not in self.problems:
            self.problems.append(problem)

    @staticmethod
    def _parse(fields: dict) -> StoredRun:
        provenance = json.loads(fields.get("trained_on") or "{}")
        compared = provenance.pop(COMPARED, None) or {}
        if not isinstance(compared, dict):
            raise ValueError(f"{COMPARED} is not an object: {compared!r}")
        accuracy = tuple(float(a) for a in json.loads(fields["accuracy"]))
        if not all(0.0 <= a <= 1.0 for a in accuracy):
            raise ValueError(f"accuracy {accuracy} outside [0, 1]")
        return StoredRun(
            spec_from_json(json.loads(fields["spec"])), accuracy, int(fields["steps"]), float(fields["wall_time"]),
            bool(fields["stopped_early"]),
            tuple((int(s), tuple(float(a) for a in acc)) for s, acc in json.loads(fields["history"])),
            fields["checkpoint"], str(fields["finished_at"]), provenance, str(fields["checkpoint_sha256"]), compared)

    # ------------------------------------------------------------ groups in progress

    def save_partial(self, group_key: str, state: dict) -> None:
        """Save the state of a group in training (replacing the previous one)."""
        relative = f"partial/{group_key}.pt"
        summary = json.dumps({name: state[name] for name in SUMMARY if name in state})
        def insert_rows(temporary: Path) -> None:
            with self._transaction():
                self.db.execute("INSERT OR REPLACE INTO partial (group_key, path, sha256, step) VALUES (?, ?, ?, ?)",
                                (group_key, relative, _sha256_file(temporary), int(state["step"])))
                self.db.execute("INSERT OR REPLACE INTO partial_summary VALUES (?, ?, ?)",
                                (group_key, int(state["step"]), summary))

        with self._locked(exclusive=True):
            _replace_atomically(self.root / relative, lambda path: torch.save(state, path), then=insert_rows)

    def load_partial(self, group_key: str) -> dict | None:
        """The saved state of a group, or None (a damaged one is reported in :attr:`problems`)."""
        with self._locked(exclusive=False):
            row = self.db.execute("SELECT path, sha256 FROM partial WHERE group_key = ?", (group_key,)).fetchone()
            if row is None or not self._intact_partial(group_key, *row):
                return None
            return torch.load(self.root / row[0], weights_only=True, map_location="cpu")  # a GPU run read on a CPU, too

    def _intact_partial(self, group_key: str, relative: str, sha256: str) -> bool:
        path = self.root / relative
        if path.is_file() and _sha256_file(path) == sha256:
            return True
        self._problem(group_key, f"checkpoint {relative} of a run in progress is missing or damaged; "
                                 f"its seeds restart from step 0")
        return False

    def in_progress(self) -> list[InProgress]:
        """Every group saved in training, as its last checkpoint left it (damaged ones are
        reported in :attr:`problems` and left out). Reads each checkpoint's digest, not its tensors."""
        found = []
        with self._locked(exclusive=False):
            rows = self.db.execute("SELECT p.group_key, p.path, p.sha256, p.step = s.step, s.summary FROM partial p "
                                   "LEFT JOIN partial_summary s USING (group_key) ORDER BY p.group_key").fetchall()
            states = []
            for key, relative, sha256, current, summary in rows:
                if not current:  # no summary, or one older than the row
                    states.append((key, self.load_partial(key)))
                else:
                    states.append((key, summary if self._intact_partial(key, relative, sha256) else None))
        for key, state in states:
            if state is None:
                continue
            try:
                state = json.loads(state) if isinstance(state, str) else state
                spec = spec_from_json(state["spec"]) if "spec" in state else None
                history = tuple(tuple((int(step), tuple(float(a) for a in acc)) for step, acc in seed_history)
                                for seed_history in state["history"])
                found.append(InProgress(key, spec, tuple(state["seeds"]), int(state["step"]),
                                        state.get("total_steps"), history))
            except (KeyError, TypeError, ValueError) as error:
                self._problem(key, f"checkpoint of a run in progress lacks what a report needs ({error})")
        return found

    def drop_partial(self, group_key: str) -> None:
        with self._locked(exclusive=True):
            row = self.db.execute("SELECT path FROM partial WHERE group_key = ?", (group_key,)).fetchone()
            with self._transaction():
                self.db.execute("DELETE FROM partial WHERE group_key = ?", (group_key,))
                self.db.execute("DELETE FROM partial_summary WHERE group_key = ?", (group_key,))
            if row is not None:
                (self.root / row[0]).unlink(missing_ok=True)


@dataclass
class Repaired:
    """What :func:`repair` found and did."""

    root: Path
    found: list[str] = field(default_factory=list)
    """What was wrong with ``runs.sqlite`` (empty when it was intact and complete)."""
    moved_to: Path | None = None
    """Where the damaged ``runs.sqlite`` was moved (None: it was kept)."""
    kept: int = 0
    """Rows that were already there (left as they were)."""
    runs: list[tuple[str, str]] = field(default_factory=list)
    """Finished runs whose row was rebuilt: (checkpoint, from what)."""
    groups: list[str] = field(default_factory=list)
    """Checkpoints of runs in progress whose rows were rebuilt."""
    unusable: list[tuple[str, str]] = field(default_factory=list)
    """Checkpoints that could not be used, and why (moved under ``unrecovered/``)."""
    temporary: int = 0
    """Temporary files of interrupted writes, removed."""

    def lines(self) -> list[str]:
        """The repair in words, as ``crasp report --repair`` prints it."""
        path = self.root / "runs.sqlite"
        if not (self.found or self.runs or self.groups or self.unusable or self.temporary):
            return [f"{path}: intact, nothing to repair ({self.kept} rows)"]
        lines = [f"{path}: {'; '.join(self.found) if self.found else 'readable, but checkpoints on disk had no row'}"]
        if self.moved_to:
            lines.append(f"moved the damaged file to {self.moved_to} (kept, not deleted) and built a new one")
        sources = sorted({source for _, source in self.runs})
        counts = ", ".join(f"{sum(s == source for _, s in self.runs)} from {source}" for source in sources)
        lines.append(f"{_count(len(self.runs), 'finished run')} recovered" + (f" ({counts})" if counts else ""))
        lines.append(f"{_count(len(self.groups), 'run')} in progress recovered")
        if self.kept:
            lines.append(f"{_count(self.kept, 'row')} already there, kept")
        if self.unusable:
            lines.append(f"{_count(len(self.unusable), 'checkpoint')} could not be used (moved to "
                         f"{self.root / UNRECOVERED}; their runs will be trained again):")
            lines += [f"  {checkpoint}: {why}" for checkpoint, why in self.unusable]
        if self.temporary:
            lines.append(f"removed {_count(self.temporary, 'temporary file')} of interrupted writes")
        return lines


def repair(root: str | os.PathLike) -> Repaired:
    """Rebuild the store under ``root`` from what its files allow; afterwards it opens cleanly.

    A damaged ``runs.sqlite`` (one :class:`Store` refuses) is moved aside, renamed
    ``runs.sqlite.damaged-<time>``, never deleted, and a new one is built. Every checkpoint without a
    row gets one again: a finished run from the spec and results in its safetensors metadata, or
    failing that from its row in the damaged file if that row is intact and matches the file; a
    group in progress from its checkpoint. A checkpoint neither allows (one written before
    checkpoints carried their run, a damaged file) is moved to ``unrecovered/`` and its run will be
    trained again. Holds the store's lock throughout, so it waits for other writers; run it while no
    other process has the store open (one that has would go on writing to the file moved aside).

    >>> import tempfile, torch
    >>> from validation.config import ModelConfig, TrainConfig
    >>> from validation.runs.spec import RunSpec
    >>> root = tempfile.mkdtemp()
    >>> spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
    >>> _ = Store(root).record(spec, (1.0, 0.9, 0.8), 100, 1.0, False, [], {"w": torch.zeros(2)})
    >>> open(f"{root}/runs.sqlite", "wb").close()  # emptied: the row is gone, the checkpoint is not
    >>> Store(root)
    Traceback (most recent call last):
    validation.config.ValidationError: ...: 1 checkpoint on disk has no row ...: the file is empty; repair it ...
    >>> repaired = repair(root)
    >>> repaired.found
    ['the file is empty']
    >>> for line in repaired.lines()[1:]:
    ...     print(line)
    1 finished run recovered (1 from their checkpoints' metadata)
    0 runs in progress recovered
    >>> Store(root).finished(spec).accuracy
    (1.0, 0.9, 0.8)
    """
    root = Path(root)
    if not has_store(root):
        raise ValidationError(f"{root}: no run store here (give --store)")
    for folder in ("checkpoints", "partial"):
        (root / folder).mkdir(exist_ok=True)
    path = root / "runs.sqlite"
    result = Repaired(root)
    with _file_lock(root, exclusive=True):
        salvaged: dict = {}
        salvaged_provenance: dict[str, dict] = {}
        damage = _diagnose(path)
        if damage:
            result.found.append(damage)
            result.moved_to = _move_aside(path)
            salvaged, salvaged_provenance = _salvage(result.moved_to)
        elif not path.is_file():
            result.found.append("the file is missing")
        elif path.stat().st_size == 0:
            result.found.append("the file is empty")
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            missing = [t for t in COLUMNS if t not in _tables(db)]
            if missing and not damage and path.stat().st_size:
                result.found.append(f"table{'s' * (len(missing) > 1)} {', '.join(missing)} missing")
            db.executescript(SCHEMA)
            referenced = _referenced(db)
            result.kept = (db.execute("SELECT count(*) FROM runs").fetchone()[0]
                           + db.execute("SELECT count(*) FROM partial").fetchone()[0])
            db.execute("BEGIN IMMEDIATE")
            for relative in checkpoint_files(root):
                if relative in referenced:
                    continue
                if relative.startswith("checkpoints/"):
                    fields, trained_on, why = _finished_row(root, relative, salvaged.get(relative))
                    if fields is not None:
                        _insert_run(db, fields, trained_on or salvaged_provenance.get(fields["key"], {}))
                        result.runs.append((relative, why))
                        continue
                else:
                    rows, why = _partial_rows(root, relative)
                    if rows is not None:
                        db.execute("INSERT OR REPLACE INTO partial (group_key, path, sha256, step) VALUES "
                                   "(?, ?, ?, ?)", rows[0])
                        db.execute("INSERT OR REPLACE INTO partial_summary VALUES (?, ?, ?)", rows[1])
                        result.groups.append(relative)
                        continue
                _move_unrecovered(root, relative)
                result.unusable.append((relative, why))
            for fields in salvaged.get("", []):  # runs imported without weights: their rows are all there is
                if _intact_row(fields) and not db.execute("SELECT 1 FROM runs WHERE key = ?",
                                                          (fields["key"],)).fetchone():
                    _insert_run(db, {k: v for k, v in fields.items() if k != "trained_on"},
                                salvaged_provenance.get(fields["key"], {}))
                    result.runs.append((f"run {fields['key']}", "intact rows of the damaged file (no weights)"))
            db.execute("COMMIT")
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")
            db.close()
        for folder in ("checkpoints", "partial"):  # every writer holds the lock: these are left by killed ones
            for stale in _temporary_files(root / folder):
                stale.unlink(missing_ok=True)
                result.temporary += 1
    return result


def _diagnose(path: Path) -> str:
    """What is wrong with the SQLite file at ``path`` ("" when nothing, or when there is none)."""
    if not path.is_file():
        return ""
    try:
        with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT)) as db:
            return "; ".join(_damage(db))
    except sqlite3.DatabaseError as error:
        _refuse_if_busy(path, error)
        return str(error)


def _move_aside(path: Path) -> Path:
    """Rename a damaged ``runs.sqlite`` (and any journal of it, detached) with a ``.damaged-<time>``
    suffix that no earlier repair used."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target, n = path.with_name(f"{path.name}.damaged-{stamp}"), 1
    while target.exists():
        target, n = path.with_name(f"{path.name}.damaged-{stamp}-{n}"), n + 1
    path.rename(target)
    for suffix in ("-journal", "-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(path.with_name(f"{path.name}{suffix}.{target.name.split('.')[-1]}"))
    return target


def _salvage(path: Path) -> tuple[dict, dict[str, dict]]:
    """What a damaged file still yields (read only): the rows of finished runs by checkpoint (those
    without weights listed under ""), and where each run trained, by key."""
    rows: dict = {}
    provenance: dict[str, dict] = {}
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error:
        return rows, provenance
    try:
        cursor = db.execute("SELECT * FROM runs")
        names = [d[0] for d in cursor.description]
        for row in cursor:  # stops at the first page that cannot be read
            fields = dict(zip(names, row))
            if fields.get("checkpoint") == "":
                rows.setdefault("", []).append(fields)
            elif isinstance(fields.get("checkpoint"), str):
                rows[fields["checkpoint"]] = fields
        for key, text in db.execute("SELECT key, trained_on FROM provenance"):
            provenance[key] = json.loads(text)
    except (sqlite3.Error, ValueError):
        pass
    finally:
        db.close()
    return rows, provenance


def _intact_row(fields: dict) -> bool:
    """Whether a row (with its digest) is intact and readable."""
    content = {k: v for k, v in fields.items() if k != "digest"}
    try:
        Store._parse(content)
    except (ValueError, KeyError, TypeError, ValidationError):
        return False
    return _row_digest(content) == fields.get("digest")


def _insert_run(db: sqlite3.Connection, fields: dict, trained_on: dict) -> None:
    db.execute(f"INSERT OR REPLACE INTO runs ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))})",
               tuple(fields.values()))
    if trained_on:
        db.execute("INSERT OR REPLACE INTO provenance VALUES (?, ?)", (fields["key"], json.dumps(trained_on)))


def _finished_row(root: Path, relative: str, old: dict | None) -> tuple[dict | None, dict, str]:
    """The row of a finished run's checkpoint, where it trained (as far as its metadata says), and
    where the row came from; or None and why not."""
    from safetensors import SafetensorError, safe_open

    path = root / relative
    try:
        with safe_open(str(path), "pt") as handle:
            metadata = handle.metadata() or {}
    except (SafetensorError, OSError) as error:
        return None, {}, f"not a readable safetensors file ({error})"
    sha256 = _sha256_file(path)
    if RUN_METADATA in metadata:
        try:
            run = json.loads(metadata[RUN_METADATA])
            spec = spec_from_json(run["spec"])
            fields = _run_fields(spec, run, relative, sha256)
            Store._parse(fields)
        except (ValueError, KeyError, TypeError, ValidationError) as error:
            return None, {}, f"its run metadata cannot be read ({error})"
        if relative != f"checkpoints/{spec.key}.safetensors":
            return None, {}, f"its metadata describes run {spec.key}, not the run this file is named for"
        return fields, dict(run.get("trained_on") or {}), "their checkpoints' metadata"
    if old is not None and _intact_row(old) and old.get("checkpoint_sha256") == sha256:
        return old, {}, "intact rows of the damaged file"
    return None, {}, ("no run metadata (written before checkpoints carried their run's spec and results) and no "
                      "intact row of it" + (" in the damaged file" if old is not None else ""))


def _partial_rows(root: Path, relative: str) -> tuple[tuple | None, str]:
    """The rows (``partial``, ``partial_summary``) of a group's checkpoint, or None and why not."""
    path = root / relative
    try:
        state = torch.load(path, weights_only=True, map_location="cpu")
        step = int(state["step"])
        summary = json.dumps({name: state[name] for name in SUMMARY if name in state})
    except Exception as error:  # noqa: BLE001 - a damaged file fails in unpickling, zip reading or the fields
        return None, f"not a readable checkpoint of a run in progress ({type(error).__name__}: {error})"
    key = Path(relative).stem
    return ((key, relative, _sha256_file(path), step), (key, step, summary)), ""


def _move_unrecovered(root: Path, relative: str) -> None:
    target = root / UNRECOVERED / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target = target.with_name(f"{target.name}.{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.replace(root / relative, target)
