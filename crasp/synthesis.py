"""Program synthesis: find a C-RASP program for a task from its reference.

:func:`synthesize` enumerates expressions bottom-up by size (the number of AST nodes, a local
guard counting as one more), over the two sorts of the language: Boolean vectors and count vectors.
Candidates are evaluated many at a time, as numpy arrays over candidates x positions of a batch
of inputs (all inputs concatenated, so counts are prefix sums within each input), with the
interpreter's semantics: positions from 1, ``<bos>`` an ordinary token, inclusive counts, periodic
predicates reading the absolute position offset + k. Candidates with the same values on the batch
are one class (*observational equivalence*): only the first, smallest, of a class is kept and
combined further, so the search grows by classes rather than by expressions.

Each output of the task is searched for at once over the same enumeration: the ``accept`` Boolean
(true exactly where the verdict is, at the last position), or for each output token t the
Boolean next(t) (true at the checked positions whose target is t, or that have t among their
legal next symbols; every other position is free). When every output has a match on the batch,
the program is assembled (shared sub-expressions become definitions), checked by
:func:`crasp.checker.check` and verified by :func:`tasks.verify.verify`; a counterexample joins the
batch and the search starts again. Constants, multipliers, periods and local offsets come from
small ranges that later *rounds* of the search widen. Only a program that passed the verifier is
returned.

>>> from crasp.synthesis import SynthesisConfig, synthesize
>>> import tasks
>>> result = synthesize(tasks.get("tomita_1"), SynthesisConfig(time_limit=20))
>>> print(result.text, end="")
alphabet {"<bos>"}
B1 = #"0" == 0
next "0" = false
next "1" = B1
next "<eos>" = B1
>>> result.size
7
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence, get_args

import numpy as np

from . import ast
from .checker import check
from .errors import CraspError
from .printer import format_program

_EOS = "<eos>"  # the task suite's end token (tasks.registry.EOS; crasp does not import tasks here)
BOOL, COUNT = 0, 1  # the two sorts
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


INITIAL_SHARE = 0.2
"""The share of the time limit the search may spend enumerating its first inputs."""


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


class SynthesisError(CraspError):
    """A synthesis request that cannot be run (a bad configuration, a task without inputs)."""


@dataclass(frozen=True)
class SynthesisConfig:
    """Budget and search space of :func:`synthesize`.

    ``max_size`` bounds the size (AST nodes) of each output's expression; ``time_limit`` the
    seconds of the whole search (a verification under way is finished). ``positions`` is ``"ape"``
    (C-RASP[periodic, local]: periodic predicates and local guards allowed) or ``"nope"`` (plain
    C-RASP). The first round draws constants from ``constants``, multipliers ``k * C`` from
    ``factors``, moduli from ``periods`` and local guard offsets from ``offsets``; each of the
    ``rounds`` later rounds widens them (up to ``max_constant``, ``max_factor``, ``max_period``,
    ``max_offset``) and restarts the enumeration; the rounds share the time, the first getting the
    most. ``conditionals`` includes ``C1 if P else C2`` (both sorts). The batch holds the inputs
    up to the longest length with at most ``exhaustive_inputs`` inputs (and at most
    ``max_exhaustive_length``) and ``random_inputs`` drawn with ``task.sample`` up to
    ``max_random_length``; inputs get random position offsets (APE). ``chunk`` bounds the values
    (candidates x positions) computed at once, ``max_memory`` the bytes of stored classes.
    ``verify_exhaustive`` (the exhaustive budget), ``verify_samples`` and ``verify_max_length``
    are the final verification's (see :func:`tasks.verify.verify`). ``equivalence=False`` keeps
    every candidate instead of one per class: the naive enumerator, for comparison.
    """

    max_size: int = 12
    time_limit: float = 30.0
    positions: str = "ape"
    constants: tuple[int, ...] = (0, 1, 2)
    max_constant: int = 8
    factors: tuple[int, ...] = (2,)
    max_factor: int = 4
    periods: tuple[int, ...] = (2,)
    max_period: int = 6
    offsets: tuple[int, ...] = (1,)
    max_offset: int = 4
    rounds: int = 3
    conditionals: bool = True
    exhaustive_inputs: int = 150
    max_exhaustive_length: int = 10
    random_inputs: int = 24
    max_random_length: int = 24
    chunk: int = 1 << 22
    max_memory: int = 1 << 30
    progress_every: float = 2.0
    verify_exhaustive: int = 20_000
    verify_samples: int = 200
    verify_max_length: int = 500
    seed: int = 0
    equivalence: bool = True

    @property
    def plain(self) -> bool:
        """Plain C-RASP only (no positional predicates): the NoPE search."""
        return self.positions == "nope"  # the one place the scheme's name is read

    def __post_init__(self) -> None:
        if self.positions not in ("ape", "nope"):
            raise SynthesisError(f"positions must be 'ape' or 'nope', not {self.positions!r}")
        if self.max_size < 1:
            raise SynthesisError(f"max_size must be at least 1, not {self.max_size}")
        if not self.time_limit > 0:
            raise SynthesisError(f"time_limit must be positive, not {self.time_limit}")
        if self.rounds < 1:
            raise SynthesisError(f"rounds must be at least 1, not {self.rounds}")
        if not self.constants or not self.periods or not self.offsets:
            raise SynthesisError("constants, periods and offsets need at least one value each")
        if min(self.periods) < 2 or min(self.offsets) < 1:
            raise SynthesisError("periods must be >= 2 and local offsets >= 1")


@dataclass(frozen=True)
class SynthesisResult:
    """What :func:`synthesize` found, and what it searched.

    ``program`` is the verified program (None when none was found within the budget), ``text``
    its source as ``crasp fmt`` prints it and ``size`` its AST nodes (see :func:`program_size`).
    ``candidates`` counts the expressions evaluated, ``classes`` the classes kept, over every
    round and restart (``enumeration_seconds`` is the time spent enumerating, without building the
    batch and verifying); ``max_size_reached`` is the largest expression size whose enumeration
    began; ``checks`` summarises the final verification (or says why there is none); ``searched``
    says, in words, which sizes were enumerated with which ranges, and the budget.
    """

    program: ast.Program | None
    size: int | None
    candidates: int
    classes: int
    seconds: float
    max_size_reached: int
    checks: str
    searched: str
    text: str | None = None
    counterexamples: int = 0
    enumeration_seconds: float = 0.0

    @property
    def found(self) -> bool:
        return self.program is not None

    def to_json(self) -> dict:
        return {"program": self.text, "size": self.size, "checks": self.checks,
                "candidates": self.candidates, "classes": self.classes, "seconds": round(self.seconds, 3),
                "enumeration_seconds": round(self.enumeration_seconds, 3),
                "max_size_reached": self.max_size_reached, "counterexamples": self.counterexamples,
                "searched": self.searched}


# ---------------------------------------------------------------- sizes


def expr_size(node: ast.Expr) -> int:
    """AST nodes of an expression; a local guard counts one node, a reference one.

    >>> from crasp.parser import parse
    >>> expr_size(parse('A = #[i - j == 1] "a" >= 1').definitions[0].expr)
    5
    """
    total = 0
    for sub in ast.walk(node):
        total += 1 + (isinstance(sub, ast.Count) and sub.guard is not None)
    return total


def program_size(program: ast.Program) -> int:
    """AST nodes of every definition and output of ``program`` (names count one node each).

    >>> from crasp import library
    >>> program_size(library.load("dyck1"))
    15
    """
    total = 0
    for statement in program.statements:
        if isinstance(statement, (ast.Definition, ast.Accept, ast.NextToken)):
            total += expr_size(statement.expr)
    return total


# ---------------------------------------------------------------- ranges and rounds


@dataclass(frozen=True)
class _Ranges:
    constants: tuple[int, ...]
    factors: tuple[int, ...]
    periods: tuple[int, ...]
    guards: tuple[frozenset[int], ...]

    def describe(self, plain: bool) -> str:
        text = f"constants {_span(self.constants)}, factors {_span(self.factors)}"
        if not plain:
            guards = ", ".join(_set_text(g) for g in self.guards)
            text += f", periods {_span(self.periods)}, offsets {guards}"
        return text


def _span(values: Sequence[int]) -> str:
    values = sorted(values)
    if len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}"
    return "{" + ", ".join(map(str, values)) + "}"


def _set_text(offsets: frozenset[int]) -> str:
    return _span(sorted(offsets)) if len(offsets) > 1 else str(min(offsets))


def _round_ranges(config: SynthesisConfig, round_: int) -> _Ranges:
    constants = set(config.constants)
    factors = set(config.factors)
    periods = set(config.periods)
    offsets = set(config.offsets)
    windows: set[frozenset[int]] = set()
    if round_:
        top = min(config.max_constant, max(max(constants), 1) * 2 ** round_)
        constants |= set(range(-min(round_, config.max_constant), top + 1))
        factors |= set(range(2, min(config.max_factor, max(factors) + round_) + 1)) | {-1}
        periods |= set(range(2, min(config.max_period, max(periods) + 2 * round_) + 1))
        reach = min(config.max_offset, max(offsets) * 2 ** round_)
        offsets |= set(range(1, reach + 1))
        windows = ({frozenset(range(1, d + 1)) for d in range(2, reach + 1)}
                   | {frozenset(range(0, d + 1)) for d in range(1, reach + 1)})  # the last d + 1 symbols
    guards = sorted({frozenset([d]) for d in offsets} | windows, key=lambda g: (len(g), sorted(g)))
    return _Ranges(tuple(sorted(constants)), tuple(sorted(factors)), tuple(sorted(periods)), tuple(guards))


def _schedule(config: SynthesisConfig) -> list[tuple[_Ranges, float]]:
    """The rounds' ranges and the fraction of the time by which each must end."""
    plain = config.plain
    rounds: list[_Ranges] = []
    for r in range(config.rounds):
        ranges = _round_ranges(config, r)
        if plain:
            ranges = dataclasses.replace(ranges, periods=(), guards=())
        if not rounds or ranges != rounds[-1]:
            rounds.append(ranges)
    weights = [0.55 ** r for r in range(len(rounds))]
    ends = list(itertools.accumulate(weights))
    return [(ranges, end / ends[-1]) for ranges, end in zip(rounds, ends)]


# ---------------------------------------------------------------- the batch


class _Batch:
    """Examples concatenated position by position; everything an enumeration needs of them."""

    def __init__(self, examples: Sequence[tuple], alphabet: Sequence[str], seed: int) -> None:
        self.examples = list(examples)
        self.alphabet = tuple(alphabet)
        vocabulary = {t: k for k, t in enumerate(self.alphabet)}
        lengths = np.array([len(e.tokens) for e, _ in self.examples], dtype=np.int64)
        self.lengths = lengths
        self.width = int(lengths.sum())
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.start = np.repeat(self.starts, lengths)
        self.local = np.arange(self.width, dtype=np.int64) - self.start + 1
        offsets = np.array([offset for _, offset in self.examples], dtype=np.int64)
        self.absolute = np.repeat(offsets, lengths) + self.local
        self.ids = np.fromiter((vocabulary.get(t, -1) for e, _ in self.examples for t in e.tokens),
                               dtype=np.int64, count=self.width)
        self.last = self.starts + lengths - 1
        rng = np.random.default_rng(seed)
        self.salt = [(rng.integers(0, 2**31, size=self.width) | 1).astype(np.int32) for _ in range(2)]
        self._zero: dict[int, np.ndarray] = {}

    def token(self, token: str) -> np.ndarray:
        if token not in self.alphabet:
            return np.zeros(self.width, dtype=bool)
        return self.ids == self.alphabet.index(token)

    def periodic(self, modulus: int, residues: Sequence[int]) -> np.ndarray:
        return np.isin(self.absolute % modulus, list(residues))

    def count(self, values: np.ndarray, dtype=np.int32) -> np.ndarray:
        """#P: inclusive prefix counts within each input, for each row of ``values``."""
        sums = np.zeros((len(values), self.width + 1), dtype=dtype)
        np.cumsum(values, axis=1, dtype=dtype, out=sums[:, 1:])
        return sums[:, 1:] - sums[:, self.start]

    def local_count(self, values: np.ndarray, offsets: frozenset[int], dtype=np.int32) -> np.ndarray:
        """#[i - j in offsets] P: P at i - d for each offset d, inside the input."""
        total = np.zeros(values.shape, dtype=dtype)
        for d in sorted(offsets):
            if d >= self.width:
                continue
            shifted = np.zeros(values.shape, dtype=dtype)
            shifted[:, d:] = values[:, : self.width - d]
            shifted[:, self.zero_at(d)] = 0
            total += shifted
        return total

    def zero_at(self, d: int) -> np.ndarray:
        if d not in self._zero:
            self._zero[d] = np.flatnonzero(self.local <= d)
        return self._zero[d]

    def keys(self, values: np.ndarray) -> np.ndarray:
        return _keys(values, self.salt)


@dataclass
class _Output:
    """One Boolean to find: ``want`` at the flat positions ``where``, anything elsewhere."""

    name: str  # "accept", or the output token
    where: np.ndarray
    want: np.ndarray
    solution: int | None = None
    size: int | None = None


# ---------------------------------------------------------------- what synthesis asks of a task

_TASK_CHECKS: tuple[Callable, Callable] | None = None


def register_task_checks(verify: Callable, exhaustive_inputs: Callable) -> None:
    """How candidate programs are verified against a task and a task's inputs enumerated.

    The task suite registers its own (``tasks.verify.verify`` and ``exhaustive_inputs``) when it is
    imported, so crasp needs no import of the packages built on it. A task given to
    :func:`synthesize` has its ``format.value`` ("accept", "seq2seq", "next-set", ...), ``outputs``,
    ``symbols``, ``sample``, ``min_length``, ``max_input_length()`` and ``enumerate_inputs``.
    """
    global _TASK_CHECKS
    _TASK_CHECKS = (verify, exhaustive_inputs)


def _task_checks() -> tuple[Callable, Callable]:
    if _TASK_CHECKS is None:
        raise SynthesisError("no way to verify programs against tasks is registered: import tasks first "
                             "(or call crasp.synthesis.register_task_checks)")
    return _TASK_CHECKS


def _format(task) -> str:
    return getattr(task.format, "value", task.format)


def _targets(task, batch: _Batch, names: Sequence[str]) -> list[_Output]:
    where: list[int] = []
    values: list[object] = []
    for (example, _), base in zip(batch.examples, batch.starts.tolist()):
        where.extend(base + k for k in example.checked)
        values.extend(example.targets)
    where_array = np.array(where, dtype=np.int64)
    if _format(task) == "accept":
        return [_Output("accept", where_array, np.array([bool(v) for v in values], dtype=bool))]
    if _format(task) == "next-set":
        return [_Output(t, where_array, np.array([t in v for v in values], dtype=bool)) for t in names]
    return [_Output(t, where_array, np.array([v == t for v in values], dtype=bool)) for t in names]


def _output_names(task, examples: Sequence[tuple]) -> list[str]:
    if _format(task) == "accept":
        return ["accept"]
    seen: dict[str, None] = dict.fromkeys(task.outputs)
    if _format(task) in ("seq2seq", "next-set"):
        seen[_EOS] = None
    for example, _ in examples:
        for target in example.targets:
            for token in (target if isinstance(target, frozenset) else [target]):
                seen[token] = None
    return list(seen)


def _initial_examples(task, config: SynthesisConfig, rng: np.random.Generator,
                      deadline: float | None = None) -> list[tuple]:
    """All inputs up to a small length (the lengths enumerated before ``deadline``), then random
    longer ones, each at a position offset."""
    plain = config.plain
    spread = math.lcm(*range(2, config.max_period + 1)) if not plain else 1
    framed = _exhaustive(task, config, deadline)
    longest = max((e.length for e in framed), default=0)
    top = min(config.max_random_length, task.max_input_length())
    low = max(task.min_length, longest + 1)
    if config.random_inputs and top >= task.min_length:
        for length in np.linspace(min(low, top), top, num=config.random_inputs).round().astype(int):
            try:
                framed.append(task.sample(int(length), rng))
            except CraspError:  # a length the task's sampler cannot produce (a guarded sampler raises this)
                continue
    examples, seen = [], set()
    for example in framed:
        offset = int(rng.integers(0, spread)) if spread > 1 else 0
        key = (example.tokens, offset)
        if key not in seen:
            seen.add(key)
            examples.append((example, offset))
    if not examples:
        raise SynthesisError(f"task {task.name!r} produced no inputs to synthesize from")
    return examples


def _exhaustive(task, config: SynthesisConfig, deadline: float | None = None) -> list:
    """Framed examples of every valid input up to the longest length within the budget (and whose
    enumeration, at the pace of the length before, ends before ``deadline``)."""
    _, exhaustive_inputs = _task_checks()
    budget = config.exhaustive_inputs
    found: list = []
    last = 0.0

    def in_time() -> bool:
        return deadline is None or time.perf_counter() + 4 * last <= deadline

    if task.enumerate_inputs is not None:
        for length in range(0, config.max_exhaustive_length + 1):
            if not in_time():
                break
            started = time.perf_counter()
            batch = list(itertools.islice(task.enumerate_inputs(length), budget + 1))
            last = time.perf_counter() - started
            if len(batch) > budget:
                break
            found = batch
    else:
        symbols = tuple(task.symbols[:5])
        for length in range(0, config.max_exhaustive_length + 1):
            total = sum(len(symbols) ** n for n in range(length + 1))
            if total > 50 * budget and found or not in_time():
                break
            started = time.perf_counter()
            batch = exhaustive_inputs(task, length, symbols)
            last = time.perf_counter() - started
            if len(batch) > budget:
                break
            found = batch
    examples = []
    for x in found:
        try:
            examples.append(task.example(x))
        except CraspError:  # an input the (guarded) reference rejects
            continue
    return examples


def _alphabet(task, examples: Sequence[tuple]) -> tuple[str, ...]:
    """The tokens of the search's token predicates: those of the inputs, and the task's symbols."""
    seen = dict.fromkeys(task.prefix)
    for example, _ in examples:
        seen.update(dict.fromkeys(example.tokens))
    seen.update(dict.fromkeys(task.symbols))
    return tuple(seen)


# ---------------------------------------------------------------- the enumeration


@dataclass
class _Stats:
    candidates: int = 0
    classes: int = 0
    started: float = 0.0
    enumerating: float = 0.0
    last_report: float = 0.0


class _Search:
    """One bottom-up enumeration with fixed ranges on a fixed batch.

    Each (sort, size) has a storage mode. A class whose value may still reach a count operand
    (``#P``) is stored over every position of the batch (FULL); one that can only reach the output
    through comparisons, Boolean operations and arithmetic is stored at the checked positions only
    (PART), and two classes are then equivalent when they agree there. The last sizes are not
    stored at all: a Boolean of size max - 1 is checked against the outputs together with its
    negation, one of size max on its own (CHECK), and a count of size max - 2 through every
    comparison with a constant (TOP).
    """

    def __init__(self, batch: _Batch, outputs: list[_Output], ranges: _Ranges, config: SynthesisConfig,
                 stats: _Stats, deadline: float, progress: Callable[[str], None] | None, label: str) -> None:
        self.batch = batch
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

    # ------------------------------------------------------------ storage modes

    def mode(self, sort: int, size: int) -> str:
        top = self.config.max_size
        if size == 1:
            return "full"
        if sort == BOOL:
            return "full" if size <= top - 3 else "part" if size == top - 2 else "check"
        return "full" if size <= top - 5 else "part" if size <= top - 3 else "top"

    # ------------------------------------------------------------ driving

    def run(self) -> bool:
        """Enumerate sizes 1..max_size; True once every output has a solution."""
        for size in range(1, self.config.max_size + 1):
            self.size = size
            first = {key: arena[2] for key, arena in self.arenas.items()}
            for sort, values, spec, keep, bounded in self.candidates(size):
                self.admit(sort, size, values, spec, keep, bounded)
                if all(o.solution is not None for o in self.outputs):
                    return True
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
        return self.batch.keys(values) if full else _keys(values, self.salt_part)

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

    def matches(self, part: np.ndarray, size: int, negate: bool = False) -> Iterator[tuple[_Output, int]]:
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
        if size == 1:
            leaves = [(("tok", t), batch.token(t)) for t in batch.alphabet]
            leaves += [(("bool", True), np.ones(batch.width, bool)),
                       (("bool", False), np.zeros(batch.width, bool))]
            for modulus in self.ranges.periods:
                for residues in _residue_sets(modulus):
                    leaves.append((("per", modulus, residues), batch.periodic(modulus, residues)))
            yield from self.leaves(BOOL, leaves)
            return
        full = self.mode(BOOL, size) == "full"
        previous = self.group(BOOL, size - 1, full)
        if previous is not None:
            yield from self.unary(BOOL, ("not",), previous, np.logical_not)
        for left in range(1, (size - 1) // 2 + 1):
            right = size - 1 - left
            a, b = self.group(BOOL, left, full), self.group(BOOL, right, full)
            if a is not None and b is not None:
                yield from self.pairs(BOOL, ("and",), a, b, np.logical_and, left == right, strict=True)
                yield from self.pairs(BOOL, ("or",), a, b, np.logical_or, left == right, strict=True)
        for left in range(1, (size - 1) // 2 + 1):
            right = size - 1 - left
            if left == right == 1:
                continue
            a, b = self.group(COUNT, left, full), self.group(COUNT, right, full)
            if a is not None and b is not None:
                yield from self.comparisons(a, b, left == right)
        if self.config.conditionals:
            yield from self.conditionals(BOOL, size, full)

    def counts(self, size: int) -> Iterator[tuple]:
        batch = self.batch
        if size == 1:
            leaves = [(("const", k), np.full(batch.width, k, dtype=self.count_type))
                      for k in self.ranges.constants]
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
        for left in range(1, (size - 1) // 2 + 1):
            right = size - 1 - left
            if left == right == 1:
                continue
            a, b = self.group(COUNT, left, full), self.group(COUNT, right, full)
            if a is not None and b is not None:
                yield from self.pairs(COUNT, ("add",), a, b, np.add, left == right, strict=False,
                                      bounded=False)
        for left in range(1, size - 1):
            right = size - 1 - left
            if left == right == 1:
                continue
            a, b = self.group(COUNT, left, full), self.group(COUNT, right, full)
            if a is not None and b is not None:
                yield from self.pairs(COUNT, ("sub",), a, b, np.subtract, False, strict=False,
                                      distinct=left == right, bounded=False)
        operand = self.group(COUNT, size - 1, full) if size - 1 > 1 else None
        if operand is not None:
            for factor in self.ranges.factors:
                yield from self.unary(COUNT, ("scale", factor), operand,
                                      lambda v, k=factor: np.multiply(v, np.int32(k), dtype=np.int32),
                                      bounded=False)
        for tag, fn in (("min", np.minimum), ("max", np.maximum)):
            for left in range(1, (size - 1) // 2 + 1):
                right = size - 1 - left
                if left == right == 1:
                    continue
                a, b = self.group(COUNT, left, full), self.group(COUNT, right, full)
                if a is not None and b is not None:
                    yield from self.pairs(COUNT, (tag,), a, b, fn, left == right, strict=True)
        if self.config.conditionals:
            yield from self.conditionals(COUNT, size, full)

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


def _keys(values: np.ndarray, salt: list[np.ndarray]) -> np.ndarray:
    """A 64-bit key per row: two random linear hashes modulo 2^32 (wrapping int32 sums)."""
    rows = values.view(np.uint8) if values.dtype == bool else values
    high = np.einsum("kp,p->k", rows, salt[0]).astype(np.int64)
    low = np.einsum("kp,p->k", rows, salt[1]).astype(np.int64)
    return (high << 32) ^ (low & 0xFFFFFFFF)


def _residue_sets(modulus: int) -> list[tuple[int, ...]]:
    """Residue sets of the periodic leaves: each residue, and each pair (not the full set)."""
    sets = [(r,) for r in range(modulus)]
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


# ---------------------------------------------------------------- programs


class _Builder:
    """AST expressions from derivations."""

    def __init__(self, nodes: list[tuple]) -> None:
        self.nodes = nodes
        self.memo: dict[int, ast.Expr] = {}

    def __call__(self, gid: int) -> ast.Expr:
        found = self.memo.get(gid)
        if found is None:
            found = self.memo[gid] = self.build(self.nodes[gid])
        return found

    def build(self, node: tuple) -> ast.Expr:
        tag = node[0]
        if tag == "tok":
            return ast.TokenIs(node[1])
        if tag == "bool":
            return ast.BoolConst(node[1])
        if tag == "per":
            return ast.Periodic(node[1], frozenset(node[2]))
        if tag == "const":
            return ast.Const(node[1])
        if tag == "not":
            return ast.Not(self(node[1]))
        if tag == "count":
            return ast.Count(self(node[1]))
        if tag == "local":
            offsets = node[1]
            guard = ast.OffsetCompare("==", min(offsets)) if len(offsets) == 1 else ast.OffsetSet(offsets)
            return ast.Count(self(node[2]), guard)
        if tag == "scale":
            return ast.Scale(node[1], self(node[2]))
        if tag == "cmp":
            left, right = self(node[2]), self(node[3])
            if isinstance(left, ast.Const) and not isinstance(right, ast.Const):
                return ast.Compare(_FLIP[node[1]], right, left)
            return ast.Compare(node[1], left, right)
        if tag in ("bcond", "ccond"):
            return ast.Cond(self(node[2]), self(node[1]), self(node[3]))
        left, right = self(node[1]), self(node[2])
        if tag in ("add", "min", "max") and isinstance(left, ast.Const) and not isinstance(right, ast.Const):
            left, right = right, left
        kind = {"and": ast.And, "or": ast.Or, "add": ast.Add, "sub": ast.Sub, "min": ast.Min, "max": ast.Max}[tag]
        return kind(left, right)


_EXPR_TYPES = get_args(ast.Expr)


def _replace(node: ast.Expr, target: ast.Expr, name: str) -> ast.Expr:
    if node == target:
        return ast.Ref(name)
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, _EXPR_TYPES):
            replaced = _replace(value, target, name)
            if replaced is not value:
                changes[f.name] = replaced
    return dataclasses.replace(node, **changes) if changes else node


def _is_count(node: ast.Expr) -> bool:
    if isinstance(node, ast.Cond):
        return _is_count(node.then)
    return isinstance(node, (ast.Count, ast.Const, ast.Add, ast.Sub, ast.Scale, ast.Min, ast.Max))


def _share(outputs: list[tuple[str, ast.Expr]]) -> tuple[list[ast.Definition], list[tuple[str, ast.Expr]]]:
    """Name every sub-expression (of 3 nodes or more) that occurs twice, largest first."""
    definitions: list[ast.Definition] = []
    numbers = {"B": 0, "C": 0}
    while True:
        seen: Counter = Counter()
        for expr in [d.expr for d in definitions] + [e for _, e in outputs]:
            for sub in ast.walk(expr):
                if not isinstance(sub, ast.Ref) and expr_size(sub) >= 3:
                    seen[sub] += 1
        repeated = [sub for sub, n in seen.items() if n >= 2]
        if not repeated:
            return definitions, outputs
        target = max(repeated, key=expr_size)
        prefix = "C" if _is_count(target) else "B"
        numbers[prefix] += 1
        name = f"{prefix}{numbers[prefix]}"
        definitions = [ast.Definition(name, target)] + [
            ast.Definition(d.name, _replace(d.expr, target, name)) for d in definitions]
        outputs = [(t, _replace(e, target, name)) for t, e in outputs]


def _assemble(task, outputs: list[_Output], nodes: list[tuple], alphabet: Sequence[str]) -> ast.Program:
    build = _Builder(nodes)
    found = [(o.name, build(o.solution)) for o in outputs]
    definitions, found = _share(found)
    statements: list[ast.Statement] = []
    mentioned = {n.token for _, e in found for n in ast.walk(e) if isinstance(n, ast.TokenIs)}
    mentioned |= {n.token for d in definitions for n in ast.walk(d.expr) if isinstance(n, ast.TokenIs)}
    is_accept = len(outputs) == 1 and outputs[0].name == "accept" and task.format.value == "accept"
    if not is_accept:
        mentioned |= {name for name, _ in found}
    extra = [t for t in alphabet if t not in mentioned]
    if extra:
        statements.append(ast.Alphabet(frozenset(extra)))
    statements.extend(definitions)
    if is_accept:
        statements.append(ast.Accept(found[0][1]))
    else:
        statements.extend(ast.NextToken(name, expr) for name, expr in found)
    return ast.Program(tuple(statements), source=f"<synthesized for {task.name}>")


def _canonical(program: ast.Program) -> tuple[ast.Program, str]:
    """The program as ``crasp fmt`` prints it, parsed back (so that it carries its text)."""
    from .parser import parse

    text = format_program(program)
    parsed = parse(text, source=program.source)
    return (parsed if parsed == program else program), text


# ---------------------------------------------------------------- the loop


def synthesize(task, config: SynthesisConfig = SynthesisConfig(),
               progress: Callable[[str], None] | None = None) -> SynthesisResult:
    """Search for a C-RASP program of ``task`` (a :class:`tasks.registry.Task`) within ``config``.

    Returns a :class:`SynthesisResult`; its ``program`` passed :func:`crasp.checker.check` and
    :func:`tasks.verify.verify` (None when nothing was found within the budget: ``searched`` says
    what was tried). ``progress`` receives a line at least every ``config.progress_every`` seconds.
    """
    verify, _ = _task_checks()
    started = time.perf_counter()
    stats = _Stats(started=started, last_report=started)
    rng = np.random.default_rng(config.seed)
    examples = _initial_examples(task, config, rng, started + INITIAL_SHARE * config.time_limit)
    schedule = _schedule(config)
    plain = config.plain
    log: list[str] = []
    counterexamples = 0
    reached = 0
    say = progress or (lambda line: None)

    def searched(outcome: str) -> str:
        batch = f"{len(examples)} inputs, {sum(len(e.tokens) for e, _ in examples)} positions"
        return (f"expressions up to size {config.max_size} ({config.positions.upper()}); "
                + "; ".join(log) + f"; batch {batch} ({counterexamples} counterexamples); "
                f"{stats.candidates:,} candidates, {stats.classes:,} classes in "
                f"{time.perf_counter() - started:.1f} s of {config.time_limit:g} s; {outcome}")

    round_ = 0
    while round_ < len(schedule):
        ranges, share = schedule[round_]
        deadline = started + config.time_limit * share
        alphabet = _alphabet(task, examples)
        batch = _Batch(examples, alphabet, config.seed + counterexamples)
        outputs = _targets(task, batch, _output_names(task, examples))
        label = f"round {round_ + 1}/{len(schedule)}"
        say(f"{label}: {ranges.describe(plain)}; batch of {len(examples)} inputs ({batch.width} positions), "
            f"{len(outputs)} output{'s' if len(outputs) > 1 else ''}")
        search = _Search(batch, outputs, ranges, config, stats, deadline, progress, label)
        enumeration_started = time.perf_counter()
        solved = search.run()
        stats.enumerating += time.perf_counter() - enumeration_started
        reached = max(reached, search.size)
        done = f"complete to size {search.complete}" if search.complete else "no size complete"
        if not solved and search.size > search.complete:
            done += f", size {search.size} in part"
        if search.full:
            done += " (class store full: larger sizes partial)"
        entry = f"round {round_ + 1} [{ranges.describe(plain)}]: {done}"
        if not solved:
            log.append(entry)
            if search.timed_out and round_ == len(schedule) - 1:
                break
            round_ += 1
            continue
        program = _assemble(task, outputs, search.nodes, alphabet)
        checked = check(program)
        if plain and not checked.info.plain:  # pragma: no cover - NoPE rounds have no positional leaves
            raise AssertionError("a NoPE search produced a positional program")
        report = verify(task, checked, exhaustive_budget=2000, samples=30, max_length=60,
                        random_offsets=1, seed=config.seed + counterexamples)
        if report.ok:
            report = verify(task, checked, samples=config.verify_samples, max_length=config.verify_max_length,
                            exhaustive_budget=config.verify_exhaustive, seed=config.seed)
        if report.ok:
            log.append(entry.replace(done, f"found at size {max(o.size for o in outputs)}"))
            final, text = _canonical(program)
            say(f"{label}: found a program of size {program_size(final)}; verified")
            return SynthesisResult(
                program=final, size=program_size(final), candidates=stats.candidates, classes=stats.classes,
                seconds=time.perf_counter() - started, max_size_reached=reached, checks=report.summary(),
                searched=searched("found"), text=text, counterexamples=counterexamples,
                enumeration_seconds=stats.enumerating,
            )
        bad = report.counterexample
        key = (bad.example.tokens, bad.offset)
        if any((e.tokens, o) == key for e, o in examples):  # pragma: no cover - the batch already agreed
            raise AssertionError(f"the verifier's counterexample is already in the batch: {bad.describe()}")
        examples.append((bad.example, bad.offset))
        counterexamples += 1
        say(f"{label}: counterexample {counterexamples} (length {len(bad.example.tokens)}, offset {bad.offset}); "
            "restarting with it in the batch")
        if time.perf_counter() > deadline:
            log.append(entry)
            round_ += 1
    return SynthesisResult(
        program=None, size=None, candidates=stats.candidates, classes=stats.classes,
        seconds=time.perf_counter() - started, max_size_reached=reached,
        checks="no program found, nothing verified", searched=searched("nothing found"),
        counterexamples=counterexamples, enumeration_seconds=stats.enumerating,
    )


__all__ = ["SynthesisConfig", "SynthesisResult", "SynthesisError", "synthesize", "program_size", "expr_size"]
