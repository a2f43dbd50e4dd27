"""The vectorised interpreter: every definition at every position of a batch, with numpy.

A batch of sequences of different lengths is padded to one array; since every operation looks
only left (counts are prefix sums, guards shift right), padding never changes a real position.
Counts are exact int64; the interpreter refuses inputs long enough to overflow them. Work is
O(program size x length) per sequence, guarded counts included.

>>> from crasp.parser import parse
>>> dyck = parse('C_open = #"("\\nC_close = #")"\\nV = C_open < C_close\\nD = #V == 0 && C_open == C_close')
>>> run(dyck, ["( ( ) )", "( ) ) ("]).accept.tolist()
[True, False]
"""

from __future__ import annotations

from itertools import repeat
from dataclasses import dataclass, field
from typing import Collection, Iterable, Iterator, Sequence, Union

import numpy as np

from . import ast
from .checker import CheckedProgram, check
from . import plan as plans
from .errors import InputError, empty_input, unknown_token
from .framing import empty_reason, frame, frames, reads_bos
from .intsets import IntSet
from .predicates import PredicateRegistry

Tokens = Union[str, Sequence[str]]
"""One input: a sequence of tokens, or a string of whitespace-separated tokens."""

_INT64_LIMIT = 2**62
_TABLE_MODULUS = 1 << 16
"""Periodic predicates with a modulus up to this are read from a table of residues."""
PURE_PYTHON_WORK = 2_000
"""A batch whose plan instructions x tokens stay below this runs in pure Python (crasp.plan):
there numpy's fixed cost per operation outweighs its speed (see benchmarks/interpreter_peer.py)."""


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` computed for a batch.

    ``tokens`` are the inputs as run: framed (``<bos>`` first, see :mod:`crasp.framing`) where
    the run prepended it, and positions count them, ``<bos>`` as position 1.
    ``accept[b]`` is the verdict on input ``b`` (for acceptance programs); ``next[t][b, k]`` is
    next(t) at position k+1 (for token-producing programs); ``values[name][b, k]`` is every
    definition's value at position k+1, and ``accept_values`` the accept output's, when tracing
    was asked for. Arrays are padded to the
    longest input: position k of input b is real only for k < lengths[b].
    """

    tokens: tuple[tuple[str, ...], ...]
    lengths: np.ndarray
    offsets: np.ndarray
    accept: np.ndarray | None
    next: dict[str, np.ndarray] | None
    values: dict[str, np.ndarray] | None = field(default=None, repr=False)
    accept_values: np.ndarray | None = field(default=None, repr=False)

    def values_at(self, index: int) -> dict[str, np.ndarray]:
        """Each definition's values on input ``index`` (requires ``trace=True``)."""
        if self.values is None:
            raise ValueError("values were not recorded: call run(..., trace=True)")
        n = int(self.lengths[index])
        return {name: array[index, :n] for name, array in self.values.items()}

    def next_tokens(self, index: int) -> list[str | None]:
        """Per position, the one token t with next(t) true, or None where zero or several hold."""
        if self.next is None:
            raise ValueError("the program declares no 'next' outputs")
        n = int(self.lengths[index])
        names = list(self.next)
        table = np.stack([self.next[t][index, :n] for t in names]) if names else np.zeros((0, n), bool)
        chosen = table.argmax(axis=0) if names else np.zeros(n, int)
        unique = table.sum(axis=0) == 1
        return [names[c] if ok else None for c, ok in zip(chosen.tolist(), unique.tolist())]

    def __repr__(self) -> str:
        from .display import run_result_repr

        return run_result_repr(self)

    def _repr_html_(self) -> str:
        """The run in a notebook: per input, every recorded output at every position."""
        from .display import run_result_html

        return run_result_html(self)


def as_tokens(item: Tokens) -> tuple[str, ...]:
    return tuple(item.split()) if isinstance(item, str) else tuple(item)


def as_batch(inputs: Iterable[Tokens], *, alphabet: Collection[str] | None = None,
             raw: bool = False) -> list[tuple[str, ...]]:
    """The inputs as token tuples; an empty input is an :class:`~crasp.errors.InputError` (a
    program reads its output at the last position). Given the program's ``alphabet``, inputs
    are framed as :mod:`crasp.framing` says: ``<bos>`` prepended where the program reads it,
    unless ``raw`` or the input starts with it (so the empty word runs).

    >>> as_batch(["a b", "<bos> a", ""], alphabet={"<bos>", "a", "b"})
    [('<bos>', 'a', 'b'), ('<bos>', 'a'), ('<bos>',)]
    >>> as_batch(["a b"], alphabet={"<bos>", "a", "b"}, raw=True)
    [('a', 'b')]
    """
    batch = [as_tokens(item) for item in inputs]
    if alphabet is not None and frames(alphabet, raw=raw):
        return [frame(seq) for seq in batch]
    for index, seq in enumerate(batch):
        if not seq:
            raise empty_input(index, "" if alphabet is None else empty_reason(reads_bos(alphabet), "raw=True"))
    return batch


def as_given(error: InputError, given: Sequence[Sequence[str]], batch: Sequence[Sequence[str]],
             known: Sequence[str]) -> InputError:
    """``error``, which locates an unknown token of a framed input of ``batch``, located in the
    input as ``given`` instead (one position earlier where ``<bos>`` was prepended)."""
    index, position = error.index, error.position
    if index is None or position is None or len(batch[index]) == len(given[index]):
        return error
    return unknown_token(index, given[index], position - 1, known)


def encode(
    inputs: Sequence[Sequence[str]], vocabulary: dict[str, int], *, allow_unknown: bool,
    table: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of a batch, padded with -1, and the lengths. Unknown tokens get id -1.

    When every token of the vocabulary is one character, an input is encoded at once through a
    table indexed by code points (``table``: the vocabulary's :func:`code_point_table`, built
    here when not given); otherwise token by token through the vocabulary.
    """
    lengths = np.array([len(seq) for seq in inputs], dtype=np.int64)
    width = int(lengths.max(initial=0))
    ids = np.full((len(inputs), width), -1, dtype=np.int32)
    if table is None:
        table = code_point_table(vocabulary)
    for row, seq in enumerate(inputs):
        encoded = None
        if table is not None:
            joined = "".join(seq)
            if len(joined) == len(seq):  # every token of this input is one character
                points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                encoded = table[np.minimum(points, len(table) - 1)]
        if encoded is None:
            encoded = np.fromiter(map(vocabulary.get, seq, repeat(-1)), dtype=np.int32, count=len(seq))
        if not allow_unknown and (encoded < 0).any():
            raise unknown_token(row, seq, int(np.flatnonzero(encoded < 0)[0]), sorted(vocabulary))
        ids[row, : len(seq)] = encoded
    return ids, lengths


def code_point_table(vocabulary: dict[str, int]) -> np.ndarray | None:
    """ids by code point when every token is one character (the last entry, -1, stands for every
    code point beyond the vocabulary's); None otherwise."""
    if not vocabulary or any(len(token) != 1 for token in vocabulary):
        return None
    table = np.full(max(map(ord, vocabulary)) + 2, -1, dtype=np.int32)
    for token, index in vocabulary.items():
        table[ord(token)] = index
    return table


def _fits_int64(checked: CheckedProgram, length: int) -> bool:
    """Whether every count of ``checked`` stays within int64 on inputs of ``length`` tokens
    (the bound is monotone in the length, so the longest length known to fit is kept)."""
    memo = checked.memo
    if length <= memo.get("fits", -1):
        return True
    generous = max(length, _GENEROUS_LENGTH)  # one walk of the program settles every length up to it
    if magnitude_bound(checked, generous) < _INT64_LIMIT:
        memo["fits"] = generous
        return True
    if magnitude_bound(checked, length) >= _INT64_LIMIT:
        return False
    memo["fits"] = length
    return True


_GENEROUS_LENGTH = 1 << 32
"""The length :func:`_fits_int64` tries first (the bound grows with the length, so a program that
fits at it fits at every shorter one)."""


def magnitude_bound(checked: CheckedProgram, length: int) -> int:
    """An upper bound on |value| of every count in ``checked`` on inputs of ``length`` tokens.

    A count is at most the number of positions it can see: ``length``, or the size of its local
    guard's offset set. Booleans are 1; every sub-expression's bound enters the result.
    """
    bounds: dict[str, int] = {}
    peak = [1]

    def value(node: ast.Expr) -> int:
        inner = [value(child) for child in ast.children(node)]
        if isinstance(node, ast.Ref):
            result = bounds.get(node.name, 1)
        elif isinstance(node, ast.Const):
            result = abs(node.value)
        elif isinstance(node, ast.Count):
            result = length if node.guard is None else min(length, len(checked.guard_offsets(node.guard)))
        elif isinstance(node, ast.Scale):
            result = abs(node.factor) * inner[0]
        elif isinstance(node, (ast.Add, ast.Sub)):
            result = inner[0] + inner[1]
        elif isinstance(node, ast.Cond):
            result = max(inner[0], inner[2])
        elif isinstance(node, (ast.Min, ast.Max)):
            result = max(inner)
        else:  # Booleans
            result = 1
        peak[0] = max(peak[0], result, *inner)
        return result

    for definition in checked.definitions:
        bounds[definition.name] = value(definition.expr)
    for output in [checked.accept] if checked.accept is not None else [e for _, e in checked.next_tokens]:
        value(output)
    return max(peak[0], *bounds.values(), 1)


class _Evaluator:
    """Evaluates expressions of one checked program on one padded batch."""

    def __init__(self, checked: CheckedProgram, ids: np.ndarray, vocabulary: dict[str, int],
                 offsets: np.ndarray) -> None:
        self.checked = checked
        self.ids = ids
        self.vocabulary = vocabulary
        self.offsets = offsets
        self.shape = ids.shape
        self.env: dict[str, np.ndarray] = {}
        self.cache: dict[ast.Expr, np.ndarray] = {}
        self.residues: dict[int, np.ndarray] = {}

    def positions_mod(self, modulus: int) -> np.ndarray:
        if modulus not in self.residues:
            width = self.shape[1]
            absolute = self.offsets[:, None] + np.arange(1, width + 1, dtype=np.int64)[None, :]
            self.residues[modulus] = absolute % modulus
        return self.residues[modulus]

    def periodic(self, modulus: int, residues: IntSet) -> np.ndarray:
        if modulus > _TABLE_MODULUS:  # test the residues' intervals, not a table of every residue
            return residues.contains(self.positions_mod(modulus))
        table = np.zeros(modulus, dtype=bool)
        table[list(residues)] = True
        return table[self.positions_mod(modulus)]

    def __call__(self, node: ast.Expr) -> np.ndarray:
        if isinstance(node, ast.Ref):
            if node.name in self.env:
                return self.env[node.name]
            return self.periodic(*self.checked.periodic(node))
        cached = self.cache.get(node)
        if cached is None:
            cached = self.cache[node] = self.compute(node)
        return cached

    def compute(self, node: ast.Expr) -> np.ndarray:
        rule = _RULES.get(type(node))
        if rule is None:
            raise TypeError(f"not a C-RASP expression node: {node!r}")  # pragma: no cover
        return rule(self, node)

    def token(self, node: ast.TokenIs) -> np.ndarray:
        token_id = self.vocabulary.get(node.token)
        if token_id is None:
            return np.zeros(self.shape, dtype=bool)
        return self.ids == token_id

    def result(self, batch: tuple[tuple[str, ...], ...], lengths: np.ndarray, *, trace: bool,
               extra: dict[str, ast.Expr] | None = None) -> RunResult:
        """Evaluate every definition and the outputs; the verdict is read at each input's last
        position. ``extra`` expressions over the program's names are evaluated too, into ``values``."""
        checked = self.checked
        for definition in checked.definitions:
            self.env[definition.name] = self(definition.expr)
        last = np.maximum(lengths - 1, 0)
        rows = np.arange(len(batch))
        accept = next_values = accept_values = None
        if checked.accept is not None:
            accept_values = self(checked.accept)
            accept = accept_values[rows, last] if len(batch) else np.zeros(0, dtype=bool)
        else:
            next_values = {token: self(expr) for token, expr in checked.next_tokens}
        return RunResult(
            tokens=batch,
            lengths=lengths,
            offsets=self.offsets,
            accept=accept,
            next=next_values,
            values=({**(self.env if trace else {}), **{name: self(expr) for name, expr in (extra or {}).items()}}
                    if trace or extra else None),
            accept_values=accept_values if trace else None,
        )

    def count(self, node: ast.Count) -> np.ndarray:
        values = self(node.operand)
        if node.guard is None:
            return np.cumsum(values, axis=1, dtype=np.int64)
        # Offsets are intervals [start, stop): #[i - j in [start, stop)] P at position k is
        # prefix[k - start + 1] - prefix[k - stop + 1], so the cost does not grow with the window.
        width = self.shape[1]
        prefix = np.zeros((self.shape[0], width + 1), dtype=np.int64)
        np.cumsum(values, axis=1, dtype=np.int64, out=prefix[:, 1:])
        positions = np.arange(width, dtype=np.int64)
        total = np.zeros(self.shape, dtype=np.int64)
        for start, stop in self.checked.guard_offsets(node.guard).clip(0, width).spans:
            if stop - start == 1:  # one offset: a shift
                total[:, start:] += values[:, : width - start]
                continue
            high = np.clip(positions - start + 1, 0, None)
            low = np.clip(positions - stop + 1, 0, None)
            total += prefix[:, high] - prefix[:, low]
        return total



_RULES = {
    ast.TokenIs: _Evaluator.token,
    ast.BoolConst: lambda e, n: np.full(e.shape, n.value, dtype=bool),
    ast.Periodic: lambda e, n: e.periodic(n.modulus, n.residues),
    ast.Not: lambda e, n: ~e(n.operand),
    ast.And: lambda e, n: e(n.left) & e(n.right),
    ast.Or: lambda e, n: e(n.left) | e(n.right),
    ast.Compare: lambda e, n: ast.COMPARISONS[n.op](e(n.left), e(n.right)),
    ast.Count: lambda e, n: e.count(n),
    ast.Const: lambda e, n: np.full(e.shape, n.value, dtype=np.int64),
    ast.Add: lambda e, n: e(n.left) + e(n.right),
    ast.Sub: lambda e, n: e(n.left) - e(n.right),
    ast.Scale: lambda e, n: n.factor * e(n.operand),
    ast.Min: lambda e, n: np.minimum(e(n.left), e(n.right)),
    ast.Max: lambda e, n: np.maximum(e(n.left), e(n.right)),
    ast.Cond: lambda e, n: np.where(e(n.condition), e(n.then), e(n.otherwise)),
}
"""How the evaluator computes each kind of node (one lookup per node, not a chain of tests)."""


def run(
    program: ast.Program | CheckedProgram,
    inputs: Iterable[Tokens],
    *,
    offset: int | Sequence[int] | np.ndarray = 0,
    trace: bool = False,
    allow_unknown: bool = False,
    raw: bool = False,
    alphabet: Iterable[str] = (),
    registry: PredicateRegistry | None = None,
    extra: dict[str, ast.Expr] | None = None,
) -> RunResult:
    """Run ``program`` on a batch of inputs.

    A program that reads ``<bos>`` (its alphabet holds it: the tasks' programs) gets it: an input
    that does not start with ``<bos>`` has one prepended, so the empty word runs, and the result
    holds the inputs as run (see :mod:`crasp.framing`); ``raw=True`` runs them as given. The
    ``alphabet`` argument does not count for this: only what the program itself reads.
    ``offset`` (one for all inputs, or one per input) places token k of an input at absolute
    position offset + k (``<bos>``, where prepended, is token 1), which is what periodic
    predicates see. Tokens outside the program's alphabet (plus ``alphabet``) are an
    :class:`~crasp.errors.InputError` naming the position in the input as given, unless
    ``allow_unknown``. ``extra`` maps names to expressions over the program's definitions,
    evaluated beside them into ``values`` (a verification's probes).

    >>> from crasp.parser import parse
    >>> first_a = parse('alphabet {"b"}\\nA = #("a" && #[i - j == 1] "<bos>" == 1) == 1')
    >>> run(first_a, ["a b", "<bos> a b", "b a"]).accept.tolist()
    [True, True, False]
    >>> run(first_a, ["a b"], raw=True).accept.tolist(), run(first_a, [""]).tokens
    ([False], (('<bos>',),))
    """
    checked = program if isinstance(program, CheckedProgram) else check(program, registry)
    given = [as_tokens(item) for item in inputs]
    batch = as_batch(given, alphabet=checked.info.alphabet, raw=raw)
    symbols, vocabulary, table, known = _program_constants(checked, frozenset(alphabet) if alphabet else frozenset())
    try:
        return _run(checked, batch, offset, trace, allow_unknown, extra, symbols, vocabulary, table, known)
    except InputError as error:
        raise as_given(error, given, batch, symbols) from None


def _run(checked: CheckedProgram, batch: list[tuple[str, ...]], offset: int | Sequence[int] | np.ndarray,
         trace: bool, allow_unknown: bool, extra: dict[str, ast.Expr] | None, symbols: list[str],
         vocabulary: dict[str, int], table: np.ndarray | None, known: frozenset) -> RunResult:
    """:func:`run` of a batch as run (framed where it is), with the program's constants."""
    longest = max(map(len, batch), default=0)
    if isinstance(offset, int):  # one offset for all: no array needed to check it
        # An offset beyond int64 is refused below, unless the batch is empty (and so are its offsets).
        offsets = np.full(len(batch), offset if abs(offset) < _INT64_LIMIT else 0, dtype=np.int64)
        farthest = abs(offset)
    else:
        offsets = np.broadcast_to(np.asarray(offset, dtype=np.int64), (len(batch),)).copy()
        farthest = int(np.abs(offsets).max()) if len(batch) else 0
    if len(batch) and longest + farthest >= _INT64_LIMIT:
        raise InputError("positions exceed the int64 range")
    if len(batch) and not _fits_int64(checked, longest):
        raise InputError(f"counts of this program could exceed int64 on inputs of length {longest}")
    total = sum(map(len, batch))
    # The plan has a slot per definition at least: a program too large for it is not lowered.
    if not trace and not extra and (len(checked.definitions) * total <= PURE_PYTHON_WORK or checked.accept is not None):
        plan = _plan(checked)
        if len(plan[1]) * total <= PURE_PYTHON_WORK:
            return _run_plan(checked, plan, tuple(batch), offsets, symbols, known, allow_unknown)
        if checked.accept is not None and table is not None and not any(_demand(checked, plan)):
            return _run_token_counts(checked, plan, tuple(batch), offsets, symbols, vocabulary, table, allow_unknown)
    ids, lengths = encode(batch, vocabulary, allow_unknown=allow_unknown, table=table)
    evaluate = _Evaluator(checked, ids, vocabulary, offsets)
    return evaluate.result(tuple(batch), lengths, trace=trace, extra=extra or {})


def _program_constants(checked: CheckedProgram, extra: frozenset):
    """The sorted symbols, the vocabulary (and its :func:`code_point_table`) and the set of known
    tokens of ``checked``, computed once per program (and per set of extra symbols)."""
    key = ("constants", extra)
    found = checked.memo.get(key)
    if found is None:
        symbols = sorted(checked.info.alphabet | extra)
        vocabulary = {token: index for index, token in enumerate(symbols)}
        found = checked.memo[key] = (symbols, vocabulary, code_point_table(vocabulary), frozenset(symbols))
    return found


def _plan(checked: CheckedProgram) -> plans.Plan:
    """The program's plan (:mod:`crasp.plan`), lowered once (or given by the command line's cache)."""
    plan = checked.memo.get("plan")
    if plan is None:
        plan = checked.memo["plan"] = plans.lower(checked)
    return plan


def _demand(checked: CheckedProgram, plan: plans.Plan) -> tuple[bool, ...]:
    """:func:`crasp.plan.demand` of the program, computed once."""
    full = checked.memo.get("demand")
    if full is None:
        full = checked.memo["demand"] = plans.demand(plan)
    return full


def _run_token_counts(checked: CheckedProgram, plan: plans.Plan, batch: tuple[tuple[str, ...], ...],
                      offsets: np.ndarray, symbols: list[str], vocabulary: dict[str, int], table: np.ndarray,
                      allow_unknown: bool) -> RunResult:
    """:func:`run` of an acceptance program that needs nothing but the last position's values and
    the number of each token (``#"a" > #"b"``): numpy counts an input's tokens in one pass over its
    code points (tokens are single characters), the plan does the rest at the last position. Few
    and small temporaries: a long input costs a join, an encoding and a bincount."""
    full, index = _demand(checked, plan), plan[2][0]
    accept = []
    for row, (seq, start) in enumerate(zip(batch, offsets.tolist())):
        joined = "".join(seq)
        try:
            points = np.frombuffer(joined.encode("latin-1"), dtype=np.uint8) if len(joined) == len(seq) else None
        except UnicodeEncodeError:
            points = None
        if points is None:  # a token beyond latin-1 (or longer than a character): through the table
            ids, _ = _encode_row(row, seq, vocabulary, allow_unknown, table, symbols)
            found = np.bincount(ids[0][ids[0] >= 0], minlength=len(symbols))
            counts = dict(zip(symbols, found.tolist()))
        else:
            found = np.bincount(points, minlength=256)
            counts = {symbol: int(found[ord(symbol)]) for symbol in symbols if ord(symbol) < 256}
            if not allow_unknown and sum(counts.values()) != len(seq):
                _encode_row(row, seq, vocabulary, False, table, symbols)  # raises, naming the first unknown token
        accept.append(bool(plans.last_value(plans.evaluate(plan, seq, start, full, counts), full, index)))
    lengths = np.array([len(seq) for seq in batch], dtype=np.int64)
    return RunResult(tokens=batch, lengths=lengths, offsets=offsets, accept=np.array(accept, dtype=bool), next=None)


def _encode_row(row: int, seq: tuple[str, ...], vocabulary: dict[str, int], allow_unknown: bool,
                table: np.ndarray | None, symbols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode` of input ``row`` alone; an unknown token's error names that input."""
    try:
        return encode([seq], vocabulary, allow_unknown=allow_unknown, table=table)
    except InputError as error:
        assert error.position is not None  # encode's only error is an unknown token
        raise unknown_token(row, seq, error.position, symbols) from None


def _run_plan(checked: CheckedProgram, plan: plans.Plan, batch: tuple[tuple[str, ...], ...], offsets: np.ndarray,
              symbols: list[str], known: frozenset, allow_unknown: bool) -> RunResult:
    """:func:`run` of a small batch in pure Python: the plan's values, read into a RunResult."""
    lengths = np.array([len(seq) for seq in batch], dtype=np.int64)
    width = int(lengths.max(initial=0))
    rows = []
    full = _demand(checked, plan)
    accepting = checked.accept is not None  # then only the last position is needed (plan.demand)
    for index, (seq, start) in enumerate(zip(batch, offsets.tolist())):
        if not allow_unknown:
            position = plans.first_unknown(seq, known)
            if position is not None:
                raise unknown_token(index, seq, position, symbols)
        rows.append(plans.evaluate(plan, seq, start, full if accepting else None))
    outputs = plan[2]
    if accepting:
        accept = np.array([bool(plans.last_value(values, full, outputs[0])) for values in rows], dtype=bool)
        return RunResult(tokens=batch, lengths=lengths, offsets=offsets, accept=accept, next=None)
    next_values = {}
    for token, slot in outputs:
        table = np.zeros((len(batch), width), dtype=bool)
        for row, values in enumerate(rows):
            table[row, : len(values[slot])] = values[slot]
        next_values[token] = table
    return RunResult(tokens=batch, lengths=lengths, offsets=offsets, accept=None, next=next_values)


def run_in_chunks(
    program: ast.Program | CheckedProgram,
    inputs: Sequence[Tokens],
    *,
    cells: int | None = None,
    memory: int = 1 << 29,
    **options,
) -> Iterator[tuple[list[int], RunResult]]:
    """Run many inputs in batches of similar length, bounding padded cells per batch.

    Yields ``(indices, result)``: row r of ``result`` is input ``indices[r]``. Options are those
    of :func:`run`. A batch holds at most ``cells`` padded positions; by default as many as keep
    the values of every sub-expression (8 bytes a count, 1 a Boolean) within about ``memory``
    bytes (the interpreter keeps them all).
    """
    checked = program if isinstance(program, CheckedProgram) else check(program)
    if cells is None:
        per_cell = _bytes_per_position(checked) + 8 * len(options.get("extra") or ()) + 32
        cells = max(1, min(1 << 22, memory // per_cell))
    batch = [as_tokens(item) for item in inputs]
    offset = options.pop("offset", 0)
    per_input = np.broadcast_to(np.asarray(offset, dtype=np.int64), (len(batch),))
    for indices in length_batches([len(seq) for seq in batch], cells):
        result = run(checked, [batch[k] for k in indices], offset=per_input[indices], **options)
        yield indices, result


_COUNTS = (ast.Count, ast.Const, ast.Add, ast.Sub, ast.Scale, ast.Min, ast.Max)


def _bytes_per_position(checked: CheckedProgram) -> int:
    """What the evaluator keeps per position: a value of every distinct sub-expression, 8 bytes for
    a count and 1 for a Boolean (a reference to a definition is the definition's own array;
    computed once per program)."""
    found = checked.memo.get("bytes per position")
    if found is None:
        seen: set = set()
        found = 0
        stack = [d.expr for d in checked.definitions] + [e for _, e in checked.next_tokens]
        stack += [checked.accept] if checked.accept is not None else []
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, ast.Cond):
                found += 8  # either sort: the larger
            elif not isinstance(node, ast.Ref):
                found += 8 if isinstance(node, _COUNTS) else 1
            stack.extend(ast.children(node))
        checked.memo["bytes per position"] = found
    return found


def length_batches(lengths: Sequence[int], cells: int) -> Iterator[list[int]]:
    """Indices grouped by similar length, each group padding to at most ``cells`` positions
    (a longer input goes alone).

    >>> list(length_batches([5, 1, 4, 2], cells=8))
    [[1, 3], [2], [0]]
    """
    order = sorted(range(len(lengths)), key=lambda k: lengths[k])
    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and (stop + 1 - start) * lengths[order[stop]] <= cells:
            stop += 1
        yield order[start:stop]
        start = stop


def accepts(program: ast.Program | CheckedProgram, tokens: Tokens, *, offset: int = 0,
            allow_unknown: bool = False, raw: bool = False, alphabet: Iterable[str] = ()) -> bool:
    """Whether ``program`` accepts one input (arguments as for :func:`run`).

    >>> from crasp.parser import parse
    >>> accepts(parse('A = #"a" == 2'), "a b a", alphabet=["b"])
    True
    """
    result = run(program, [tokens], offset=offset, allow_unknown=allow_unknown, raw=raw, alphabet=alphabet)
    if result.accept is None:
        raise ValueError("the program declares 'next' outputs, not acceptance")
    return bool(result.accept[0])
