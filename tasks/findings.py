"""Findings: what one source of evidence says about one positional scheme, and how strongly.

Every source of evidence (a verified program, the regular-language decision, modular counting,
communication complexity, ...) is a :class:`tasks.evidence.Source` whose ``assess`` returns a
finding per scheme. A finding claims "generalizes" or "does not generalize" (or nothing, saying
what it looked at), with a *strength*:

* ``proof``: a theorem whose hypotheses were checked exactly;
* ``verified``: tested, with the bounds it was tested to;
* ``extrapolated``: a trend or a fit, true on what was checked and assumed beyond;

and a typed :class:`Reason`, the code the combiner (:func:`tasks.predict.combine`) reads; the
text is for people only.

>>> finding = Finding("program", Verdict.GENERALIZES, Strength.VERIFIED, "program checked on all inputs to length 8",
...                   Reason.PROGRAM_VERIFIED)
>>> finding.headline()
'GENERALIZES (verified: program checked on all inputs to length 8)'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace
from typing import Any

from crasp.ast import Program
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
    short: str
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
    Scheme("ape", "APE (learned absolute positions)", "APE", has_programs=True),
    Scheme("nope", "NoPE (no positions)", "NoPE", has_programs=True, plain_only=True),
    Scheme("relative", "relative positions", "relative", has_programs=False),
    Scheme("uniform", "uniform positions for the leading operand", "uniform", has_programs=False, uniform=True),
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


class Kind(enum.Enum):
    """What a finding amounts to: a claim, an open question, a missing piece of evidence, or a
    source that does not speak to this task (or to anything the theory covers)."""

    CLAIM = "claim"
    OPEN = "open"
    MISSING = "missing"
    OUT_OF_SCOPE = "out of scope"
    OUTSIDE_THEORY = "outside the theory"


class Reason(enum.Enum):
    """Why a finding says what it says: the code the combiner and the output read.

    >>> Reason.NO_PROGRAM.kind, Reason.MODULAR_COUNTING.kind
    (<Kind.MISSING: 'missing'>, <Kind.CLAIM: 'claim'>)
    """

    PROGRAM_VERIFIED = "a verified program"
    LANGUAGE_OUTSIDE = "the language is outside C-RASP"
    LANGUAGE_INSIDE = "the language is in C-RASP"
    MODULAR_COUNTING = "the answer counts modulo k"
    EXPONENTIAL_COMMUNICATION = "the communication matrix grows exponentially"
    TRUNCATED_OPERANDS = "answers depend on digits training never varies"
    TRUNCATION_AGREES = "answers ignore the digits training never varies"
    RELATIVE_ALIGNMENT = "the format is translation-symmetric"
    NO_PROGRAM = "no verified program"
    NO_ARGUMENT = "no argument for the inputs outside training"
    INCONCLUSIVE = "inconclusive"
    NOT_SEARCHED = "not searched: no time left"
    OUT_OF_SCOPE = "the source does not apply"
    OUTSIDE_THEORY = "no theory covers this scheme and format"

    @property
    def kind(self) -> Kind:
        return _KINDS.get(self, Kind.CLAIM)


_KINDS = {Reason.NO_PROGRAM: Kind.MISSING, Reason.NO_ARGUMENT: Kind.MISSING, Reason.INCONCLUSIVE: Kind.OPEN,
          Reason.NOT_SEARCHED: Kind.OPEN, Reason.OUT_OF_SCOPE: Kind.OUT_OF_SCOPE,
          Reason.OUTSIDE_THEORY: Kind.OUTSIDE_THEORY}


@dataclass(frozen=True)
class Finding:
    """One source's claim about one scheme.

    ``summary`` is the short form the headline shows (with the bounds), ``reason`` its code,
    ``details`` the rest of the evidence. ``carried_from`` names the scheme a finding was carried
    over from by containment (NoPE transformers are APE transformers without positions)."""

    source: str
    claim: Verdict
    strength: Strength | None
    summary: str
    reason: Reason
    details: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    program: Program | None = field(default=None, compare=False, repr=False)
    """The verified program a "generalizes" finding rests on, where it rests on one."""
    carried_from: str | None = None
    short: str = ""
    """The reason in a few words, for the one-line output (default: the summary)."""

    @property
    def brief(self) -> str:
        return self.short or self.summary

    def __post_init__(self) -> None:
        claims = self.claim is not Verdict.UNDETERMINED and self.strength is not None
        if claims != (self.reason.kind is Kind.CLAIM):
            raise ValueError(f"a finding of {self.source} with reason {self.reason.name} must "
                             f"{'' if self.reason.kind is Kind.CLAIM else 'not '}claim a verdict with a strength")

    @property
    def applies(self) -> bool:
        """Whether the source speaks to this task and scheme at all."""
        return self.reason.kind not in (Kind.OUT_OF_SCOPE, Kind.OUTSIDE_THEORY)

    @property
    def decisive(self) -> bool:
        return self.reason.kind is Kind.CLAIM

    @property
    def claimed_strength(self) -> Strength:
        """The strength of a decisive finding (``__post_init__`` makes every claim carry one)."""
        if self.strength is None:
            raise ValueError(f"the finding of {self.source} claims nothing")
        return self.strength

    @property
    def settles(self) -> bool:
        """A claim of strength verified or proof: what ends the search for a scheme."""
        return self.decisive and self.claimed_strength.rank >= Strength.VERIFIED.rank

    def headline(self) -> str:
        if not self.decisive:
            return f"{Verdict.UNDETERMINED.value.upper()} ({self.summary})"
        return f"{self.claim.value.upper()} ({self.claimed_strength.value}: {self.summary})"

    def lines(self) -> tuple[str, ...]:
        """The finding as evidence lines: its summary, then its details."""
        kind = f"{self.claim.value}, {self.claimed_strength.value}" if self.decisive else "no claim"
        carried = f", carried over from {scheme_named(self.carried_from).short}" if self.carried_from else ""
        return (f"[{self.source}{carried}: {kind}] {self.summary}", *self.details)

    def to_json(self) -> dict:
        return {"source": self.source, "claim": self.claim.value,
                "strength": self.strength.value if self.strength else None, "summary": self.summary,
                "reason": self.reason.name.lower(), "brief": self.brief, "details": list(self.details),
                "references": list(self.references), "applies": self.applies, "carried_from": self.carried_from}


def silent(source: str, why: str, reason: Reason = Reason.OUT_OF_SCOPE) -> Finding:
    """A source with nothing to say here, and why."""
    return Finding(source, Verdict.UNDETERMINED, None, why, reason)


def open_question(source: str, why: str, reason: Reason = Reason.INCONCLUSIVE, details: tuple[str, ...] = (),
                  references: tuple[str, ...] = ()) -> Finding:
    """A source that looked and found nothing conclusive (``reason``: what is missing or open)."""
    return Finding(source, Verdict.UNDETERMINED, None, why, reason, details, references)


@dataclass(frozen=True)
class Budget:
    """Every numeric setting of a prediction (one object, settable with ``--budget``).

    ``exhaustive``: inputs enumerated for verification; ``samples``: inputs from the task's own
    distribution, up to ``max_length``; ``derived``: inputs read off a candidate program (symbol
    counts past its largest constant); ``pairs``: the communication matrix's exact enumeration
    (pairs of strings); ``comm_samples``: Alice's sampled strings at larger N; ``family``: the
    longest string of the modular-counting family checked exhaustively and ``family_length`` the
    longest checked by sampling; ``learn_length``: the words up to which a finite automaton is
    fitted to the task; ``seconds``: the time the searches (the communication matrix and program
    synthesis) may take together, after the cheap sources (0: no searches); ``truncation_samples``:
    inputs per bin of Xu et al.'s truncation test; ``reference_seconds``: the longest one call of
    the task's reference may take before the prediction stops with an error naming the input;
    ``work``: the most work one verification may do, counted as a program's definitions times the
    positions it runs on (a large program is checked on fewer inputs, and says so); ``rivals``: the
    most choices the search for the exact training length of an automaton makes
    (:func:`tasks.training_length.idealized_length`)."""

    exhaustive: int = 5_000
    samples: int = 200
    max_length: int = 1_000
    derived: int = 200
    pairs: int | None = None
    comm_samples: int = 2048
    family: int = 10
    family_length: int = 200
    learn_length: int = 10
    seconds: float = 5.0
    truncation_samples: int = 300
    reference_seconds: float = 10.0
    work: int = 40_000_000
    rivals: int = 100_000

    def describe(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    @property
    def name(self) -> str | None:
        """``quick``, ``default`` or ``thorough`` where the budget is one of the presets."""
        return next((name for name, preset in PRESETS.items() if preset == self), None)

    @classmethod
    def parse(cls, text: str, base: "Budget | None" = None) -> "Budget":
        """A budget from ``quick``, ``default``, ``thorough`` or ``key=value,...`` overrides
        (``synthesis_seconds`` is the old name of ``seconds``).

        >>> Budget.parse("quick,samples=50").samples
        50
        """
        budget = base or cls()
        names = {f.name: f.type for f in fields(cls)}
        for part in filter(None, (p.strip() for p in text.split(","))):
            if part in PRESETS:
                budget = PRESETS[part]
                continue
            key, sep, value = part.partition("=")
            key = OLD_NAMES.get(key.strip(), key.strip())
            if not sep or key not in names:
                raise TaskError(f"budget {part!r}: expected quick, default, thorough or KEY=VALUE with KEY one of "
                                f"{', '.join(names)}")
            try:
                number = float(value) if key in SECONDS else int(value)
            except ValueError:
                raise TaskError(f"budget {part!r}: {value!r} is not a number") from None
            positive = key == "reference_seconds"
            if number < 0 or (positive and number == 0):
                raise TaskError(f"budget {part!r}: must be {'positive' if positive else 'at least 0'}")
            override: dict[str, Any] = {key: number}  # an int or a float, as the field is
            budget = replace(budget, **override)
        return budget


OLD_NAMES = {"synthesis_seconds": "seconds"}
SECONDS = ("seconds", "reference_seconds")
QUICK = Budget(exhaustive=600, samples=24, max_length=200, derived=60, pairs=1 << 14, comm_samples=512,
               family=8, family_length=60, learn_length=7, seconds=2.0, truncation_samples=150, work=4_000_000,
               rivals=20_000)
DEFAULT = Budget()
THOROUGH = Budget(exhaustive=100_000, samples=2_000, max_length=4_000, derived=2_000, comm_samples=8192,
                  family=12, family_length=400, learn_length=12, seconds=120.0, truncation_samples=2_000,
                  work=1_000_000_000, rivals=1_000_000)
PRESETS = {"quick": QUICK, "default": DEFAULT, "thorough": THOROUGH}


__all__ = ["Verdict", "Strength", "Kind", "Reason", "Finding", "Budget", "Scheme", "scheme_named", "SCHEMES",
           "SCHEME_TITLES", "QUICK", "DEFAULT", "THOROUGH", "PRESETS", "silent", "open_question", "TaskError"]
