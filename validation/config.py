"""Configurations of the harness: the model, the optimisation, and the variant trained.

All numerics of a run live in :class:`ModelConfig` and :class:`TrainConfig`; a :class:`RunSpec`
adds the task, variant and seed, and is the key a run is stored under.

>>> ModelConfig.parse("2l4h256d")
ModelConfig(n_layer=2, n_head=4, d_model=256, encoder=False, dropout=0.0)
>>> Variant.parse("ape_reg1e-3")
Variant(name='ape_reg1e-3', scheme=PositionScheme(name='ape'), reg_coef=0.001, clip=0, kappa=0.0, every_layer=False)
>>> Variant.parse("upe8").positions, Variant.parse("upe8").scheme.uniform
('upe', True)
>>> Variant.parse("rpe16").clip
16
>>> Variant.parse("abc2").kappa
2.0
>>> Variant.parse("abc-layers").kappa, Variant.parse("abc-layers").every_layer
(4.5, True)
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any, Sequence, cast

from crasp.errors import CraspError
from validation.positions import SCHEMES, PositionScheme


class ValidationError(CraspError):
    """A bad configuration, an unknown variant or preset, or a corrupted store or checkpoint."""


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a GPT-2-style model: layers, heads, width (the paper writes 2l4h256d), and
    whether it is a causal decoder or an encoder (bidirectional attention, label suffix ``-enc``)
    that predicts every output digit in parallel (Sabbaghi et al.)."""

    n_layer: int
    n_head: int
    d_model: int
    encoder: bool = False
    dropout: float = 0.0
    """While training, the share of embeddings, attention weights and residual-branch outputs
    zeroed (BERT's 0.1 in Sabbaghi et al.); label suffix ``-drop0.1``. A decoder or encoder of
    :mod:`validation.models.gpt` only."""

    def __post_init__(self) -> None:
        if min(self.n_layer, self.n_head, self.d_model) < 1:
            raise ValidationError(f"model {self.label}: layers, heads and width must be positive")
        if not 0.0 <= self.dropout < 1.0:
            raise ValidationError(f"model {self.label}: dropout must be in [0, 1), not {self.dropout}")
        if self.d_model % self.n_head:
            raise ValidationError(f"model {self.label}: width {self.d_model} is not a multiple of {self.n_head} heads")

    @property
    def label(self) -> str:
        return (f"{self.n_layer}l{self.n_head}h{self.d_model}d" + ("-enc" if self.encoder else "")
                + (f"-drop{self.dropout:g}" if self.dropout else ""))

    @classmethod
    def parse(cls, text: str) -> "ModelConfig":
        """A model from its label.

        >>> ModelConfig.parse("6l8h768d-enc-drop0.1").dropout
        0.1
        """
        match = re.fullmatch(r"(\d+)l(\d+)h(\d+)d(-enc)?(?:-drop(\d*\.?\d+))?", text.strip())
        if not match:
            raise ValidationError(f"model {text!r}: expected LAYERSlHEADShWIDTHd, e.g. 2l4h256d (an encoder: "
                                  f"2l4h256d-enc; with dropout: 2l4h256d-drop0.1)")
        return cls(int(match.group(1)), int(match.group(2)), int(match.group(3)), encoder=bool(match.group(4)),
                   dropout=float(match.group(5) or 0))


LEARNED = 0.9
"""Accuracy on the training bin (:attr:`tasks.registry.Task.training_bin`, the first bin for every
task but Xu et al.'s) from which a run has learned the task: the reports' outcome threshold, and
what a seed needs to count under the cpu preset."""


RELATIVE_CLIP = 64
"""The default clipping distance of relative positions: offsets beyond +-64 share one vector."""


SEQ2SEQ = {"sinusoidal": "sin", "abs": "abs", "abc": "abc"}
"""Duan et al.'s variants (the encoder-decoder) and the names of their schemes."""


DUAN_KAPPA = 4.5
"""Duan et al.'s threshold for cross-attention lines (mean + 4.5 standard deviations)."""


@dataclass(frozen=True)
class Variant:
    """How positions enter the model: a :class:`validation.positions.PositionScheme` (``scheme``;
    built from its name when given one) and the variant's parameters of it.

    * ``ape``: a learned table of absolute positions, added to the token embeddings;
    * ``nope``: no positional information beyond the causal mask;
    * ``ape_reg<coef>``: APE with Huang et al.'s positional regularizer R_pos at ``reg_coef``
      (``ape_reg`` is coefficient 1e-4);
    * ``rpe<k>``: relative positions in the style of Shaw et al. (2018): every layer learns one
      vector per offset j - i, clipped to [-k, k], added to the keys (``rpe`` is k = 64);
    * ``upe<k>``: Sabbaghi et al.'s uniform positions: each digit of the task's leading operand
      (the multiplier) has one vector that every query sees, whatever its distance; every other
      pair uses ``rpe<k>``;
    * ``sinusoidal``, ``abs``, ``abc``: Duan et al.'s encoder-decoder with sinusoidal positions,
      with attention bias scaffolding, or with calibrated attention biases
      (:mod:`validation.models.seq2seq`); ``abc<kappa>`` keeps the cross-attention lines ``kappa``
      standard deviations above the mean (``abc``: their 4.5); a suffix ``-layers`` (``abc-layers``,
      ``abc2-layers``) calibrates from every layer of the trained model, where Duan et al. read the
      last one only.
    """

    name: str
    scheme: PositionScheme
    reg_coef: float = 0.0
    clip: int = 0
    kappa: float = 0.0
    every_layer: bool = False
    """ABC only: the bias tables keep, per head, every line that head follows in any layer of the
    trained model (each layer thresholded on its own), not only in the last."""

    def __post_init__(self) -> None:
        if isinstance(self.scheme, str):
            if self.scheme not in SCHEMES:
                raise ValidationError(f"variant {self.name!r}: no positional scheme {self.scheme!r} "
                                      f"(known: {', '.join(SCHEMES)})")
            object.__setattr__(self, "scheme", SCHEMES[self.scheme])

    @property
    def positions(self) -> str:
        """The name of the positional scheme (``ape``, ``nope``, ``rpe``, ``upe``, ``sin``, ``abs``, ``abc``)."""
        return self.scheme.name

    @classmethod
    def parse(cls, text: str) -> "Variant":
        if text in ("ape", "nope"):
            return cls(text, SCHEMES[text])
        if text in SEQ2SEQ:
            return cls(text, SCHEMES[SEQ2SEQ[text]], kappa=DUAN_KAPPA if text == "abc" else 0.0)
        match = re.fullmatch(r"abc([0-9.]*)(-layers)?", text)
        if match:
            try:
                kappa = float(match.group(1)) if match.group(1) else DUAN_KAPPA
            except ValueError:
                kappa = -1.0
            if kappa >= 0:
                return cls(text, SCHEMES["abc"], kappa=kappa, every_layer=bool(match.group(2)))
        match = re.fullmatch(r"ape_reg([0-9.e-]+)?", text)
        if match:
            try:
                coef = float(match.group(1)) if match.group(1) else 1e-4
            except ValueError:
                coef = -1.0
            if coef > 0:
                return cls(text if match.group(1) else "ape_reg1e-4", SCHEMES["ape"], coef)
        match = re.fullmatch(r"(rpe|upe)(\d+)?", text)
        if match and (match.group(2) is None or int(match.group(2)) > 0):
            clip = int(match.group(2)) if match.group(2) else RELATIVE_CLIP
            return cls(f"{match.group(1)}{clip}" if match.group(2) else match.group(1), SCHEMES[match.group(1)],
                       clip=clip)
        raise ValidationError(f"variant {text!r}: expected ape, nope, ape_reg<coef> (e.g. ape_reg1e-3), rpe<k> or "
                              f"upe<k> (relative positions clipped at k, e.g. rpe16), or for Duan et al.'s "
                              f"encoder-decoder sinusoidal, abs, abc or abc<kappa> (e.g. abc2), either with -layers to "
                              f"calibrate from every layer (abc-layers)")

    @property
    def seq2seq(self) -> bool:
        """Whether the variant is Duan et al.'s encoder-decoder."""
        return self.scheme.seq2seq


SAMPLERS = ("python", "device", "vectorised")
"""The ways a run can draw its training examples (:attr:`TrainConfig.sampler`); ``vectorised`` is
read in stored runs only (its numpy sampler was replaced by ``device``)."""

PRECISIONS = ("tf32", "fp32", "bf16")
"""How a run's arithmetic is done (:attr:`TrainConfig.precision`)."""


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and evaluation of one run (defaults: the paper's small-model protocol).

    ``steps`` optimizer steps of ``batch_size`` examples drawn on the fly (or ``epochs`` passes
    over a fixed training set of ``train_size`` examples, the formal-language protocol); AdamW
    with a linear decay after ``warmup`` steps; gradients clipped to norm ``grad_clip`` per seed
    (the Hugging Face trainer's default the paper's code ran with); evaluation every
    ``eval_every`` steps on ``test_size`` examples per bin, stopping once the training bin is exact
    (unless ``stop_when_exact`` is False: then every run trains the whole schedule).
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
    start_from: str | None = None
    """A task whose run under the same preset, variant and seed gives the starting weights
    (fine-tuning; None: a fresh initialisation)."""
    stop_when_exact: bool = True
    sampler: str = "python"
    """How training examples are drawn: ``python``, one at a time by the task's own samplers on the
    host (the reference, and every stored run before other samplers); ``device``, as tensor
    operations on the run's device (:mod:`validation.data.device`), the same distributions from
    another random stream: by the task's vectorised sampler, or from a fixed training set kept
    on the device."""
    precision: str = "tf32"
    """``tf32``: float32 weights and arithmetic, matrix products on a GPU's TF32 tensor cores (a
    10-bit mantissa in the products, float32 sums; plain float32 on a CPU, which has none);
    ``fp32``: float32 everywhere, TF32 off; ``bf16``: float32 weights, gradients and optimizer
    state, the forward pass under bfloat16 autocast."""

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValidationError(f"training config: sampler {self.sampler!r} is not one of {', '.join(SAMPLERS)}")
        if self.precision not in PRECISIONS:
            raise ValidationError(f"training config: precision {self.precision!r} is not one of "
                                  f"{', '.join(PRECISIONS)}")
        problems = [name for name in ("lr", "steps", "batch_size", "eval_every", "test_size")
                    if not getattr(self, name) > 0]
        if self.warmup < 0 or self.weight_decay < 0:
            problems.append("warmup/weight_decay")
        if problems:
            raise ValidationError(f"training config: {', '.join(problems)} must be positive")

    def total_steps(self, set_size: int | None = None) -> int:
        """Optimizer steps the schedule takes: ``steps``, or ``epochs`` passes in batches over a
        training set of ``set_size`` examples (``train_size`` unless told: a set with fewer
        distinct inputs than asked for is smaller).

        >>> TrainConfig(epochs=10, train_size=100_000).total_steps(), TrainConfig(steps=500).total_steps()
        (15630, 500)
        """
        if not self.epochs:
            return self.steps
        size = self.train_size if set_size is None else set_size
        return self.epochs * -(-(size or 0) // self.batch_size)


OVERRIDABLE = {
    "lr": "a positive number (e.g. lr=3e-4)",
    "steps": "a positive integer (e.g. steps=2000)",
    "batch_size": "a positive integer",
    "warmup": "an integer >= 0",
    "weight_decay": "a number >= 0",
    "grad_clip": "a positive number, or none (no clipping)",
    "eval_every": "a positive integer",
    "test_size": "a positive integer",
    "epochs": "a positive integer, or none (train for steps)",
    "train_size": "a positive integer, or none",
    "stop_when_exact": "true or false",
    "precision": "tf32, fp32 or bf16",
    "model": "a model label, LAYERSlHEADShWIDTHd (e.g. model=2l2h64d)",
}
"""The settings ``crasp validate --set KEY=VALUE`` and ``--config FILE.toml`` may change: the
fields of :class:`TrainConfig` (but the sampler and the run started from, which have their own
meaning) and ``model``, with what each takes."""


@dataclass(frozen=True)
class Overrides:
    """Settings that replace a preset's in every plan it makes (:meth:`apply`): training fields
    (``train``, as (name, value) pairs) and the model (None: the preset's).

    >>> overrides = Overrides.parse(["lr=3e-4", "steps=2000", "grad_clip=none"])
    >>> overrides.train, overrides.text()
    ((('lr', 0.0003), ('steps', 2000), ('grad_clip', None)), 'lr=0.0003, steps=2000, grad_clip=none')
    >>> Overrides.parse(["seed=3"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    validation.config.ValidationError: --set seed=3: no setting 'seed' (allowed: lr, steps, batch_size, ...)
    """

    train: tuple[tuple[str, object], ...] = ()
    model: ModelConfig | None = None

    def __bool__(self) -> bool:
        return bool(self.train) or self.model is not None

    @classmethod
    def parse(cls, settings: Sequence[str] = (), file: str | None = None) -> Overrides:
        """The overrides of a TOML ``file`` (top-level ``key = value`` lines), then of ``settings``
        (``KEY=VALUE`` strings, which win). An unknown key, a value of the wrong kind or out of
        range, or a file that cannot be read raises :class:`ValidationError` naming the key, the
        allowed keys and the file."""
        values: dict[str, object] = {}
        if file is not None:
            for key, value in _read_toml(file).items():
                values[key] = _checked(key, value, f"{file}: {key} = {value!r}")
        for setting in settings:
            key, equals, text = setting.partition("=")
            key = key.strip()
            if not equals or not key:
                raise ValidationError(f"--set {setting}: expected KEY=VALUE (keys: {', '.join(OVERRIDABLE)})")
            values[key] = _checked(key, _typed(key, text.strip()), f"--set {setting}")
        model = cast(ModelConfig | None, values.pop("model", None))  # _checked parses a model label
        return cls(tuple(values.items()), model)

    def text(self) -> str:
        """``lr=0.0003, steps=2000, model=2l2h64d``: the overrides as ``--set`` takes them."""
        shown = [f"{k}={_shown(v)}" for k, v in self.train]
        return ", ".join(shown + ([f"model={self.model.label}"] if self.model is not None else []))

    def to_json(self) -> dict:
        """The overrides by name (the model as its label)."""
        return {**dict(self.train), **({"model": self.model.label} if self.model is not None else {})}

    def apply(self, model: ModelConfig, train: TrainConfig) -> tuple[ModelConfig, TrainConfig]:
        """``model`` and ``train`` with these settings in place of theirs. A model override must keep
        the preset's kind of model (a decoder, or an encoder for the aligned tasks: ``-enc``)."""
        if self.model is not None and self.model.encoder != model.encoder:
            kind = "an encoder (a label ending -enc)" if model.encoder else "a decoder (no -enc)"
            raise ValidationError(f"model={self.model.label}: this task trains {kind}, as {model.label}")
        try:
            changed = dataclasses.replace(train, **cast(dict[str, Any], dict(self.train)))
        except ValidationError as error:
            raise ValidationError(f"{self.text()}: {error}") from None
        return self.model or model, changed


def _shown(value) -> str:
    """A setting's value as ``--set`` takes it."""
    if value is None or isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def _read_toml(file: str) -> dict:
    import tomllib

    try:
        with open(file, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ValidationError(f"{file}: no such configuration file") from None
    except IsADirectoryError:
        raise ValidationError(f"{file}: a directory, not a configuration file") from None
    except tomllib.TOMLDecodeError as error:
        raise ValidationError(f"{file}: not valid TOML ({error})") from None
    except UnicodeDecodeError as error:
        raise ValidationError(f"{file}: not UTF-8 text ({error.reason})") from None
    for key, value in data.items():
        if isinstance(value, dict):
            raise ValidationError(f"{file}: [{key}]: the settings are top-level KEY = VALUE lines, not tables "
                                  f"(keys: {', '.join(OVERRIDABLE)})")
    return data


def _typed(key: str, text: str):
    """The value of ``--set KEY=TEXT`` as its field takes it (a string where the key is unknown:
    :func:`_checked` refuses it)."""
    kind = OVERRIDABLE.get(key, "")
    if text.lower() == "none" and "none" in kind:
        return None
    if key == "stop_when_exact":
        return {"true": True, "false": False}.get(text.lower(), text)
    if key in ("model", "precision"):
        return text
    for convert in ((int,) if "integer" in kind else (float,) if "number" in kind else ()):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _checked(key: str, value, where: str):
    """``value`` for setting ``key``, checked alone (``where`` names it in errors)."""
    if key not in OVERRIDABLE:
        raise ValidationError(f"{where}: no setting {key!r} (allowed: {', '.join(OVERRIDABLE)})")
    kind = OVERRIDABLE[key]
    wrong = ValidationError(f"{where}: {key} takes {kind}")
    if key == "model":
        if not isinstance(value, str):
            raise wrong
        try:
            return ModelConfig.parse(value)
        except ValidationError as error:
            raise ValidationError(f"{where}: {error}") from None
    if key == "precision":
        if value not in PRECISIONS:
            raise wrong
        return value
    if value is None or (isinstance(value, str) and value.lower() == "none" and "none" in kind):  # TOML has no null
        if "none" not in kind:
            raise wrong
        return None
    if key == "stop_when_exact":
        if not isinstance(value, bool):
            raise wrong
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong
    if "integer" in kind:
        if not isinstance(value, int):
            raise wrong
    else:
        value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and ">= 0" not in kind):
        raise wrong
    return value
