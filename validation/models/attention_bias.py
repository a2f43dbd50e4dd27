"""Attention biases of Duan et al. (arXiv 2310.11984): lines of an attention matrix, the hand-made
scaffold (ABS) and the biases calibrated from a trained model (ABC).

The model (:mod:`validation.models.seq2seq`) reads ``<bos> source <sep> target``. A *line family* says
where an output (query, output index i) looks: every key has a distance r from the family's
anchor, and lies on the line of offset c = r - i (a *moving* line: a diagonal or anti-diagonal
that shifts with the output) or c = r (a *vertical* line: one key for every output). Cross
attention anchors at the first source token (r = j, Duan et al.'s diagonals from the top-left
corner), at the last one (r counted leftwards: their anti-diagonals and verticals from the
top-right corner), and on either side of the first operator (the same lines for the second
operand's block, so that two-operand inputs are covered). Self-attention over the outputs has the
moving family c = k - i (k the key's output index) and the vertical one c = k.

A bias *table* holds one value per (head, family, offset c); a query-key pair gets the largest
value over the families whose line it is on, :data:`MASKED` where it is on none. Offsets name
lines at every length, which is how a table fitted on short inputs extends to long ones.

>>> import torch
>>> ids = torch.tensor([[0, 5, 6, 13, 7, 8, 1, 9, 9, 9, 2]])  # <bos> a a + b b <sep> y y y <eos>
>>> where = layout(ids, sep=1, pad=14, operators=(13,))
>>> where.last.tolist(), where.operator.tolist()
([4], [2])
>>> c, on = offsets(Family("end", True), where)
>>> c[0, 7, 1:6].tolist(), on[0, 7, 1:6].tolist()  # output 1 against the 5 source tokens
([3, 2, 1, 0, -1], [True, True, True, True, True])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from validation.config import DUAN_KAPPA, ValidationError

MASKED = -1e4
"""The bias of a pair on no kept line: exp(-1e4) is 0 in float32, and the scores keep their
resolution (a row with no kept line at all is left unbiased, since softmax ignores a constant)."""


@dataclass(frozen=True)
class Family:
    """A family of lines: ``anchor`` is ``start``, ``end``, ``before_op`` (the digit left of the
    first operator, counted leftwards), ``after_op`` (the digit right of it) or ``target`` (the
    decoder's own outputs); ``moving`` lines shift with the output, vertical ones do not."""

    anchor: str
    moving: bool

    @property
    def label(self) -> str:
        return f"{self.anchor}:{'moving' if self.moving else 'vertical'}"


CROSS = tuple(Family(anchor, moving) for anchor in ("start", "end", "before_op", "after_op")
              for moving in (True, False))


SELF = (Family("target", True), Family("target", False))


@dataclass(frozen=True)
class Layout:
    """Where things are in a batch of ``<bos> source <sep> target`` rows (all (batch, length)
    unless said): source and target positions (``<sep>`` is output 0's query; pads excluded),
    source index j and output index i of each position, and per row (batch,) the source index of
    the last token and of the first operator (-1 without one)."""

    source: torch.Tensor
    target: torch.Tensor
    source_index: torch.Tensor
    output_index: torch.Tensor
    last: torch.Tensor
    operator: torch.Tensor


def layout(ids: torch.Tensor, *, sep: int, pad: int, operators: Sequence[int] = ()) -> Layout:
    """The :class:`Layout` of token ids (batch, length); written with tensor operations only, so
    that it runs under ``vmap``."""
    length = ids.shape[-1]
    at = torch.arange(length, device=ids.device)
    sep_at = (ids == sep).long().argmax(-1)
    source = (at >= 1) & (at < sep_at[:, None])
    target = (at >= sep_at[:, None]) & (ids != pad)
    is_operator = torch.zeros_like(source)
    for token in operators:
        is_operator = is_operator | (ids == token)
    is_operator = is_operator & source
    first = torch.where(is_operator, at, length).min(-1).values
    operator = torch.where(is_operator.any(-1), first - 1, -1)
    return Layout(source, target, (at - 1).expand_as(ids), at - sep_at[:, None], sep_at - 2, operator)


def distance(family: Family, where: Layout) -> tuple[torch.Tensor, torch.Tensor]:
    """Each key position's distance r from the family's anchor, and whether the family covers it."""
    j, i = where.source_index, where.output_index
    if family.anchor == "target":
        return i, where.target
    if family.anchor == "start":
        r = j
    elif family.anchor == "end":
        r = where.last[:, None] - j
    elif family.anchor == "before_op":
        r = where.operator[:, None] - 1 - j
    elif family.anchor == "after_op":
        r = j - where.operator[:, None] - 1
    else:
        raise ValidationError(f"line family anchor {family.anchor!r}: expected start, end, before_op, after_op or "
                              f"target")
    covered = where.source & (r >= 0)
    if family.anchor in ("before_op", "after_op"):
        covered = covered & (where.operator[:, None] >= 0)
    return r, covered


def offsets(family: Family, where: Layout) -> tuple[torch.Tensor, torch.Tensor]:
    """The line offset of every (query, key) pair (batch, length, length) and whether the pair is
    on a line of the family: the query is an output, the key is covered (and for self-attention
    not in the query's future)."""
    r, covered = distance(family, where)
    i = where.output_index[:, :, None]
    c = r[:, None, :] - i if family.moving else r[:, None, :].expand(-1, r.shape[-1], -1)
    on = where.target[:, :, None] & covered[:, None, :]
    if family.anchor == "target":
        on = on & (r[:, None, :] <= i)
    return c, on


def table_index(family: Family, where: Layout, half: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The column of a table of offsets -half .. half that every (query, key) pair reads (clamped),
    and whether the pair is on a line of the family within the table."""
    c, on = offsets(family, where)
    index = c + half
    return index.clamp(0, 2 * half), on & (index >= 0) & (index <= 2 * half)


def bias(table: torch.Tensor, families: Sequence[Family], where: Layout) -> torch.Tensor:
    """The bias (batch, heads, length, length) of ``table`` (heads, families, 2 half + 1): per pair,
    the largest value over the families whose line it is on."""
    half = (table.shape[-1] - 1) // 2
    batch, length = where.source.shape
    result = torch.full((table.shape[0], batch, length, length), MASKED, device=table.device, dtype=table.dtype)
    for f, family in enumerate(families):
        index, on = table_index(family, where, half)
        value = table[:, f][:, index]
        result = torch.maximum(result, torch.where(on, value, MASKED))
    return result.transpose(0, 1)


def alignment(task) -> tuple[Family, ...]:
    """The scaffold's cross-attention lines of a task (its ``scaffold`` field: Duan et al.'s tasks)."""
    if task.scaffold is None:
        raise ValidationError(f"task {task.name!r}: attention bias scaffolding needs the task's alignment of "
                              "outputs to inputs (its scaffold field), which only Duan et al.'s tasks declare")
    return tuple(Family(name, moving) for name, moving in task.scaffold)


def scaffold(families: Sequence[Family], kept: Sequence[Family], *, heads: int, half: int,
             window: int) -> torch.Tensor:
    """ABS's windowed table: 0 on the lines of ``kept`` families within ``window`` steps behind
    the aligned one (offsets -window .. 0; a vertical family keeps its one line), MASKED elsewhere.

    >>> table = scaffold(SELF, SELF[:1], heads=1, half=3, window=1)
    >>> table[0].tolist()
    [[-10000.0, -10000.0, 0.0, 0.0, -10000.0, -10000.0, -10000.0], [-10000.0, -10000.0, -10000.0, -10000.0, -10000.0, -10000.0, -10000.0]]
    """
    table = torch.full((heads, len(families), 2 * half + 1), MASKED)
    for f, family in enumerate(families):
        if family in kept:
            lines = range(-window, 1) if family.moving else (0,)
            for c in lines:
                table[:, f, half + c] = 0.0
    return table


@dataclass
class LineSums:
    """Running sums of attention weights per (head, family, offset), counts of cells per (family,
    offset), and the number of examples seen."""

    sums: torch.Tensor
    counts: torch.Tensor
    examples: int = 0

    @classmethod
    def empty(cls, heads: int, families: int, half: int) -> "LineSums":
        return cls(torch.zeros(heads, families, 2 * half + 1, dtype=torch.float64),
                   torch.zeros(families, 2 * half + 1, dtype=torch.float64))

    def add(self, weights: torch.Tensor, families: Sequence[Family], where: Layout, queries: torch.Tensor) -> None:
        """Add attention ``weights`` (batch, heads, length, length), counting only the rows of
        ``queries`` (batch, length), the outputs whose prediction is checked."""
        half = (self.sums.shape[-1] - 1) // 2
        by_head = weights.detach().to(torch.float64).transpose(0, 1).cpu()
        for f, family in enumerate(families):
            index, on = table_index(family, where, half)
            on = (on & queries[:, :, None]).cpu()
            chosen = index.cpu()[on]
            self.sums[:, f].index_add_(1, chosen, by_head[:, on])
            self.counts[f].index_add_(0, chosen, torch.ones(len(chosen), dtype=torch.float64))
        self.examples += weights.shape[0]

    def mass(self) -> torch.Tensor:
        """The attention weight every line collects in an example, on average (NaN where a line
        was never seen): long lines that every output follows stand out, short ones do not."""
        return (self.sums / max(1, self.examples)).where(self.counts > 0, torch.nan)


def calibrated(lines: LineSums, kappa: float) -> torch.Tensor:
    """ABC's table: per head, the lines whose mass (:meth:`LineSums.mass`) exceeds the mean of that
    head's line masses by ``kappa`` standard deviations keep their mass as bias (the sum along the
    line of the mean attention matrix, as in Duan et al.'s released code); all other lines are
    MASKED. A line every output follows thus outweighs one that a few outputs glance at.

    >>> sums = LineSums(torch.tensor([[[1.8, 0.0, 0.1, 0.04, 0.0]]]), torch.tensor([[2.0, 2, 1, 1, 0]]), 2)
    >>> calibrated(sums, kappa=1.0).tolist()
    [[[0.8999999761581421, -10000.0, -10000.0, -10000.0, -10000.0]]]
    """
    mass = lines.mass()
    seen = ~mass.isnan()
    flat, mask = mass.flatten(1), seen.flatten(1)
    count = mask.sum(1).clamp(min=1)
    mean = torch.where(mask, flat, 0).sum(1) / count
    spread = (torch.where(mask, flat - mean[:, None], 0).square().sum(1) / count).sqrt()
    keep = seen & (mass > (mean + kappa * spread)[:, None, None])
    return torch.where(keep, mass, MASKED).to(torch.float32)


def kept(table: torch.Tensor, families: Sequence[Family]) -> list[list[str]]:
    """Per head, the lines of a table that are not MASKED, as ``family offset``.

    >>> kept(scaffold(SELF, SELF[:1], heads=1, half=3, window=1), SELF)
    [['target:moving -1', 'target:moving 0']]
    """
    half = (table.shape[-1] - 1) // 2
    return [[f"{families[f].label} {c - half}" for f in range(table.shape[1]) for c in range(table.shape[2])
             if table[h, f, c] > MASKED] for h in range(table.shape[0])]


KAPPA_CROSS, KAPPA_SELF = DUAN_KAPPA, 0.87
"""Duan et al.'s thresholds: mean + 4.5 std for cross-attention lines, mean + 0.87 std for
self-attention lines."""
