"""Complete deterministic automata with numbered states; minimisation to a canonical form.

A :class:`Dfa` made by :func:`from_regex`, :func:`from_table` or :func:`minimize` is the minimal
complete automaton of its language with its states numbered in breadth-first order from the start
(state 0), trying the symbols in the order of ``symbols``: two such automata are equal exactly
when their languages (over the same ordered alphabet) are.

>>> dfa = from_regex("(ab)*", "ab")
>>> dfa.table, sorted(dfa.accepting)
(((1, 2), (2, 0), (2, 2)), [0])
>>> dfa.accepts("abab"), dfa.accepts("aba")
(True, False)
>>> from_regex("(ab)*", "ab") == from_regex("(ab)*(ab)*|()", "ab")
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np

from ..types import TaskError
from .regex import alphabet_tuple, parse_regex, subset_automaton


@dataclass(frozen=True)
class Dfa:
    """A complete DFA: ``table[state][k]`` is the successor of ``state`` on ``symbols[k]``; the
    states are 0..n-1. Build one with :func:`from_regex` or :func:`from_table` (both minimal and
    canonical); the constructor itself only checks the shape.

    >>> Dfa(("a",), 0, frozenset({0}), ((1,), (0,))).accepts("aa")
    True
    """

    symbols: tuple[str, ...]
    start: int
    accepting: frozenset[int]
    table: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        # accept lists and sets, keep tuples and frozensets (the dataclass is frozen and hashable)
        object.__setattr__(self, "symbols", tuple(self.symbols))
        object.__setattr__(self, "accepting", frozenset(self.accepting))
        object.__setattr__(self, "table", tuple(tuple(int(t) for t in row) for row in self.table))
        n = len(self.table)
        if n == 0:
            raise TaskError("a DFA needs at least one state")
        if len(set(self.symbols)) != len(self.symbols) or not self.symbols:
            raise TaskError(f"a DFA needs distinct symbols; got {self.symbols}")
        for q, row in enumerate(self.table):
            if len(row) != len(self.symbols):
                raise TaskError(f"state {q} of the DFA has {len(row)} successors for {len(self.symbols)} symbols")
            if any(not 0 <= t < n for t in row):
                raise TaskError(f"state {q} of the DFA has a successor outside 0..{n - 1}: {row}")
        if not 0 <= self.start < n or any(not 0 <= q < n for q in self.accepting):
            raise TaskError(f"the DFA's start or accepting states lie outside 0..{n - 1}")

    @property
    def n_states(self) -> int:
        return len(self.table)

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """symbol -> its column in ``table``."""
        return {s: k for k, s in enumerate(self.symbols)}

    def symbol_ids(self, word: str | Sequence[str]) -> list[int]:
        """The columns of a word's symbols (a string is read one character per symbol when every
        symbol is one character, else split at white space)."""
        if isinstance(word, str):
            word = tuple(word) if all(len(s) == 1 for s in self.symbols) else word.split()
        try:
            return [self.index[s] for s in word]
        except KeyError as error:
            raise TaskError(f"symbol {error.args[0]!r} is not in the alphabet {{{', '.join(self.symbols)}}}") from None

    def run(self, word: str | Sequence[str], state: int | None = None) -> int:
        """The state reached from ``state`` (default: the start) after reading ``word``."""
        q = self.start if state is None else state
        table = self.table
        for k in self.symbol_ids(word):
            q = table[q][k]
        return q

    def accepts(self, word: str | Sequence[str]) -> bool:
        """Whether ``word`` (a string or a sequence of symbols) is in the language."""
        return self.run(word) in self.accepting

    def batch_run(self, ids: np.ndarray) -> np.ndarray:
        """The state after each row of ``ids`` (``ids[b, k]`` indexes ``symbols``)."""
        ids = np.asarray(ids)
        transitions = np.asarray(self.table, dtype=np.int64)
        state = np.full(ids.shape[0], self.start, dtype=np.int64)
        for k in range(ids.shape[1] if ids.ndim == 2 else 0):
            state = transitions[state, ids[:, k]]
        return state

    def batch_accepts(self, ids: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`accepts`: a Boolean per row of ``ids``."""
        final = np.zeros(self.n_states, dtype=bool)
        final[list(self.accepting)] = True
        return final[self.batch_run(ids)]

    def with_accepting(self, accepting: Iterable[int]) -> "Dfa":
        """The same transitions with other accepting states (not minimised)."""
        return Dfa(self.symbols, self.start, frozenset(accepting), self.table)

    def right_quotient(self, symbol: str) -> "Dfa":
        """The minimal DFA of L symbol^-1 = {w : w symbol in L}.

        >>> from_regex("(a|b)*b", "ab").right_quotient("b") == from_regex("(a|b)*", "ab")
        True
        """
        k = self.symbol_ids((symbol,))[0]
        return minimize(self.with_accepting(q for q in range(self.n_states) if self.table[q][k] in self.accepting))

    def live(self) -> frozenset[int]:
        """The states from which an accepting state can be reached.

        >>> dfa = from_regex("ab", "ab")     # state 2 is the dead state
        >>> sorted(dfa.live()), dfa.n_states
        ([0, 1, 3], 4)
        """
        live = set(self.accepting)
        grown = True
        while grown:
            before = len(live)
            live |= {q for q, row in enumerate(self.table) if any(t in live for t in row)}
            grown = len(live) != before
        return frozenset(live)

    def complement(self) -> "Dfa":
        return minimize(self.with_accepting(set(range(self.n_states)) - self.accepting))

    def format(self) -> str:
        """The transition table as text: one line per state, ``*`` marks accepting, ``>`` the start."""
        width = max(len(str(self.n_states - 1)), *(len(s) for s in self.symbols))
        lines = [" " * (3 + width) + " ".join(s.rjust(width) for s in self.symbols)]
        for q, row in enumerate(self.table):
            mark = (">" if q == self.start else " ") + ("*" if q in self.accepting else " ")
            lines.append(f"{mark}{str(q).rjust(width)} " + " ".join(str(t).rjust(width) for t in row))
        return "\n".join(lines)


def _reachable(start: int, table: Sequence[Sequence[int]]) -> list[int]:
    seen, order = {start}, [start]
    for q in order:
        for t in table[q]:
            if t not in seen:
                seen.add(t)
                order.append(t)
    return order


def _canonical(symbols, start, accepting: Sequence[bool], table: Sequence[Sequence[int]]) -> Dfa:
    """Minimise (Moore's partition refinement) and renumber breadth-first from the start."""
    order = _reachable(start, table)
    local = {q: k for k, q in enumerate(order)}
    rows = [[local[t] for t in table[q]] for q in order]
    final = [bool(accepting[q]) for q in order]
    cls = [int(f) for f in final]
    count = len(set(cls))
    while True:
        signatures: dict[tuple, int] = {}
        refined = [signatures.setdefault((cls[q], *[cls[t] for t in row]), len(signatures))
                   for q, row in enumerate(rows)]
        if len(signatures) == count:
            break
        cls, count = refined, len(signatures)
    # one representative per class, renumbered breadth-first (the start is local state 0)
    representative: dict[int, int] = {}
    for q in range(len(rows)):
        representative.setdefault(cls[q], q)
    number = {cls[0]: 0}
    queue = [cls[0]]
    out_rows = []
    for c in queue:
        row = []
        for t in rows[representative[c]]:
            target = cls[t]
            if target not in number:
                number[target] = len(queue)
                queue.append(target)
            row.append(number[target])
        out_rows.append(tuple(row))
    accepting_out = frozenset(number[c] for c in queue if final[representative[c]])
    return Dfa(tuple(symbols), 0, accepting_out, tuple(out_rows))


def minimize(dfa: Dfa) -> Dfa:
    """The canonical minimal DFA of ``dfa``'s language (unreachable states dropped).

    >>> minimize(Dfa(("a",), 0, frozenset({0, 2}), ((1,), (2,), (3,), (0,)))).table
    ((1,), (0,))
    """
    final = [q in dfa.accepting for q in range(dfa.n_states)]
    return _canonical(dfa.symbols, dfa.start, final, dfa.table)


def from_regex(text: str, alphabet: str | Sequence[str]) -> Dfa:
    """The canonical minimal complete DFA of a regular expression (syntax: :mod:`tasks.regular.regex`).

    >>> from_regex("(a|b)*b", "ab").format().splitlines()[1:]
    ['> 0 0 1', ' *1 0 1']
    """
    symbols = alphabet_tuple(alphabet)
    table, accepting = subset_automaton(parse_regex(text, symbols), symbols)
    return _canonical(symbols, 0, accepting, table)


def from_table(symbols: str | Sequence[str], start: Hashable, accepting: Iterable[Hashable],
               table: Mapping) -> Dfa:
    """The canonical minimal DFA of a partial transition table: ``table[(state, symbol)] = target``
    (or ``table[state][symbol] = target``); a missing transition leads to a dead state.

    >>> from_table("ab", "even", {"even"}, {("even", "a"): "odd", ("odd", "a"): "even"}) == from_regex("(aa)*", "ab")
    True
    """
    symbols = alphabet_tuple(symbols)
    delta: dict = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            delta.update({(key, s): t for s, t in value.items()})
        else:
            if not (isinstance(key, tuple) and len(key) == 2):
                raise TaskError(f"a table key must be a (state, symbol) pair; got {key!r}")
            delta[key] = value
    known = set(symbols)
    unknown = sorted({repr(s) for _, s in delta if s not in known})
    if unknown:
        raise TaskError(f"the table uses symbols outside the alphabet {{{', '.join(symbols)}}}: {', '.join(unknown)}")
    dead = object()
    number = {start: 0}
    states = [start]
    rows: list[list[int]] = []
    for q in states:
        row = []
        for s in symbols:
            t = delta.get((q, s), dead) if q is not dead else dead
            if t not in number:
                number[t] = len(states)
                states.append(t)
            row.append(number[t])
        rows.append(row)
    accepting = set(accepting)
    final = [q is not dead and q in accepting for q in states]
    return _canonical(symbols, 0, final, rows)


def longest_within(alphabet_size: int, max_symbols: int, cap: int | None = None) -> int:
    """The longest length ``n`` (at most ``cap``) such that every word of length 0..``n`` over
    ``alphabet_size`` letters holds at most ``max_symbols`` symbols in all (the empty word counts
    one, as a framed input still has its frame). Exhaustive checks are bounded by symbols, not
    words, so that one letter does not mean words of tens of thousands of symbols.

    >>> longest_within(2, 200_000), longest_within(1, 200_000), longest_within(3, 10, cap=1)
    (13, 631, 1)
    """
    if alphabet_size < 1 or max_symbols < 1:
        return 0
    length, total = 0, 1
    while cap is None or length < cap:
        more = alphabet_size ** (length + 1) * (length + 1)
        if total + more > max_symbols:
            break
        length, total = length + 1, total + more
    return length


def words(symbols: Sequence[str], max_length: int, min_length: int = 0) -> Iterable[tuple[str, ...]]:
    """Every word over ``symbols`` of length ``min_length``..``max_length``, shortest first, each
    length in the order of ``symbols``."""
    import itertools

    for n in range(min_length, max_length + 1):
        yield from itertools.product(symbols, repeat=n)


__all__ = ["Dfa", "minimize", "from_regex", "from_table", "longest_within", "words"]
