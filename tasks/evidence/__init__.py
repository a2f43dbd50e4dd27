"""The sources of evidence of a prediction, each a :class:`Source` that declares what it costs,
which schemes it speaks to and what it can claim (docs/predict.md):

* :mod:`.regular` (cheap on the task's own automaton, learning otherwise): the algebraic decision
  of plain C-RASP for the task's regular language(s), and the program built from its certificate;
* :mod:`.positional` (as :mod:`.regular`; APE): the program built where the automaton in product
  with a tracker of the last symbols and the position modulo m separates;
* :mod:`.modular` (cheap): a family of inputs on which the answer counts a symbol modulo k > 1;
* :mod:`.programs` (cheap): the user's and the library's programs, verified: Huang et al.'s
  Theorems 7 and 9;
* :mod:`.window` (cheap): the program built where a seq2seq answer copies a bounded window of the
  input (from the start: plain; from the end: local guards);
* :mod:`.truncation` (cheap): Xu et al.'s fixed-width arithmetic;
* :mod:`.alignment` (cheap): relative and uniform positions on operand formats;
* :mod:`.communication` (search): the growth of the communication matrix (Theorem 12);
* :mod:`.synthesis` (search): a program found by synthesis, verified like the others.

:mod:`.reference` checks the task's reference before any of them trusts it, and :mod:`.guard`
calls the task's code under a timeout that names the input.
"""

from __future__ import annotations

from .context import Evidence
from .source import Cost, Source


def _sources() -> tuple[Source, ...]:
    from . import alignment, communication, modular, positional, programs, regular, synthesis, truncation, window

    return tuple(module.SOURCE for module in (regular, positional, modular, programs, window, truncation, alignment,
                                              communication, synthesis))


SOURCES: tuple[Source, ...] = _sources()
"""Every source, in the order their findings are listed (the engine runs them by cost, stably)."""

__all__ = ["SOURCES", "Source", "Cost", "Evidence"]
