"""Configurations of the harness: the model, the optimisation, and the variant trained.

All numerics of a run live in :class:`ModelConfig` and :class:`TrainConfig`; a :class:`RunSpec`
adds the task, variant and seed, and is the key a run is stored under.

>>> ModelConfig.parse("2l4h256d")
ModelConfig(n_layer=2, n_head=4, d_model=256)
>>> Variant.parse("ape_reg1e-3")
Variant(name='ape_reg1e-3', positions='ape', reg_coef=0.001)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass

from crasp.errors import CraspError


class ValidationError(CraspError):
    """A bad configuration, an unknown variant or preset, or a corrupted store or checkpoint."""


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a GPT-2-style decoder: layers, heads, width (the paper writes 2l4h256d)."""

    n_layer: int
    n_head: int
    d_model: int

    def __post_init__(self) -> None:
        if min(self.n_layer, self.n_head, self.d_model) < 1:
            raise ValidationError(f"model {self.label}: layers, heads and width must be positive")
        if self.d_model % self.n_head:
            raise ValidationError(f"model {self.label}: width {self.d_model} is not a multiple of {self.n_head} heads")

    @property
    def label(self) -> str:
        return f"{self.n_layer}l{self.n_head}h{self.d_model}d"

    @classmethod
    def parse(cls, text: str) -> "ModelConfig":
        match = re.fullmatch(r"(\d+)l(\d+)h(\d+)d", text.strip())
        if not match:
            raise ValidationError(f"model {text!r}: expected LAYERSlHEADShWIDTHd, e.g. 2l4h256d")
        return cls(*map(int, match.groups()))


@dataclass(frozen=True)
class Variant:
    """How positions enter: learned absolute positions ("ape"), none ("nope"), or APE with the
    paper's positional regularizer R_pos at ``reg_coef`` ("ape_reg" is coefficient 1e-4)."""

    name: str
    positions: str
    reg_coef: float = 0.0

    @classmethod
    def parse(cls, text: str) -> "Variant":
        if text in ("ape", "nope"):
            return cls(text, text)
        match = re.fullmatch(r"ape_reg([0-9.e-]+)?", text)
        if match:
            try:
                coef = float(match.group(1)) if match.group(1) else 1e-4
            except ValueError:
                coef = -1.0
            if coef > 0:
                return cls(text if match.group(1) else "ape_reg1e-4", "ape", coef)
        raise ValidationError(f"variant {text!r}: expected ape, nope, ape_reg or ape_reg<coef> (e.g. ape_reg1e-3)")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and evaluation of one run (defaults: the paper's small-model protocol).

    ``steps`` optimizer steps of ``batch_size`` examples drawn on the fly (or ``epochs`` passes
    over a fixed training set of ``train_size`` examples, the formal-language protocol); AdamW
    with a linear decay after ``warmup`` steps; gradients clipped to norm ``grad_clip`` per seed
    (the Hugging Face trainer's default the paper's code ran with); evaluation every
    ``eval_every`` steps on ``test_size`` examples per bin, stopping once the first bin is exact.
    """

    lr: float = 1e-3
    steps: int = 30_000
    batch_size: int = 64
    warmup: int = 0
    weight_decay: float = 0.01
    grad_clip: float | None = 1.0
    eval_every: int = 3_000
    test_size: int = 2_000
    epochs: int | None = None
    train_size: int | None = None

    def __post_init__(self) -> None:
        problems = [name for name in ("lr", "steps", "batch_size", "eval_every", "test_size")
                    if not getattr(self, name) > 0]
        if self.warmup < 0 or self.weight_decay < 0:
            problems.append("warmup/weight_decay")
        if problems:
            raise ValidationError(f"training config: {', '.join(problems)} must be positive")


@dataclass(frozen=True)
class RunSpec:
    """One training run: the key of a row in the store."""

    task: str
    variant: str
    model: ModelConfig
    train: TrainConfig
    seed: int
    preset: str = ""
    train_range: tuple[int, int] = ()
    bins: tuple[tuple[int, int], ...] = ()
    """The lengths trained and tested (a preset may rescale the task's published ones)."""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def key(self) -> str:
        """A stable digest of everything that determines the run's result."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def group_key(self) -> str:
        """The key shared by the seeds of one configuration (they train together)."""
        return dataclasses.replace(self, seed=-1).key
