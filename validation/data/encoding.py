"""From the task registry to tensors: a vocabulary, training batches at the published random
position offsets, and fixed test sets per length bin (offset 0).

Seq2seq tasks are trained on next-token targets after the separator (the answer and ``<eos>``);
next-set tasks (formal languages) on one flag per legal-next symbol at every position, and accept
tasks on one flag at the last position.

>>> import numpy as np
>>> from tasks import registry
>>> task = registry.get("bin_majority")
>>> encoding = Encoding.of(task)
>>> encoding.vocabulary
('<bos>', '<sep>', '<eos>', '0', '1', '<pad>')
>>> batch = encoding.collate([task.example(("1", "0", "1"))])
>>> batch.ids.tolist(), batch.targets.tolist()
([[0, 4, 3, 4, 1, 4, 2]], [[-100, -100, -100, -100, 4, 2, -100]])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from tasks.registry import EOS, Example, Format, Task
from validation.config import ValidationError

PAD = "<pad>"


IGNORE = -100
"""The target of a position that is not checked (torch's cross-entropy ignore index)."""


@dataclass(frozen=True)
class Batch:
    """Padded examples: token ids, position ids, and the targets of checked positions.

    Seq2seq: ``targets[b, t]`` is the id of the token that must follow position t, or IGNORE.
    Flag tasks: ``targets[b, t, f]`` says whether flag f is set, and ``mask[b, t]`` which positions
    are checked.
    """

    ids: torch.Tensor
    positions: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(ids, positions, targets, mask)."""
        return self.ids, self.positions, self.targets, self.mask

    def map(self, change) -> "Batch":
        """The batch of ``change(tensor)`` for each of its tensors."""
        return Batch(*(change(t) for t in self.tensors()))

    def to(self, device: str | torch.device) -> "Batch":
        """The batch on ``device``; to a GPU, see :func:`to_device`."""
        return self.map(lambda t: to_device(t, device))


def to_device(tensor: torch.Tensor, device: str | torch.device) -> torch.Tensor:
    """``tensor`` on ``device``. A host tensor goes to a GPU from page-locked memory without
    blocking: a copy from ordinary memory would first wait for every kernel already queued, so the
    host could not prepare the next step's batch while the device runs this one.

    >>> to_device(torch.arange(3), "cpu").tolist()
    [0, 1, 2]
    """
    device = torch.device(device)
    if device.type == "cuda" and tensor.device.type == "cpu":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


@dataclass(frozen=True)
class Encoding:
    """The vocabulary (the task's tokens, then ``<pad>``), the flags of next-set or accept tasks,
    and the size of the positional table."""

    task: Task
    vocabulary: tuple[str, ...]
    flags: tuple[str, ...]
    n_positions: int

    @classmethod
    def of(cls, task: Task, n_positions: int | None = None) -> "Encoding":
        flags: tuple[str, ...] = ()
        if task.format is Format.NEXT_SET:
            flags = (*task.symbols, EOS)
        elif task.format is Format.ACCEPT:
            flags = ("accept",)
        size = n_positions or task.n_positions or 2 * _longest_test_sequence(task)
        return cls(task, tuple(dict.fromkeys((*task.alphabet, PAD))), flags, size)

    @property
    def uses_flags(self) -> bool:
        return bool(self.flags)

    def id(self, token: str) -> int:
        try:
            return self._index[token]
        except KeyError:
            raise ValidationError(f"task {self.task.name!r}: token {token!r} is not in its alphabet") from None

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {token: k for k, token in enumerate(self.vocabulary)}

    def collate(self, examples: Sequence[Example]) -> Batch:
        """Pad examples on the right into one batch (pad positions repeat the last position id).

        Tokens, checked positions and targets of all examples are flattened once and scattered into
        the padded arrays with numpy; :meth:`_collate_reference` is the per-example loop it equals.
        """
        width = self._check_fits(examples)
        count = len(examples)
        lengths = np.fromiter((len(e.tokens) for e in examples), dtype=np.int64, count=count)
        offsets = np.fromiter((e.offset for e in examples), dtype=np.int64, count=count)
        ids = np.full((count, width), self.id(PAD), dtype=np.int64)
        ids[_rows(lengths), _columns(lengths)] = self._ids([t for e in examples for t in e.tokens])
        positions = offsets[:, None] + np.minimum(np.arange(width), lengths[:, None] - 1)
        checks = np.fromiter((len(e.checked) for e in examples), dtype=np.int64, count=count)
        rows = _rows(checks)
        checked = np.fromiter((k for e in examples for k in e.checked), dtype=np.int64, count=int(checks.sum()))
        mask = np.zeros((count, width), dtype=bool)
        mask[rows, checked] = True
        if self.uses_flags:
            # each distinct target (a set of legal next symbols, or a verdict) becomes one row of flags
            distinct: dict = {}
            codes = np.fromiter((distinct.setdefault(t if isinstance(t, frozenset) else bool(t), len(distinct))
                                 for e in examples for t in e.targets), dtype=np.int64, count=len(checked))
            flag_index = {flag: k for k, flag in enumerate(self.flags)}
            table = np.zeros((len(distinct), len(self.flags)), dtype=np.float32)
            for target, code in distinct.items():
                on = target if isinstance(target, frozenset) else (("accept",) if target else ())
                table[code, [flag_index[f] for f in on]] = 1.0
            targets = np.zeros((count, width, len(self.flags)), dtype=np.float32)
            targets[rows, checked] = table[codes]
        else:
            targets = np.full((count, width), IGNORE, dtype=np.int64)
            targets[rows, checked] = self._ids([t for e in examples for t in e.targets])
        return Batch(torch.from_numpy(ids), torch.from_numpy(positions), torch.from_numpy(targets),
                     torch.from_numpy(mask))

    def _check_fits(self, examples: Sequence[Example]) -> int:
        """The batch's width, once every example is known to fit the encoding."""
        width = max(len(e.tokens) for e in examples)
        if self.task.format is Format.ALIGNED and any(len(e.tokens) != width for e in examples):
            raise ValidationError(f"task {self.task.name!r}: an encoder batch needs examples of one length (its "
                                  f"format pads every input to a fixed width); got {len(examples[0].tokens)} "
                                  f"and {width} tokens")
        for e in examples:
            if e.offset + len(e.tokens) > self.n_positions:
                raise ValidationError(
                    f"task {self.task.name!r}: an example of {len(e.tokens)} tokens at offset {e.offset} does "
                    f"not fit the positional table of {self.n_positions} rows")
        return width

    def _ids(self, tokens: list[str]) -> np.ndarray:
        """The ids of ``tokens``, in one array (an unknown token is an error, as in :meth:`id`)."""
        try:
            return np.fromiter(map(self._index.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        except KeyError as missing:
            self.id(missing.args[0])  # raises the ValidationError that names the token
            raise

    def _collate_reference(self, examples: Sequence[Example]) -> Batch:
        """:meth:`collate` one example and one position at a time (the reference it is tested against)."""
        width = self._check_fits(examples)
        ids = np.full((len(examples), width), self.id(PAD), dtype=np.int64)
        positions = np.zeros((len(examples), width), dtype=np.int64)
        mask = np.zeros((len(examples), width), dtype=bool)
        if self.uses_flags:
            targets = np.zeros((len(examples), width, len(self.flags)), dtype=np.float32)
            flag_index = {flag: k for k, flag in enumerate(self.flags)}
        else:
            targets = np.full((len(examples), width), IGNORE, dtype=np.int64)
        for b, example in enumerate(examples):
            n = len(example.tokens)
            ids[b, :n] = [self.id(t) for t in example.tokens]
            positions[b] = example.offset + np.minimum(np.arange(width), n - 1)
            mask[b, list(example.checked)] = True
            for k, target in zip(example.checked, example.targets):
                if self.uses_flags:
                    on = target if isinstance(target, frozenset) else ({"accept"} if target else set())
                    targets[b, k, [flag_index[f] for f in on]] = 1.0
                else:
                    targets[b, k] = self.id(target)
        return Batch(torch.from_numpy(ids), torch.from_numpy(positions), torch.from_numpy(targets),
                     torch.from_numpy(mask))


def _rows(counts: np.ndarray) -> np.ndarray:
    """Row b repeated counts[b] times: the row of each item of a flattened ragged batch."""
    return np.repeat(np.arange(len(counts)), counts)


def _columns(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[b] - 1 for each row b in turn: each item's place within its row."""
    starts = np.cumsum(counts) - counts
    return np.arange(int(counts.sum())) - np.repeat(starts, counts)


def exact_rows(out: torch.Tensor, batch: Batch, uses_flags: bool) -> torch.Tensor:
    """Per example (the last axis of ``out`` aside), whether every checked position is right: every
    flag for next-set and accept tasks, the argmax token otherwise. ``out`` may carry leading axes
    (seeds) before the batch's."""
    if uses_flags:
        right = ((out > 0) == (batch.targets > 0.5)).all(-1) | ~batch.mask
    else:
        right = (out.argmax(-1) == batch.targets) | (batch.targets == IGNORE)
    return right.all(-1)


def _longest_test_sequence(task: Task) -> int:
    rng = np.random.default_rng(0)
    low, high = task.bins[-1]
    return max(len(e.tokens) for e in task.sample_bin(max(low, high - 2), high, 20, rng))
