"""Is a regular language one of Yang, Cadilhac & Chiang's L_k on two of its symbols?

L_k is the set of words with exactly k non-empty alternating blocks, the first of a's
(:mod:`tasks.depth_languages`). Their depth hierarchy bounds the depth of any C-RASP program that
*recognizes* L_k (the verdict at the last position of every word over {a, b}) or that solves its
*prediction* problem (at every prefix of a word of L_k, whether that prefix is in L_k). A program
for a language L over more symbols, restricted to inputs over two symbols x, y, is a program of the
same depth for L restricted to {x, y}*; so the bounds carry over to L when

* recognition: L ∩ {x, y}* is L_k with x, y renamed a, b (:func:`recognizes`);
* prediction: L ∩ Pref(L_k) is L_k, renamed likewise, where Pref(L_k) is the set of prefixes of
  words of L_k (:func:`predicts`): on every such prefix, membership in L is membership in L_k.

Both are exact questions about minimal automata. Where a task's language *is* L_k on its two
symbols, :func:`recognizer` builds a program of count depth k (for k >= 2), the depth the hierarchy
says is needed: on a word that starts with a, "at least m blocks" is T_1 = true and T_{m+1} =
#[letter of block m+1 and T_m] >= 1 (depth m), and the word is in L_k when T_k holds and T_{k+1}
does not; "starts with a" is #[b and #a == 0] == 0 (depth 2).

>>> from tasks.regular.dfa import from_regex
>>> recognizes(from_regex("a+b+a+", "ab"))
(3, 'a', 'b')
>>> predicts(from_regex("(a|b)*a", "ab")), predicts(from_regex("b*a+b+a+", "ab"))
((2, 'b', 'a'), (4, 'b', 'a'))
"""

from __future__ import annotations

from crasp import builder as b
from crasp.ast import Program

from ..types import BOS
from .dfa import Dfa, from_table, minimize

LETTERS = ("a", "b")
YANG_CADILHAC_CHIANG = ("Yang, Cadilhac & Chiang, Knee-Deep in C-RASP: A Transformer Depth Hierarchy, NeurIPS 2025 "
                        "(arXiv 2506.16055)")


def block_letter(m: int) -> str:
    """The letter of block m (1-based): a for odd m, b for even.

    >>> block_letter(1), block_letter(2), block_letter(3)
    ('a', 'b', 'a')
    """
    return LETTERS[(m - 1) % 2]


def block_table(k: int) -> dict[int, dict[str, int]]:
    """The partial transitions of L_k's automaton: state j is "j blocks read", 0 the start (which
    reads only an a); a missing transition leaves the prefixes of L_k's words."""
    table = {0: {"a": 1}}
    for j in range(1, k + 1):
        table[j] = {block_letter(j): j, **({block_letter(j + 1): j + 1} if j < k else {})}
    return table


def alternation(k: int) -> Dfa:
    """The minimal DFA of L_k over (a, b): k + 2 states (start, one per block, dead).

    >>> alternation(3).accepts("aabba"), alternation(3).accepts("abab"), alternation(3).n_states
    (True, False, 5)
    """
    return from_table(LETTERS, 0, {k}, block_table(k))


def prefixes_of_alternation(k: int) -> Dfa:
    """The minimal DFA of Pref(L_k): the empty word and words starting with a of at most k blocks."""
    return from_table(LETTERS, 0, set(range(k + 1)), block_table(k))


def at_least_blocks(pb: b.ProgramBuilder, top: int, x: str = "a", y: str = "b") -> dict[int, b.Expr]:
    """Definitions T_2 .. T_top in ``pb``: on a word that starts with x (for a; y for b), T_m says
    the prefix has at least m blocks. T_1 is true and T_{m+1} = #[letter of block m+1 and T_m] >= 1
    (count depth m - 1): a prefix of at least m blocks whose current letter is that of block m + 1
    has at least m + 1. The result maps m to T_m, 1 included."""
    letter = {"a": x, "b": y}
    found = {1: b.lift(True)}
    for m in range(2, top + 1):
        found[m] = pb.let(f"At_least_{m}", b.count(b.tok(letter[block_letter(m)]) & found[m - 1]) >= 1)
    return found


def restricted(dfa: Dfa, x: str, y: str) -> Dfa:
    """The minimal DFA of L ∩ {x, y}*, with x renamed a and y renamed b."""
    columns = (dfa.index[x], dfa.index[y])
    return minimize(Dfa(LETTERS, dfa.start, dfa.accepting, tuple(tuple(row[c] for c in columns) for row in dfa.table)))


def intersection(first: Dfa, second: Dfa) -> Dfa:
    """The minimal DFA of the intersection of two languages over the same symbols."""
    if first.symbols != second.symbols:
        raise ValueError("the automata read different symbols")
    pairs, number, rows = [(first.start, second.start)], {(first.start, second.start): 0}, []
    for p, q in pairs:
        row = []
        for k in range(len(first.symbols)):
            target = (first.table[p][k], second.table[q][k])
            if target not in number:
                number[target] = len(pairs)
                pairs.append(target)
            row.append(number[target])
        rows.append(tuple(row))
    accepting = {n for (p, q), n in number.items() if p in first.accepting and q in second.accepting}
    return minimize(Dfa(first.symbols, 0, frozenset(accepting), tuple(rows)))


def recognizer(k: int, x: str = "a", y: str = "b", end: str | None = None) -> Program:
    """A plain C-RASP program of count depth max(k, 2) accepting L_k (x, y for a, b) at the last
    position of ``<bos> w`` (or, with ``end``, of ``<bos> w end``).

    >>> from crasp.checker import check
    >>> from crasp.interpreter import run
    >>> program = recognizer(3)
    >>> check(program).info.depth, run(program, ["<bos> a b b a", "<bos> b a b", "<bos> a b a b"]).accept.tolist()
    (3, [True, False, False])
    """
    if k < 1:
        raise ValueError(f"L_k needs k >= 1, not {k}")
    pb = b.ProgramBuilder(source=f"<L_{k} over {x} {y}: {k} alternating blocks>")
    pb.alphabet([x, y, BOS, *([end] if end else [])])
    starts = pb.let("Starts_right", b.count(b.tok(y) & (b.count(b.tok(x)) == 0)) == 0)
    at_least = at_least_blocks(pb, k + 1, x, y)
    member = starts & (at_least[k] if k > 1 else b.count(b.tok(x)) >= 1) & ~at_least[k + 1]
    pb.accept((b.tok(end) & member) if end else member)
    return pb.build()


def _pairs(dfa: Dfa):
    return [(x, y) for x in dfa.symbols for y in dfa.symbols if x != y]


def recognizes(dfa: Dfa) -> tuple[int, str, str] | None:
    """(k, x, y) where L ∩ {x, y}* is L_k with x, y renamed a, b, for some k >= 1 (the first such
    pair of symbols); None where there is none."""
    for x, y in _pairs(dfa):
        language = restricted(dfa, x, y)
        k = language.n_states - 2
        if k >= 1 and language == alternation(k):
            return k, x, y
    return None


def predicts(dfa: Dfa) -> tuple[int, str, str] | None:
    """(k, x, y) with the largest k where L ∩ Pref(L_k) is L_k after renaming x, y to a, b; None
    where there is none. (k is at most the number of states: the alternating words of 1 to k
    blocks must reach k different states.)"""
    best = None
    for x, y in _pairs(dfa):
        language = restricted(dfa, x, y)
        for k in range(dfa.n_states, 0, -1):
            if best is not None and k <= best[0]:
                break
            if intersection(language, prefixes_of_alternation(k)) == alternation(k):
                best = (k, x, y)
                break
    return best


__all__ = ["alternation", "prefixes_of_alternation", "restricted", "intersection", "recognizes", "predicts",
           "recognizer", "at_least_blocks", "block_letter", "block_table", "LETTERS", "YANG_CADILHAC_CHIANG"]
