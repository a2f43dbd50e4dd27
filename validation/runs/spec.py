"""What identifies a run: its task, variant, model, training settings, seed, preset and lengths
(:class:`RunSpec`), and the key the store files it under.

>>> from validation.config import ModelConfig, TrainConfig
>>> spec = RunSpec("bin_majority", "ape", ModelConfig(1, 1, 16), TrainConfig(), seed=0)
>>> len(spec.key), spec.key == spec_from_json(spec.to_json()).key
(20, True)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Sequence

from tasks import registry
from validation.config import ModelConfig, TrainConfig

KEY_SCHEMA_VERSION = 1
"""The layout of a run's store key. A field added later joins the key only when it differs from
its default (:data:`KEY_OMITTED`), so every run stored before keeps its key; a change that cannot
keep them raises this version, which then enters every key."""


KEY_OMITTED = {
    ("model", "encoder"): False,          # decoder-only runs keep the keys they had before encoders existed
    ("model", "dropout"): 0.0,            # runs without dropout, those from before dropout
    ("train", "start_from"): None,        # runs trained from a fresh initialisation, those from before fine-tuning
    ("train", "stop_when_exact"): True,   # runs that stop once their training range is exact, the first behaviour
    ("train", "sampler"): "python",       # runs drawn example by example, all those from before vectorised samplers
    ("train", "precision"): "tf32",       # runs of float32 weights and TF32 products on a GPU, all those from before
}
"""(section, field) -> the value at which the field is left out of the key."""


@dataclass(frozen=True)
class RunSpec:
    """One training run: the key of a row in the store."""

    task: str
    variant: str
    model: ModelConfig
    train: TrainConfig
    seed: int
    preset: str = ""
    train_range: tuple[int, int] | tuple[()] = ()
    bins: tuple[tuple[int, int], ...] = ()
    """The lengths trained and tested (a preset may rescale the task's published ones)."""

    def to_json(self) -> dict:
        """The run as the store keys it: every field, except those :data:`KEY_OMITTED` leaves out."""
        data = dataclasses.asdict(self)
        for (section, name), default in KEY_OMITTED.items():
            if data[section][name] == default:
                del data[section][name]
        if KEY_SCHEMA_VERSION > 1:
            data["key_schema"] = KEY_SCHEMA_VERSION
        return data

    @property
    def key(self) -> str:
        """A stable digest of everything that determines the run's result."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def group_key(self) -> str:
        """The key shared by the seeds of one configuration (they train together)."""
        return dataclasses.replace(self, seed=-1).key

    @property
    def training_bin(self) -> int:
        """The index of the bin the run must learn (:func:`tasks.registry.training_bin`); a spec
        without its lengths reads the task's."""
        if self.train_range and self.bins:
            return registry.training_bin(self.train_range, self.bins)
        task = registry.get(self.task)
        return registry.training_bin(self.train_range or task.train_range, self.bins or task.bins)


def spec_from_json(data: dict) -> RunSpec:
    return RunSpec(data["task"], data["variant"], ModelConfig(**data["model"]), TrainConfig(**data["train"]),
                   int(data["seed"]), data.get("preset", ""), tuple(data.get("train_range", ())),
                   tuple(tuple(b) for b in data.get("bins", ())))


def bin_labels(bins: Sequence[tuple[int, int]]) -> list[str]:
    """``["0-50", "51-100", ...]``: length bins as the reports and the commands write them (one
    length alone: ``"3"``).

    >>> bin_labels([(1, 2), (3, 3), (4, 9)])
    ['1-2', '3', '4-9']
    """
    return [f"{low}" if low == high else f"{low}-{high}" for low, high in bins]


