"""Training examples drawn on the run's device, as tensor operations: a task's vectorised sampler
(:mod:`tasks.vectorised`) for examples drawn on the fly, or a fixed training set kept on the
device and shuffled there, for the protocols that train epochs over one.

Every number comes from :mod:`tasks.keyed_random`, keyed by the seed and the example's index in
the seed's stream, so a stream has no state beyond how many examples it has given: example k is
the same on a CPU and a GPU, whatever was drawn before it, and a checkpoint keeps one count.

>>> import torch
>>> from tasks import registry
>>> from validation.data.encoding import Encoding
>>> task = registry.get("bin_majority")
>>> stream = SampledStream(task, Encoding.of(task), seed=0, device="cpu")
>>> batch = stream.draw(first=0, count=3)
>>> batch.ids.shape[0], torch.equal(batch.ids, stream.draw(first=0, count=3).ids)
(3, True)
"""

from __future__ import annotations

import torch

from tasks.evidence.reference import check_reference
from tasks.keyed_random import Draws
from tasks.registry import EOS, Format, Task
from tasks.types import UniformOffset
from tasks.vectorised import OFFSET, Drawn, random_order
from validation.config import ValidationError
from validation.data.encoding import IGNORE, PAD, Batch, Encoding
from validation.data.streams import fixed_training_set

SAMPLED, SHUFFLED = 4, 5
"""The second word of a seed's keys: its examples drawn on the fly, or its fixed set's order and offsets."""


def offset_rule(task: Task) -> UniformOffset:
    """The task's rule of training offsets, which a device sampler can apply to tensors."""
    if not isinstance(task.train_offset, UniformOffset):
        raise ValidationError(f"task {task.name!r}: its training offsets are drawn by a Python function; examples "
                              f"drawn on the device need a tasks.types.UniformOffset (train it with the Python "
                              f"samplers)")
    return task.train_offset


def rooms(task: Task, lengths: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Per example, the largest training offset (offsets are uniform in [0, room])."""
    room = torch.as_tensor(offset_rule(task).room(lengths, tokens), device=lengths.device)
    return room.expand_as(lengths).clamp(min=0)


def frame(encoding: Encoding, drawn: Drawn, offsets: torch.Tensor | None = None) -> Batch:
    """One seed's drawn examples as a batch (examples x width) on their device, framed as
    :meth:`tasks.registry.Task.example` frames an input: prefix, input, separator, answer,
    ``<eos>``, the answer and ``<eos>`` checked as next tokens (seq2seq tasks); or prefix and input,
    the outputs checked at the positions under them (aligned tasks). Each row is the one
    :meth:`~validation.data.encoding.Encoding.collate` gives for the same example."""
    task = encoding.task
    if task.format is Format.ALIGNED:
        return _aligned(encoding, drawn, offsets)
    if task.format is not Format.SEQ2SEQ:
        raise ValidationError(f"task {task.name!r}: examples drawn on the device are framed for seq2seq and "
                              f"aligned tasks only")
    device = drawn.lengths.device
    prefix = torch.tensor([encoding.id(t) for t in task.prefix], dtype=torch.int64, device=device)
    head = len(prefix) + drawn.lengths + (1 if task.separator else 0)
    total = head + drawn.answer_lengths + 1
    offsets = torch.zeros_like(total) if offsets is None else offsets
    width = int(total.max())
    if int((offsets + total).max()) > encoding.n_positions:
        raise ValidationError(f"task {task.name!r}: a drawn example does not fit the positional table of "
                              f"{encoding.n_positions} rows")
    column = torch.arange(width, device=device)[None, :]
    ids = torch.full((len(total), width), encoding.id(PAD), dtype=torch.int64, device=device)
    ids[:, :len(prefix)] = prefix
    symbol_ids = torch.tensor([encoding.id(t) for t in task.symbols], dtype=torch.int64, device=device)
    output_ids = torch.tensor([encoding.id(t) for t in task.outputs], dtype=torch.int64, device=device)
    ids = _placed(ids, symbol_ids, drawn.inputs, column - len(prefix), drawn.lengths)
    if task.separator:
        ids = torch.where(column == head[:, None] - 1, encoding.id(task.separator), ids)
    ids = _placed(ids, output_ids, drawn.answers, column - head[:, None], drawn.answer_lengths)
    ids = torch.where(column == total[:, None] - 1, encoding.id(EOS), ids)
    positions = offsets[:, None] + torch.minimum(column, total[:, None] - 1)
    mask = (column >= head[:, None] - 1) & (column < total[:, None] - 1)
    following = torch.cat([ids[:, 1:], torch.full_like(ids[:, :1], encoding.id(PAD))], dim=1)
    return Batch(ids, positions, torch.where(mask, following, IGNORE), mask)


def _aligned(encoding: Encoding, drawn: Drawn, offsets: torch.Tensor | None) -> Batch:
    """An aligned task's examples: every row as wide as the format's fixed input, the outputs at
    ``drawn.answer_start`` and after."""
    task = encoding.task
    assert drawn.answer_start is not None, f"task {task.name!r}: an aligned sampler names where its outputs start"
    device = drawn.lengths.device
    prefix = torch.tensor([encoding.id(t) for t in task.prefix], dtype=torch.int64, device=device)
    symbol_ids = torch.tensor([encoding.id(t) for t in task.symbols], dtype=torch.int64, device=device)
    output_ids = torch.tensor([encoding.id(t) for t in task.outputs], dtype=torch.int64, device=device)
    ids = torch.cat([prefix.expand(len(drawn.lengths), -1), symbol_ids[drawn.inputs]], dim=1)
    width = ids.shape[1]
    offsets = torch.zeros_like(drawn.lengths) if offsets is None else offsets
    if int((offsets + width).max()) > encoding.n_positions:
        raise ValidationError(f"task {task.name!r}: a drawn example does not fit the positional table of "
                              f"{encoding.n_positions} rows")
    column = torch.arange(width, device=device)[None, :]
    place = column - drawn.answer_start
    mask = (place >= 0) & (place < drawn.answer_lengths[:, None])
    answers = drawn.answers.gather(1, place.clamp(0, drawn.answers.shape[1] - 1).expand(len(ids), -1))
    targets = torch.where(mask, output_ids[answers.clamp(min=0)], IGNORE)
    return Batch(ids, offsets[:, None] + column, targets, mask)


def _placed(ids: torch.Tensor, table: torch.Tensor, drawn: torch.Tensor, place: torch.Tensor,
            lengths: torch.Tensor) -> torch.Tensor:
    """``ids`` with ``table[drawn[b, place]]`` wherever 0 <= place < lengths[b]."""
    within = (place >= 0) & (place < lengths[:, None])
    index = place.clamp(0, max(drawn.shape[1] - 1, 0)).expand(len(ids), -1)
    picked = drawn.gather(1, index) if drawn.shape[1] else torch.zeros_like(index)
    return torch.where(within, table[picked.clamp(min=0)], ids)


def token_counts(encoding: Encoding, drawn: Drawn) -> torch.Tensor:
    """How many tokens each drawn example frames to."""
    task = encoding.task
    if task.format is Format.ALIGNED:
        return len(task.prefix) + drawn.lengths
    return len(task.prefix) + drawn.lengths + (1 if task.separator else 0) + drawn.answer_lengths + 1


class SampledStream:
    """One seed's training examples drawn on the fly by the task's vectorised sampler, on ``device``:
    example k of the stream is a pure function of (seed, k)."""

    def __init__(self, task: Task, encoding: Encoding, seed: int, device: str | torch.device) -> None:
        check_reference(task)  # training data are the reference's answers: check it (once per task object)
        if task.sample_batch is None:
            raise ValidationError(f"task {task.name!r} has no vectorised sampler of training batches "
                                  "(train it with the Python samplers)")
        if task.format not in (Format.SEQ2SEQ, Format.ALIGNED):
            raise ValidationError(f"task {task.name!r}: examples drawn on the device are framed for seq2seq and "
                                  f"aligned tasks only")
        offset_rule(task)
        self.task, self.encoding, self.seed, self.device = task, encoding, seed, torch.device(device)

    def draw(self, first: int, count: int) -> Batch:
        """Examples ``first`` .. ``first + count - 1`` of the stream, framed."""
        draws = Draws((self.seed, SAMPLED), torch.arange(first, first + count, device=self.device))
        drawn = self.task.sample_train_batch(draws)
        measured = drawn.measured if drawn.measured is not None else drawn.lengths + len(self.task.prefix) - 1
        offsets = draws.integers(OFFSET, 0, rooms(self.task, measured, token_counts(self.encoding, drawn)))
        return frame(self.encoding, drawn, offsets)


class FixedSetStream:
    """One seed's fixed training set (drawn by the task's Python samplers exactly as
    :class:`~validation.data.streams.TrainingStream` draws it), kept on ``device`` and read in a new
    random order every epoch, each example at a fresh random offset: example k of the stream is a
    pure function of (seed, k)."""

    def __init__(self, task: Task, encoding: Encoding, seed: int, size: int, device: str | torch.device) -> None:
        check_reference(task)
        offset_rule(task)
        self.task, self.seed, self.device = task, seed, torch.device(device)
        examples = fixed_training_set(task, size, seed)
        self.size = len(examples)
        batch = encoding.collate(examples)
        width = batch.ids.shape[1]
        tokens = torch.tensor([len(e.tokens) for e in examples], dtype=torch.int64)
        lengths = torch.tensor([e.length for e in examples], dtype=torch.int64)
        small = torch.int16 if len(encoding.vocabulary) < 2**15 else torch.int64  # a set of 500k examples stays small
        self.ids = batch.ids.to(small).to(self.device)
        self.targets = (batch.targets.bool() if encoding.uses_flags else batch.targets.to(small)).to(self.device)
        self.mask = batch.mask.to(self.device)
        self.tokens = tokens.to(self.device)
        self.room = rooms(task, lengths, tokens).to(self.device)
        self.column = torch.arange(width, device=self.device)

    def draw(self, first: int, count: int) -> Batch:
        """Examples ``first`` .. ``first + count - 1`` of the stream: epoch k // size, place k % size
        of that epoch's order."""
        index = torch.arange(first, first + count, device=self.device)
        epochs = index // self.size
        rows = torch.empty_like(index)
        for epoch in epochs.unique().tolist():  # a chunk of steps may span a few epochs of a small set
            order = self._order(int(epoch))
            chosen = epochs == epoch
            rows[chosen] = order[index[chosen] % self.size]
        draws = Draws((self.seed, SHUFFLED), index)
        offsets = draws.integers(OFFSET, 0, self.room[rows])
        width = int(self.tokens[rows].max())
        ids, mask = self.ids[rows, :width].long(), self.mask[rows, :width]
        targets = self.targets[rows, :width]
        targets = targets.float() if targets.dtype == torch.bool else targets.long()
        positions = offsets[:, None] + torch.minimum(self.column[None, :width], self.tokens[rows, None] - 1)
        return Batch(ids, positions, targets, mask)

    def _order(self, epoch: int) -> torch.Tensor:
        """The order the set is read in during ``epoch``: a uniformly random permutation."""
        draws = Draws((self.seed, SHUFFLED, epoch), torch.zeros(1, dtype=torch.int64, device=self.device))
        return random_order(draws, 0, self.size)[0]


def cannot_draw(task: Task, epochs: bool) -> str | None:
    """Why ``task``'s training examples cannot be drawn on the device (None: they can): on the fly
    they need its vectorised sampler and a seq2seq format; a fixed set (``epochs``) needs nothing
    more than offsets by a :class:`~tasks.types.UniformOffset`.

    >>> from tasks import registry
    >>> cannot_draw(registry.get("sort"), epochs=False), cannot_draw(registry.get("copy_every_kth_k2"), epochs=False)
    (None, "task 'copy_every_kth_k2' has no vectorised sampler of training batches")
    """
    if not isinstance(task.train_offset, UniformOffset):
        return f"task {task.name!r} draws its training offsets by a Python function"
    if epochs:
        return None
    if task.sample_batch is None:
        return f"task {task.name!r} has no vectorised sampler of training batches"
    if task.format not in (Format.SEQ2SEQ, Format.ALIGNED):
        return f"task {task.name!r} is neither a seq2seq nor an aligned task"
    return None
