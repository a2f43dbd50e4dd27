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
``carried_from``). APE and NoPE are gathered together whenever either is asked for.

Nothing here catches an exception: a source that raises is a bug, reported as one.

>>> import tasks
>>> from tasks.evidence import Evidence
>>> from tasks.findings import QUICK
>>> gathered = gather(Evidence(tasks.get("bin_majority"), QUICK), ["ape", "nope"])
>>> [f.source for f in gathered.findings["nope"]], gathered.skipped["nope"]
(['modular counting', 'program', 'truncation'], ('regular language', 'communication', 'synthesis'))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

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


def _carried(own: dict[str, list[Finding]], scheme: str) -> list[Finding]:
    """The findings of the other scheme that hold for ``scheme`` by containment, except a claim
    the scheme already has from the same source."""
    out = []
    for (origin, claim), target in CARRIED.items():
        if target != scheme or origin not in own:
            continue
        mine = {(f.source, f.claim) for f in own[scheme] if f.decisive}
        out += [dataclasses.replace(f, carried_from=origin) for f in own[origin]
                if f.decisive and f.claim is claim and (f.source, claim) not in mine]
    return out


def gather(evidence: Evidence, schemes) -> Gathered:
    """Run the sources for ``schemes`` (with APE and NoPE together) in order of cost, stopping for
    each scheme once it is settled."""
    wanted = list(dict.fromkeys(schemes))
    if {"ape", "nope"} & set(wanted):
        wanted += [s for s in ("ape", "nope") if s not in wanted]
    own: dict[str, list[Finding]] = {scheme: [] for scheme in wanted}
    skipped: dict[str, list[str]] = {scheme: [] for scheme in wanted}

    def settled(scheme: str) -> bool:
        return any(f.settles for f in (*own[scheme], *_carried(own, scheme)))

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
    findings = {scheme: (*own[scheme], *_carried(own, scheme)) for scheme in wanted}
    return Gathered(findings, {scheme: tuple(names) for scheme, names in skipped.items()})


__all__ = ["gather", "Gathered", "CARRIED"]
