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
    moduli = ", ".join(map(str, sorted(checked.info.periods)))
    limits = (
        (size.period, "max_period", f"a positional table of {size.period} rows (the least common multiple "
                                    f"of the moduli {moduli})"),
        (size.local_offsets, "max_local_offsets", f"{size.local_offsets} local heads (one per offset of its guards)"),
        (size.window, "max_window", f"a bias table {size.window} positions wide for its local heads (the "
                                    f"farthest guard offset, {size.window - 1})"),
    )
    for needed, name, what in limits:
        limit = getattr(config, name)
        if needed > limit:
            flag = "--" + name.replace("_", "-")
            raise CompileError(
                f"the model needs {what}, more than {name}={limit}; raise it with {flag} "
                f"(CompileConfig({name}=...)) if the memory is there",
                None, source=checked.program.source, text=checked.program.text,
            )
