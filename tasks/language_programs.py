"""C-RASP programs for the formal languages: the next-character set at every position.

Each program declares next(s) for every symbol s and for ``<eos>``; at position i, next(s) says
whether s may follow the prefix read so far (``<bos>`` is the empty prefix). The programs are
correct on every string, not only on prefixes of words: once a prefix cannot be completed, no
next(s) holds. Positions are read relative to ``<bos>`` (see :func:`tasks.programs.relative_residues`),
so the programs are correct at every position offset.

>>> from crasp.interpreter import run
>>> result = run(bounded_dyck(2, "a", "b"), ["<bos> a a b"])
>>> [sorted(t for t in result.next if result.next[t][0, k]) for k in range(4)]
[['<eos>', 'a'], ['a', 'b'], ['b'], ['a', 'b']]
"""

from __future__ import annotations

from typing import Sequence

from crasp import builder as b
from crasp.ast import Program

from .programs import relative_residues
from .types import BOS, EOS


def _declare(pb: b.ProgramBuilder, live: b.Expr, legal: dict[str, b.Operand]) -> Program:
    for symbol, condition in legal.items():
        pb.next(symbol, live & condition if not isinstance(condition, bool) else (live if condition else False))
    return pb.build()


def length_mod(symbol: str, modulus: int) -> Program:
    """(symbol^modulus)*: ``symbol`` is always legal; ``<eos>`` when the length is a multiple.

    Needs the periodic predicate i mod ``modulus`` (read against ``<bos>``'s residue).
    """
    pb = b.ProgramBuilder(source=f"<({symbol * modulus})*>")
    pb.alphabet([BOS])
    rel = relative_residues(pb, modulus)
    return _declare(pb, b.lift(True), {symbol: True, EOS: rel[0]})


def alternating(word: str, repetitions: int) -> Program:
    """(word^repetitions)* for a word of distinct symbols, e.g. (abab)* = ("ab", 2).

    The k-th symbol must be word[(k - 1) mod |word|]: a periodic predicate on the length read so
    far finds the expected symbol; ``<eos>`` after whole repetitions.
    """
    period = len(word) * repetitions
    pb = b.ProgramBuilder(source=f"<({word * repetitions})*>")
    pb.alphabet([BOS])
    rel = relative_residues(pb, period)
    # At a position holding the k-th symbol, k = rel (mod period); it should be word[(k - 1) % |word|].
    misplaced = pb.let("Misplaced", b.any_of(
        b.tok(s) & b.any_of(rel[k] for k in range(period) if word[(k - 1) % len(word)] != s) for s in word))
    live = pb.let("Live", b.count(misplaced) == 0)
    expected = {s: b.any_of(rel[k] for k in range(period) if word[k % len(word)] == s) for s in word}
    return _declare(pb, live, {**expected, EOS: rel[0]})


def bounded_dyck(depth: int, open_: str, close: str) -> Program:
    """D_depth: brackets whose depth stays within [0, depth]. Plain C-RASP.

    Depth = #open - #close; the prefix is dead once some position had a depth outside [0, depth].
    Tomita-2, (10)*, is D_1 with 1 opening and 0 closing.
    """
    pb = b.ProgramBuilder(source=f"<D_{depth} over {open_} {close}>")
    pb.alphabet([BOS])
    level = pb.let("Depth", b.count(b.tok(open_)) - b.count(b.tok(close)))
    out_of_range = pb.let("Out_of_range", (level < 0) | (level > depth))
    live = pb.let("Live", b.count(out_of_range) == 0)
    return _declare(pb, live, {open_: level < depth, close: level > 0, EOS: level == 0})


def ones_only() -> Program:
    """Tomita-1, 1*: dead after any 0. Plain C-RASP."""
    pb = b.ProgramBuilder(source="<tomita-1: 1*>")
    pb.alphabet([BOS])
    live = pb.let("Live", b.count(b.tok("0")) == 0)
    return _declare(pb, live, {"0": False, "1": True, EOS: True})


def no_triple_zero() -> Program:
    """Tomita-4, no factor 000: local guards look one and two positions back."""
    pb = b.ProgramBuilder(source="<tomita-4: no 000>")
    pb.alphabet([BOS])
    zero_before = pb.let("Zero_before", b.count(b.tok("0"), guard=b.offsets(1)) >= 1)
    zero_two_before = pb.let("Zero_two_before", b.count(b.tok("0"), guard=b.offsets(2)) >= 1)
    ends_00 = pb.let("Ends_00", b.tok("0") & zero_before)
    live = pb.let("Live", b.count(ends_00 & zero_two_before) == 0)
    return _declare(pb, live, {"0": ~ends_00, "1": True, EOS: True})


def four_blocks() -> Program:
    """Tomita-7, 0*1*0*1*: dead once the subsequence 1 0 1 0 appears. Plain C-RASP."""
    pb = b.ProgramBuilder(source="<tomita-7: 0*1*0*1*>")
    pb.alphabet([BOS])
    zero_after_one = pb.let("Zero_after_1", b.tok("0") & (b.count(b.tok("1")) >= 1))
    seen_10 = pb.let("Seen_10", b.count(zero_after_one) >= 1)
    seen_101 = pb.let("Seen_101", b.count(b.tok("1") & seen_10) >= 1)
    live = pb.let("Live", b.count(b.tok("0") & seen_101) == 0)
    return _declare(pb, live, {"0": ~seen_101, "1": True, EOS: True})


def ordered_blocks(letters: Sequence[str]) -> Program:
    """letters[0]+ letters[1]+ ... (aa*bb*cc*dd*ee*). Plain C-RASP.

    Live iff no letter follows a later one and every letter but the first has its predecessor
    somewhere before it; then the string is a+ b+ ... and after letter l come l and its successor.
    """
    pb = b.ProgramBuilder(source=f"<{''.join(f'{c}{c}*' for c in letters)}>")
    pb.alphabet([BOS])
    bad = []
    for k, letter in enumerate(letters):
        later = b.one_of(letters[k + 1:]) if k + 1 < len(letters) else b.lift(False)
        out_of_order = b.tok(letter) & (b.count(later) >= 1)
        skipped = b.tok(letter) & (b.count(b.tok(letters[k - 1])) == 0) if k else b.lift(False)
        bad.append(out_of_order | skipped)
    live = pb.let("Live", b.count(pb.let("Bad", b.any_of(bad))) == 0)
    legal: dict[str, b.Operand] = {letters[0]: b.tok(BOS) | b.tok(letters[0])}
    for k in range(1, len(letters)):
        legal[letters[k]] = b.tok(letters[k - 1]) | b.tok(letters[k])
    legal[EOS] = b.tok(letters[-1])
    return _declare(pb, live, legal)


def split_at(mandatory: str, before: str, after: str) -> Program:
    """before* mandatory after* ({a,b}*d{b,c}*). Plain C-RASP.

    Live iff ``mandatory`` occurs at most once, only ``before`` symbols precede it and only
    ``after`` symbols follow it.
    """
    pb = b.ProgramBuilder(source=f"<{{{','.join(before)}}}*{mandatory}{{{','.join(after)}}}*>")
    pb.alphabet([BOS])
    marks = pb.let("Marks", b.count(b.tok(mandatory)))
    symbols = dict.fromkeys(before + mandatory + after)
    wrong_before = [s for s in symbols if s not in before and s != mandatory]
    wrong_after = [s for s in symbols if s not in after]
    bad = pb.let("Bad", ((marks == 0) & b.one_of(wrong_before)) | ((marks >= 1) & b.one_of(wrong_after)
                                                                  & ~(b.tok(mandatory) & (marks == 1))))
    live = pb.let("Live", b.count(bad) == 0)
    legal: dict[str, b.Operand] = {}
    for s in symbols:
        legal[s] = b.any_of([*([marks == 0] if s in before or s == mandatory else []),
                             *([marks == 1] if s in after else [])])
    legal[EOS] = marks == 1
    return _declare(pb, live, legal)


__all__ = ["length_mod", "alternating", "bounded_dyck", "ones_only", "no_triple_zero", "four_blocks",
           "ordered_blocks", "split_at"]
