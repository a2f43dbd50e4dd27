"""An embedded store of every run: one SQLite file plus checkpoint files beside it.

A finished run is one row (its spec, accuracy per bin, steps, wall time, history) and one
safetensors file of its weights. Each row carries a SHA-256 digest of its own content and of its
checkpoint, so a damaged row or file is detected and reported instead of used. A group of seeds in
training saves its whole state (weights, optimizer, data streams) after every evaluation, so a
killed sweep resumes where it was: finished runs are never repeated, and a run in progress loses
at most the steps since its last evaluation.

>>> import tempfile
>>> from validation.config import ModelConfig, RunSpec, TrainConfig
>>> store = Store(tempfile.mkdtemp())
>>> spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
>>> store.finished(spec) is None
True
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .config import ModelConfig, RunSpec, TrainConfig, ValidationError

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
"""

SUMMARY = ("spec", "seeds", "step", "total_steps", "history")
"""What a report needs of a group in progress, kept beside its row as JSON so that listing such
groups does not load their checkpoints (about 0.5 GB for a paper-size encoder with its optimizer
state). A table of its own leaves ``partial`` as older versions write it: a summary whose step is
not its row's (the row was saved by such a version) is not used."""


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


def spec_from_json(data: dict) -> RunSpec:
    return RunSpec(data["task"], data["variant"], ModelConfig(**data["model"]), TrainConfig(**data["train"]),
                   int(data["seed"]), data.get("preset", ""), tuple(data.get("train_range", ())),
                   tuple(tuple(b) for b in data.get("bins", ())))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _row_digest(fields: dict) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _replace_atomically(path: Path, write) -> None:
    temporary = path.with_name(path.name + ".tmp")
    write(temporary)
    os.replace(temporary, path)


class Store:
    """The runs under ``root`` (``runs.sqlite``, ``checkpoints/``, ``partial/``)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "checkpoints").mkdir(exist_ok=True)
        (self.root / "partial").mkdir(exist_ok=True)
        self.path = self.root / "runs.sqlite"
        try:
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise ValidationError(f"{self.path}: not a readable run store ({error})") from None
        self.problems: list[Problem] = []

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ finished runs

    def record(self, spec: RunSpec, accuracy, steps: int, wall_time: float, stopped_early: bool,
               history, weights: dict[str, torch.Tensor]) -> StoredRun:
        """Store a finished run: its checkpoint file first, then its row (one transaction)."""
        from safetensors.torch import save_file

        relative = f"checkpoints/{spec.key}.safetensors"
        tensors = {n: t.detach().cpu().contiguous() for n, t in weights.items()}
        _replace_atomically(self.root / relative, lambda path: save_file(tensors, str(path)))
        fields = {
            "key": spec.key, "task": spec.task, "variant": spec.variant, "model": spec.model.label,
            "preset": spec.preset, "seed": spec.seed, "spec": json.dumps(spec.to_json(), sort_keys=True),
            "accuracy": json.dumps([float(a) for a in accuracy]), "steps": int(steps),
            "wall_time": float(wall_time), "stopped_early": int(bool(stopped_early)),
            "history": json.dumps([[int(s), [float(a) for a in acc]] for s, acc in history]),
            "checkpoint": relative, "checkpoint_sha256": _sha256_file(self.root / relative),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        fields["digest"] = _row_digest(fields)
        with self.db:
            self.db.execute(f"INSERT OR REPLACE INTO runs ({', '.join(fields)}) VALUES "
                            f"({', '.join('?' * len(fields))})", tuple(fields.values()))
        return self._parse(fields)

    def finished(self, spec: RunSpec) -> StoredRun | None:
        """The stored run for ``spec``, or None if there is none or it is damaged (then listed in
        :attr:`problems`, and the run is trained again)."""
        row = self.db.execute("SELECT * FROM runs WHERE key = ?", (spec.key,)).fetchone()
        return None if row is None else self._verified(self._as_dict(row))

    def runs(self, task: str | None = None, preset: str | None = None) -> list[StoredRun]:
        """Every intact finished run (damaged ones go to :attr:`problems`)."""
        query, args = "SELECT * FROM runs WHERE 1=1", []
        if task is not None:
            query, args = query + " AND task = ?", [*args, task]
        if preset is not None:
            query, args = query + " AND preset = ?", [*args, preset]
        rows = self.db.execute(query + " ORDER BY task, variant, model, seed", args).fetchall()
        verified = (self._verified(self._as_dict(row)) for row in rows)
        return [run for run in verified if run is not None]

    def weights(self, run: StoredRun) -> dict[str, torch.Tensor]:
        """The trained weights of a run (load them into :class:`validation.model.GPT`)."""
        from safetensors.torch import load_file

        return load_file(str(self.root / run.checkpoint))

    def _as_dict(self, row) -> dict:
        names = [d[0] for d in self.db.execute("SELECT * FROM runs LIMIT 0").description]
        return dict(zip(names, row))

    def _verified(self, fields: dict) -> StoredRun | None:
        key = str(fields.get("key"))
        stored_digest = fields.pop("digest", None)
        if _row_digest(fields) != stored_digest:
            return self._problem(key, "row content does not match its digest (edited or damaged)")
        path = self.root / fields["checkpoint"]
        if not path.is_file():
            return self._problem(key, f"checkpoint {fields['checkpoint']} is missing")
        if _sha256_file(path) != fields["checkpoint_sha256"]:
            return self._problem(key, f"checkpoint {fields['checkpoint']} does not match its digest (damaged)")
        try:
            return self._parse(fields)
        except (ValueError, KeyError, TypeError) as error:
            return self._problem(key, f"row cannot be read: {error}")

    def _problem(self, key: str, what: str) -> None:
        problem = Problem(key, what)
        if problem not in self.problems:
            self.problems.append(problem)
        return None

    @staticmethod
    def _parse(fields: dict) -> StoredRun:
        accuracy = tuple(float(a) for a in json.loads(fields["accuracy"]))
        if not all(0.0 <= a <= 1.0 for a in accuracy):
            raise ValueError(f"accuracy {accuracy} outside [0, 1]")
        return StoredRun(
            spec_from_json(json.loads(fields["spec"])), accuracy, int(fields["steps"]), float(fields["wall_time"]),
            bool(fields["stopped_early"]),
            tuple((int(s), tuple(float(a) for a in acc)) for s, acc in json.loads(fields["history"])),
            fields["checkpoint"])

    # ------------------------------------------------------------ groups in progress

    def save_partial(self, group_key: str, state: dict) -> None:
        """Save the state of a group in training (replacing the previous one)."""
        relative = f"partial/{group_key}.pt"
        _replace_atomically(self.root / relative, lambda path: torch.save(state, path))
        digest = _sha256_file(self.root / relative)
        summary = json.dumps({name: state[name] for name in SUMMARY if name in state})
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO partial (group_key, path, sha256, step) VALUES (?, ?, ?, ?)",
                            (group_key, relative, digest, int(state["step"])))
            self.db.execute("INSERT OR REPLACE INTO partial_summary VALUES (?, ?, ?)",
                            (group_key, int(state["step"]), summary))

    def load_partial(self, group_key: str) -> dict | None:
        """The saved state of a group, or None (a damaged one is reported in :attr:`problems`)."""
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
        rows = self.db.execute("SELECT p.group_key, p.path, p.sha256, p.step = s.step, s.summary FROM partial p "
                               "LEFT JOIN partial_summary s USING (group_key) ORDER BY p.group_key").fetchall()
        for key, relative, sha256, current, summary in rows:
            if not current:  # no summary, or one older than the row
                state = self.load_partial(key)
            else:
                state = summary if self._intact_partial(key, relative, sha256) else None
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
        row = self.db.execute("SELECT path FROM partial WHERE group_key = ?", (group_key,)).fetchone()
        with self.db:
            self.db.execute("DELETE FROM partial WHERE group_key = ?", (group_key,))
            self.db.execute("DELETE FROM partial_summary WHERE group_key = ?", (group_key,))
        if row is not None:
            (self.root / row[0]).unlink(missing_ok=True)

