"""Accept-format tasks for regular languages: one verdict per word, read at the last position of
``<bos> w <eos>`` (the end token is the end-of-sequence convention of the published decision).

Inputs of length n are drawn so that about half are accepted where both kinds exist: a fair coin
picks "accepted" or "rejected", then the word is uniform among the words of length n of that
kind (exact counts per state and remaining length; where one kind has no word of length n the
other is drawn). There is no published distribution for these tasks; this one keeps the classes
balanced at every length.

>>> import numpy as np
>>> task = regex_task("(ab)*", "ab")
>>> task.name, task.format.value, task.example(("a", "b")).tokens, task.answer(("a", "b"))
('regex_(ab)*', 'accept', ('<bos>', 'a', 'b', '<eos>'), True)
>>> x = task.sample_input(6, np.random.default_rng(0)); len(x)
6
>>> task.batch_answer(np.array([[0, 1], [1, 0]])).tolist()
[[1], [0]]
"""

from __future__ import annotations

import bisect

from typing import Sequence

import numpy as np

from ..types import BOS, EOS, Format, Labels, Task, TaskError
from .dfa import Dfa, from_regex, minimize
from .regex import alphabet_tuple

NAME_CHARACTERS = "_-*(){},."
REFERENCE = "tasks.regular (a DFA per language; docs/regular.md)"


class WordSampler:
    """Draw words of a given length, accepted or rejected with probability 1/2 each where both
    exist, uniformly within the chosen kind: each symbol with the share of the words of the kind
    that continue through it (counted exactly, kept as cumulative shares per state and length)."""

    def __init__(self, dfa: Dfa) -> None:
        self.dfa = dfa
        self.accepted: list[list[int]] = [[int(q in dfa.accepting) for q in range(dfa.n_states)]]
        self.shares: dict[tuple[int, bool], list[list[float]]] = {}

    def counts(self, length: int) -> list[list[int]]:
        """``counts(n)[r][q]``: the number of accepted words of length r read from state q, r <= n."""
        table = self.dfa.table
        while len(self.accepted) <= length:
            last = self.accepted[-1]
            self.accepted.append([sum(last[t] for t in row) for row in table])
        return self.accepted

    def _shares(self, remaining: int, want: bool) -> list[list[float]]:
        """Per state, the cumulative shares of its symbols among the words of length ``remaining``
        of the kind ``want`` read from it (a symbol no such word continues through adds nothing)."""
        key = (remaining, want)
        found = self.shares.get(key)
        if found is None:
            found = self.shares[key] = self._compute(remaining, want)
        return found

    def _compute(self, remaining: int, want: bool) -> list[list[float]]:
        k = len(self.dfa.symbols)
        below = self.counts(remaining)[remaining - 1]
        every = k ** (remaining - 1)
        found = []
        for row in self.dfa.table:
            weights = [below[t] if want else every - below[t] for t in row]
            whole, running, cumulative = sum(weights), 0, []
            for w in weights:
                running += w
                cumulative.append(running / whole if whole else 0.0)
            found.append(cumulative)
        return found

    def __call__(self, length: int, rng: np.random.Generator) -> tuple[str, ...]:
        dfa = self.dfa
        k = len(dfa.symbols)
        accepted = self.counts(length)
        total = k ** length
        want = bool(rng.random() < 0.5)
        if accepted[length][dfa.start] == 0:
            want = False
        elif accepted[length][dfa.start] == total:
            want = True
        state, out = dfa.start, []
        symbols, table, pick = dfa.symbols, dfa.table, bisect.bisect_right
        shares = [self._shares(remaining, want) for remaining in range(length, 0, -1)]
        for by_state, u in zip(shares, rng.random(length).tolist()):
            cumulative = by_state[state]
            chosen = min(pick(cumulative, u), k - 1)
            while chosen > 0 and cumulative[chosen] == cumulative[chosen - 1]:  # a symbol of no such word
                chosen -= 1
            out.append(symbols[chosen])
            state = table[state][chosen]
        return tuple(out)


def _task_name(text: str) -> str:
    replaced = text.replace("|", ",").replace("+", "{1,}").replace("?", "{0,1}").replace("[", "(").replace("]", ")")
    return "regex_" + "".join(c if c.isalnum() or c in NAME_CHARACTERS else "_" for c in replaced)


def dfa_task(dfa: Dfa, name: str, description: str = "", labels: Labels = Labels(None, None)) -> Task:
    """An accept-format task (family "regular") whose reference is ``dfa``: inputs are words over
    its symbols, the answer is whether the word is in the language.

    >>> from tasks.regular.dfa import from_regex
    >>> dfa_task(from_regex("a*b", "ab"), "a_star_b").answer(("a", "a", "b"))
    True
    """
    if not isinstance(dfa, Dfa):
        raise TaskError(f"dfa_task needs a tasks.regular.Dfa, got {type(dfa).__name__}")
    dfa = minimize(dfa)

    def answer(x: Sequence[str]) -> bool:
        return dfa.accepts(tuple(x))

    def batch_answer(ids: np.ndarray) -> np.ndarray:
        return dfa.batch_accepts(ids).astype(np.int64)[:, None]

    return Task(
        name=name,
        family="regular",
        format=Format.ACCEPT,
        symbols=dfa.symbols,
        outputs=(),
        sample_input=WordSampler(dfa),
        answer=answer,
        valid=lambda x: True,
        train_range=(0, 50),
        bins=((0, 50), (51, 100), (101, 150)),
        min_length=0,
        prefix=(BOS,),
        separator=None,
        labels=labels,
        description=description or f"a regular language over {{{', '.join(dfa.symbols)}}} ({dfa.n_states} states)",
        reference=REFERENCE,
        batch_answer=batch_answer,
        automaton=dfa,
        end=EOS,
    )


def regex_task(text: str, alphabet: str | Sequence[str], name: str | None = None,
               labels: Labels = Labels(None, None)) -> Task:
    """The accept-format task of a regular expression over ``alphabet`` (see :func:`dfa_task`); the
    default name is ``regex_`` and the expression with ``|`` written ``,`` and ``+`` ``{1,}``."""
    symbols = alphabet_tuple(alphabet)
    return dfa_task(from_regex(text, symbols), name or _task_name(text), description=text, labels=labels)


__all__ = ["regex_task", "dfa_task", "WordSampler"]
