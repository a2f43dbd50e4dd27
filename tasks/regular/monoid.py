"""The transition monoid of a minimal DFA (its syntactic monoid) and the algebraic tests on it.

An element is the transformation ``q -> q.w`` of a word w, kept as ``bytes`` (``f[q]`` is the image
of q; automata of more than 256 states use tuples). Elements are found breadth-first, so the word
kept for each is a shortest one. The monoid can be exponential in the number of states: every
function here stops at ``limit`` elements.

* aperiodic: every element f has f^k = f^(k+1) for some k (no non-trivial group);
* R-trivial: f M = g M implies f = g;
* R^omega: aperiodic and at most one idempotent in each R-class (C-RASP ∩ REG ⊆ R^omega is a
  necessary condition, Yang et al. 2026, Thm 13/14).

>>> from tasks.regular.dfa import from_regex
>>> aperiodic(from_regex("(aa)*", "a"))
(False, "the word 'a' permutes the states 0 -> 1 -> 0 (a cycle of length 2), so a^k never equals a^(k+1): the syntactic monoid contains a non-trivial group")
>>> algebraic_class(from_regex("(a*c)*", "abc"))
'aperiodic, not R^omega'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..types import TaskError
from .dfa import Dfa

DEFAULT_LIMIT = 500_000


def strongly_connected_components(successors: Sequence[Sequence[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative: the components of the graph ``q -> successors[q]``, each sorted,
    in reverse topological order (a component before those that reach it)."""
    n = len(successors)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            succ = successors[v]
            if i < len(succ):
                work[-1] = (v, i + 1)
                w = succ[i]
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[v] < low[parent]:
                    low[parent] = low[v]
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                components.append(sorted(component))
    return components


def _pad(f) -> bytes:
    return bytes(f) + bytes(256 - len(f))


@dataclass
class Monoid:
    """The elements found (``elements[0]`` is the identity), a shortest word of each, and the
    right Cayley graph ``right[i][k]`` = element of ``words[i] symbols[k]``. ``complete`` is False
    when the search stopped at its limit."""

    dfa: Dfa
    elements: list
    words: list[tuple[str, ...]]
    right: list[list[int]] = field(repr=False)
    complete: bool

    def compose(self, f, g):
        """f then g (the element of the word uv when f is u's and g is v's)."""
        if isinstance(f, bytes):
            return f.translate(_pad(g))
        return tuple(g[x] for x in f)

    def power(self, f, k: int):
        result, base = bytes(range(len(f))) if isinstance(f, bytes) else tuple(range(len(f))), f
        while k:
            if k & 1:
                result = self.compose(result, base)
            base = self.compose(base, base)
            k >>= 1
        return result

    def is_idempotent(self, f) -> bool:
        return self.compose(f, f) == f

    def group_cycle(self, f) -> list[int] | None:
        """A cycle of length > 1 of ``q -> f[q]`` (then f generates a non-trivial group), else None."""
        n = len(f)
        stable = self.power(f, 1 << max(1, (n - 1).bit_length()))  # every q to a state on its cycle
        for q in range(n):
            c = stable[q]
            if f[c] != c:
                cycle = [c]
                while f[cycle[-1]] != c:
                    cycle.append(f[cycle[-1]])
                return cycle
        return None


def _word(word: Sequence[str]) -> str:
    return "".join(word) if all(len(s) == 1 for s in word) else " ".join(word)


def _group_witness(word: Sequence[str], cycle: list[int]) -> str:
    w = _word(word)
    power = w if len(word) == 1 else f"({w})"
    path = " -> ".join(map(str, [*cycle, cycle[0]]))
    return (f"the word {w!r} permutes the states {path} (a cycle of length {len(cycle)}), so {power}^k never "
            f"equals {power}^(k+1): the syntactic monoid contains a non-trivial group")


def transition_monoid(dfa: Dfa, limit: int = DEFAULT_LIMIT, *, stop_at_group: bool = False) -> tuple[Monoid, str | None]:
    """Explore the transition monoid breadth-first, at most ``limit`` elements; with
    ``stop_at_group``, stop at the first element that generates a non-trivial group. Returns the
    monoid and that element's witness (None when every element found is aperiodic)."""
    n = dfa.n_states
    use_bytes = n <= 256
    make = bytes if use_bytes else tuple
    identity = make(range(n))
    letters = [make(dfa.table[q][k] for q in range(n)) for k in range(len(dfa.symbols))]
    padded = [_pad(g) for g in letters] if use_bytes else None
    monoid = Monoid(dfa, [identity], [()], [], True)
    index = {identity: 0}
    witness = None
    elements, found_words, right = monoid.elements, monoid.words, monoid.right
    i = 0
    while i < len(elements):
        f = elements[i]
        row = []
        for k, g in enumerate(letters):
            h = f.translate(padded[k]) if padded is not None else tuple(g[x] for x in f)
            j = index.get(h)
            if j is None:
                if len(elements) >= limit:
                    monoid.complete = False
                    return monoid, witness
                j = index[h] = len(elements)
                elements.append(h)
                found_words.append((*found_words[i], dfa.symbols[k]))
                if witness is None:
                    cycle = monoid.group_cycle(h)
                    if cycle is not None:
                        witness = _group_witness(found_words[j], cycle)
                        if stop_at_group:
                            monoid.complete = False
                            return monoid, witness
            row.append(j)
        right.append(row)
        i += 1
    return monoid, witness


def r_omega_violation(monoid: Monoid) -> str | None:
    """For a complete monoid: two idempotents in one R-class, as text, or None if there are none."""
    if not monoid.complete:
        raise TaskError("the R^omega test needs the whole monoid")
    classes = strongly_connected_components(monoid.right)
    for component in classes:
        idempotents = [i for i in component if monoid.is_idempotent(monoid.elements[i])]
        if len(idempotents) >= 2:
            e, f = idempotents[:2]
            u, v = _connect(monoid, e, f), _connect(monoid, f, e)
            show = lambda i: repr(_word(monoid.words[i])) if monoid.words[i] else "the empty word"  # noqa: E731
            return (f"the words {show(e)} and {show(f)} act as two distinct idempotents in one R-class of the "
                    f"syntactic monoid ({show(e)}·{_word(u)!r} acts as {show(f)} and {show(f)}·{_word(v)!r} "
                    f"as {show(e)}), so it is not in R^omega")
    return None


def _connect(monoid: Monoid, source: int, target: int) -> tuple[str, ...]:
    """A shortest word u with element(source)·u = element(target) (breadth-first in the Cayley graph)."""
    parent: dict[int, tuple[int, int] | None] = {source: None}
    queue = [source]
    for i in queue:
        if i == target:
            break
        for k, j in enumerate(monoid.right[i]):
            if j not in parent:
                parent[j] = (i, k)
                queue.append(j)
    word = []
    i = target
    while (step := parent[i]) is not None:
        i, k = step
        word.append(monoid.dfa.symbols[k])
    return tuple(reversed(word))


def aperiodic(dfa: Dfa, limit: int = DEFAULT_LIMIT) -> tuple[bool, str | None]:
    """Whether the language of ``dfa`` is aperiodic (star-free), with a witness word when it is not:
    a shortest word that permutes some states in a cycle. Raises TaskError when the monoid has
    more than ``limit`` elements and none of those found is a witness.

    >>> from tasks.regular.dfa import from_regex
    >>> aperiodic(from_regex("(ab)*", "ab"))
    (True, None)
    """
    from .dfa import minimize

    monoid, witness = transition_monoid(minimize(dfa), limit, stop_at_group=True)
    if witness is not None:
        return False, witness
    if not monoid.complete:
        raise TaskError(f"the syntactic monoid has more than {limit} elements, all aperiodic so far: raise `limit`")
    return True, None


def algebraic_class(dfa: Dfa, limit: int = DEFAULT_LIMIT) -> str:
    """Where the syntactic monoid of the language sits: ``'R-trivial'``, ``'R^omega'`` (but not
    R-trivial), ``'aperiodic, not R^omega'`` or ``'not aperiodic'``.

    >>> from tasks.regular.dfa import from_regex
    >>> [algebraic_class(from_regex(r, "ab")) for r in ("a*b*", "(ab|ba)*", "(a|b)*b", "(aa)*")]
    ['R-trivial', 'R^omega', 'aperiodic, not R^omega', 'not aperiodic']
    """
    from .dfa import minimize

    monoid, witness = transition_monoid(minimize(dfa), limit, stop_at_group=True)
    if witness is not None:
        return "not aperiodic"
    if not monoid.complete:
        raise TaskError(f"the syntactic monoid has more than {limit} elements: raise `limit`")
    if r_omega_violation(monoid) is not None:
        return "aperiodic, not R^omega"
    classes = strongly_connected_components(monoid.right)
    return "R-trivial" if all(len(c) == 1 for c in classes) else "R^omega"


__all__ = ["Monoid", "transition_monoid", "aperiodic", "algebraic_class", "r_omega_violation",
           "strongly_connected_components"]
