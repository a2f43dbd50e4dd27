"""Deterministic finite automata: the references of the formal-language tasks.

The next-character set after a prefix w is the set of symbols s such that ws is still the prefix
of some word of the language, plus ``<eos>`` when w itself is a word. Once a prefix cannot be
completed (a dead state), every later set is empty.

>>> dyck2 = bounded_dyck(2, "a", "b")
>>> [sorted(s) for s in dyck2.next_sets(("a", "a", "b"))]
[['<eos>', 'a'], ['a', 'b'], ['b'], ['a', 'b']]
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np

from .types import EOS, TaskError

State = Hashable


@dataclass(frozen=True)
class Dfa:
    """A partial DFA: a missing transition leads to the dead state."""

    symbols: tuple[str, ...]
    start: State
    accepting: frozenset
    delta: dict = field(compare=False, hash=False)  # (state, symbol) -> state

    @functools.cached_property
    def live(self) -> frozenset:
        """States from which some accepting state is reachable."""
        live = set(self.accepting)
        changed = True
        while changed:
            changed = False
            for (state, _), target in self.delta.items():
                if target in live and state not in live:
                    live.add(state)
                    changed = True
        return frozenset(live)

    def step(self, state: State | None, symbol: str) -> State | None:
        """The next state, or None once the prefix is dead."""
        if state is None:
            return None
        target = self.delta.get((state, symbol))
        return target if target in self.live else None

    def legal(self, state: State | None) -> frozenset:
        """The next-character set in ``state`` (None: dead)."""
        if state is None:
            return frozenset()
        found = {s for s in self.symbols if self.step(state, s) is not None}
        if state in self.accepting:
            found.add(EOS)
        return frozenset(found)

    def next_sets(self, x: Sequence[str]) -> tuple[frozenset, ...]:
        """The next-character set after each prefix of x, the empty prefix first (len(x) + 1 sets)."""
        moves, sets = self._walk
        state = 0
        out = [sets[0]]
        try:
            for symbol in x:
                state = moves[state][symbol]
                out.append(sets[state])
        except KeyError:
            unknown = next(s for s in x if s not in self.symbols)
            raise TaskError(f"symbol {unknown!r} is not in the alphabet {{{', '.join(self.symbols)}}}") from None
        return tuple(out)

    @functools.cached_property
    def _walk(self) -> tuple[list[dict[str, int]], list[frozenset]]:
        """Per numbered state (0: the start, as in :attr:`tables`) its moves by symbol and its
        next-character set: the tables :meth:`next_sets` walks."""
        start = self.start if self.start in self.live else None
        states, index = [start], {start: 0}
        for state in states:
            for symbol in self.symbols:
                target = self.step(state, symbol)
                if target not in index:
                    index[target] = len(states)
                    states.append(target)
        moves = [{symbol: index[self.step(q, symbol)] for symbol in self.symbols} for q in states]
        return moves, [self.legal(q) for q in states]

    @functools.cached_property
    def _options(self) -> dict:
        """Per state the symbols that keep the prefix completable, in the alphabet's order."""
        return {}

    @functools.cached_property
    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(transitions, set codes) over numbered states: ``transitions[q, s]`` is the state after
        symbol ``self.symbols[s]`` in state q (the last state is the dead one) and ``codes[q]``
        numbers q's next-character set (equal sets, equal numbers)."""
        moves, legal = self._walk
        transitions = np.array([[row[s] for s in self.symbols] for row in moves], dtype=np.int64)
        sets: dict[frozenset, int] = {}
        codes = np.array([sets.setdefault(found, len(sets)) for found in legal], dtype=np.int64)
        return transitions, codes.astype(np.int8 if len(sets) < 128 else np.int64)

    def batch_next_sets(self, ids: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`next_sets`: ``ids[b, k]`` indexes ``self.symbols``; entry [b, k] of the
        result numbers the next-character set after the first k symbols of row b.

        >>> dyck1 = bounded_dyck(1, "a", "b")
        >>> dyck1.batch_next_sets(np.array([[0, 1], [1, 0]])).tolist()
        [[0, 1, 0], [0, 2, 2]]
        """
        transitions, codes = self.tables
        flat = transitions.astype(np.int32).ravel()
        width = np.int32(transitions.shape[1])
        state = np.zeros(ids.shape[0], dtype=np.int32)
        out = np.empty((ids.shape[1] + 1, ids.shape[0]), dtype=codes.dtype)  # by position: rows stay contiguous
        out[0] = codes[0]
        columns = np.ascontiguousarray(ids.T, dtype=np.int32)
        for k in range(ids.shape[1]):
            state = flat.take(state * width + columns[k])
            out[k + 1] = codes.take(state)
        return out.T

    def accepts(self, x: Sequence[str]) -> bool:
        return EOS in self.next_sets(x)[-1]

    def is_prefix(self, x: Sequence[str]) -> bool:
        """Whether x can still be completed to a word."""
        return bool(self.next_sets(x)[-1])

    def minimal(self):
        """The canonical minimal complete automaton of the language (a :class:`tasks.regular.Dfa`):
        the language whose membership is the ``<eos>`` target.

        >>> bounded_dyck(1, "a", "b").minimal().accepts("abab")
        True
        """
        from .regular.dfa import from_table as complete

        return complete(self.symbols, self.start, self.accepting, self.delta)

    def random_prefix(self, length: int, rng: np.random.Generator) -> tuple[str, ...]:
        """A completable string of ``length``: each symbol uniform among the legal ones."""
        state = self.start
        out = []
        known = self._options
        for _ in range(length):
            options = known.get(state)
            if options is None:
                options = known[state] = tuple(s for s in self.symbols if self.step(state, s) is not None)
            if not options:
                raise TaskError(f"the language has no prefix of length {length}")
            symbol = options[int(rng.integers(0, len(options)))]
            out.append(symbol)
            state = self.step(state, symbol)
        return tuple(out)


def from_table(symbols: str | Sequence[str], start: State, accepting, table: dict) -> Dfa:
    """A DFA from ``{state: {symbol: target}}``."""
    delta = {(q, s): t for q, row in table.items() for s, t in row.items()}
    return Dfa(tuple(symbols), start, frozenset(accepting), delta)


def bounded_dyck(depth: int, open_: str, close: str) -> Dfa:
    """Balanced brackets whose depth never exceeds ``depth`` (the language D_depth)."""
    table = {d: {**({open_: d + 1} if d < depth else {}), **({close: d - 1} if d > 0 else {})}
             for d in range(depth + 1)}
    return from_table((open_, close), 0, {0}, table)


def cycle(word: str, repetitions: int = 1) -> Dfa:
    """(word^repetitions)*: the symbols of ``word`` in a loop, accepting after whole repetitions."""
    period = len(word) * repetitions
    table = {k: {word[k % len(word)]: (k + 1) % period} for k in range(period)}
    return from_table(tuple(dict.fromkeys(word)), 0, {0}, table)


def ordered_blocks(letters: str) -> Dfa:
    """letters[0]+ letters[1]+ ...: each letter at least once, in order (aa*bb*cc*dd*ee*)."""
    table: dict = {"start": {letters[0]: 0}}
    for k, letter in enumerate(letters):
        table[k] = {letter: k, **({letters[k + 1]: k + 1} if k + 1 < len(letters) else {})}
    return from_table(tuple(letters), "start", {len(letters) - 1}, table)


def mod_counts(symbols: str, modulus: int, accept) -> Dfa:
    """A DFA on the counts of each symbol modulo ``modulus``; ``accept(counts)`` picks the finals."""
    states = list(itertools.product(range(modulus), repeat=len(symbols)))
    table = {q: {s: tuple((c + (k == n)) % modulus for k, c in enumerate(q)) for n, s in enumerate(symbols)}
             for q in states}
    return from_table(tuple(symbols), states[0], {q for q in states if accept(q)}, table)


def tomita(n: int) -> Dfa:
    """The Tomita grammars 1-7 over {0, 1} (Tomita 1982), with the published automata."""
    if n == 1:  # 1*
        return from_table("01", 0, {0}, {0: {"1": 0}})
    if n == 2:  # (10)*
        return bounded_dyck(1, "1", "0")
    if n == 3:  # no odd block of 1s immediately followed by an odd block of 0s
        table = {0: {"0": 0, "1": 1}, 1: {"0": 3, "1": 0}, 2: {"0": 3, "1": 1}, 3: {"0": 2}}
        return from_table("01", 0, {0, 1, 2}, table)
    if n == 4:  # no 000
        return from_table("01", 0, {0, 1, 2}, {0: {"0": 1, "1": 0}, 1: {"0": 2, "1": 0}, 2: {"1": 0}})
    if n == 5:  # even number of 0s and of 1s
        return mod_counts("01", 2, lambda q: q == (0, 0))
    if n == 6:  # #0 - #1 divisible by 3
        return from_table("01", 0, {0}, {r: {"0": (r + 1) % 3, "1": (r - 1) % 3} for r in range(3)})
    if n == 7:  # 0*1*0*1*
        return from_table("01", 0, {0, 1, 2, 3},
                          {0: {"0": 0, "1": 1}, 1: {"0": 2, "1": 1}, 2: {"0": 2, "1": 3}, 3: {"1": 3}})
    raise TaskError(f"there is no Tomita grammar {n} (1 to 7)")


def split_at(mandatory: str, before: str, after: str) -> Dfa:
    """before* mandatory after*: one ``mandatory`` symbol between two free blocks."""
    symbols = tuple(dict.fromkeys(before + mandatory + after))
    table = {"pre": {**{s: "pre" for s in before}, mandatory: "post"}, "post": {s: "post" for s in after}}
    return from_table(symbols, "pre", {"post"}, table)


def last_marker(symbols: str, marker: str, neutral: str) -> Dfa:
    """symbols* marker neutral*: the last symbol outside ``neutral`` is ``marker`` ({0,1,2}*02*)."""
    table = {q: {s: (q if s in neutral else s == marker) for s in symbols} for q in (False, True)}
    return from_table(tuple(symbols), False, {True}, table)


__all__ = ["Dfa", "from_table", "bounded_dyck", "cycle", "ordered_blocks", "mod_counts", "tomita",
           "split_at", "last_marker"]
