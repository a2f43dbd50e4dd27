"""Findings: what one source of evidence says about one positional scheme, and how strongly.

Every source of evidence (a verified program, communication complexity, a non-expressibility
argument, a published result, ...) is a module of :mod:`tasks.evidence` with one function,
``assess(task, scheme, budget) -> Finding``. A finding claims "generalizes" or "does not
generalize" (or nothing, saying what it looked at), with a *strength*:

* ``proof``: a theorem whose hypotheses were checked exactly, or a published proof, cited;
* ``verified``: tested, with the bounds it was tested to;
* ``extrapolated``: a trend or a fit, true on what was checked and assumed beyond.

:func:`tasks.predict.combine` turns the findings for a scheme into its verdict (docs/predict.md).

>>> finding = Finding("program", Verdict.GENERALIZES, Strength.VERIFIED, "program checked on all inputs to length 8")
>>> finding.headline()
'GENERALIZES (verified: program checked on all inputs to length 8)'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace

from crasp.errors import CraspError


class TaskError(CraspError):
    """An unknown task, a bad registration, a length the task cannot produce, a bad budget."""


class Verdict(enum.Enum):
    GENERALIZES = "generalizes"
    FAILS = "does not generalize"
    UNDETERMINED = "undetermined"


class Strength(enum.Enum):
    PROOF = "proof"
    VERIFIED = "verified"
    EXTRAPOLATED = "extrapolated"

    @property
    def rank(self) -> int:
        return {"proof": 3, "verified": 2, "extrapolated": 1}[self.value]


@dataclass(frozen=True)
class Scheme:
    """A positional scheme as the theory sees it: which programs, if any, decide what it learns.

    >>> scheme_named("nope").program_kind
    'plain C-RASP'
    """

    name: str
    title: str
    has_programs: bool
    """Theorems 7 and 9: a verified program decides (APE and NoPE); relative schemes are decided otherwise."""
    plain_only: bool = False
    """Only plain C-RASP programs count (no positional predicates): NoPE."""
    uniform: bool = False
    """The leading operand sits at uniform positions (Sabbaghi et al.'s UPE)."""

    @property
    def program_kind(self) -> str:
        return "plain C-RASP" if self.plain_only else "C-RASP[periodic, local]"


_SCHEMES = (
    Scheme("ape", "APE (learned absolute positions)", has_programs=True),
    Scheme("nope", "NoPE (no positions)", has_programs=True, plain_only=True),
    Scheme("relative", "relative positions", has_programs=False),
    Scheme("uniform", "uniform positions for the leading operand", has_programs=False, uniform=True),
)

SCHEMES = tuple(scheme.name for scheme in _SCHEMES)
"""The positional schemes the project trains and predicts for: learned absolute positions (APE),
no positions (NoPE), relative positions (Shaw et al.), and relative positions with the leading
operand at uniform positions (Sabbaghi et al.'s UPE)."""

SCHEME_TITLES = {scheme.name: scheme.title for scheme in _SCHEMES}


def scheme_named(name: str) -> Scheme:
    """The :class:`Scheme` called ``name`` (one of :data:`SCHEMES`)."""
    for scheme in _SCHEMES:
        if scheme.name == name:
            return scheme
    raise TaskError(f"unknown positional scheme {name!r} (known: {', '.join(SCHEMES)})")


@dataclass(frozen=True)
class Finding:
    """One source's claim about one scheme.

    ``summary`` is the short form the headline shows (with the bounds), ``details`` the rest of
    the evidence, ``applies`` False when the source has nothing to say about this task and scheme
    (``summary`` says why)."""

    source: str
    claim: Verdict
    strength: Strength | None
    summary: str
    details: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    applies: bool = True
    program: object | None = field(default=None, compare=False, repr=False)
    """The verified program a "generalizes" finding rests on, where it rests on one."""

    @property
    def decisive(self) -> bool:
        return self.applies and self.claim is not Verdict.UNDETERMINED and self.strength is not None

    def headline(self) -> str:
        if not self.decisive:
            return f"{Verdict.UNDETERMINED.value.upper()} ({self.summary})"
        return f"{self.claim.value.upper()} ({self.strength.value}: {self.summary})"

    def lines(self) -> tuple[str, ...]:
        """The finding as evidence lines: its summary, then its details."""
        kind = f"{self.claim.value}, {self.strength.value}" if self.decisive else "no claim"
        return (f"[{self.source}: {kind}] {self.summary}", *self.details)

    def to_json(self) -> dict:
        return {"source": self.source, "claim": self.claim.value,
                "strength": self.strength.value if self.strength else None, "summary": self.summary,
                "details": list(self.details), "references": list(self.references), "applies": self.applies}


def silent(source: str, why: str) -> Finding:
    """A source with nothing to say here, and why."""
    return Finding(source, Verdict.UNDETERMINED, None, why, applies=False)


@dataclass(frozen=True)
class Fact:
    """A published result about a task, as a field of the task: for ``scheme``, whether the
    task generalizes (``generalizes``), the statement and its citation. Published proofs are
    ``proof``; a published label resting on experiments alone is ``extrapolated``."""

    scheme: str
    generalizes: bool
    statement: str
    citation: str
    strength: Strength = Strength.PROOF


def published(statements: dict[str, str], schemes, citation: str,
              strength: Strength = Strength.PROOF) -> tuple[Fact, ...]:
    """Negative facts for ``schemes``, each stated by ``statements[scheme]`` (a task's own
    ``no_program`` reasons) and cited to ``citation``.

    >>> published({"ape": "PARITY is outside the class"}, ["ape"], "Huang et al. 2025")[0].generalizes
    False
    """
    return tuple(Fact(scheme, False, statements[scheme], citation, strength) for scheme in schemes)


@dataclass(frozen=True)
class Budget:
    """Every numeric setting of a prediction (one object, settable with ``--budget``).

    ``exhaustive``: inputs enumerated for verification; ``samples``: inputs from the task's own
    distribution, up to ``max_length``; ``derived``: inputs read off a candidate program (symbol
    counts past its largest constant); ``pairs``: the communication matrix's exact enumeration
    (pairs of strings); ``comm_samples``: Alice's sampled strings at larger N; ``family``: the
    longest string of the modular-counting family checked exhaustively and ``family_length`` the
    longest checked by sampling; ``learn_length``: the words up to which a finite automaton is
    fitted to an accept task; ``synthesis_seconds``: the time program synthesis may take (0: off);
    ``truncation_samples``: inputs per bin of Xu et al.'s truncation test."""

    exhaustive: int = 20_000
    samples: int = 400
    max_length: int = 2_000
    derived: int = 400
    pairs: int | None = None
    comm_samples: int = 2048
    family: int = 10
    family_length: int = 200
    learn_length: int = 10
    synthesis_seconds: float = 20.0
    truncation_samples: int = 500

    def describe(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    @classmethod
    def parse(cls, text: str, base: "Budget | None" = None) -> "Budget":
        """A budget from ``quick``, ``default``, ``thorough`` or ``key=value,...`` overrides.

        >>> Budget.parse("quick,samples=50").samples
        50
        """
        budget = base or cls()
        for part in filter(None, (p.strip() for p in text.split(","))):
            if part in PRESETS:
                budget = PRESETS[part]
                continue
            key, sep, value = part.partition("=")
            names = {f.name: f.type for f in fields(cls)}
            if not sep or key not in names:
                raise TaskError(f"budget {part!r}: expected quick, default, thorough or KEY=VALUE with KEY one of "
                                f"{', '.join(names)}")
            try:
                number = float(value) if key == "synthesis_seconds" else int(value)
            except ValueError:
                raise TaskError(f"budget {part!r}: {value!r} is not a number") from None
            if number < 0:
                raise TaskError(f"budget {part!r}: must not be negative")
            budget = replace(budget, **{key: number})
        return budget


QUICK = Budget(exhaustive=600, samples=24, max_length=200, derived=60, pairs=1 << 14, comm_samples=512,
               family=8, family_length=60, learn_length=7, synthesis_seconds=3.0, truncation_samples=150)
DEFAULT = Budget()
THOROUGH = Budget(exhaustive=100_000, samples=2_000, max_length=4_000, derived=2_000, comm_samples=8192,
                  family=12, family_length=400, learn_length=12, synthesis_seconds=120.0, truncation_samples=2_000)
PRESETS = {"quick": QUICK, "default": DEFAULT, "thorough": THOROUGH}


__all__ = ["Verdict", "Strength", "Finding", "Fact", "Budget", "Scheme", "scheme_named", "SCHEMES", "SCHEME_TITLES", "QUICK", "DEFAULT",
           "THOROUGH", "PRESETS", "silent", "published", "TaskError"]
