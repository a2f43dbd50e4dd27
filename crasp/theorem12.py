"""The one-way protocol of Theorem 12 (Huang et al. 2025), executable for any C-RASP program.

Alice holds the first ``split`` tokens of an input, Bob the rest. Alice evaluates the program on
her tokens and sends, for every count in it, one number: its value at her last position (an
integer in [0, split], so ceil(log2(split + 1)) bits). For a count with a local guard she sends
instead the operand's values at her last D positions (D bits; D is the guard's largest offset).
From this message alone Bob evaluates every definition at each of his positions: an unguarded
count there is Alice's total plus his own prefix sum, a guarded one reads across the boundary
from her tail, and periodic predicates see absolute positions, which he knows. So the message
has O(log N) bits: C-RASP[periodic, local] programs (and Limit Transformers with PERIODIC and
LOCAL) cannot compute functions that need more.

>>> from crasp.parser import parse
>>> majority = parse('M = #"a" > #"b"')
>>> message = alice(majority, "a a b a".split(), split=4)
>>> sorted(message.totals.values()), message.bits
([1, 3], 6)
>>> bob(majority, message, "b b b".split()).accept_values[0].tolist()
[True, False, False]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from . import ast
from .checker import CheckedProgram, check
from .errors import InputError
from .interpreter import RunResult, _Evaluator, encode


@dataclass(frozen=True)
class Message:
    """What Alice sends: ``totals[c]`` for each unguarded count c (its value at her last
    position), ``tails[c]`` for each guarded one (its operand at her last D positions, oldest
    first, False before the input starts). ``split`` and ``offset`` place Bob's first token at
    absolute position ``offset + split + 1``; Bob knows both, so they cost no bits."""

    split: int
    offset: int
    totals: Mapping[ast.Count, int] = field(repr=False)
    tails: Mapping[ast.Count, tuple[bool, ...]] = field(repr=False)

    @property
    def bits(self) -> int:
        """The message size: ceil(log2(split + 1)) bits per total, one bit per tail value."""
        return message_bits(len(self.totals), [len(t) for t in self.tails.values()], self.split)


def message_bits(totals: int, tails: Sequence[int], split: int) -> int:
    """Bits of a message with ``totals`` counts in [0, split] and the given tail lengths."""
    return totals * max(1, math.ceil(math.log2(split + 1))) + sum(tails)


def counts_of(checked: CheckedProgram) -> list[ast.Count]:
    """Every distinct count expression of the program (definitions and outputs), in order."""
    found: dict[ast.Count, None] = {}

    def visit(node: ast.Expr) -> None:
        for child in ast.children(node):
            visit(child)
        if isinstance(node, ast.Count):
            found.setdefault(node)

    for definition in checked.definitions:
        visit(definition.expr)
    for output in [checked.accept] if checked.accept is not None else [e for _, e in checked.next_tokens]:
        visit(output)
    return list(found)


def _depth(checked: CheckedProgram, node: ast.Count) -> int:
    return max(checked.guard_offsets(node.guard), default=0) if node.guard is not None else 0


def _checked(program: ast.Program | CheckedProgram) -> CheckedProgram:
    return program if isinstance(program, CheckedProgram) else check(program)


def _vocabulary(checked: CheckedProgram, alphabet: Iterable[str]) -> dict[str, int]:
    return {token: index for index, token in enumerate(sorted(checked.info.alphabet | set(alphabet)))}


def alice(program: ast.Program | CheckedProgram, tokens: Sequence[str], *, split: int | None = None,
          offset: int = 0, allow_unknown: bool = False, alphabet: Iterable[str] = ()) -> Message:
    """Alice's message after reading ``tokens[:split]`` (all of ``tokens`` by default)."""
    checked = _checked(program)
    held = tuple(tokens[:split] if split is not None else tokens)
    counts = counts_of(checked)
    if not held:
        return Message(0, offset, {c: 0 for c in counts if c.guard is None},
                       {c: (False,) * _depth(checked, c) for c in counts if c.guard is not None})
    vocabulary = _vocabulary(checked, alphabet)
    ids, lengths = encode([held], vocabulary, allow_unknown=allow_unknown)
    evaluate = _Evaluator(checked, ids, vocabulary, np.array([offset], dtype=np.int64))
    evaluate.result((held,), lengths, trace=False)
    m = len(held)
    totals, tails = {}, {}
    for count in counts:
        if count.guard is None:
            totals[count] = int(evaluate(count)[0, m - 1])
        else:
            depth = _depth(checked, count)
            seen = evaluate(count.operand)[0, max(0, m - depth):m].tolist()
            tails[count] = (False,) * (depth - len(seen)) + tuple(bool(v) for v in seen)
    return Message(m, offset, totals, tails)


class _BobEvaluator(_Evaluator):
    """The interpreter on Bob's tokens, with every count continued from Alice's message."""

    def __init__(self, checked: CheckedProgram, ids: np.ndarray, vocabulary: dict[str, int],
                 message: Message) -> None:
        super().__init__(checked, ids, vocabulary, np.array([message.offset + message.split], dtype=np.int64))
        self.message = message

    def count(self, node: ast.Count) -> np.ndarray:
        values = self(node.operand)
        if node.guard is None:
            return self.message.totals[node] + np.cumsum(values, axis=1, dtype=np.int64)
        history = np.array(self.message.tails[node], dtype=bool)[None, :]
        extended = np.concatenate([history, values], axis=1)
        depth, width = history.shape[1], self.shape[1]
        total = np.zeros(self.shape, dtype=np.int64)
        for offset in self.checked.guard_offsets(node.guard):
            total += extended[:, depth - offset: depth - offset + width]
        return total


def bob(program: ast.Program | CheckedProgram, message: Message, tokens: Sequence[str], *,
        trace: bool = True, allow_unknown: bool = False, alphabet: Iterable[str] = ()) -> RunResult:
    """Every definition and output at Bob's positions, from his tokens and Alice's message.

    The result is that of :func:`crasp.interpreter.run` restricted to Bob's positions: position k
    of the arrays is token ``split + k + 1`` of the whole input.
    """
    checked = _checked(program)
    held = tuple(tokens)
    if not held:
        raise InputError("Bob holds no tokens: there is nothing for him to compute")
    missing = [c for c in counts_of(checked) if c not in (message.totals if c.guard is None else message.tails)]
    if missing:
        raise InputError(f"the message lacks {len(missing)} of the program's counts: it was made for another program")
    vocabulary = _vocabulary(checked, alphabet)
    ids, lengths = encode([held], vocabulary, allow_unknown=allow_unknown)
    return _BobEvaluator(checked, ids, vocabulary, message).result((held,), lengths, trace=trace)


@dataclass(frozen=True)
class MessageSize:
    """Theorem 12's message for one program as N grows: ``bits[k]`` at split ``splits[k]``."""

    totals: int
    tail_bits: int
    splits: tuple[int, ...]
    bits: tuple[int, ...]

    def formula(self) -> str:
        return f"{self.totals} * ceil(log2(N + 1)) + {self.tail_bits}"


def message_size(program: ast.Program | CheckedProgram, splits: Iterable[int] = (8, 64, 512, 4096, 32768)) -> MessageSize:
    """How many bits Alice sends when she holds N tokens, for each N in ``splits``.

    >>> from crasp.parser import parse
    >>> message_size(parse('M = #"a" > #"b"'), splits=(1, 1000)).bits
    (2, 20)
    """
    checked = _checked(program)
    counts = counts_of(checked)
    totals = sum(1 for c in counts if c.guard is None)
    tails = [_depth(checked, c) for c in counts if c.guard is not None]
    splits = tuple(splits)
    return MessageSize(totals, sum(tails), splits, tuple(message_bits(totals, tails, n) for n in splits))
