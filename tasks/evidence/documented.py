"""Evidence from published results: the task's ``facts`` (:class:`tasks.findings.Fact`).

A fact is a field of the task, stated where the task is defined, with its citation; a task of a
user's module gets the same treatment as one of the suite. Its strength is the fact's own:
``proof`` for a published proof, ``extrapolated`` for a published experimental result.
"""

from __future__ import annotations

from ..findings import Budget, Finding, Verdict, silent
from ..types import Task
from .context import Context

SOURCE = "published"


def assess(task: Task, scheme: str, budget: Budget, context: Context | None = None) -> Finding:
    facts = [f for f in task.facts if f.scheme == scheme]
    if not facts:
        return silent(SOURCE, "the task states no published result for this scheme")
    fact = facts[0]
    claim = Verdict.GENERALIZES if fact.generalizes else Verdict.FAILS
    return Finding(SOURCE, claim, fact.strength, f"{fact.citation}: {fact.statement}",
                   tuple(f"also published: {f.citation}: {f.statement}" for f in facts[1:]),
                   tuple(dict.fromkeys(f.citation for f in facts)))


__all__ = ["assess"]
