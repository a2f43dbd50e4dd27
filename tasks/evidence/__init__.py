"""The sources of evidence of a prediction: one module each, one function ``assess(task, scheme,
budget, context) -> Finding`` (:mod:`tasks.findings`).

* :mod:`.programs`: a candidate program (the user's, the library's, or one synthesized) that
  passes a verification exercising its constants: Huang et al.'s Theorems 7 and 9;
* :mod:`.regular`: for an accept task over a small alphabet, the finite automaton the reference
  follows, and the algebraic decision of plain C-RASP (Yang et al. 2026);
* :mod:`.modular`: a family of inputs on which the answer is a symbol count modulo k > 1;
* :mod:`.communication`: the growth of the communication matrix (Theorem 12);
* :mod:`.truncation`: Xu et al.'s fixed-width arithmetic;
* :mod:`.documented`: the task's published facts;
* :mod:`.alignment`: relative and uniform positions on operand formats.

:mod:`.reference` checks the task's reference before any of them trusts it.
"""

from __future__ import annotations

from . import alignment, communication, documented, modular, programs, regular, truncation
from .context import Context

SOURCES = (programs, regular, modular, communication, truncation, documented, alignment)
"""In the order their findings are listed."""

__all__ = ["SOURCES", "Context"]
