"""What the sources of one prediction share: one object per task, built once and handed to every
source, to the layer bounds and to the training length.

Each piece of shared evidence is a function of this object, computed the first time someone asks
for it (:meth:`Evidence.get`) and kept, keyed by the function itself: the user's and the
library's programs verified (:func:`tasks.evidence.programs.candidates`), the task's automaton
(:func:`tasks.evidence.regular.automata`) and the program built from it
(:func:`tasks.evidence.regular.construct`), the modular-counting family, the truncation test, the
communication matrix (:func:`tasks.evidence.communication.analysis`). Nothing is computed twice,
nothing is looked up by a string, and this module imports none of the sources.

The searches (the communication matrix and synthesis) draw on one time budget,
``budget.seconds``, kept by :class:`Clock`; the prediction states what they used.

>>> import tasks
>>> from tasks.findings import QUICK
>>> evidence = Evidence(tasks.get("parity"), QUICK)
>>> calls = []
>>> def size(e):
...     calls.append(1)
...     return len(e.task.symbols)
>>> evidence.get(size), evidence.get(size), len(calls), evidence.has(size)
(2, 2, 1, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from crasp.ast import Program

from ..findings import Budget
from ..types import Task

T = TypeVar("T")


@dataclass
class Clock:
    """The searches' time budget: ``seconds`` in all, ``spent`` so far (measured per search)."""

    seconds: float
    spent: float = 0.0

    @property
    def left(self) -> float:
        return max(0.0, self.seconds - self.spent)

    def charge(self, started: float) -> None:
        """Add the time since ``started`` (a ``time.perf_counter()`` reading) to what was spent."""
        self.spent += time.perf_counter() - started


@dataclass(eq=False)
class Evidence:
    """The evidence about one task under one budget (see the module docstring). ``given``: the
    user's candidate programs; ``synthesis``: whether a program may be searched for; ``progress``:
    called with a line on long work; ``build_programs``: whether a program is built from the
    task's own automaton (a batch of regular languages decides first and leaves it out)."""

    task: Task
    budget: Budget
    given: tuple[Program, ...] = ()
    seed: int = 0
    progress: Callable[[str], None] | None = None
    synthesis: bool = True
    build_programs: bool = True
    clock: Clock = field(init=False)
    found: list = field(default_factory=list, init=False)
    """The verified programs sources built or found (from an automaton, by synthesis), beside the
    user's and the library's."""
    synthesized: dict[str, Any] = field(default_factory=dict, init=False)
    """Per scheme the program synthesis found (verified), or why it found none."""
    open: set[str] = field(default_factory=set, init=False)
    """The schemes the engine still gathers evidence for (set by :mod:`tasks.engine`)."""
    _kept: dict[Callable, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.clock = Clock(self.budget.seconds)

    def get(self, compute: Callable[["Evidence"], T]) -> T:
        """``compute(self)`` the first time it is asked for, the kept value after."""
        if compute not in self._kept:
            self._kept[compute] = compute(self)
        return self._kept[compute]

    def keep(self, compute: Callable[["Evidence"], Any], value: Any) -> None:
        """Keep ``value`` as what ``compute`` gives from now on (a value found wrong, corrected)."""
        self._kept[compute] = value

    def has(self, compute: Callable[["Evidence"], Any]) -> bool:
        """Whether ``compute`` has been computed for this evidence."""
        return compute in self._kept

    def peek(self, compute: Callable[["Evidence"], T]) -> T | None:
        """The kept value of ``compute``, or None where nobody asked for it."""
        return self._kept.get(compute)

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)


__all__ = ["Evidence", "Clock"]
