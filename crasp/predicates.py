"""Registry of named positional predicates for ``#import``.

Every registered predicate declares what makes it admissible in C-RASP[periodic, local]:

* a unary predicate declares its period ``m`` and residue set ``R``: it holds at absolute
  (1-based) position ``p`` iff ``p mod m`` is in ``R``;
* a binary predicate declares its finite offset set ``D``: ``guard(i, j)`` holds iff ``i - j``
  is in ``D``.

Names used by the c-rasp interpreter's examples are registered with their 0-based meaning, as
that interpreter evaluated them: ``pos_even`` is true at 0-based even positions, which are the
1-based *odd* positions (residue 1 mod 2).

Registering a Python function checks the declaration against the function on a window of
positions, so a wrong declaration is refused rather than silently trusted.

>>> registry = PredicateRegistry()
>>> registry.register_unary("third", lambda p: p % 3 == 0, period=3, zero_based=False)
>>> registry["third"]
UnaryPredicate(name='third', modulus=3, residues=IntSet.of({0}))
>>> registry.register_binary("prev2", lambda i, j: j == i - 2, offsets={2})
>>> registry["prev2"].offsets
IntSet.of({2})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Union

from .errors import RegistryError
from .intsets import IntSet


@dataclass(frozen=True)
class UnaryPredicate:
    """Holds at absolute 1-based position ``p`` iff ``p % modulus in residues``."""

    name: str
    modulus: int
    residues: IntSet

    def __post_init__(self) -> None:
        object.__setattr__(self, "residues", IntSet.of(self.residues))

    def holds(self, position: int) -> bool:
        return position % self.modulus in self.residues


@dataclass(frozen=True)
class BinaryPredicate:
    """``guard(i, j)`` holds iff ``i - j in offsets``."""

    name: str
    offsets: IntSet

    def __post_init__(self) -> None:
        object.__setattr__(self, "offsets", IntSet.of(self.offsets))

    def holds(self, i: int, j: int) -> bool:
        return i - j in self.offsets


Predicate = Union[UnaryPredicate, BinaryPredicate]

_CHECK_WINDOW = 64
_MAX_FUNCTION_PERIOD = 10**5


class PredicateRegistry:
    """A name -> predicate table; :data:`DEFAULT_REGISTRY` is the one ``#import`` uses."""

    def __init__(self, predicates: Iterable[Predicate] = ()) -> None:
        self._table: dict[str, Predicate] = {}
        for predicate in predicates:
            self.add(predicate)

    def add(self, predicate: Predicate) -> None:
        """Register a declared predicate (no function to check)."""
        if not predicate.name.isidentifier():
            raise RegistryError(f"predicate name {predicate.name!r} is not an identifier")
        if predicate.name in self._table and self._table[predicate.name] != predicate:
            raise RegistryError(f"predicate {predicate.name!r} is already registered differently")
        if isinstance(predicate, UnaryPredicate):
            if predicate.modulus < 1:
                raise RegistryError(f"predicate {predicate.name!r}: period must be >= 1")
            residues = predicate.residues
            if residues and not (0 <= residues.min() and residues.max() < predicate.modulus):
                raise RegistryError(
                    f"predicate {predicate.name!r}: residues must lie in 0..{predicate.modulus - 1}"
                )
        elif predicate.offsets and predicate.offsets.min() < 0:
            raise RegistryError(
                f"predicate {predicate.name!r}: offsets i - j must be >= 0 (j never exceeds i)"
            )
        self._table[predicate.name] = predicate

    def register_unary(
        self, name: str, function: Callable[[int], bool], *, period: int, zero_based: bool = True
    ) -> None:
        """Register ``function(position)`` that the caller declares periodic with ``period``.

        ``zero_based=True`` (the c-rasp convention) means ``function`` receives ``p - 1``.
        """
        if period < 1:
            raise RegistryError(f"predicate {name!r}: period must be >= 1")
        if period > _MAX_FUNCTION_PERIOD:
            raise RegistryError(
                f"predicate {name!r}: a function is checked at every residue, so its period must be at "
                f"most {_MAX_FUNCTION_PERIOD}; declare a longer one with its residues, as "
                "registry.add(UnaryPredicate(name, period, IntSet.span(start, stop)))"
            )
        shift = 1 if zero_based else 0
        residues = frozenset(p % period for p in range(1, period + 1) if function(p - shift))
        for p in range(1, min(_CHECK_WINDOW * period, 10**6) + 1):
            if bool(function(p - shift)) != (p % period in residues):
                raise RegistryError(
                    f"predicate {name!r} is not periodic with period {period}: "
                    f"it differs at 1-based position {p}"
                )
        self.add(UnaryPredicate(name, period, IntSet.of(residues)))

    def register_binary(
        self, name: str, function: Callable[[int, int], bool], *, offsets: Iterable[int],
        zero_based: bool = True,
    ) -> None:
        """Register ``function(i, j)`` that the caller declares true exactly when i - j is in ``offsets``."""
        declared = IntSet.of(offsets)
        shift = 1 if zero_based else 0
        # Every pair near the start, and every pair at the edges of the declared offset intervals.
        pairs = [(i, j) for i in range(1, _CHECK_WINDOW + 1) for j in range(1, i + 1)]
        for start, stop in declared.spans:
            for d in {start - 1, start, stop - 1, stop} - {-1}:
                pairs += [(d + k, k) for k in (1, 2, 3)]
        for i, j in pairs:
            if bool(function(i - shift, j - shift)) != (i - j in declared):
                raise RegistryError(
                    f"predicate {name!r} does not match its declared offsets {declared}: "
                    f"it differs at (i, j) = ({i}, {j}) (1-based)"
                )
        self.add(BinaryPredicate(name, declared))

    def __getitem__(self, name: str) -> Predicate:
        return self._table[name]

    def __contains__(self, name: object) -> bool:
        return name in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._table))

    def names(self) -> list[str]:
        return sorted(self._table)


BUILTINS: tuple[Predicate, ...] = (
    # c-rasp's `pred`: j = i - 1 (the previous position).
    BinaryPredicate("pred", IntSet.of({1})),
    # c-rasp's `pred4`: j = i - 4.
    BinaryPredicate("pred4", IntSet.of({4})),
    # c-rasp's `pos_even`: 0-based even positions, i.e. 1-based odd positions.
    UnaryPredicate("pos_even", 2, IntSet.of({1})),
    UnaryPredicate("pos_odd", 2, IntSet.of({0})),
)
"""The predicates every registry starts from (the c-rasp examples' names)."""

DEFAULT_REGISTRY = PredicateRegistry(BUILTINS)


def register_unary(name: str, function: Callable[[int], bool], *, period: int,
                   zero_based: bool = True) -> None:
    """Register a unary predicate in :data:`DEFAULT_REGISTRY` (see :class:`PredicateRegistry`)."""
    DEFAULT_REGISTRY.register_unary(name, function, period=period, zero_based=zero_based)


def register_binary(name: str, function: Callable[[int, int], bool], *, offsets: Iterable[int],
                    zero_based: bool = True) -> None:
    """Register a binary predicate in :data:`DEFAULT_REGISTRY` (see :class:`PredicateRegistry`)."""
    DEFAULT_REGISTRY.register_binary(name, function, offsets=offsets, zero_based=zero_based)
