"""The bottom-up enumeration by size over the two sorts, one class per behaviour on the batch."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from .config import Ranges, SynthesisConfig
from .evaluator import BOOL, COUNT, Batch, row_keys
from .atoms import Atom
from .examples import Output


_FIRST_ROWS = 4096
"""The rows an arena of stored classes starts with (it doubles as it fills)."""


def _make_room(arena: list, rows: int) -> None:
    """Grow ``arena`` ([values, ids, used, bytes a row]) to hold ``rows`` more rows: at least
    double, so that a search that stores n rows copies O(n) in all."""
    values, ids, used, _ = arena
    if used + rows <= len(values):
        return
    capacity = max(2 * len(values), used + rows)
    grown = np.empty((capacity, values.shape[1]), dtype=values.dtype)
    grown[:used] = values[:used]
    grown_ids = np.empty(capacity, dtype=ids.dtype)
    grown_ids[:used] = ids[:used]
    arena[0], arena[1] = grown, grown_ids


@dataclass
class Stats:
    candidates: int = 0
    classes: int = 0
    started: float = 0.0
    enumerating: float = 0.0
    last_report: float = 0.0


class Search:
    """One bottom-up enumeration with fixed ranges on a fixed batch.

    Each (sort, size) has a storage mode. A class whose value may still reach a count operand
    (``#P``) is stored over every position of the batch (FULL); one that can only reach the output
    through comparisons, Boolean operations and arithmetic is stored at the checked positions only
    (PART), and two classes are then equivalent when they agree there. The last sizes are not
    stored at all: a Boolean of size max - 1 is checked against the outputs together with its
    negation, one of size max on its own (CHECK), and a count of size max - 2 through every
    comparison with a constant (TOP).
    """

    def __init__(self, batch: Batch, outputs: list[Output], ranges: Ranges, config: SynthesisConfig,
                 stats: Stats, deadline: float, progress: Callable[[str], None] | None, label: str,
                 atoms: Sequence[tuple[Atom, np.ndarray]] = ()) -> None:
        self.batch = batch
        self.atoms = [atom for atom, _ in atoms]
        self.atom_values = [values for _, values in atoms]
        # Two counts of size 1 are worth comparing or adding only when some are atoms (not constants).
        self.count_atoms = any(atom.sort == COUNT for atom in self.atoms)
        self.outputs = outputs
        self.ranges = ranges
        self.config = config
        self.stats = stats
        self.deadline = deadline
        self.progress = progress
        self.label = label
        self.nodes: list[tuple] = []
        self.where = outputs[0].where
        self.const_ids: dict[int, int] = {}
        rng = np.random.default_rng(int(batch.salt[0][0]))
        self.salt_part = [(rng.integers(0, 2**31, size=len(self.where)) | 1).astype(np.int32) for _ in range(2)]
        self.seen: dict[tuple[int, bool], set[int]] = {(sort, full): set() for sort in (BOOL, COUNT)
                                                       for full in (True, False)}
        # Counts are int16 while every stored value stays within +-2^14, so that a sum or a
        # difference of two never overflows; a candidate outside that range is dropped.
        small = batch.width < (1 << 14) and config.max_constant < (1 << 14)
        self.count_type = np.int16 if small else np.int32
        self.limit = (1 << 14) - 1 if small else (1 << 30) - 1
        # Stored classes live in arenas, one per sort and storage mode, that double as they fill
        # (within max_memory in all); the classes of one size are contiguous in theirs.
        self.arenas: dict[tuple[int, bool], list] = {}
        for sort in (BOOL, COUNT):
            item = 1 if sort == BOOL else np.dtype(self.count_type).itemsize
            for full in (True, False):
                width = max(batch.width if full else len(self.where), 1)
                capacity = max(1, min(_FIRST_ROWS, config.max_memory // (width * item)))
                dtype = bool if sort == BOOL else self.count_type
                self.arenas[sort, full] = [np.empty((capacity, width), dtype=dtype),
                                           np.empty(capacity, dtype=np.int64), 0, width * item]
        self.bounds: dict[tuple[int, int], tuple[bool, int, int]] = {}
        self.parts: dict[tuple[int, int], np.ndarray] = {}
        self.memory = 0
        self.full = False
        self.size = 0
        self.complete = 0
        self.classes = 0
        self.timed_out = False
        self.progressed = False

    # ------------------------------------------------------------ storage modes

    def mode(self, sort: int, size: int) -> str:
        top = self.config.max_size
        if size == 1:
            return "full"
        if sort == BOOL:
            return "full" if size <= top - 3 else "part" if size == top - 2 else "check"
        return "full" if size <= top - 5 else "part" if size <= top - 3 else "top"

    # ------------------------------------------------------------ driving

    def run(self, one_at_a_time: bool = False) -> bool:
        """Enumerate sizes 1..max_size; True once every output has a solution. With
        ``one_at_a_time``, stop as soon as some output has one (``self.progressed``), so that it can
        join the atoms of the search for the others."""
        for size in range(1, self.config.max_size + 1):
            self.size = size
            first = {key: arena[2] for key, arena in self.arenas.items()}
            for sort, values, spec, keep, bounded in self.candidates(size):
                self.admit(sort, size, values, spec, keep, bounded)
                solved = sum(o.solution is not None for o in self.outputs)
                if solved == len(self.outputs):
                    return True
                if one_at_a_time and solved:
                    self.progressed = True
                    return False
                now = time.perf_counter()
                if now > self.deadline:
                    self.timed_out = True
                    return False
                if self.progress and now - self.stats.last_report >= self.config.progress_every:
                    self.report(now)
            for sort in (BOOL, COUNT):
                full = self.mode(sort, size) == "full"
                self.bounds[sort, size] = (full, first[sort, full], self.arenas[sort, full][2])
            self.complete = size
        return False

    def report(self, now: float) -> None:
        self.stats.last_report = now
        elapsed = max(now - self.stats.started, 1e-9)
        solved = sum(o.solution is not None for o in self.outputs)
        assert self.progress is not None  # run reports only to a progress callback
        self.progress(
            f"{self.label}: size {self.size}/{self.config.max_size}, {self.classes:,} classes, "
            f"{self.stats.candidates:,} candidates ({self.stats.candidates / elapsed:,.0f}/s), "
            f"{solved}/{len(self.outputs)} outputs found, {elapsed:.1f} s"
        )

    def group(self, sort: int, size: int, full: bool) -> tuple[np.ndarray, np.ndarray] | None:
        """The stored classes of a sort and size: over all positions, or the checked ones."""
        entry = self.bounds.get((sort, size))
        if entry is None or entry[2] <= entry[1]:
            return None
        stored_full, start, end = entry
        values, ids = self.arenas[sort, stored_full][0], self.arenas[sort, stored_full][1]
        if full and not stored_full:  # pragma: no cover - excluded by the storage modes
            raise AssertionError(f"classes of size {size} were stored at the checked positions only")
        if full or not stored_full:
            return values[start:end], ids[start:end]
        part = self.parts.get((sort, size))
        if part is None:
            part = self.parts[sort, size] = values[start:end][:, self.where]
        return part, ids[start:end]

    # ------------------------------------------------------------ admitting candidates

    def keys(self, values: np.ndarray, full: bool) -> np.ndarray:
        return self.batch.keys(values) if full else row_keys(values, self.salt_part)

    def admit(self, sort: int, size: int, values: np.ndarray, spec: tuple, keep: np.ndarray | None,
              bounded: bool = True) -> None:
        mode = self.mode(sort, size)
        rows_in = len(values) if keep is None else int(keep.sum())
        if mode == "top":
            rows_in *= 1 + 6 * len(self.ranges.constants)
        elif mode == "check" and size == self.config.max_size - 1:
            rows_in *= 2
        self.stats.candidates += rows_in
        if not bounded:  # sums and multiples: drop the rows outside the stored range
            inside = (values.max(axis=1) <= self.limit) & (values.min(axis=1) >= -self.limit)
            keep = inside if keep is None else keep & inside
        rows = np.flatnonzero(keep) if keep is not None else np.arange(len(values))
        if not len(rows):
            return
        if mode == "check":
            self.check_booleans(values, rows, spec, size, negate=size == self.config.max_size - 1)
            return
        if mode == "top":
            self.check_comparisons(values, rows, spec, size)
            return
        full = mode == "full"
        if self.config.equivalence:
            rows = self.fresh(sort, full, values, rows)
            if not len(rows):
                return
        ids = np.arange(len(self.nodes), len(self.nodes) + len(rows), dtype=np.int64)
        self.nodes.extend(_decode(spec, rows))
        self.classes += len(rows)
        self.stats.classes += len(rows)
        if sort == COUNT and size == 1:
            for gid, node in zip(ids.tolist(), self.nodes[-len(rows):]):
                if node[0] == "const":
                    self.const_ids[node[1]] = gid
        arena = self.arenas[sort, full]
        chosen = None
        if not self.full and self.memory + len(rows) * arena[3] <= self.config.max_memory:
            _make_room(arena, len(rows))
            start = arena[2]
            chosen = arena[0][start:start + len(rows)]
            np.take(values, rows, axis=0, out=chosen)
            arena[1][start:start + len(rows)] = ids
            arena[2] += len(rows)
            self.memory += len(rows) * arena[3]
        else:
            self.full = True
        if sort == BOOL:
            chosen = values[rows] if chosen is None else chosen
            part = chosen[:, self.where] if full else chosen
            for output, row in self.matches(part, size):
                output.solution, output.size = int(ids[row]), size

    def fresh(self, sort: int, full: bool, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The rows whose values no earlier class has (the first of equal rows)."""
        keys = self.keys(values, full)[rows]
        _, first = np.unique(keys, return_index=True)
        first.sort()
        seen = self.seen[sort, full]
        fresh = []
        for row, key in zip(rows[first].tolist(), keys[first].tolist()):
            if key not in seen:
                seen.add(key)
                fresh.append(row)
        rows = np.array(fresh, dtype=np.int64)
        if full and len(rows):  # a full class also stands for its values at the checked positions
            self.seen[sort, False].update(self.keys(values[rows][:, self.where], False).tolist())
        return rows

    def matches(self, part: np.ndarray, size: int, negate: bool = False) -> Iterator[tuple[Output, int]]:
        """(output, row) for each output still open at ``size`` that some row matches."""
        for output in self.outputs:
            if output.size is not None and output.size <= size:
                continue
            want = ~output.want if negate else output.want
            maybe = np.flatnonzero((part[:, :32] == want[:32]).all(axis=1))
            if len(maybe):
                hit = np.flatnonzero((part[maybe] == want).all(axis=1))
                if len(hit):
                    yield output, int(maybe[hit[0]])

    def record(self, spec: tuple, row: int) -> int:
        self.nodes.extend(_decode(spec, np.array([row])))
        return len(self.nodes) - 1

    def check_booleans(self, values: np.ndarray, rows: np.ndarray, spec: tuple, size: int, negate: bool) -> None:
        part = values[rows] if len(rows) < len(values) else values
        for output, row in self.matches(part, size):
            output.solution, output.size = self.record(spec, int(rows[row])), size
        if negate:
            for output, row in self.matches(part, size + 1, negate=True):
                gid = self.record(spec, int(rows[row]))
                self.nodes.append(("not", gid))
                output.solution, output.size = len(self.nodes) - 1, size + 1

    def check_comparisons(self, values: np.ndarray, rows: np.ndarray, spec: tuple, size: int) -> None:
        """Each output against ``C op k`` for every row C, comparison and constant k."""
        part = (values[rows] if len(rows) < len(values) else values).astype(np.int64)
        big = 1 << 40
        for output in self.outputs:
            if output.size is not None and output.size <= size + 2:
                continue
            want = output.want
            yes, no = part[:, want], part[:, ~want]
            low_t = yes.min(axis=1) if yes.shape[1] else np.full(len(part), big)
            high_t = yes.max(axis=1) if yes.shape[1] else np.full(len(part), -big)
            low_f = no.min(axis=1) if no.shape[1] else np.full(len(part), big)
            high_f = no.max(axis=1) if no.shape[1] else np.full(len(part), -big)
            best = None
            for k in self.ranges.constants:
                tests = (("<", (high_t < k) & (k <= low_f)), ("<=", (high_t <= k) & (k < low_f)),
                         (">", (low_t > k) & (k >= high_f)), (">=", (low_t >= k) & (k > high_f)),
                         ("==", (low_t == k) & (high_t == k)), ("!=", (low_f == k) & (high_f == k)))
                for op, ok in tests:
                    hits = np.flatnonzero(ok)
                    if op == "==" and len(hits):
                        hits = hits[~(no[hits] == k).any(axis=1)]
                    if op == "!=" and len(hits):
                        hits = hits[~(yes[hits] == k).any(axis=1)]
                    if len(hits) and (best is None or hits[0] < best[0]):
                        best = (int(hits[0]), op, k)
            if best is not None:
                row, op, k = best
                gid = self.record(spec, int(rows[row]))
                self.nodes.append(("cmp", op, gid, self.const_ids[k]))
                output.solution, output.size = len(self.nodes) - 1, size + 2

    # ------------------------------------------------------------ candidate generators

    def candidates(self, size: int) -> Iterator[tuple]:
        yield from self.booleans(size)
        if size <= self.config.max_size - 2:
            yield from self.counts(size)

    def booleans(self, size: int) -> Iterator[tuple]:
        batch = self.batch
        full = self.mode(BOOL, size) == "full"
        atoms = [(("atom", k), v if full else v[self.where]) for k, (atom, v) in
                 enumerate(zip(self.atoms, self.atom_values)) if atom.sort == BOOL and atom.size == size]
        if size == 1:
            leaves: list[tuple[tuple, np.ndarray]] = [(("tok", t), batch.token(t)) for t in batch.alphabet]
            leaves += [(("bool", True), np.ones(batch.width, bool)),
                       (("bool", False), np.zeros(batch.width, bool))]
            for modulus in self.ranges.periods:
                for residues in _residue_sets(modulus):
                    leaves.append((("per", modulus, residues), batch.periodic(modulus, residues)))
            yield from self.leaves(BOOL, leaves + atoms)
            return
        yield from self.leaves(BOOL, atoms)  # atoms that the search takes for larger expressions
        previous = self.group(BOOL, size - 1, full)
        if previous is not None:
            yield from self.unary(BOOL, ("not",), previous, np.logical_not)
        for left in range(1, (size - 1) // 2 + 1):
            right = size - 1 - left
            a, b = self.group(BOOL, left, full), self.group(BOOL, right, full)
            if a is not None and b is not None:
                yield from self.pairs(BOOL, ("and",), a, b, np.logical_and, left == right, strict=True)
                yield from self.pairs(BOOL, ("or",), a, b, np.logical_or, left == right, strict=True)
        for same, a, b in self.count_pairs(size, full):
            yield from self.comparisons(a, b, same)
        if self.config.conditionals:
            yield from self.conditionals(BOOL, size, full)

    def counts(self, size: int) -> Iterator[tuple]:
        batch = self.batch
        if size == 1:
            leaves: list[tuple[tuple, np.ndarray]] = [(("const", k), np.full(batch.width, k, dtype=self.count_type))
                      for k in self.ranges.constants]
            leaves += [(("atom", k), v.astype(self.count_type)) for k, (atom, v) in
                       enumerate(zip(self.atoms, self.atom_values))
                       if atom.sort == COUNT and np.abs(v).max(initial=0) <= self.limit]
            yield from self.leaves(COUNT, leaves)
            return
        full = self.mode(COUNT, size) == "full"
        where = None if full else self.where

        def restrict(values: np.ndarray) -> np.ndarray:
            return values if where is None else values[:, where]

        operand = self.group(BOOL, size - 1, True)
        if operand is not None:
            yield from self.unary(COUNT, ("count",), operand,
                                  lambda v: restrict(batch.count(v, self.count_type)))
        operand = self.group(BOOL, size - 2, True)
        if operand is not None:
            for guard in self.ranges.guards:
                yield from self.unary(COUNT, ("local", guard), operand,
                                      lambda v, g=guard: restrict(batch.local_count(v, g, self.count_type)))
        for same, a, b in self.count_pairs(size, full):
            yield from self.pairs(COUNT, ("add",), a, b, np.add, same, strict=False, bounded=False)
        for same, a, b in self.count_pairs(size, full, ordered=True):
            yield from self.pairs(COUNT, ("sub",), a, b, np.subtract, False, strict=False, distinct=same,
                                  bounded=False)
        operand = self.group(COUNT, size - 1, full) if size - 1 > 1 else None
        if operand is not None:
            for factor in self.ranges.factors:
                yield from self.unary(COUNT, ("scale", factor), operand,
                                      lambda v, k=factor: np.multiply(v, np.int32(k), dtype=np.int32),
                                      bounded=False)
        for tag, fn in (("min", np.minimum), ("max", np.maximum)):
            for same, a, b in self.count_pairs(size, full):
                yield from self.pairs(COUNT, (tag,), a, b, fn, same, strict=True)
        if self.config.conditionals:
            yield from self.conditionals(COUNT, size, full)

    def count_pairs(self, size: int, full: bool, ordered: bool = False) -> Iterator[tuple[bool, tuple, tuple]]:
        """(same size, a, b) for the stored count groups of each split of ``size - 1`` into two
        sizes, the smaller first unless ``ordered``; two of size 1 only when some counts are atoms
        (otherwise both are constants)."""
        for left in range(1, size - 1) if ordered else range(1, (size - 1) // 2 + 1):
            right = size - 1 - left
            if left == right == 1 and not self.count_atoms:
                continue
            a, b = self.group(COUNT, left, full), self.group(COUNT, right, full)
            if a is not None and b is not None:
                yield left == right, a, b

    def per(self, width: int) -> int:
        return max(1, self.config.chunk // max(width, 1))

    def leaves(self, sort: int, leaves: list[tuple[tuple, np.ndarray]]) -> Iterator[tuple]:
        if leaves:
            values = np.stack([v for _, v in leaves])
            yield sort, values, ("leaf", [node for node, _ in leaves]), None, True

    def unary(self, sort: int, tag: tuple, group: tuple, fn, bounded: bool = True) -> Iterator[tuple]:
        values, ids = group
        step = self.per(values.shape[1])
        for start in range(0, len(values), step):
            yield sort, fn(values[start:start + step]), (tag, [ids[start:start + step]]), None, bounded

    def pairs(self, sort: int, tag: tuple, a: tuple, b: tuple, fn, same: bool, *, strict: bool,
              distinct: bool = False, bounded: bool = True) -> Iterator[tuple]:
        """fn(a_i, b_j) for every pair; with ``same`` (a is b) only j > i (j >= i unless strict);
        with ``distinct`` every pair but i == j."""
        (av, aid), (bv, bid) = a, b
        width = av.shape[1]
        cols = min(len(bv), self.per(width))
        rows = max(1, self.per(width) // cols)
        for i0 in range(0, len(av), rows):
            i1 = min(len(av), i0 + rows)
            for j0 in range(i0 if same else 0, len(bv), cols):
                j1 = min(len(bv), j0 + cols)
                values = fn(av[i0:i1, None, :], bv[None, j0:j1, :]).reshape(-1, width)
                keep = None
                if (same or distinct) and j0 < i1 and i0 < j1:
                    ii = np.arange(i0, i1)[:, None]
                    jj = np.arange(j0, j1)[None, :]
                    keep = (jj != ii) if distinct else (jj > ii) if strict else (jj >= ii)
                    keep = keep.ravel()
                yield sort, values, (tag, [aid[i0:i1], bid[j0:j1]]), keep, bounded

    def comparisons(self, a: tuple, b: tuple, same: bool) -> Iterator[tuple]:
        """C1 op C2 for the six comparisons, from one difference per block (sizes |C1| <= |C2|)."""
        (av, aid), (bv, bid) = a, b
        width = av.shape[1]
        cols = min(len(bv), self.per(width))
        rows = max(1, self.per(width) // cols)
        tests = (("<", np.less), ("<=", np.less_equal), ("==", np.equal), ("!=", np.not_equal),
                 (">", np.greater), (">=", np.greater_equal))
        for i0 in range(0, len(av), rows):
            i1 = min(len(av), i0 + rows)
            for j0 in range(i0 if same else 0, len(bv), cols):
                j1 = min(len(bv), j0 + cols)
                difference = (av[i0:i1, None, :] - bv[None, j0:j1, :]).reshape(-1, width)
                keep = None
                if same and j0 < i1:
                    keep = (np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]).ravel()
                spec_ids = [aid[i0:i1], bid[j0:j1]]
                for op, test in tests:
                    yield BOOL, test(difference, 0), (("cmp", op), spec_ids), keep, True

    def conditionals(self, sort: int, size: int, full: bool) -> Iterator[tuple]:
        """``then if cond else other`` over every split of size - 1 into three."""
        for cond_size in range(1, size - 2):
            for then_size in range(1, size - 1 - cond_size):
                else_size = size - 1 - cond_size - then_size
                cond = self.group(BOOL, cond_size, full)
                then, other = self.group(sort, then_size, full), self.group(sort, else_size, full)
                if cond is None or then is None or other is None:
                    continue
                yield from self.triples(sort, cond, then, other, then_size == else_size)

    def triples(self, sort: int, cond: tuple, then: tuple, other: tuple, same: bool) -> Iterator[tuple]:
        (cv, cid), (tv, tid), (ov, oid) = cond, then, other
        width = cv.shape[1]
        per = self.per(width)
        ko = min(len(ov), per)
        kt = min(len(tv), max(1, per // ko))
        kc = max(1, per // (ko * kt))
        tag = ("bcond",) if sort == BOOL else ("ccond",)
        for c0 in range(0, len(cv), kc):
            c1 = min(len(cv), c0 + kc)
            for t0 in range(0, len(tv), kt):
                t1 = min(len(tv), t0 + kt)
                for o0 in range(0, len(ov), ko):
                    o1 = min(len(ov), o0 + ko)
                    values = np.where(cv[c0:c1, None, None, :], tv[None, t0:t1, None, :],
                                      ov[None, None, o0:o1, :]).reshape(-1, width)
                    keep = None
                    if same and t0 < o1 and o0 < t1:
                        differ = np.arange(t0, t1)[:, None] != np.arange(o0, o1)[None, :]
                        keep = np.broadcast_to(differ, (c1 - c0, *differ.shape)).ravel()
                    yield sort, values, (tag, [cid[c0:c1], tid[t0:t1], oid[o0:o1]]), keep, True


def _residue_sets(modulus: int) -> list[tuple[int, ...]]:
    """Residue sets of the periodic leaves: each residue, and each pair (not the full set)."""
    sets: list[tuple[int, ...]] = [(r,) for r in range(modulus)]
    if modulus > 2:
        sets += list(itertools.combinations(range(modulus), 2))
    return sets


def _decode(spec: tuple, rows: np.ndarray) -> list[tuple]:
    """The derivations (tag, parameters..., child ids...) of the chosen rows of a chunk."""
    tag, parts = spec
    if tag == "leaf":
        return [parts[r] for r in rows.tolist()]
    shape = tuple(len(p) for p in parts)
    index = np.unravel_index(rows, shape)
    columns = [p[i].tolist() for p, i in zip(parts, index)]
    return [(*tag, *children) for children in zip(*columns)]
