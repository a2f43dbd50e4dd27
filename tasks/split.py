"""How a communication matrix cuts an input between Alice and Bob (a field of a task).

>>> Split(block=3).block
3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Task


@dataclass(frozen=True)
class Split:
    """How Alice's and Bob's strings make an input: ``before + a + middle + b + after``.

    At size N each holds ``block * N`` symbols (``block`` 3 keeps interleaved streams whole).

    Alice and Bob draw their N symbols from ``alphabet`` (default: the task's symbols, or its
    first three when it has more than five). Restricting the alphabet or fixing the template
    only removes rows and columns, so every count is a lower bound for the task's full matrix.
    """

    alphabet: tuple[str, ...] | None = None
    block: int = 1
    before: tuple[str, ...] = ()
    middle: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    description: str = "Alice holds the first N input symbols, Bob the next N"

    def symbols(self, task: Task) -> tuple[str, ...]:
        if self.alphabet is not None:
            return self.alphabet
        return task.symbols if len(task.symbols) <= 5 else task.symbols[:3]
