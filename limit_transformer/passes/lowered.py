"""The lowered form: the typed result of pass 1 (lowering) that every later pass consumes.

A program becomes residual slots (named 0/1 or count dimensions) and operations on them: an
attention :class:`Read` copies the average of one slot into another, an :class:`Mlp` groups the
hidden :class:`Unit` s that compute one value. :class:`Lowered` holds these with the embedding
and output slots. The reserved vocabulary entries ``BOS_TOKEN`` and ``OTHER_TOKEN`` live here
because the lowered token table and the emitted model spec both name them.
"""

from __future__ import annotations

from dataclasses import dataclass


BOS_TOKEN = "<|bos|>"
"""The implicit beginning-of-sequence token at position 0 (not part of the program's input)."""
OTHER_TOKEN = "<|other|>"
"""Stands for every token outside the program's alphabet (all Q_a false)."""


@dataclass(frozen=True)
class Read:
    """One value an attention head reads: the average of slot ``source`` into slot ``target``.

    ``offset`` None means the uniform head; otherwise the head biased by phi at i - j = offset.
    """

    source: int
    target: int
    offset: int | None = None


@dataclass(frozen=True)
class Unit:
    """One MLP hidden unit: act(sum inputs + bias), added with coefficients to ``outputs``."""

    inputs: tuple[tuple[int, float], ...]
    bias: float
    activation: str
    outputs: tuple[tuple[int, float], ...]
    margin: str = ""


@dataclass(frozen=True)
class Mlp:
    """Hidden units that must sit in one MLP (they compute one value)."""

    units: tuple[Unit, ...]
    label: str


Operation = Read | Mlp


@dataclass(frozen=True)
class Lowered:
    """The program as residual slots and operations on them (the result of :func:`lower`)."""

    labels: tuple[str, ...]
    token_slots: dict[str, tuple[int, ...]]
    """For every vocabulary entry, the slots the token embedding sets to 1."""
    position_slots: tuple[tuple[int, ...], ...]
    """For every residue mod the period, the slots the positional vector sets to 1."""
    operations: tuple[Operation, ...]
    outputs: tuple[tuple[str, int | None], ...]
    output_kind: str
    period: int
    source: str
