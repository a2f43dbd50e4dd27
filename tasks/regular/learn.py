"""Learn a DFA from a membership oracle: Angluin's L* with Maler & Pnueli's counterexamples.

Equivalence queries are answered by checking every word up to ``max_length`` (shortest first),
then any ``extra`` words, so the result agrees with ``member`` on every word of length at most
``max_length`` and on those. What it
guarantees, exactly:

* the result is the canonical minimal DFA of its own language, and no DFA with fewer states
  agrees with ``member`` on the words the learner asked (its observation table holds that many
  pairwise distinguished prefixes);
* if ``member`` is a regular language whose minimal DFA has n states and ``max_length >= 2n - 2``,
  the result is that minimal DFA (L*'s hypotheses never have more than n states, and two DFAs of
  at most n states that differ already differ on a word of length at most 2n - 2).

>>> from tasks.regular.dfa import from_regex
>>> target = from_regex("(ab|b)*", "ab")
>>> learned = learn(target.accepts, "ab", 6)
>>> learned.dfa == target, learned.max_length
(True, 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..types import TaskError
from .dfa import Dfa, from_table
from .regex import alphabet_tuple

MAX_STATES = 64


@dataclass(frozen=True)
class Learned:
    """A learned DFA, the length up to which it was checked against the oracle, and the number of
    distinct membership queries asked."""

    dfa: Dfa
    max_length: int
    queries: int


def learn(member: Callable[[tuple[str, ...]], bool], symbols: str | Sequence[str], max_length: int,
          max_states: int = MAX_STATES, extra: Sequence[tuple[str, ...]] = ()) -> Learned:
    """Learn the minimal DFA of ``member`` (called on tuples of symbols) over ``symbols``; see the
    module docstring for the guarantees. ``extra``: more words the result must agree on (after
    every word up to ``max_length``, the shortest first): longer words where the alphabet is too
    large for the exhaustive check to reach the longest distinguishing words. Raises TaskError
    when ``max_states`` states do not suffice: the table then holds more pairwise distinguished
    prefixes, so no DFA that small agrees with ``member`` on the words asked.

    >>> learn(lambda w: w.count("a") % 3 == 0, "ab", 5).dfa.n_states
    3
    """
    symbols = alphabet_tuple(symbols)
    if max_length < 0:
        raise TaskError(f"max_length must be at least 0, got {max_length}")
    cache: dict[tuple[str, ...], bool] = {}

    def ask(word: tuple[str, ...]) -> bool:
        answer = cache.get(word)
        if answer is None:
            answer = cache[word] = bool(member(word))
        return answer

    access: list[tuple[str, ...]] = [()]          # S: one access word per state (prefix-closed)
    suffixes: list[tuple[str, ...]] = [()]        # E: suffix-closed experiments
    known_suffixes: set[tuple[str, ...]] = {()}

    def row(word: tuple[str, ...]) -> tuple[bool, ...]:
        return tuple(ask(word + e) for e in suffixes)

    while True:
        # close the table: every one-letter extension of S must have the row of some element of S
        rows = {row(s): k for k, s in enumerate(access)}
        changed = True
        while changed:
            changed = False
            for s in list(access):
                for a in symbols:
                    r = row(s + (a,))
                    if r not in rows:
                        if len(access) >= max_states:
                            longest = max(len(s + (a,)) + len(e) for e in suffixes)
                            raise TaskError(
                                f"no DFA with at most {max_states} states agrees with the oracle: the learner "
                                f"found {max_states + 1} prefixes that pairwise differ on words of length at "
                                f"most {longest} (the table asked {len(cache)} words)")
                        rows[r] = len(access)
                        access.append(s + (a,))
                        changed = True
        table = {(k, a): rows[row(s + (a,))] for k, s in enumerate(access) for a in symbols}
        accepting = {k for k, s in enumerate(access) if ask(s)}
        hypothesis = from_table(symbols, 0, accepting, table)
        counterexample = _counterexample(hypothesis, ask, max_length)
        if counterexample is None:
            counterexample = next((w for w in sorted(extra, key=len) if hypothesis.accepts(w) != ask(w)), None)
        if counterexample is None:
            return Learned(hypothesis, max_length, len(cache))
        for i in range(len(counterexample)):
            suffix = counterexample[i:]
            if suffix not in known_suffixes:
                known_suffixes.add(suffix)
                suffixes.append(suffix)


def _counterexample(hypothesis: Dfa, ask, max_length: int) -> tuple[str, ...] | None:
    """A shortest word of length at most ``max_length`` on which the hypothesis and the oracle
    differ (breadth-first, running the hypothesis along), or None."""
    final = hypothesis.accepting
    level: list[tuple[tuple[str, ...], int]] = [((), hypothesis.start)]
    for n in range(max_length + 1):
        for word, state in level:
            if (state in final) != ask(word):
                return word
        if n == max_length:
            break
        level = [(word + (a,), hypothesis.table[state][k]) for word, state in level
                 for k, a in enumerate(hypothesis.symbols)]
    return None


__all__ = ["Learned", "learn", "MAX_STATES"]
