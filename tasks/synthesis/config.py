"""What a synthesis searches and what it returns: :class:`SynthesisConfig`, the rounds' ranges,
:class:`SynthesisResult`."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Sequence

from crasp import ast
from crasp.checker import CheckedProgram
from crasp.errors import CraspError

from ..verify import Report


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
    ``format_atoms`` starts the enumeration from the atoms of the task's format
    (:mod:`tasks.synthesis.atoms`) as single leaves; ``output_by_output`` stops a search at the
    first output it finds and searches the others with it among the atoms (the last output of a
    seq2seq task then being "none of the others"); ``relation_atoms`` adds the comparisons of the
    input's symbol counts and its block orders that bear on an output still open (a decision list
    of count comparisons, a counter language: :func:`tasks.synthesis.atoms.relation_atoms`).
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
    format_atoms: bool = True
    output_by_output: bool = True
    relation_atoms: bool = True

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
    report: Report | None = field(default=None, compare=False, repr=False)
    """The final verification's :class:`tasks.verify.Report` (None when nothing was found)."""
    checked: CheckedProgram | None = field(default=None, compare=False, repr=False)
    """The checked program that verification ran on (None when nothing was found)."""

    @property
    def found(self) -> bool:
        return self.program is not None

    def to_json(self) -> dict:
        return {"program": self.text, "size": self.size, "checks": self.checks,
                "candidates": self.candidates, "classes": self.classes, "seconds": round(self.seconds, 3),
                "enumeration_seconds": round(self.enumeration_seconds, 3),
                "max_size_reached": self.max_size_reached, "counterexamples": self.counterexamples,
                "searched": self.searched}



# ---------------------------------------------------------------- ranges and rounds


@dataclass(frozen=True)
class Ranges:
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


def round_ranges(config: SynthesisConfig, round_: int) -> Ranges:
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
    return Ranges(tuple(sorted(constants)), tuple(sorted(factors)), tuple(sorted(periods)), tuple(guards))


def schedule(config: SynthesisConfig) -> list[tuple[Ranges, float]]:
    """The rounds' ranges and the fraction of the time by which each must end."""
    plain = config.plain
    rounds: list[Ranges] = []
    for r in range(config.rounds):
        ranges = round_ranges(config, r)
        if plain:
            ranges = dataclasses.replace(ranges, periods=(), guards=())
        if not rounds or ranges != rounds[-1]:
            rounds.append(ranges)
    weights = [0.55 ** r for r in range(len(rounds))]
    ends = list(itertools.accumulate(weights))
    return [(ranges, end / ends[-1]) for ranges, end in zip(rounds, ends)]

