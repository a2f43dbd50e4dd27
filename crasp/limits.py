"""The documented limits of the language's implementation, checked before any work is done.

A program nested deeper than :data:`MAX_NESTING`, or with an integer literal beyond
:data:`MAX_LITERAL`, is refused with an error at its line and column; below these limits every
pass (check, format, run, compile) works. Large moduli and windows are not limits: residue sets
and offset sets are intervals (:mod:`crasp.intsets`), so their size costs nothing until a finite
construction (``crasp compile``) needs them, which states its own limits
(:class:`limit_transformer.config.CompileConfig`).

>>> MAX_NESTING, MAX_LITERAL
(500, 1000000000000000000)
"""

from __future__ import annotations

import sys

MAX_NESTING = 500
"""Deepest expression nesting accepted (each operator, count or parenthesised group is a level)."""

TOO_DEEP = (f"expression nested deeper than {MAX_NESTING} levels (each operator or count is a level); "
            "split it into named definitions")
"""The error for a program beyond :data:`MAX_NESTING`, from the parser and from the checker alike."""

MAX_LITERAL = 10**18
"""Largest integer literal (counts, constants, moduli and offsets are exact int64 values)."""

_FRAMES_PER_LEVEL = 12
"""Python frames a recursive pass may use per nesting level (measured: at most 8, in formatting)."""


def ensure_stack() -> None:
    """Let the recursive passes reach :data:`MAX_NESTING` (raises Python's limit if it is lower)."""
    needed = _FRAMES_PER_LEVEL * MAX_NESTING + 1000
    if sys.getrecursionlimit() < needed:
        sys.setrecursionlimit(needed)
