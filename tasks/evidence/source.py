"""What a source of evidence declares: its name, the schemes it speaks to, what it can claim and
what it costs (the engine, :mod:`tasks.engine`, runs the cheap ones first)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

from ..findings import Finding, Verdict
from ..types import Task
from .context import Evidence


class Cost(enum.IntEnum):
    """How much a source costs, in the order the engine runs them: reading programs and
    automata the task has (``CHEAP``), learning an automaton from the reference (``LEARNING``),
    and the searches that share the time budget (``SEARCH``)."""

    CHEAP = 0
    LEARNING = 1
    SEARCH = 2


@dataclass(frozen=True)
class Source:
    """A source of evidence: its ``name`` (the ``basis`` of a verdict it decides), the ``schemes``
    it speaks to, the verdicts it ``claims``, its ``cost`` for a task, and ``assess``, which
    returns its finding for one scheme."""

    name: str
    schemes: frozenset[str]
    claims: frozenset[Verdict]
    cost: Callable[[Task], Cost]
    assess: Callable[[Evidence, str], Finding]


def cheap(task: Task) -> Cost:
    return Cost.CHEAP


def search(task: Task) -> Cost:
    return Cost.SEARCH


__all__ = ["Cost", "Source", "cheap", "search"]
