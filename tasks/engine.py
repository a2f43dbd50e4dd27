"""The anytime engine: which sources run, in which order, and when gathering stops.

Sources (:data:`tasks.evidence.SOURCES`) run by cost: the cheap ones (given and library programs,
the regular-language decision on the task's own automaton, modular counting, the truncation and
alignment tests) for every scheme asked, so that two of them that disagree are seen; then, for
each scheme still *open*, the costlier ones one by one: learning the task's automaton, then the
searches, which share one time budget (``budget.seconds``): the communication matrix and
synthesis. A scheme is *settled* as soon as it holds a finding of strength ``verified`` or
``proof`` (its own, or one carried over from the other scheme, below); no costlier source runs for
it after that, and the prediction lists what it skipped. A batch's first pass (the verdicts alone,
``Evidence.build_programs`` False) skips the cheap ones too once a scheme is settled.

Containment, applied after every finding: a NoPE transformer is an APE transformer whose
positional table is zero, and plain C-RASP is contained in C-RASP[periodic, local], so every APE
"does not generalize" is also a NoPE finding and every NoPE "generalizes" an APE finding (marked
``carried_from``). A carried finding is left out only where the scheme holds one of the same
source and claim at least as strong (:func:`carried`), so a scheme whose own finding is weaker
takes the stronger one, is settled by it, and the combiner decides on the strongest. APE and NoPE
are gathered together whenever either is asked for.

Nothing here catches an exception: a source that raises is a bug, reported as one.

>>> import tasks
>>> from tasks.evidence import Evidence
>>> from tasks.findings import QUICK
>>> gathered = gather(Evidence(tasks.get("bin_majority"), QUICK), ["ape", "nope"])
>>> [f.source for f in gathered.findings["nope"]], gathered.skipped["nope"]
(['modular counting', 'program', 'bounded window', 'truncation'], ('regular language', 'communication', 'synthesis'))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

from .evidence import SOURCES, Cost, Evidence
from .findings import Finding, Verdict

CARRIED = {("ape", Verdict.FAILS): "nope", ("nope", Verdict.GENERALIZES): "ape"}
"""Containment: a claim of one scheme that holds for the other (see the module docstring)."""


@dataclass(frozen=True)
class Gathered:
    """Per scheme the findings (its own, then those carried over) and the sources that did not run
    because the scheme was settled before their turn."""

    findings: dict[str, tuple[Finding, ...]]
    skipped: dict[str, tuple[str, ...]]


def carried(own: Mapping[str, Sequence[Finding]], scheme: str) -> list[Finding]:
    """The findings of the other scheme that hold for ``scheme`` by containment (:data:`CARRIED`),
    marked ``carried_from``. One is left out only where ``scheme`` already holds a finding of the
    same source and claim at least as strong: a stronger one is always carried, so the combiner
    sees the strongest finding of each direction, whatever the scheme found itself.

    >>> from tasks.findings import Reason, Strength
    >>> def program(strength):
    ...     return Finding("program", Verdict.GENERALIZES, strength, "checked", Reason.PROGRAM_VERIFIED)
    >>> own = {"ape": [program(Strength.EXTRAPOLATED)], "nope": [program(Strength.VERIFIED)]}
    >>> [(f.strength.value, f.carried_from) for f in carried(own, "ape")]
    [('verified', 'nope')]
    >>> carried({"ape": [program(Strength.VERIFIED)], "nope": [program(Strength.VERIFIED)]}, "ape")
    []
    """
    out = []
    for (origin, claim), target in CARRIED.items():
        if target != scheme or origin not in own:
            continue
        held = [f for f in own.get(scheme, ()) if f.decisive and f.claim is claim]
        out += [dataclasses.replace(f, carried_from=origin) for f in own[origin]
                if f.decisive and f.claim is claim
                and not any(g.source == f.source and g.claimed_strength.rank >= f.claimed_strength.rank
                            for g in held)]
    return out


def contained(own: Mapping[str, Sequence[Finding]]) -> dict[str, tuple[Finding, ...]]:
    """Per scheme its own findings, then those carried over (:func:`carried`): what
    :func:`tasks.predict.combine` reads."""
    return {scheme: (*findings, *carried(own, scheme)) for scheme, findings in own.items()}


def gather(evidence: Evidence, schemes) -> Gathered:
    """Run the sources for ``schemes`` (with APE and NoPE together) in order of cost, stopping for
    each scheme once it is settled."""
    wanted = list(dict.fromkeys(schemes))
    if {"ape", "nope"} & set(wanted):
        wanted += [s for s in ("ape", "nope") if s not in wanted]
    own: dict[str, list[Finding]] = {scheme: [] for scheme in wanted}
    skipped: dict[str, list[str]] = {scheme: [] for scheme in wanted}

    def settled(scheme: str) -> bool:
        return any(f.settles for f in (*own[scheme], *carried(own, scheme)))

    task = evidence.task
    order = sorted(SOURCES, key=lambda source: source.cost(task))  # stable: the listed order within a cost
    for source in order:
        cheap = source.cost(task) is Cost.CHEAP
        for scheme in wanted:
            if scheme not in source.schemes:
                continue
            if (not cheap or not evidence.build_programs) and settled(scheme):
                skipped[scheme].append(source.name)
                continue
            evidence.open = {s for s in wanted if not settled(s)}
            own[scheme].append(source.assess(evidence, scheme))
    return Gathered(contained(own), {scheme: tuple(names) for scheme, names in skipped.items()})


__all__ = ["gather", "Gathered", "CARRIED", "carried", "contained"]
