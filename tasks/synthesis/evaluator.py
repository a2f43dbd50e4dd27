"""The batch a search evaluates candidates on: its inputs concatenated position by position, with
the interpreter's semantics for token predicates, periodic predicates, counts and local counts
(positions from 1, ``<bos>`` an ordinary token, inclusive counts, absolute positions offset + k).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

BOOL, COUNT = 0, 1  # the two sorts



class Batch:
    """Examples concatenated position by position; everything an enumeration needs of them."""

    def __init__(self, examples: Sequence[tuple], alphabet: Sequence[str], seed: int) -> None:
        self.examples = list(examples)
        self.alphabet = tuple(alphabet)
        vocabulary = {t: k for k, t in enumerate(self.alphabet)}
        lengths = np.array([len(e.tokens) for e, _ in self.examples], dtype=np.int64)
        self.lengths = lengths
        self.width = int(lengths.sum())
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.start = np.repeat(self.starts, lengths)
        self.local = np.arange(self.width, dtype=np.int64) - self.start + 1
        offsets = np.array([offset for _, offset in self.examples], dtype=np.int64)
        self.absolute = np.repeat(offsets, lengths) + self.local
        self.ids = np.fromiter((vocabulary.get(t, -1) for e, _ in self.examples for t in e.tokens),
                               dtype=np.int64, count=self.width)
        self.last = self.starts + lengths - 1
        rng = np.random.default_rng(seed)
        self.salt = [(rng.integers(0, 2**31, size=self.width) | 1).astype(np.int32) for _ in range(2)]
        self._zero: dict[int, np.ndarray] = {}

    def token(self, token: str) -> np.ndarray:
        if token not in self.alphabet:
            return np.zeros(self.width, dtype=bool)
        return self.ids == self.alphabet.index(token)

    def periodic(self, modulus: int, residues: Sequence[int]) -> np.ndarray:
        return np.isin(self.absolute % modulus, list(residues))

    def count(self, values: np.ndarray, dtype=np.int32) -> np.ndarray:
        """#P: inclusive prefix counts within each input, for each row of ``values``."""
        sums = np.zeros((len(values), self.width + 1), dtype=dtype)
        np.cumsum(values, axis=1, dtype=dtype, out=sums[:, 1:])
        return sums[:, 1:] - sums[:, self.start]

    def local_count(self, values: np.ndarray, offsets: frozenset[int], dtype=np.int32) -> np.ndarray:
        """#[i - j in offsets] P: P at i - d for each offset d, inside the input."""
        total = np.zeros(values.shape, dtype=dtype)
        for d in sorted(offsets):
            if d >= self.width:
                continue
            shifted = np.zeros(values.shape, dtype=dtype)
            shifted[:, d:] = values[:, : self.width - d]
            shifted[:, self.zero_at(d)] = 0
            total += shifted
        return total

    def zero_at(self, d: int) -> np.ndarray:
        if d not in self._zero:
            self._zero[d] = np.flatnonzero(self.local <= d)
        return self._zero[d]

    def keys(self, values: np.ndarray) -> np.ndarray:
        return row_keys(values, self.salt)


def row_keys(values: np.ndarray, salt: list[np.ndarray]) -> np.ndarray:
    """A 64-bit key per row: two random linear hashes modulo 2^32 (wrapping int32 sums)."""
    rows = values.view(np.uint8) if values.dtype == bool else values
    high = np.einsum("kp,p->k", rows, salt[0]).astype(np.int64)
    low = np.einsum("kp,p->k", rows, salt[1]).astype(np.int64)
    return (high << 32) ^ (low & 0xFFFFFFFF)

