"""The communication-complexity checker: R(N), the number of distinct rows of a task's matrix.

Cut an input in two: Alice holds her N symbols, Bob his N symbols and every output on his side
(for ``<bos> x <sep> y <eos>`` tasks the whole answer y). The matrix has a row per Alice string,
a column per Bob string, and Bob's output vector as entry. Its number of distinct rows R(N) is
the number of messages an optimal one-way protocol needs: ceil(log2 R(N)) bits. Theorem 12 of
Huang et al. (2025) bounds that by C log N for every C-RASP[periodic, local] program, so R(N)
growing exponentially proves a task is outside the class; constant or polynomial growth proves
nothing (parity and every regular language have constant R).

R(N) is counted exactly by enumerating every pair of strings, vectorised when the task has a
``batch_answer``, for N while the pairs fit the budget; beyond, sampled Alice and Bob strings give
lower bounds. Entries of inputs outside the task's domain are a value of their own (⊥); rows of
Alice strings that no Bob string completes are dropped. Where ⊥ entries remain, R(N) still bounds
the messages from above (sending the row suffices), but is a lower bound only for the matrix with
⊥ as a value: :attr:`Analysis.total` says which.

>>> import tasks
>>> analysis = analyse(tasks.get("repeat_copy"), max_pairs=2 ** 12, sampled=0)
>>> [(size.n, size.rows) for size in analysis.table][:4]
[(1, 2), (2, 4), (3, 8), (4, 16)]
>>> analysis.growth.kind, analysis.growth.base
('exponential', 2.0)
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from crasp.errors import ReferenceFailure

from .split import Split
from .types import INVALID, Format, Task, TaskError


class CommunicationError(TaskError):
    """The checker cannot build the task's communication matrix (and says why)."""


def default_split(task: Task) -> Split:
    """The task's own split (its ``split`` field), or Alice the first N symbols and Bob the next N."""
    return task.split or Split()


@dataclass(frozen=True)
class Size:
    """R at one N: exact (every pair) or a lower bound from ``alice`` x ``bob`` sampled strings."""

    n: int
    rows: int
    exact: bool
    alice: int
    bob: int
    seconds: float

    @property
    def bits(self) -> int:
        """ceil(log2 R): the one-way message length this R needs."""
        return math.ceil(math.log2(self.rows)) if self.rows > 1 else 0


@dataclass(frozen=True)
class Growth:
    """How R(N) grows on the exact sizes, and how well each model fits (``statement`` says it)."""

    kind: str  # "constant", "polynomial", "exponential" or "undetermined"
    statement: str
    degree: int | None = None
    base: float | None = None
    r2_exponential: float | None = None
    r2_polynomial: float | None = None
    exact_formula: str | None = None
    coefficients: tuple[Fraction, ...] | None = None  # of N^0, N^1, ... where a polynomial fits exactly


@dataclass(frozen=True)
class Analysis:
    """The checker's result for one task and split."""

    task: str
    split: Split
    table: tuple[Size, ...]
    growth: Growth
    total: bool
    applicable: bool
    notes: tuple[str, ...] = ()
    symbols: tuple[str, ...] = field(default=())

    @property
    def exact(self) -> tuple[Size, ...]:
        return tuple(size for size in self.table if size.exact)

    def summary(self) -> str:
        """A readable table with the growth verdict and notes."""
        lines = [f"communication matrix of {self.task}: {self.split.description}",
                 f"  symbols: {{{', '.join(self.symbols)}}}",
                 "       N        R(N)  bits  how"]
        for size in self.table:
            how = "exact" if size.exact else f"lower bound ({size.alice} x {size.bob} sampled)"
            lines.append(f"  {size.n:>6}  {size.rows:>10}  {size.bits:>4}  {how}")
        lines.append(f"  growth: {self.growth.kind}: {self.growth.statement}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


# ---------------------------------------------------------------- the matrix


def _strings(symbols: int, n: int) -> np.ndarray:
    """Every string of length n over ``symbols`` symbols, as rows of ids (lexicographic)."""
    number = np.arange(symbols ** n, dtype=np.int64)[:, None]
    weights = symbols ** np.arange(n - 1, -1, -1, dtype=np.int64)[None, :]
    return (number // weights) % symbols if n else np.zeros((1, 0), dtype=np.int64)


def _require_causal(task: Task) -> None:
    if task.format is Format.ALIGNED:
        raise CommunicationError(
            f"task {task.name!r} predicts its outputs in parallel with bidirectional attention: there is no "
            "causal cut between Alice and Bob, and Theorem 12 is about causal transformers")


class _Reference:
    """Bob's output codes for a block of inputs, from the vectorised or the Python reference."""

    def __init__(self, task: Task, split: Split, n: int) -> None:
        _require_causal(task)
        self.task = task
        symbols = split.symbols(task)
        unknown = [s for s in (*symbols, *split.before, *split.middle, *split.after) if s not in task.symbols]
        if unknown:
            raise CommunicationError(f"split symbol {unknown[0]!r} is not a symbol of task {task.name!r}")
        index = {s: k for k, s in enumerate(task.symbols)}
        self.to_task = np.array([index[s] for s in symbols], dtype=np.int8 if len(task.symbols) < 128 else np.int64)
        self.template = [np.array([index[s] for s in part], dtype=np.int64)
                         for part in (split.before, split.middle, split.after)]
        self.bob_positions = len(split.middle) + split.block * n + len(split.after)
        self.interned: dict[tuple | bool, int] = {}

    def inputs(self, alice: np.ndarray, bob: np.ndarray) -> np.ndarray:
        """Every (alice, bob) input as task symbol ids: row a * len(bob) + b."""
        before, middle, after = self.template
        a, b = alice.shape[1], bob.shape[1]
        width = len(before) + a + len(middle) + b + len(after)
        out = np.empty((len(alice), len(bob), width), dtype=self.to_task.dtype)
        column = 0
        for part in (before, self.to_task[alice][:, None, :], middle, self.to_task[bob][None, :, :], after):
            size = part.shape[-1]
            out[:, :, column:column + size] = part
            column += size
        return out.reshape(len(alice) * len(bob), width)

    def codes(self, ids: np.ndarray) -> np.ndarray:
        """Bob's outputs of each input, numbered (INVALID where the input is outside the domain)."""
        if self.task.batch_answer is not None:
            try:
                codes = np.asarray(self.task.batch_answer(ids))
            except NotImplementedError:  # the vectorised reference does not cover these inputs
                return self._python_codes(ids)
            if self.task.format is Format.NEXT_SET:
                codes = codes[:, codes.shape[1] - self.bob_positions:]
            return codes
        return self._python_codes(ids)

    def _python_codes(self, ids: np.ndarray) -> np.ndarray:
        task, out = self.task, np.empty((len(ids), 1), dtype=np.int64)
        for row, x in enumerate(ids.tolist()):
            tokens = tuple(task.symbols[k] for k in x)
            try:
                if len(tokens) < task.min_length or not task.valid(tokens):
                    out[row, 0] = INVALID
                    continue
                answer = task.answer(tokens)
            except ReferenceFailure as error:  # a guarded reference (tasks.evidence.guard) names the input
                raise CommunicationError(str(error)) from error
            except Exception as error:  # noqa: BLE001 - an unguarded user's reference: name the input
                raise CommunicationError(f"the reference of task {task.name!r} raised {type(error).__name__}: "
                                         f"{error} on input {' '.join(tokens)!r}") from error
            if task.format is Format.NEXT_SET:
                answer = tuple(answer)[-self.bob_positions:]
            elif task.format is Format.SEQ2SEQ:
                answer = tuple(answer)
            out[row, 0] = self.interned.setdefault(answer if task.format is not Format.ACCEPT else bool(answer),
                                                   len(self.interned))
        return out

    @property
    def vectorised(self) -> bool:
        return self.task.batch_answer is not None


def _compact(codes: np.ndarray) -> np.ndarray:
    """The same codes in the narrowest integer type (rows hash faster)."""
    if codes.dtype.kind not in "iu":
        raise CommunicationError(f"a vectorised reference returned {codes.dtype} codes; it must return integers")
    if codes.dtype.itemsize == 1:
        return codes.astype(np.int8, copy=False)
    top = int(codes.max(initial=0))
    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max:
            return codes.astype(dtype)
    return codes


class _DistinctRows:
    """Counts distinct rows exactly: rows are grouped by a 128-bit digest and a row whose digest
    was seen is compared in full with that group's first row (kept in memory up to a budget,
    recomputed beyond it), so a digest collision can never merge two different rows."""

    def __init__(self, recompute: Callable[[int], bytes], memory: int = 1 << 28,
                 digest: Callable[[bytes], bytes] = lambda row: hashlib.blake2b(row, digest_size=16).digest()) -> None:
        self.first: dict[bytes, list[tuple[int, bytes | None]]] = {}
        self.recompute = recompute
        self.memory = memory
        self.digest = digest
        self.count = 0

    def add(self, key: int, row: bytes) -> None:
        digest = self.digest(row)
        group = self.first.setdefault(digest, [])
        for first_key, kept in group:
            if (kept if kept is not None else self.recompute(first_key)) == row:
                return
        keep = row if self.memory >= len(row) else None
        self.memory -= len(row) if keep is not None else 0
        group.append((key, keep))
        self.count += 1


@dataclass
class _Block:
    """Rows of one block of Alice strings and what the block showed about ⊥ entries."""

    rows: list[tuple[int, bytes]]
    defined_columns: np.ndarray
    missing_columns: np.ndarray


def _block(reference: _Reference, alice: np.ndarray, bob: np.ndarray, first_key: int) -> _Block:
    codes = reference.codes(reference.inputs(alice, bob))
    codes = _compact(codes.reshape(len(alice), len(bob), -1))
    undefined = (codes == INVALID).all(axis=2)
    live = ~undefined.all(axis=1)
    rows = [(first_key + k, codes[k].tobytes()) for k in np.flatnonzero(live).tolist()]
    return _Block(rows, (~undefined).any(axis=0), undefined[live].any(axis=0))


def count_rows(task: Task, n: int, *, split: Split | None = None, alice: np.ndarray | None = None,
               bob: np.ndarray | None = None, cells: int = 1 << 23) -> tuple[int, bool]:
    """(distinct rows, total) of the matrix on the given Alice and Bob strings (default: all).

    ``alice``/``bob`` are rows of ids into the split's alphabet. ``total`` is False when a row
    that some Bob string completes still has ⊥ entries in columns that other rows define.

    >>> import tasks
    >>> count_rows(tasks.get("bin_majority"), 5)
    (6, False)
    """
    split = split or default_split(task)
    reference = _Reference(task, split, n)
    symbols = len(split.symbols(task))
    alice = _strings(symbols, split.block * n) if alice is None else alice
    bob = _strings(symbols, split.block * n) if bob is None else bob
    width = len(split.before) + len(split.middle) + len(split.after) + 2 * split.block * n + 1
    per_block = max(1, cells // max(1, len(bob) * width))

    def recompute(key: int) -> bytes:
        return _block(reference, alice[key:key + 1], bob, key).rows[0][1]

    distinct = _DistinctRows(recompute)
    defined = np.zeros(len(bob), dtype=bool)
    missing = np.zeros(len(bob), dtype=bool)
    starts = range(0, len(alice), per_block)
    # numpy and hashlib release the GIL: blocks are built on every core, rows counted in order here.
    workers = 1 if len(starts) == 1 or not reference.vectorised else min(4, os.cpu_count() or 1)

    def blocks(mapped) -> None:
        nonlocal defined, missing
        for block in mapped:
            for key, row in block.rows:
                distinct.add(key, row)
            defined |= block.defined_columns
            missing |= block.missing_columns

    def one(start: int) -> _Block:
        return _block(reference, alice[start:start + per_block], bob, start)

    if workers == 1:  # in this thread: a Python reference runs under the prediction's watchdog
        blocks(map(one, starts))
    else:
        with ThreadPoolExecutor(workers) as pool:
            blocks(pool.map(one, starts))
    return distinct.count, not bool((defined & missing).any())


def sampled_rows(task: Task, n: int, *, samples: int, rng: np.random.Generator,
                 split: Split | None = None, bob_samples: int | None = None) -> tuple[int, bool, int, int]:
    """A lower bound on R(N): distinct rows among ``samples`` random Alice strings restricted to
    ``bob_samples`` (default ``samples``) random Bob columns. Returns (rows, total, Alice strings,
    Bob strings)."""
    split = split or default_split(task)
    symbols = len(split.symbols(task))
    alice = np.unique(rng.integers(0, symbols, size=(samples, split.block * n)), axis=0)
    bob = np.unique(rng.integers(0, symbols, size=(bob_samples or samples, split.block * n)), axis=0)
    rows, total = count_rows(task, n, split=split, alice=alice, bob=bob)
    return rows, total, len(alice), len(bob)


def relevant_share(task: Task, n: int, *, rng: np.random.Generator, samples: int = 12, positions: int = 32,
                   bob_samples: int = 32, split: Split | None = None) -> float | None:
    """The share of Alice's positions whose symbol Bob's outputs depend on, at size N: for
    ``samples`` random Alice strings and up to ``positions`` positions spread over hers, whether
    changing that one symbol changes her row (on ``bob_samples`` random Bob strings). A task whose
    R(N) grows like |Σ|^N has nearly every position relevant at every N; one that copies a bounded
    prefix has a share that falls like k / N. None when no sampled string is in the domain.

    >>> import tasks
    >>> rng = np.random.default_rng(0)
    >>> relevant_share(tasks.get("bin_majority"), 16, rng=rng) > 0.9  # every bit can tip the majority
    True
    """
    split = split or default_split(task)
    reference = _Reference(task, split, n)
    symbols = len(split.symbols(task))
    width = split.block * n
    chosen = np.unique(np.linspace(0, width - 1, num=min(positions, width)).round().astype(int))
    bob = np.unique(rng.integers(0, symbols, size=(bob_samples, width)), axis=0)
    relevant = np.zeros(len(chosen), dtype=bool)
    seen = False
    for _ in range(samples):
        s = rng.integers(0, symbols, size=width)
        flipped = np.repeat(s[None, :], len(chosen), axis=0)
        flipped[np.arange(len(chosen)), chosen] = (s[chosen] + rng.integers(1, symbols, size=len(chosen))) % symbols
        rows = dict(_block(reference, np.vstack([s[None, :], flipped]), bob, 0).rows)
        if 0 not in rows:
            continue
        seen = True
        relevant |= np.array([k + 1 in rows and rows[k + 1] != rows[0] for k in range(len(chosen))])
    return float(relevant.mean()) if seen else None


# ---------------------------------------------------------------- growth


def _r2(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least squares y = slope * x + intercept: (slope, intercept, r^2)."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    spread = float(((y - y.mean()) ** 2).sum())
    return float(slope), float(intercept), 1.0 - float((residual ** 2).sum()) / spread if spread > 0 else 1.0


def exact_polynomial(ns: Sequence[int], rows: Sequence[int], max_degree: int = 4) -> list[Fraction] | None:
    """Coefficients (constant first) of the lowest-degree polynomial through every point, when one
    of degree <= ``max_degree`` fits at least degree + 3 consecutive points (two more than it
    needs), else None.

    >>> exact_polynomial([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    [Fraction(1, 1), Fraction(1, 1)]
    """
    if list(ns) != list(range(ns[0], ns[0] + len(ns))):
        return None
    differences, table = [list(rows)], list(rows)
    for degree in range(max_degree + 1):
        if len(ns) < degree + 3:
            return None
        table = [b - a for a, b in zip(table, table[1:])]
        if all(v == 0 for v in table):
            return _monomial(ns[0], [d[0] for d in differences])
        differences.append(table)
    return None


def _monomial(start: int, newton: list[int]) -> list[Fraction]:
    """Newton forward form sum_k newton[k] * C(N - start, k) as coefficients of N^0, N^1, ..."""
    result = [Fraction(0)] * len(newton)
    basis = [Fraction(1)]  # coefficients of C(N - start, k)
    for k, weight in enumerate(newton):
        for power, c in enumerate(basis):
            result[power] += weight * c
        # C(N - start, k + 1) = C(N - start, k) * (N - start - k) / (k + 1)
        shifted = [Fraction(0)] + basis
        basis = [(shifted[p] - (start + k) * (basis[p] if p < len(basis) else 0)) / (k + 1)
                 for p in range(len(shifted))]
    while len(result) > 1 and result[-1] == 0:
        result.pop()
    return result


def format_polynomial(coefficients: Sequence[Fraction]) -> str:
    """N^2/2 + 3N/2 + 1 style.

    >>> format_polynomial([Fraction(1), Fraction(3, 2), Fraction(1, 2)])
    'N^2/2 + 3N/2 + 1'
    """
    terms = []
    for power in range(len(coefficients) - 1, -1, -1):
        c = coefficients[power]
        if c == 0:
            continue
        variable = "" if power == 0 else "N" if power == 1 else f"N^{power}"
        magnitude = abs(c)
        number = "" if magnitude.numerator == 1 and variable else str(magnitude.numerator)
        text = f"{number}{variable}" + (f"/{magnitude.denominator}" if magnitude.denominator != 1 else "")
        terms.append(("-" if c < 0 else "+", text))
    if not terms:
        return "0"
    first_sign, first = terms[0]
    return ("-" if first_sign == "-" else "") + first + "".join(f" {s} {t}" for s, t in terms[1:])


def classify(ns: Sequence[int], rows: Sequence[int]) -> Growth:
    """The growth of R(N) on exact values, with the evidence; never more than the data shows.

    Constant: the last four values are equal. Polynomial: a polynomial of degree k <= 4 fits
    k + 3 or more points exactly, or log R is linear in log N (r^2 >= 0.99) with a local exponent
    that stops growing. Exponential: log R is linear in N (r^2 >= 0.99, base >= 1.1) and the local
    exponent d log R / d log N keeps growing, as it does for 2^N but not for N^k.

    >>> classify([1, 2, 3, 4, 5, 6], [2, 2, 2, 2, 2, 2]).kind
    'constant'
    """
    ns, rows = list(ns), list(rows)
    span = f"N = {ns[0]}..{ns[-1]}" if ns else "no N"
    if len(ns) < 4:
        return Growth("undetermined", f"too few exact sizes ({len(ns)}; at least 4 are needed)")
    if len(set(rows[-4:])) == 1:
        return Growth("constant", f"R(N) = {rows[-1]} for N = {ns[-4]}..{ns[-1]} (exact)", degree=0,
                      exact_formula=str(rows[-1]), coefficients=(Fraction(rows[-1]),))
    for period in (2, 3):
        if len(ns) >= 3 * period and all(rows[-k] == rows[-k - period] for k in range(1, 2 * period + 1)):
            cycle = ", ".join(map(str, rows[-period:]))
            return Growth("constant", f"R(N) cycles through {cycle} (period {period} in N) for "
                          f"N = {ns[-3 * period]}..{ns[-1]} (exact): at most {max(rows[-period:])}", degree=0,
                          exact_formula=str(max(rows[-period:])), coefficients=(Fraction(max(rows[-period:])),))
    tail = max(4, len(ns) // 2)
    x, r = np.array(ns[-tail:], dtype=float), np.array(rows[-tail:], dtype=float)
    for start in range(len(ns) - 1):
        poly = exact_polynomial(ns[start:], rows[start:])
        if poly is not None and len(ns) - start >= 4:
            formula = format_polynomial(poly)
            return Growth("polynomial", f"R(N) = {formula} for N = {ns[start]}..{ns[-1]} (exact fit)",
                          degree=len(poly) - 1, exact_formula=formula, coefficients=tuple(poly))
    alpha, _, r2_exp = _r2(x, np.log2(r))
    degree, _, r2_poly = _r2(np.log(x), np.log(r))
    local = np.diff(np.log(r)) / np.diff(np.log(x))
    growing = len(local) >= 3 and local[-1] >= 1.2 * local[len(local) // 2 - 1] and local[-1] > local[0]
    base = round(2 ** alpha, 2)
    fits = f"log2 R ~ {alpha:.2f} N (r^2 {r2_exp:.3f}); log R ~ {degree:.2f} log N (r^2 {r2_poly:.3f})"
    if r2_exp >= 0.99 and base >= 1.1 and growing:
        return Growth("exponential", f"R(N) ~ {base}^N on {span}: {fits}; the exponent of N keeps growing",
                      base=base, r2_exponential=r2_exp, r2_polynomial=r2_poly)
    if r2_poly >= 0.99 and not growing:
        return Growth("polynomial", f"R(N) ~ N^{degree:.2f} on {span}: {fits}", degree=round(degree),
                      r2_exponential=r2_exp, r2_polynomial=r2_poly)
    return Growth("undetermined", f"neither model fits {span} clearly: {fits}",
                  r2_exponential=r2_exp, r2_polynomial=r2_poly)


# ---------------------------------------------------------------- the checker


def analyse(task: Task, *, split: Split | None = None, max_pairs: int | None = None, sampled: int = 3,
            samples: int = 256, seed: int = 0, max_n: int = 32, bob_samples: int | None = None,
            progress: Callable[[Size], None] | None = None, deadline: float | None = None) -> Analysis:
    """R(N) for N = 1, 2, ... exactly while the pairs of strings number at most ``max_pairs``
    (default 2^20 with a vectorised reference, 2^16 without), then lower bounds at ``sampled``
    larger N, doubling each time, from ``samples`` random Alice strings and ``bob_samples`` (default
    ``samples``) random Bob strings; the growth of the
    exact values; and whether Theorem 12 speaks to the task at all (a task whose inputs have
    bounded length, e.g. distinct symbols or a fixed width, has bounded R: nothing is computed).
    With a ``deadline`` (a ``time.perf_counter()`` reading) no size is started that the time of
    the one before it says would end past it."""
    split = split or default_split(task)
    symbols = split.symbols(task)
    max_pairs = max_pairs if max_pairs is not None else (1 << 20 if task.batch_answer is not None else 1 << 16)
    _require_causal(task)
    if task.max_length is not None:
        reason = "distinct symbols" if len(task.symbols) > 20 else "width"
        return Analysis(task.name, split, (), Growth("undetermined", "not applicable"), True, False, (
            f"inputs are at most {task.max_length} long (the task runs out of {reason}), so R(N) is bounded "
            "and Theorem 12, a statement about growing N, says nothing",), symbols)
    notes = []
    if len(symbols) < len(task.symbols):
        notes.append(f"Alice and Bob use {len(symbols)} of the task's {len(task.symbols)} symbols: every count "
                     "is a lower bound for the full alphabet")
    table: list[Size] = []
    all_total = True

    def record(size: Size, total: bool) -> None:
        nonlocal all_total
        table.append(size)
        all_total &= total
        if progress:
            progress(size)

    growth_factor = len(symbols) ** (2 * split.block)

    def in_time(expected: float) -> bool:
        return deadline is None or time.perf_counter() + expected <= deadline

    n, last = 1, 0.0
    while n <= max_n and len(symbols) ** (2 * split.block * n) <= max_pairs and in_time(last * growth_factor):
        started = time.perf_counter()
        rows, total = count_rows(task, n, split=split)
        strings = len(symbols) ** (split.block * n)
        last = time.perf_counter() - started
        record(Size(n, rows, True, strings, strings, last), total)
        n += 1
    rng = np.random.default_rng(seed)
    last = 0.0
    for step in range(sampled if len(symbols) > 1 else 0):
        n = 2 * n if step else n
        if n > max_n or not in_time(2 * last):
            break
        started = time.perf_counter()
        rows, total, a, b = sampled_rows(task, n, samples=samples, rng=rng, split=split, bob_samples=bob_samples)
        last = time.perf_counter() - started
        record(Size(n, rows, False, a, b, last), total)
    exact = [s for s in table if s.exact]
    empty = [s.n for s in exact if s.rows == 0]
    if empty:
        notes.append(f"no input of the split's form is in the task's domain at N = {', '.join(map(str, empty))}")
    exact = [s for s in exact if s.rows > 0]
    growth = classify([s.n for s in exact], [s.rows for s in exact])
    growth = _check_against_samples(growth, [s for s in table if not s.exact])
    if not all_total:
        notes.append("some inputs are outside the task's domain (⊥ entries): R(N) bounds the messages from above; "
                     "as a lower bound it counts ⊥ as a value of its own")
    saturated = [s.n for s in table if not s.exact and s.rows == s.alice]
    if saturated:
        notes.append(f"every sampled Alice string gave its own row at N = {', '.join(map(str, saturated))}: "
                     "the lower bound is limited by the sample size")
    return Analysis(task.name, split, tuple(table), growth, all_total, True, tuple(notes), symbols)


def _check_against_samples(growth: Growth, sampled: list[Size]) -> Growth:
    """A sampled lower bound above what a constant or exact polynomial predicts overturns it."""
    if growth.coefficients is None:
        return growth
    for size in sampled:
        predicted = sum(c * size.n ** k for k, c in enumerate(growth.coefficients))
        if size.rows > predicted:
            return Growth("undetermined", f"{growth.statement}, but at N = {size.n} a sampled lower bound "
                          f"{size.rows} exceeds its value {predicted}")
    return growth
