"""How deep a compiled program is, without compiling it: the passes that place its operations into
layers, run without emitting weights (and without importing torch).

>>> from crasp import parse
>>> model_depth(parse('S = #"a" > 0\\nA = #(S && "b") > 1'))
Depth(layers=2, attention_layers=2)
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import ast
from crasp.checker import CheckedProgram, check

from .config import CompileConfig
from .passes.dead_slots import eliminate_dead_slots
from .passes.lowered import Read
from .passes.lowering import lower
from .passes.schedule import allocate_layers, dependency_graph
from .passes.size import check_size


@dataclass(frozen=True)
class Depth:
    """The layers of a compiled model: every layer has an MLP sublayer; ``attention_layers`` of them
    have heads (the others only chain MLPs, e.g. a conjunction of comparisons computed one layer
    after the comparisons)."""

    layers: int
    attention_layers: int


def model_depth(program: ast.Program | CheckedProgram, config: CompileConfig | None = None) -> Depth:
    """The depth :func:`compile_program` gives ``program``, found by the passes that place the
    operations into layers, without emitting weights (same refusals as the compiler)."""
    config = config or CompileConfig()
    checked = program if isinstance(program, CheckedProgram) else check(program)
    check_size(checked, config)
    lowered = eliminate_dead_slots(lower(checked, config))
    schedule = allocate_layers(lowered, dependency_graph(lowered))
    attention = {schedule.layer[k] for k, op in enumerate(lowered.operations) if isinstance(op, Read)}
    return Depth(schedule.n_layers, len(attention))


__all__ = ["Depth", "model_depth"]
