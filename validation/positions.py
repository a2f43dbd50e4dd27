"""Positional schemes: how positions enter a model, one object per kind.

A :class:`validation.config.Variant` holds one of these (its ``scheme``); the model, the trainer,
the probe and the sweep ask the scheme what to build instead of comparing its name:

* ``ape``: a learned table of absolute positions (:attr:`PositionScheme.absolute_table`);
* ``nope``: no positions beyond the causal mask;
* ``rpe``: Shaw et al.'s relative positions, clipped at the variant's ``clip``;
* ``upe``: Sabbaghi et al.'s uniform positions: relative ones, plus one vector per digit of the
  task's leading operand (:meth:`PositionScheme.uniform_width`);
* ``sin``, ``abs``, ``abc``: Duan et al.'s encoder-decoder with sinusoidal positions, with
  attention bias scaffolding (aligned, cyclic positions), or with calibrated attention biases
  (no positions).

>>> SCHEMES["rpe"].relative, SCHEMES["rpe"].relative_clip(16), SCHEMES["ape"].relative_clip(16)
(True, 16, 0)
>>> [s.name for s in SCHEMES.values() if s.seq2seq]
['sin', 'abs', 'abc']
>>> SCHEMES["abs"]
PositionScheme(name='abs')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.alignment import leading_operand_width
from tasks.registry import Task


@dataclass(frozen=True)
class PositionScheme:
    """One way positions enter the model, and what it asks of the model built for it."""

    name: str
    absolute_table: bool = field(default=False, repr=False)
    """A learned table of absolute positions added to the token embeddings (the decoder's ``wpe``)."""
    relative: bool = field(default=False, repr=False)
    """Every layer learns a vector per clipped offset j - i, added to the keys."""
    uniform: bool = field(default=False, repr=False)
    """The digits of the task's leading operand have one vector each that every query sees."""
    seq2seq: bool = field(default=False, repr=False)
    """Duan et al.'s encoder-decoder (:mod:`validation.models.seq2seq`), not the decoder of :mod:`validation.models.gpt`."""
    sinusoidal: bool = field(default=False, repr=False)
    """Encoder-decoder only: sinusoidal positions are added to the embeddings."""
    scaffolded: bool = field(default=False, repr=False)
    """Encoder-decoder only: attention bias scaffolding, attention windowed along the task's
    alignment and positions cyclic along it."""
    calibrated: bool = field(default=False, repr=False)
    """Encoder-decoder only: bias tables calibrated from a trained ``sinusoidal`` model (a first stage)."""

    @property
    def bias_tables(self) -> bool:
        """Whether the encoder-decoder carries (frozen) attention bias tables."""
        return self.scaffolded or self.calibrated

    def relative_clip(self, clip: int) -> int:
        """The clipping distance of relative positions given a variant's ``clip`` (0: none)."""
        return clip if self.relative else 0

    def uniform_width(self, task: Task) -> int:
        """How many leading operand digits get a uniform vector on ``task``: the width of its
        leading operand under ``upe`` (a :class:`tasks.registry.TaskError` when it has none of
        fixed width), else 0.

        >>> from tasks import registry
        >>> SCHEMES["upe"].uniform_width(registry.get("sabbaghi_multiplication"))
        3
        >>> SCHEMES["rpe"].uniform_width(registry.get("bin_majority"))
        0
        """
        return leading_operand_width(task) if self.uniform else 0


SCHEMES: dict[str, PositionScheme] = {scheme.name: scheme for scheme in (
    PositionScheme("ape", absolute_table=True),
    PositionScheme("nope"),
    PositionScheme("rpe", relative=True),
    PositionScheme("upe", relative=True, uniform=True),
    PositionScheme("sin", seq2seq=True, sinusoidal=True),
    PositionScheme("abs", seq2seq=True, sinusoidal=True, scaffolded=True),
    PositionScheme("abc", seq2seq=True, calibrated=True),
)}
"""Every scheme by name (the ``positions`` of a variant)."""
