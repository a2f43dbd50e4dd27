"""Finite sets of integers kept as intervals, so their cost does not grow with their values.

Residue sets (``i mod 10^12 >= 1``) and local windows (``#[i - j < 10^10]``) are unions of a few
intervals, however large their bounds: an :class:`IntSet` stores the intervals, answers
membership, size, bounds and unions from them, and tests whole numpy arrays at once. It is a
:class:`collections.abc.Set`, equal to the frozenset of the same elements (and hashed like it
when it has at most :data:`SMALL` elements), so code written for small frozensets keeps working.

>>> window = IntSet.span(0, 10**10)        # i - j < 10^10
>>> len(window), 10**10 - 1 in window, 10**10 in window
(10000000000, True, False)
>>> IntSet.of({1, 2, 3, 7}) == frozenset({1, 2, 3, 7})
True
>>> print(IntSet.of({1, 2, 3, 7}) | IntSet.span(20, 10**6))
{1..3, 7, 20..999999}
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable, Iterator, Set
from typing import TYPE_CHECKING, SupportsIndex, cast

if TYPE_CHECKING:  # numpy is imported where arrays are tested, so the command line's run path need not load it
    import numpy as np

SMALL = 64
"""Sets with at most this many elements hash like the frozenset of their elements."""


def _normalise(spans: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, stop in sorted((int(a), int(b)) for a, b in spans if b > a):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return tuple(merged)


class IntSet(Set[int]):
    """A finite set of integers as sorted, disjoint, non-touching half-open intervals [start, stop)."""

    __slots__ = ("spans", "_starts", "_size")

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self.spans = _normalise(spans)
        self._starts = [start for start, _ in self.spans]
        self._size = sum(stop - start for start, stop in self.spans)

    # ------------------------------------------------------------ construction

    @classmethod
    def of(cls, values: Iterable[int]) -> IntSet:
        """The set of ``values`` (an IntSet is returned as it is)."""
        if isinstance(values, IntSet):
            return values
        return cls((v, v + 1) for v in {int(v) for v in values})

    @classmethod
    def span(cls, start: int, stop: int) -> IntSet:
        """The integers start, start + 1, ..., stop - 1 (empty when stop <= start)."""
        return cls([(start, stop)])

    # ------------------------------------------------------------ the Set protocol

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool):
            return False
        try:
            value = operator.index(cast(SupportsIndex, value))  # int and numpy's integers; others raise TypeError
        except TypeError:
            return False
        index = bisect.bisect_right(self._starts, value) - 1
        return index >= 0 and value < self.spans[index][1]

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[int]:
        for start, stop in self.spans:
            yield from range(start, stop)

    def __bool__(self) -> bool:
        return bool(self.spans)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IntSet):
            return self.spans == other.spans
        if isinstance(other, Set):
            return len(other) == self._size and all(value in self for value in other)
        return NotImplemented

    def __hash__(self) -> int:
        if self._size <= SMALL:
            return hash(frozenset(self))
        return hash(self.spans)

    def __or__(self, other: Iterable[int]) -> IntSet:  # type: ignore[override]  # only sets of ints join
        return IntSet(self.spans + IntSet.of(other).spans)

    __ror__ = __or__

    def __and__(self, other: Iterable[int]) -> IntSet:
        other = IntSet.of(other)
        return IntSet(
            (max(a, c), min(b, d)) for a, b in self.spans for c, d in other.spans if max(a, c) < min(b, d)
        )

    __rand__ = __and__

    def __sub__(self, other: Iterable[int]) -> IntSet:
        return self & IntSet.of(other).complement(self.min(), self.max() + 1) if self else self

    def __reduce__(self):
        return (IntSet, (self.spans,))

    # ------------------------------------------------------------ questions answered from the spans

    def min(self) -> int:
        """The least element (ValueError when empty)."""
        if not self.spans:
            raise ValueError("min() of an empty IntSet")
        return self.spans[0][0]

    def max(self) -> int:
        """The greatest element (ValueError when empty)."""
        if not self.spans:
            raise ValueError("max() of an empty IntSet")
        return self.spans[-1][1] - 1

    def complement(self, start: int, stop: int) -> IntSet:
        """The integers of [start, stop) not in this set."""
        edges, cursor = [], start
        for a, b in self.spans:
            if b <= start or a >= stop:
                continue
            if a > cursor:
                edges.append((cursor, a))
            cursor = max(cursor, b)
        if cursor < stop:
            edges.append((cursor, stop))
        return IntSet(edges)

    def clip(self, start: int, stop: int) -> IntSet:
        """The elements in [start, stop)."""
        return self & IntSet.span(start, stop)

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Elementwise membership of an integer array, in O(size of values x log(spans))."""
        import numpy as np

        values = np.asarray(values)
        if not self.spans:
            return np.zeros(values.shape, dtype=bool)
        clamp = lambda x: min(max(x, -(2**63)), 2**63 - 1)  # noqa: E731 - no int64 value lies beyond
        starts = np.array([clamp(a) for a, _ in self.spans], dtype=np.int64)
        stops = np.array([clamp(b) for _, b in self.spans], dtype=np.int64)
        index = np.searchsorted(starts, values, side="right") - 1
        inside = index >= 0
        return inside & (values < stops[np.maximum(index, 0)])

    # ------------------------------------------------------------ text

    def __str__(self) -> str:
        parts = [str(a) if b == a + 1 else f"{a}, {a + 1}" if b == a + 2 else f"{a}..{b - 1}" for a, b in self.spans]
        return "{" + ", ".join(parts) + "}"

    def __repr__(self) -> str:
        if self._size <= SMALL:
            return "IntSet.of({" + ", ".join(map(str, self)) + "})"
        return f"IntSet({list(self.spans)})"
