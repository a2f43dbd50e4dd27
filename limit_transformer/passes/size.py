"""Pass 0, size check: what a program's model will need, before anything is built.

Takes a :class:`~crasp.checker.CheckedProgram` (and a config): :func:`model_size` gives its
:class:`Size` (positional table rows, local heads, bias window), and :func:`check_size` raises
``CompileError`` when that exceeds the config's ``max_period``, ``max_local_offsets`` or
``max_window``.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import ast
from crasp.checker import CheckedProgram

from ..config import CompileConfig
from .errors import CompileError


@dataclass(frozen=True)
class Size:
    """What a compiled model's finite parts will need, known before anything is built."""

    period: int
    local_offsets: int
    window: int


def model_size(checked: CheckedProgram) -> Size:
    """The positional table's rows (the period) and the local offsets the model needs.

    >>> from crasp.checker import check
    >>> from crasp.parser import parse
    >>> model_size(check(parse('A = #[i - j < 3] "a" > 0 && i mod 4 == 1 && i mod 6 == 1')))
    Size(period=12, local_offsets=2, window=3)
    """
    local, window = 0, 1
    seen: set = set()
    expressions = [d.expr for d in checked.definitions]
    expressions += [checked.accept] if checked.accept is not None else [e for _, e in checked.next_tokens]
    for expression in expressions:
        for node in ast.walk(expression):
            if isinstance(node, ast.Count) and node.guard is not None and node not in seen:
                seen.add(node)
                offsets = checked.guard_offsets(node.guard)
                local += len(offsets - {0})
                window = max(window, offsets.max() + 1 if offsets else 1)
    return Size(checked.info.period, local, window)


def check_size(checked: CheckedProgram, config: CompileConfig) -> None:
    """Refuse, before building anything, a program whose model exceeds the config's limits."""
    size = model_size(checked)
    program = checked.program
    if size.period > config.max_period:
        moduli = ", ".join(map(str, sorted(checked.info.periods)))
        raise CompileError(
            f"the model needs a positional table of {size.period} rows (the least common multiple of "
            f"the moduli {moduli}), more than max_period={config.max_period}; raise it with "
            "--max-period (CompileConfig(max_period=...)) if the memory is there",
            None, source=program.source, text=program.text,
        )
    if size.local_offsets > config.max_local_offsets:
        raise CompileError(
            f"the model needs {size.local_offsets} local heads (one per offset of its guards), more "
            f"than max_local_offsets={config.max_local_offsets}; raise it with --max-local-offsets "
            "(CompileConfig(max_local_offsets=...)) if the memory is there",
            None, source=program.source, text=program.text,
        )
    if size.window > config.max_window:
        raise CompileError(
            f"the model's local heads need a bias table {size.window} positions wide (the farthest "
            f"guard offset, {size.window - 1}), more than max_window={config.max_window}; raise it with "
            "--max-window (CompileConfig(max_window=...)) if the memory is there",
            None, source=program.source, text=program.text,
        )
