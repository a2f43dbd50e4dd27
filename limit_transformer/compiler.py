"""Compile a C-RASP[periodic, local] program to a Limit Transformer, exact at every length.

The compiler is a thin orchestrator over small passes with typed results, one module each in
``limit_transformer.passes`` (every name is re-exported here)::

    check_size            passes/size.py        CheckedProgram: refuse an oversized model
    lower                 passes/lowering.py    CheckedProgram -> Lowered: slots, reads, units
    eliminate_dead_slots  passes/dead_slots.py  Lowered -> Lowered: only what outputs depend on
    dependency_graph      passes/schedule.py    Lowered -> networkx.DiGraph: who needs whom
    allocate_layers       passes/schedule.py    graph -> Schedule: earliest sublayer for each
    emit_weights          passes/weights.py     Lowered, Schedule -> Weights: numpy arrays
    assemble              passes/assemble.py    Weights -> LimitTransformer: the torch module

The lowered form (``Read``, ``Unit``, ``Mlp``, ``Lowered``) and the reserved tokens are in
``passes/lowered.py``, ``CompileError`` in ``passes/errors.py``.

How each C-RASP operation becomes heads and units, and why the result is exact at every length,
is in ``docs/compiler.md``. In short: every Boolean is two 0/1 residual dimensions (it and its
negation, both 0 at the beginning-of-sequence position); every count C is held as C/(n+1) by a
uniform head; the constant 1 is the average 1/(n+1) of the beginning-of-sequence indicator; a
comparison of counts is a Heaviside unit on values that share the denominator n+1, shifted by
half a unit; a local count reads P(i - d) by comparing a head biased at offset d with the
uniform head.

>>> from crasp import parse
>>> model = compile_program(parse('C = #"a" - #"b"\\nA = C == 0'))
>>> [[head.kind for head in layer] for layer in model.spec.heads]
[['uniform']]
"""

from __future__ import annotations

from crasp import ast
from crasp.checker import CheckedProgram, check

from .config import CompileConfig
from .depth import Depth, model_depth
from .model import LimitTransformer
from .passes.assemble import assemble, to_tensor
from .passes.dead_slots import eliminate_dead_slots
from .passes.errors import CompileError
from .passes.lowered import BOS_TOKEN, OTHER_TOKEN, Lowered, Mlp, Operation, Read, Unit
from .passes.lowering import Rails, lower
from .passes.schedule import EMBEDDING, Schedule, allocate_layers, dependency_graph
from .passes.symbolic import Affine, Atom, Form, Poly
from .passes.size import Size, check_size, model_size
from .passes.weights import DENSE_LIMIT, SparseArray, Weights, emit_weights

__all__ = [
    "BOS_TOKEN", "OTHER_TOKEN", "CompileError", "compile_program",
    "Read", "Unit", "Mlp", "Operation", "Lowered", "Poly", "Atom", "Form", "Affine", "Rails", "lower",
    "eliminate_dead_slots", "EMBEDDING", "dependency_graph", "Schedule", "allocate_layers",
    "DENSE_LIMIT", "SparseArray", "Weights", "emit_weights", "to_tensor", "assemble",
    "Size", "model_size", "check_size", "Depth", "model_depth",
]


def compile_program(program: ast.Program | CheckedProgram,
                    config: CompileConfig | None = None) -> LimitTransformer:
    """Compile a program to a Limit Transformer that is exact on every input up to ``max_length``.

    Raises :class:`CompileError` (naming the definition) for a program it cannot compile exactly
    under ``config``.
    """
    config = config or CompileConfig()
    checked = program if isinstance(program, CheckedProgram) else check(program)
    check_size(checked, config)
    lowered = eliminate_dead_slots(lower(checked, config))
    schedule = allocate_layers(lowered, dependency_graph(lowered))
    return assemble(emit_weights(lowered, schedule, config), config.device)


