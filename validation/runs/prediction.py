"""The prediction a run is compared with, recorded when it trains.

``crasp validate`` asks the prediction engine once per task and variant, as ``crasp predict``
asks it (:func:`tasks.batch.predicted`: the default budget, synthesis, every scheme, and the
user's ``--program`` files), and keeps the verdict of the variant's scheme, its strength, basis
and budget with every run it trains. The report reads that record back, so a report and
``crasp predict`` cannot disagree without the report saying so.

>>> import os, tempfile
>>> os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp()
>>> from tasks import registry
>>> from tasks.findings import QUICK
>>> record = prediction_for(registry.get("parity"), "ape", budget=QUICK)
>>> record.verdict, record.scheme, record.budget
('does not generalize', 'ape', 'quick')
>>> RecordedPrediction.from_json(record.to_json()) == record
True
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

from crasp.ast import Program
from tasks.findings import DEFAULT, Budget
from tasks.types import Task
from validation.config import ValidationError, Variant

OUTSIDE_THEORY = {"rpe": "relative positions", "upe": "uniform positions", "sin": "Duan et al.'s encoder-decoder",
                  "abs": "attention bias scaffolding", "abc": "attention bias calibration"}
"""Positions the theory (a causal decoder with absolute positions or none) does not describe. On
arithmetic tasks relative and uniform positions get the alignment check instead."""


SCHEME_OF = {"ape": "ape", "nope": "nope", "rpe": "relative", "upe": "uniform"}
"""The prediction engine's scheme for each kind of positions the harness trains."""


def scheme_of(variant: str) -> str | None:
    """The positional scheme of ``variant`` that :func:`tasks.predict.predict` speaks to (None for
    Duan et al.'s encoder-decoder variants, which the theory does not describe).

    >>> scheme_of("nope"), scheme_of("sinusoidal")
    ('nope', None)
    """
    return SCHEME_OF.get(Variant.parse(variant).positions)


@dataclass(frozen=True)
class RecordedPrediction:
    """The engine's verdict for one scheme as a run keeps it: the verdict and its strength (None
    for undetermined), the basis and the one-line reason, the scheme (None outside the theory),
    the budget's name (or its settings), and the digests of the user's programs it was given."""

    verdict: str
    strength: str | None
    basis: str
    brief: str
    scheme: str | None
    budget: str
    programs: tuple[str, ...] = ()

    def text(self) -> str:
        """``generalizes (verified)``: the verdict and its strength, as a report's cell."""
        return f"{self.verdict} ({self.strength})" if self.strength else self.verdict

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "strength": self.strength, "basis": self.basis, "brief": self.brief,
                "scheme": self.scheme, "budget": self.budget, "programs": list(self.programs)}

    @classmethod
    def from_json(cls, data: dict) -> RecordedPrediction:
        """The record :meth:`to_json` wrote; a malformed one is a :class:`ValidationError`."""
        try:
            return cls(str(data["verdict"]), None if data["strength"] is None else str(data["strength"]),
                       str(data["basis"]), str(data["brief"]), None if data["scheme"] is None else str(data["scheme"]),
                       str(data["budget"]), tuple(str(p) for p in data.get("programs", ())))
        except (KeyError, TypeError) as error:
            raise ValidationError(f"a recorded prediction cannot be read ({error!r}): {data!r}") from None


def program_digest(program: Program) -> str:
    """A program's identity in a record: the first 16 hex digits of its formatted text's SHA-256."""
    from crasp.printer import format_program

    return hashlib.sha256(format_program(program).encode()).hexdigest()[:16]


def prediction_for(task: Task, variant: str, programs: Sequence[Program] = (), *,
                   budget: Budget = DEFAULT, use_cache: bool = True) -> RecordedPrediction:
    """The verdict ``crasp predict`` gives ``task`` for the scheme of ``variant``, with ``programs``
    as its ``--program`` candidates; a variant the theory does not describe gets an undetermined
    record saying so. A given program that verification rejects is an error (as in ``crasp
    predict``), since a run compared with it would be compared with nothing."""
    from tasks.batch import predicted

    scheme = scheme_of(variant)
    digests = tuple(program_digest(p) for p in programs)
    outside = f"{OUTSIDE_THEORY.get(Variant.parse(variant).positions, variant)}: outside the theory (APE and NoPE)"
    if scheme is None:
        return RecordedPrediction("undetermined", None, outside, outside, None, _budget_name(budget), digests)
    prediction = predicted(task, programs=programs, budget=budget, use_cache=use_cache)
    if prediction.rejected:
        raise ValidationError(f"task {task.name!r}: a given program was rejected:\n" + "\n".join(prediction.rejected))
    if scheme not in prediction.schemes:  # relative or uniform positions on a task the alignment check does not cover
        return RecordedPrediction("undetermined", None, outside, outside, None, _budget_name(budget), digests)
    verdict = prediction.verdict(scheme)
    return RecordedPrediction(verdict.verdict.value, verdict.strength.value if verdict.strength else None,
                              verdict.basis, verdict.brief or verdict.headline, scheme, _budget_name(budget), digests)


def _budget_name(budget: Budget) -> str:
    return budget.name or budget.describe()


__all__ = ["OUTSIDE_THEORY", "SCHEME_OF", "scheme_of", "RecordedPrediction", "program_digest", "prediction_for"]
