"""Random numbers that are a pure function of a key and a counter, the same bits on every device.

Counter-based random numbers (as Philox and Threefry are; Salmon et al., SC 2011): the number at
counter c of the stream with key k is hash(k, c), with no state to carry. Here they are computed
with int64 tensor operations that give the same bits on a CPU and a GPU, so a seed's training
examples and dropout masks are the same wherever it trains, a CUDA graph can replay the drawing
(the counter is a tensor the graph owns), and the state of a stream is a count.

Each number hashes a tuple of 32-bit words (the key, then the counter's words), one word at a time,
with lowbias32 (C. Wellons' 32-bit integer hash: xor-shift, multiply, xor-shift, multiply,
xor-shift, a bijection on 32-bit words); its products are formed 16 bits at a time, so that no
int64 operation overflows and every value stays non-negative.

>>> import torch
>>> draws = Draws((7, 1), torch.arange(4))
>>> draws.integers(0, 0, 9).tolist() == Draws((7, 1), torch.arange(4)).integers(0, 0, 9).tolist()
True
>>> bool(((0 <= draws.uniform(1, width=3)) & (draws.uniform(1, width=3) < 1)).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence, Union

if TYPE_CHECKING:
    import torch

Word = Union["torch.Tensor", int]

_WORD = 0xFFFFFFFF
_LOW = 0xFFFF
_START = 0x9E3779B9  # the hash of the empty tuple: the golden ratio's 32 bits, as in TEA's key schedule


def _product(x, factor: int):
    """(x * factor) mod 2^32 for 32-bit x, from two 16-bit halves of x (each product < 2^48)."""
    return ((x & _LOW) * factor + ((((x >> 16) * factor) & _LOW) << 16)) & _WORD


def _mix(x):
    """lowbias32: a bijection on 32-bit words whose every output bit depends on every input bit
    (on Python ints and on int64 tensors alike)."""
    x = x ^ (x >> 16)
    x = _product(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _product(x, 0x846CA68B)
    return x ^ (x >> 16)


def hash_words(words: Sequence[Word], device=None) -> "torch.Tensor":
    """A 32-bit hash (int64 values in [0, 2^32)) of a tuple of words, elementwise over their
    broadcast shape; each word must lie in [0, 2^32). Words given as Python ints are hashed on the
    host: no number travels to the device (which a CUDA graph capture would not allow).

    >>> import torch
    >>> hash_words([1, torch.tensor([0, 1, 2])]).tolist() == [hash_words([1, k]).item() for k in range(3)]
    True
    """
    import torch

    h: Word = _START
    for word in words:
        h = _mix(h ^ (word & _WORD))
    return h if torch.is_tensor(h) else torch.tensor(h, dtype=torch.int64, device=device)


def uniform(words: Sequence[Word], device=None) -> "torch.Tensor":
    """Uniform float32 numbers in [0, 1) on a grid of 2^-24 (the top 24 bits of the hash)."""
    import torch

    return (hash_words(words, device) >> 8).to(torch.float32) * (1.0 / (1 << 24))


def integers(high: Word, words: Sequence[Word], device=None) -> "torch.Tensor":
    """Integers uniform in [0, high) (``high`` >= 1, below 2^31, elementwise) from 62 bits of two
    hashes: the remainder's bias is below high / 2^62."""
    import torch

    first = hash_words([*words, 0], device)
    second = hash_words([*words, 1], device)
    wide = ((first >> 2) << 32) | second
    return torch.remainder(wide, high)


@dataclass(frozen=True)
class Draws:
    """The random numbers of a batch of examples: those of example ``examples[b]`` of the stream
    ``key`` (a tuple of ints, say a seed and a stream number), in rejection round ``round``.

    Every call names a ``lane``, so that two quantities of one example (its length, its
    offset, ...) never share numbers; per-place numbers (``width`` given) are indexed by place.
    """

    key: tuple[int, ...]
    examples: "torch.Tensor"
    round: int = 0

    @property
    def count(self) -> int:
        return int(self.examples.shape[0])

    @property
    def device(self):
        return self.examples.device

    def _words(self, lane: int, width: "int | torch.Tensor | None") -> list[Word]:
        """The words numbering this lane's numbers: per example, or per example and place (places
        0 .. width - 1, or the given tensor of place numbers, each below 2^32)."""
        import torch

        example = self.examples if width is None else self.examples[:, None]
        words: list[Word] = [*self.key, self.round, lane, example]
        if width is not None:
            places = width if torch.is_tensor(width) else torch.arange(width, device=self.device)
            words.append(places[None, :])
        return words

    def uniform(self, lane: int, width: "int | torch.Tensor | None" = None) -> "torch.Tensor":
        """Per example (or per example and place, with ``width``), uniform in [0, 1)."""
        return uniform(self._words(lane, width), self.device)

    def integers(self, lane: int, low: Word, high: Word, width: "int | torch.Tensor | None" = None) -> "torch.Tensor":
        """Per example (or per example and place), an integer uniform in [low, high] (inclusive,
        as ``numpy.random.Generator.integers(low, high + 1)``)."""
        return low + integers(high - low + 1, self._words(lane, width), self.device)

    def subset(self, rows: "torch.Tensor") -> "Draws":
        """The draws of the examples at ``rows`` only."""
        return replace(self, examples=self.examples[rows])

    def again(self) -> "Draws":
        """The next rejection round's numbers of the same examples."""
        return replace(self, round=self.round + 1)


__all__ = ["Draws", "hash_words", "integers", "uniform"]
