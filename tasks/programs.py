"""C-RASP programs for the algorithmic tasks, generated for any alphabet with :mod:`crasp.builder`.

Every program is a token-producing program: next(t) at ``<sep>`` names the first answer token,
at each answer token the following one, and ``<eos>`` after the last. Programs read positions
only relative to ``<bos>``, so they are correct at every position offset.

>>> from crasp.interpreter import run
>>> program = majority(["a", "b", "c"])
>>> run(program, ["<bos> a b b c <sep> b <eos>"]).next_tokens(0)[5:7]
['b', '<eos>']
"""

from __future__ import annotations

from typing import Sequence

from crasp import builder as b
from crasp.ast import Program

from .types import BOS, EOS, SEP


def _equal(p: b.Expr, q: b.Expr) -> b.Expr:
    return (p & q) | (~p & ~q)


def majority(symbols: Sequence[str]) -> Program:
    """At ``<sep>``: the symbol strictly more frequent than every other; then ``<eos>``. Plain C-RASP."""
    pb = b.ProgramBuilder(source=f"<majority over {len(symbols)} symbols>")
    pb.alphabet([BOS, SEP, EOS])
    counts = {t: pb.let(f"Count_{n}", b.count(b.tok(t))) for n, t in enumerate(symbols)}
    at_sep = b.tok(SEP)
    for t in symbols:
        pb.next(t, at_sep & b.all_of(counts[t] > counts[u] for u in symbols if u != t))
    pb.next(EOS, ~at_sep)
    return pb.build()


def relative_residues(pb: b.ProgramBuilder, modulus: int) -> list[b.Expr]:
    """Rel_r holds where the number of positions after ``<bos>`` is r modulo ``modulus``.

    With ``<bos>`` at absolute position p0, position i has i - p0 tokens after ``<bos>``. A
    periodic predicate reads p0 mod ``modulus`` at ``<bos>`` (Bos_mod_s), and Rel_r is the union of
    Bos_mod_s && i = s + r. Programs built on these are correct at every position offset.
    """
    bos_at = [pb.let(f"Bos_mod_{s}", b.count(b.tok(BOS) & b.periodic(modulus, [s])) >= 1)
              for s in range(modulus)]
    return [pb.let(f"Rel_mod_{r}", b.any_of(bos_at[s] & b.periodic(modulus, [(s + r) % modulus])
                                             for s in range(modulus)))
            for r in range(modulus)]


def interleaved_majority(period: int = 3) -> Program:
    """Majority bit of each of ``period`` interleaved streams of bits, stream by stream.

    Input symbol q (1-based) belongs to stream (q - 1) mod period, so stream k holds where
    Rel_{k + 1} does (:func:`relative_residues`). Answer position d after ``<sep>`` is found
    with the local guard i - j = d.
    """
    pb = b.ProgramBuilder(source=f"<interleaved majority, period {period}>")
    pb.alphabet([BOS, SEP, EOS])
    rel = relative_residues(pb, period)
    in_input = pb.let("In_input", (b.count(b.tok(SEP)) == 0) & ~b.tok(BOS))
    winners = []
    for k in range(period):
        stream = rel[(k + 1) % period]
        ones = pb.let(f"Ones_{k}", b.count(b.tok("1") & in_input & stream))
        zeros = pb.let(f"Zeros_{k}", b.count(b.tok("0") & in_input & stream))
        winners.append(pb.let(f"Majority_{k}", ones > zeros))
    after_sep = [b.tok(SEP)] + [
        pb.let(f"Sep_back_{d}", b.count(b.tok(SEP), guard=b.offsets(d)) >= 1) for d in range(1, period + 1)
    ]
    one = pb.let("Answer_is_1", b.any_of(after_sep[k] & winners[k] for k in range(period)))
    done = after_sep[period]
    pb.next("1", ~done & one)
    pb.next("0", ~done & ~one)
    pb.next(EOS, done)
    return pb.build()


def copy_with_stride(symbols: Sequence[str], stride: int = 1, filler: str = "#") -> Program:
    """Copy every ``stride``-th symbol of an input of distinct symbols (unique copy: stride 1).

    The sequence is ``<bos>``, stride - 1 fillers, x, ``<sep>``, x[::stride], ``<eos>``. The next
    output after current token t is the input symbol u whose stride-back neighbour is t (at
    ``<sep>``, the one whose neighbour is ``<bos>``); ``<eos>`` when that symbol is ``<sep>``.
    Token identities are compared through the bits of their index: for every u the program
    records, with the local guard i - j = stride, the bits of the token before u in the input,
    and matches them with the bits of the current token. O(|symbols| log |symbols|) definitions.
    """
    fillers = [filler] if stride > 1 else []
    tokens = [BOS, *fillers, SEP, EOS, *symbols]
    index = {t: n + 1 for n, t in enumerate(tokens)}  # 1-based: no token has all bits zero
    width = max(index.values()).bit_length()

    def with_bit(pool, bit):
        return [t for t in pool if index[t] >> bit & 1]

    pb = b.ProgramBuilder(source=f"<copy every {stride}-th of distinct symbols>")
    pb.alphabet(tokens)
    in_input = pb.let("Up_to_sep", (b.count(b.tok(SEP)) == 0) | b.tok(SEP))
    back = [pb.let(f"Back_bit_{bit}", b.count(b.one_of(with_bit(tokens, bit)), guard=b.offsets(stride)) >= 1)
            for bit in range(width)]
    key = [pb.let(f"Key_bit_{bit}", (b.tok(SEP) & bool(index[BOS] >> bit & 1))
                  | (~b.tok(SEP) & b.one_of(with_bit(symbols, bit))))
           for bit in range(width)]
    for n, u in enumerate([*symbols, SEP]):
        seen = pb.let(f"Has_{n}", b.count(b.tok(u) & in_input) >= 1)
        before = [pb.let(f"Before_{n}_bit_{bit}", b.count(b.tok(u) & in_input & back[bit]) >= 1)
                  for bit in range(width)]
        follows = seen & b.all_of(_equal(before[bit], key[bit]) for bit in range(width))
        pb.next(EOS if u == SEP else u, follows)
    return pb.build()


def sort_ascending(symbols: Sequence[str]) -> Program:
    """Output the distinct input symbols in the order of ``symbols``. Plain C-RASP.

    Below_u counts the present symbols that come before u; the rank of the current token is
    Below_t + 1 (0 at ``<sep>``), and the next output is the present u with Below_u equal to it.
    """
    pb = b.ProgramBuilder(source=f"<sort over {len(symbols)} symbols>")
    pb.alphabet([BOS, SEP, EOS])
    present = [pb.let(f"Has_{n}", b.count(b.tok(t)) >= 1) for n, t in enumerate(symbols)]
    below = [pb.let("Below_0", 0)]
    for n in range(1, len(symbols)):
        below.append(pb.let(f"Below_{n}", below[n - 1] + b.where(present[n - 1], 1, 0)))
    total = pb.let("Present", below[-1] + b.where(present[-1], 1, 0))
    rank = pb.let("Rank", b.sum_of(b.where(b.tok(t), below[n] + 1, 0) for n, t in enumerate(symbols)))
    for n, t in enumerate(symbols):
        pb.next(t, present[n] & (below[n] == rank))
    pb.next(EOS, ~b.tok(SEP) & (rank == total))
    return pb.build()
