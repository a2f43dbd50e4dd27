"""Run the catalogue of statements (:mod:`tasks.theory.statements`) under a profile.

* ``quick``: every statement once, with its own number of examples (the whole catalogue in well
  under 90 seconds on one core: what CI and ``pytest --pyargs tasks.theory`` run);
* ``thorough``: larger objects (longer inputs, more definitions, larger k and automata), and runs
  repeated with fresh seeds until a total time budget is spent, shared equally by the statements.

>>> outcomes = run_catalogue("quick", only=["depth-hierarchy-programs"])
>>> [(o.name, o.passed, o.examples) for o in outcomes]
[('depth-hierarchy-programs', True, 30)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from crasp.errors import UsageError

from .statements import CATALOGUE, NAMES, Budget, Outcome, Statement


@dataclass(frozen=True)
class Profile:
    """How the catalogue runs: ``examples`` scales each statement's examples per Hypothesis run,
    ``seconds`` is the default total time budget (None: one run per statement), ``thorough``
    draws larger objects."""

    name: str
    examples: float
    seconds: float | None
    thorough: bool


PROFILES = {
    "quick": Profile("quick", 1.0, None, False),
    "thorough": Profile("thorough", 0.25, 600.0, True),
}
"""The profiles by name. Thorough runs 10 minutes unless told otherwise (``seconds``), in short
Hypothesis runs (a quarter of the quick profile's examples each, fresh seeds) so that it stops
close to its time budget."""


def profile_named(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UsageError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})") from None


def select(only: Iterable[str] | None = None) -> list[Statement]:
    """The statements named in ``only`` (all when None), in the catalogue's order."""
    if only is None:
        return list(CATALOGUE)
    wanted = list(dict.fromkeys(only))
    unknown = [name for name in wanted if name not in NAMES]
    if unknown:
        raise UsageError(f"no statement {', '.join(map(repr, unknown))} in the catalogue (known: {', '.join(NAMES)})")
    return [statement for statement in CATALOGUE if statement.name in wanted]


def budgets(profile: Profile, statements: list[Statement], *, seed: int = 0,
            seconds: float | None = None) -> list[Budget]:
    """Each statement's budget: its examples scaled by the profile, and an equal share of the time
    budget (``seconds``, else the profile's)."""
    total = seconds if seconds is not None else profile.seconds
    if total is not None and total < 0:
        raise UsageError(f"the time budget must be at least 0 seconds, not {total:g}")
    share = None if total is None or not statements else total / len(statements)
    return [Budget(max(1, round(s.examples * profile.examples)), seed, share, profile.thorough) for s in statements]


def run_catalogue(profile: str | Profile = "quick", *, only: Iterable[str] | None = None, seed: int = 0,
                  seconds: float | None = None, progress: Callable[[str], None] | None = None,
                  done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run the statements (``only`` those named) under ``profile``; one :class:`Outcome` each, in
    the catalogue's order. ``seconds``: the total time budget, spread equally over the statements
    (default: the profile's; the quick profile has none and runs each statement once).
    ``progress`` is told which statement starts, ``done`` gets each outcome as it comes."""
    chosen = profile if isinstance(profile, Profile) else profile_named(profile)
    statements = select(only)
    outcomes = []
    for statement, budget in zip(statements, budgets(chosen, statements, seed=seed, seconds=seconds)):
        if progress:
            when = f" for {budget.seconds:.0f} s" if budget.seconds is not None else ""
            progress(f"{statement.name}: {budget.examples} examples a run{when} ...")
        outcome = statement.run(budget)
        if done:
            done(outcome)
        outcomes.append(outcome)
    return outcomes


__all__ = ["PROFILES", "Profile", "budgets", "profile_named", "run_catalogue", "select"]
