"""Every seed's training batch of each step, as one (seeds, examples, width) batch on the device.

The seeds' examples come from the task's Python samplers on the host (``sampler="python"``, the
reference; :class:`~validation.data.streams.TrainingStream`) or are drawn on the device
(``sampler="device"``; :mod:`validation.data.device`), there many steps at a time, so that the
host reads the device once per chunk of steps rather than once a step.

Widths: a batch is as wide as its longest example, or, with a ``quantum`` (what a captured step
asks for: one graph per width), that rounded up to a multiple of the quantum. Padding on the
right changes nothing a causal model computes at the checked positions; an encoder, which
attends both ways, is given no quantum (its tasks' examples have one width anyway).

>>> from tasks import registry
>>> from validation.config import TrainConfig
>>> from validation.data.encoding import Encoding
>>> task = registry.get("bin_majority")
>>> feed = Feed(task, Encoding.of(task), [0, 1], TrainConfig(batch_size=4, sampler="device"), "cpu", quantum=16)
>>> batch = feed.next()
>>> tuple(batch.ids.shape[:2]), batch.ids.shape[2] % 16
((2, 4), 0)
"""

from __future__ import annotations

from typing import Sequence

import torch

from tasks.registry import Task
from validation.config import TrainConfig, ValidationError
from validation.data.device import FixedSetStream, SampledStream
from validation.data.encoding import IGNORE, PAD, Batch, Encoding
from validation.data.streams import TrainingStream

CHUNK_ELEMENTS = 1 << 24
"""Token places a chunk of device-drawn steps may hold, over its seeds and examples (its four
tensors then take at most about 400 MB)."""

CHUNK_STEPS = 256
"""Steps a chunk of device-drawn examples holds at most: the host reads the device once per chunk,
a few times a second on a fast GPU."""


def widths(batch: Batch) -> torch.Tensor:
    """Each example's count of tokens: a row's positions rise by one up to its last token and
    repeat it after (the padding), whatever its offset."""
    return (batch.positions[..., 1:] != batch.positions[..., :-1]).sum(-1) + 1


def padded(batch: Batch, width: int, pad: int) -> Batch:
    """``batch`` widened on the right to ``width`` places: padding ids, positions repeating each
    row's last, nothing checked."""
    extra = width - batch.ids.shape[-1]
    if extra <= 0:
        return batch
    grow = lambda t, value: torch.cat([t, t.new_full((*t.shape[:-1], extra), value)], dim=-1)
    if batch.targets.dim() > batch.ids.dim():  # flags: one row of flags per place
        targets = torch.cat([batch.targets, batch.targets.new_zeros((*batch.ids.shape[:-1], extra,
                                                                    batch.targets.shape[-1]))], dim=-2)
    else:
        targets = grow(batch.targets, IGNORE)
    positions = torch.cat([batch.positions, batch.positions[..., -1:].expand(*batch.positions.shape[:-1], extra)],
                          dim=-1)
    return Batch(grow(batch.ids, pad), positions, targets, grow(batch.mask, False))


def rounded(width: int, quantum: int | None) -> int:
    """``width`` rounded up to a multiple of ``quantum`` (itself without one).

    >>> rounded(37, 16), rounded(37, None)
    (48, 37)
    """
    return width if not quantum else -(-width // quantum) * quantum


class Feed:
    """The training batches of ``seeds`` of ``task`` under ``config`` (its batch size, sampler and
    fixed training set), on ``device``; ``quantum`` rounds the widths up (see the module's text)."""

    def __init__(self, task: Task, encoding: Encoding, seeds: Sequence[int], config: TrainConfig,
                 device: str | torch.device, *, quantum: int | None = None) -> None:
        self.task, self.encoding, self.config = task, encoding, config
        self.device, self.quantum, self.pad = torch.device(device), quantum, encoding.id(PAD)
        fixed = config.train_size if config.epochs else None
        if config.sampler == "vectorised":
            raise ValidationError("sampler 'vectorised' (the numpy sampler of earlier versions) was replaced by "
                                  "'device', which draws the same distributions on the run's device")
        self.on_device = config.sampler == "device"
        self.streams: list[TrainingStream | SampledStream | FixedSetStream] = [self._stream(seed, fixed)
                                                                              for seed in seeds]
        self.used = 0
        """Examples each seed has been given (device streams: their whole state)."""
        self._chunk: Batch | None = None
        self._chunk_widths: list[int] = []
        self._taken = 0

    def _stream(self, seed: int, fixed: int | None):
        if not self.on_device:
            return TrainingStream(self.task, seed, fixed)
        if fixed:
            return FixedSetStream(self.task, self.encoding, seed, fixed, self.device)
        return SampledStream(self.task, self.encoding, seed, self.device)

    @property
    def set_size(self) -> int | None:
        """The size of the seeds' fixed training set (None: drawn on the fly)."""
        stream = self.streams[0]
        if isinstance(stream, FixedSetStream):
            return stream.size
        return len(stream.fixed) if isinstance(stream, TrainingStream) and stream.fixed is not None else None

    def next(self) -> Batch:
        """The next step's batch: (seeds, batch size, width)."""
        size = self.config.batch_size
        self.used += size
        if not self.on_device:
            examples = [e for stream in self.streams for e in stream.next(size)]  # type: ignore[union-attr]
            batch = self.encoding.collate(examples)
            batch = padded(batch, rounded(batch.ids.shape[-1], self.quantum), self.pad).to(self.device)
            return batch.map(lambda t: t.reshape(len(self.streams), size, *t.shape[1:]))
        if self._chunk is None or self._taken == len(self._chunk_widths):
            self._draw_chunk(self.used - size)
        assert self._chunk is not None
        width = self._chunk_widths[self._taken]
        step = self._taken
        self._taken += 1
        return self._chunk.map(lambda t: t[step, :, :, :width])

    def _draw_chunk(self, first: int) -> None:
        """Draw the next steps' examples of every seed at once, from example ``first`` of each stream."""
        size = self.config.batch_size
        longest = max(1, self.encoding.n_positions)
        steps = max(1, min(CHUNK_ELEMENTS // (len(self.streams) * size * longest), CHUNK_STEPS))
        drawn = [stream.draw(first, steps * size) for stream in self.streams]  # type: ignore[union-attr]
        width = max(b.ids.shape[-1] for b in drawn)
        stacked = [padded(b, width, self.pad) for b in drawn]
        batch = Batch(*(torch.stack(parts, dim=1) for parts in zip(*(b.tensors() for b in stacked))))
        # (steps x size, seeds, width ...) -> (steps, seeds, size, width ...)
        batch = batch.map(lambda t: t.reshape(steps, size, len(self.streams), *t.shape[2:]).transpose(1, 2)
                          .contiguous())
        per_step = widths(batch).flatten(1).max(dim=1).values.tolist()  # the host reads the chunk once
        self._chunk_widths = [rounded(int(w), self.quantum) for w in per_step]
        self._chunk = padded(batch, max(self._chunk_widths), self.pad)
        self._taken = 0

    # ------------------------------------------------------------ checkpoints

    def state(self) -> list[dict]:
        """Each seed's stream state (device streams: how many examples they have given)."""
        if self.on_device:
            return [{"used": self.used} for _ in self.streams]
        return [stream.state() for stream in self.streams]  # type: ignore[union-attr]

    def restore(self, states: Sequence[dict]) -> None:
        if self.on_device:
            self.used = int(states[0]["used"]) if states else 0
            self._chunk = None
            return
        for stream, saved in zip(self.streams, states):
            stream.restore(saved)  # type: ignore[union-attr]

    def keep(self, positions: Sequence[int]) -> None:
        """Keep the streams of the seeds at ``positions`` only."""
        self.streams = [self.streams[k] for k in positions]
        self._chunk = None  # drawn for the seeds that left too: draw the rest again from ``used``
