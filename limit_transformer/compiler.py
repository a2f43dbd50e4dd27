"""Compile a C-RASP[periodic, local] program to a Limit Transformer, exact at every length.

The compiler is a thin orchestrator over small passes with typed results::

    lower            CheckedProgram -> Lowered     residual slots, attention reads, MLP units
    eliminate_dead_slots  Lowered -> Lowered       only what some output depends on
    dependency_graph Lowered -> networkx.DiGraph   which operation needs which
    allocate_layers  graph -> Schedule             each operation in the earliest sublayer
    emit_weights     Lowered, Schedule -> Weights  numpy arrays, one per parameter
    assemble         Weights -> LimitTransformer   the torch module

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

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import torch

from crasp import ast
from crasp.checker import CheckedProgram, check
from crasp.errors import SourceError
from crasp.printer import format_expr

from .config import CompileConfig
from .model import HEAVISIDE, RELU, HeadInfo, LimitTransformer, ModelSpec, module_name, torch_dtype

BOS_TOKEN = "<|bos|>"
"""The implicit beginning-of-sequence token at position 0 (not part of the program's input)."""
OTHER_TOKEN = "<|other|>"
"""Stands for every token outside the program's alphabet (all Q_a false)."""


class CompileError(SourceError):
    """A program the compiler refuses, located at the definition that cannot be made exact."""


# ---------------------------------------------------------------- lowered form


@dataclass(frozen=True)
class Read:
    """One value an attention head reads: the average of slot ``source`` into slot ``target``.

    ``offset`` None means the uniform head; otherwise the head biased by phi at i - j = offset.
    """

    source: int
    target: int
    offset: int | None = None


@dataclass(frozen=True)
class Unit:
    """One MLP hidden unit: act(sum inputs + bias), added with coefficients to ``outputs``."""

    inputs: tuple[tuple[int, float], ...]
    bias: float
    activation: str
    outputs: tuple[tuple[int, float], ...]
    margin: str = ""


@dataclass(frozen=True)
class Mlp:
    """Hidden units that must sit in one MLP (they compute one value)."""

    units: tuple[Unit, ...]
    label: str


Operation = Read | Mlp


@dataclass(frozen=True)
class Lowered:
    """The program as residual slots and operations on them (the result of :func:`lower`)."""

    labels: tuple[str, ...]
    token_slots: dict[str, tuple[int, ...]]
    """For every vocabulary entry, the slots the token embedding sets to 1."""
    position_slots: tuple[tuple[int, ...], ...]
    """For every residue mod the period, the slots the positional vector sets to 1."""
    operations: tuple[Operation, ...]
    outputs: tuple[tuple[str, int | None], ...]
    output_kind: str
    period: int
    source: str


@dataclass(frozen=True)
class Bool:
    """A Boolean as two 0/1 slots; None stands for a constant 0 (``false`` has pos None)."""

    pos: int | None
    neg: int | None
    zero_at_bos: bool = True

    def negated(self) -> "Bool":
        return Bool(self.neg, self.pos, self.zero_at_bos)


@dataclass(frozen=True)
class Linear:
    """A count divided by n+1: integer coefficients on slots (constants sit on the 1/(n+1) slot)."""

    terms: tuple[tuple[int, int], ...] = ()

    def combine(self, other: "Linear", factor: int = 1) -> "Linear":
        merged = dict(self.terms)
        for slot, coefficient in other.terms:
            merged[slot] = merged.get(slot, 0) + factor * coefficient
        return Linear(tuple(sorted((s, c) for s, c in merged.items() if c != 0)))

    def scaled(self, factor: int) -> "Linear":
        return Linear(()).combine(self, factor)


Value = Bool | Linear


class _Lowering:
    """Turns a checked program into slots and operations, sharing every repeated piece."""

    def __init__(self, checked: CheckedProgram, config: CompileConfig) -> None:
        self.checked = checked
        self.config = config
        self.labels: list[str] = []
        self.bound: dict[int, float] = {}
        self.error: dict[int, float] = {}
        self.operations: list[Operation] = []
        self.memo: dict[tuple, object] = {}
        self.env: dict[str, Value] = {}
        self.definition: ast.Definition | None = None
        self.bos = self.slot("bos")
        self.tok = self.slot("tok")
        self.vocabulary = sorted(checked.info.alphabet)
        if BOS_TOKEN in self.vocabulary or OTHER_TOKEN in self.vocabulary:
            raise CompileError(f"the tokens {BOS_TOKEN} and {OTHER_TOKEN} are reserved by the compiler",
                               source=checked.program.source)
        self.token_rails: dict[str, Bool] = {}
        self.periodic_rails: dict[tuple[int, frozenset[int]], Bool] = {}
        self.one = self.uniform(self.bos, "1/(n+1)", bound=1.0, error=1.0)

    # ------------------------------------------------------------ slots and operations

    def slot(self, label: str, bound: float = 1.0, error: float = 0.0) -> int:
        self.labels.append(label)
        index = len(self.labels) - 1
        self.bound[index], self.error[index] = bound, error
        return index

    def uniform(self, source: int, label: str | None = None, bound: float = 1.0,
                error: float = 2.0) -> int:
        key = ("uniform", source)
        if key not in self.memo:
            target = self.slot(label or f"#{self.labels[source]}/(n+1)", bound, error)
            self.operations.append(Read(source, target))
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]

    def mlp(self, label: str, units: list[Unit]) -> None:
        self.operations.append(Mlp(tuple(units), label))

    def linear_bound(self, value: Linear) -> float:
        return sum(abs(c) * self.bound[s] for s, c in value.terms)

    def linear_error(self, value: Linear) -> float:
        n = len(value.terms)
        return sum(abs(c) * (self.error[s] + n * self.bound[s]) for s, c in value.terms)

    def fail(self, message: str, node: ast.Expr | None = None) -> CompileError:
        definition = self.definition
        where = f"definition '{definition.name}': " if definition is not None else ""
        loc = getattr(node, "loc", None) or (definition.loc if definition is not None else None)
        program = self.checked.program
        return CompileError(where + message, loc, source=program.source, text=program.text)

    def constant(self, truth: bool) -> Bool:
        """``true`` is the non-BOS indicator with no negation slot; ``false`` the reverse."""
        return Bool(self.tok, None) if truth else Bool(None, self.tok)

    # ------------------------------------------------------------ leaves

    def token(self, symbol: str) -> Bool:
        if symbol not in self.token_rails:
            pos = self.slot(f'"{symbol}"')
            neg = self.slot(f'!"{symbol}"')
            self.token_rails[symbol] = Bool(pos, neg)
        return self.token_rails[symbol]

    def periodic(self, modulus: int, residues: frozenset[int], label: str) -> Bool:
        key = (modulus, residues)
        if key not in self.periodic_rails:
            self.periodic_rails[key] = Bool(self.slot(label), self.slot(f"!({label})"), zero_at_bos=False)
        return self.periodic_rails[key]

    # ------------------------------------------------------------ Booleans

    def gate(self, label: str, terms: list[tuple[int | None, float]], bias: float) -> int:
        """A 0/1 slot: H(sum of 0/1 terms + bias), forced to 0 at the beginning of sequence."""
        inputs = [(s, c) for s, c in terms if s is not None] + [(self.bos, -float(len(terms) + 1))]
        target = self.slot(label)
        self.mlp(label, [Unit(tuple(inputs), bias, HEAVISIDE, ((target, 1.0),), "boolean")])
        return target

    def junction(self, conjunction: bool, operands: list[Bool], label: str) -> Bool:
        """AND (or OR) of Booleans: one Heaviside unit per rail, with De Morgan for the negation."""
        if not conjunction:  # a or b = not (not a and not b)
            return self.junction(True, [b.negated() for b in operands], f"!({label})").negated()
        kept: list[Bool] = []
        for operand in operands:
            if operand.pos is None:
                return self.constant(False)
            if operand.neg is not None and operand not in kept:  # constant true drops out
                kept.append(operand)
        if not kept:
            return self.constant(True)
        if len(kept) == 1:
            return kept[0]
        pos = self.gate(label, [(b.pos, 1.0) for b in kept], -(len(kept) - 0.5))
        neg = self.gate(f"!({label})", [(b.neg, 1.0) for b in kept], -0.5)
        return Bool(pos, neg)

    def flatten(self, node: ast.Expr, kind: type) -> list[ast.Expr]:
        if isinstance(node, kind):
            return self.flatten(node.left, kind) + self.flatten(node.right, kind)
        return [node]

    def masked(self, value: Bool) -> Bool:
        """The same Boolean with both slots 0 at the beginning of sequence."""
        if value.zero_at_bos:
            return value
        key = ("masked", value)
        if key not in self.memo:
            pos = self.gate(f"{self.labels[value.pos]}", [(value.pos, 1.0)], -0.5)
            neg = self.gate(f"{self.labels[value.neg]}", [(value.neg, 1.0)], -0.5)
            self.memo[key] = Bool(pos, neg)
        return self.memo[key]  # type: ignore[return-value]

    def compare(self, node: ast.Compare, label: str) -> Bool:
        difference = self.count(node.left).combine(self.count(node.right), -1)
        op = node.op
        if op in ("<", "<="):
            difference, op = difference.scaled(-1), {"<": ">", "<=": ">="}[op]
        if all(s == self.one for s, _ in difference.terms):
            return self.constant(ast.COMPARISONS[op](dict(difference.terms).get(self.one, 0), 0))
        error = self.linear_error(difference) + 1.0
        limit = self.config.length_limit(error)
        if limit < self.config.max_length:
            raise self.fail(
                f"the comparison '{format_expr(node)}' keeps its sign in {self.config.dtype} only "
                f"up to length {max(limit, 0)}, below max_length {self.config.max_length}; use "
                "float64 or a smaller max_length", node)
        big = self.linear_bound(difference) + 2.0

        def heaviside(value: Linear, shift: float, outputs: tuple[tuple[int, float], ...]) -> Unit:
            """H(value + shift/(n+1)), forced to 0 at the beginning of sequence."""
            terms = [(s, float(c)) for s, c in value.terms] + [(self.one, shift), (self.bos, -big)]
            return Unit(tuple(_merge(terms)), 0.0, HEAVISIDE, outputs, "count")

        pos, neg = self.slot(label), self.slot(f"!({label})")
        if op in (">", ">="):
            shift = -0.5 if op == ">" else 0.5
            self.mlp(label, [heaviside(difference, shift, ((pos, 1.0),)),
                             heaviside(difference.scaled(-1), -shift, ((neg, 1.0),))])
            return Bool(pos, neg)
        equal, unequal = (pos, neg) if op == "==" else (neg, pos)
        both = ((equal, 1.0), (unequal, -1.0))  # equal = [Z >= 0] + [Z <= 0] - 1
        self.mlp(label, [
            heaviside(difference, 0.5, both),
            heaviside(difference.scaled(-1), 0.5, both),
            Unit(((self.tok, 1.0),), 0.0, RELU, ((equal, -1.0), (unequal, 2.0))),
        ])
        return Bool(pos, neg)

    def choose(self, condition: Bool, then: Bool, otherwise: Bool, label: str) -> Bool:
        """``then if condition else otherwise`` on Booleans: two exclusive ANDs summed."""
        rails = []
        for name, pick in ((label, lambda b: b.pos), (f"!({label})", lambda b: b.neg)):
            target = self.slot(name)
            units = []
            for guard, branch in ((condition.pos, then), (condition.neg, otherwise)):
                inputs = [(s, 1.0) for s in (guard, pick(branch)) if s is not None]
                if len(inputs) < 2:
                    continue  # a constant-0 rail makes this AND 0
                units.append(Unit(tuple(inputs) + ((self.bos, -3.0),), -1.5, HEAVISIDE,
                                  ((target, 1.0),), "boolean"))
            self.mlp(name, units)
            rails.append(target)
        return Bool(rails[0], rails[1])

    # ------------------------------------------------------------ counts

    def local_bit(self, value: Bool, offset: int) -> Bool:
        """P(i - offset) as a Boolean: the head biased at the offset against the uniform head."""
        key = ("local", value.pos, offset)
        if key not in self.memo:
            name = self.labels[value.pos]
            probe = self.slot(f"avg@{offset}[{name}]", error=2.0)
            self.operations.append(Read(value.pos, probe, offset))
            average = self.uniform(value.pos)
            pos, neg = self.slot(f"{name}(i-{offset})"), self.slot(f"!{name}(i-{offset})")
            self.mlp(f"{name}(i-{offset})", [
                Unit(((probe, 1.0), (average, -1.0)), 0.0, HEAVISIDE, ((pos, 1.0), (neg, -1.0)), "local"),
                Unit(((self.tok, 1.0),), 0.0, RELU, ((neg, 1.0),)),
            ])
            self.memo[key] = Bool(pos, neg)
        return self.memo[key]  # type: ignore[return-value]

    def counted(self, node: ast.Count, label: str) -> Linear:
        value = self.boolean(node.operand)
        if value.pos is None:
            return Linear()
        value = self.masked(value)
        if node.guard is None:
            return Linear(((self.uniform(value.pos, f"{label}/(n+1)"), 1),))
        offsets = sorted(self.checked.guard_offsets(node.guard))
        if not offsets:
            return Linear()
        key = ("local-count", value, tuple(offsets))
        if key not in self.memo:
            bits = [value if d == 0 else self.local_bit(value, d) for d in offsets]
            target = self.slot(f"{label}/(n+1)", bound=float(len(offsets)), error=len(offsets) + 1.0)
            units = []
            for bit in bits:  # bit * 1/(n+1) = ReLU(1/(n+1) - 2 (not bit)), exact in floating point
                inputs = ((self.one, 1.0),) + (((bit.neg, -2.0),) if bit.neg is not None else ())
                units.append(Unit(inputs, 0.0, RELU, ((target, 1.0),)))
            self.mlp(label, units)
            self.memo[key] = Linear(((target, 1),))
        return self.memo[key]  # type: ignore[return-value]

    def relu_slot(self, value: Linear, label: str) -> int:
        """A new slot holding ReLU(value)."""
        target = self.slot(label, bound=self.linear_bound(value),
                           error=self.linear_error(value) + self.linear_bound(value))
        self.mlp(label, [Unit(tuple((s, float(c)) for s, c in value.terms), 0.0, RELU, ((target, 1.0),))])
        return target

    def extreme(self, node: ast.Min | ast.Max, label: str) -> Linear:
        left, right = self.count(node.left), self.count(node.right)
        if isinstance(node, ast.Min):  # min(a, b) = a - ReLU(a - b)
            return left.combine(Linear(((self.relu_slot(left.combine(right, -1), f"relu({label})"), 1),)), -1)
        return left.combine(Linear(((self.relu_slot(right.combine(left, -1), f"relu({label})"), 1),)))

    def select(self, condition: Bool, then: Linear, otherwise: Linear, label: str) -> Linear:
        """``then if condition else otherwise`` on counts: each branch gated by its rail."""
        big = max(self.linear_bound(then), self.linear_bound(otherwise)) + 2.0
        target = self.slot(label, bound=big - 2.0,
                           error=max(self.linear_error(then), self.linear_error(otherwise)))
        units = []
        for value, closed in ((then, condition.neg), (otherwise, condition.pos)):
            for sign in (1.0, -1.0):  # value = ReLU(value) - ReLU(-value); closed rail shuts both
                inputs = tuple((s, sign * c) for s, c in value.terms) + ((closed, -big),)
                units.append(Unit(inputs, 0.0, RELU, ((target, sign),)))
        self.mlp(label, units)
        return Linear(((target, 1),))

    # ------------------------------------------------------------ expressions

    def boolean(self, node: ast.Expr) -> Bool:
        value = self.expression(node)
        assert isinstance(value, Bool), node
        return value

    def count(self, node: ast.Expr) -> Linear:
        value = self.expression(node)
        assert isinstance(value, Linear), node
        return value

    def expression(self, node: ast.Expr) -> Value:
        key = ("expr", node)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        value = self.compute(node)
        self.memo[key] = value
        return value

    def compute(self, node: ast.Expr) -> Value:
        """The value of one node; a slot made for it is labelled with its source text."""
        if isinstance(node, ast.Ref):
            if node.name in self.env:
                return self.env[node.name]
            modulus, residues = self.checked.periodic(node)
            return self.periodic(modulus, residues, node.name)
        if isinstance(node, ast.TokenIs):
            return self.token(node.token)
        if isinstance(node, ast.BoolConst):
            return self.constant(node.value)
        if isinstance(node, ast.Periodic):
            return self.periodic(node.modulus, node.residues, _label(node))
        if isinstance(node, ast.Not):
            return self.boolean(node.operand).negated()
        if isinstance(node, (ast.And, ast.Or)):
            operands = [self.boolean(part) for part in self.flatten(node, type(node))]
            return self.junction(isinstance(node, ast.And), operands, _label(node))
        if isinstance(node, ast.Compare):
            return self.compare(node, _label(node))
        if isinstance(node, ast.Count):
            return self.counted(node, _label(node))
        if isinstance(node, ast.Const):
            return Linear(((self.one, node.value),)) if node.value else Linear()
        if isinstance(node, ast.Add):
            return self.count(node.left).combine(self.count(node.right))
        if isinstance(node, ast.Sub):
            return self.count(node.left).combine(self.count(node.right), -1)
        if isinstance(node, ast.Scale):
            return self.count(node.operand).scaled(node.factor)
        if isinstance(node, (ast.Min, ast.Max)):
            return self.extreme(node, _label(node))
        if isinstance(node, ast.Cond):
            condition = self.boolean(node.condition)
            if condition.neg is None or condition.pos is None:  # constant condition
                return self.expression(node.then if condition.neg is None else node.otherwise)
            then = self.expression(node.then)
            if isinstance(then, Bool):  # the checker gave both branches one sort
                return self.choose(condition, then, self.boolean(node.otherwise), _label(node))
            return self.select(condition, then, self.count(node.otherwise), _label(node))
        raise TypeError(f"not a C-RASP expression node: {node!r}")  # pragma: no cover

    def define(self, definition: ast.Definition) -> None:
        first_new = len(self.labels)
        self.definition = definition
        value = self.expression(definition.expr)
        self.definition = None
        self.env[definition.name] = value
        name = definition.name
        if isinstance(value, Bool):
            for slot, label in ((value.pos, name), (value.neg, f"!{name}")):
                if slot is not None and slot >= first_new:
                    self.labels[slot] = label
        elif len(value.terms) == 1 and value.terms[0][1] == 1 and value.terms[0][0] >= first_new:
            self.labels[value.terms[0][0]] = f"{name}/(n+1)"


def _label(node: ast.Expr, width: int = 40) -> str:
    text = format_expr(node)
    return text if len(text) <= width else text[: width - 1] + "…"


def _merge(terms: list[tuple[int, float]]) -> list[tuple[int, float]]:
    merged: dict[int, float] = {}
    for slot, coefficient in terms:
        merged[slot] = merged.get(slot, 0.0) + coefficient
    return [(s, c) for s, c in merged.items() if c != 0]


def lower(checked: CheckedProgram, config: CompileConfig) -> Lowered:
    """Pass 1: residual slots and the attention reads and MLP units that fill them."""
    lowering = _Lowering(checked, config)
    for definition in checked.definitions:
        lowering.define(definition)
    if checked.accept is not None:
        lowering.definition = None
        outputs = (("accept", lowering.boolean(checked.accept).pos),)
        kind = "accept"
    else:
        outputs = tuple((token, lowering.boolean(expr).pos) for token, expr in checked.next_tokens)
        kind = "next"
    vocabulary = [BOS_TOKEN, *lowering.vocabulary, OTHER_TOKEN]
    token_slots: dict[str, tuple[int, ...]] = {}
    for symbol in vocabulary:
        if symbol == BOS_TOKEN:
            token_slots[symbol] = (lowering.bos,)
            continue
        ones = [lowering.tok]
        for name, rails in lowering.token_rails.items():
            ones.append(rails.pos if name == symbol else rails.neg)
        token_slots[symbol] = tuple(ones)
    period = checked.info.period
    position_slots = tuple(
        tuple(rails.pos if residue % modulus in residues else rails.neg
              for (modulus, residues), rails in lowering.periodic_rails.items())
        for residue in range(period)
    )
    return Lowered(
        labels=tuple(lowering.labels),
        token_slots=token_slots,
        position_slots=position_slots,
        operations=tuple(lowering.operations),
        outputs=outputs,
        output_kind=kind,
        period=period,
        source=checked.program.source,
    )


def eliminate_dead_slots(lowered: Lowered) -> Lowered:
    """Pass 1b: drop slots no output depends on, with the heads and units that fill them."""
    live = {slot for _, slot in lowered.outputs if slot is not None}
    kept: list[Operation] = []
    for operation in reversed(lowered.operations):
        if isinstance(operation, Read):
            if operation.target in live:
                live.add(operation.source)
                kept.append(operation)
            continue
        units = []
        for unit in operation.units:
            outputs = tuple((s, c) for s, c in unit.outputs if s in live)
            if outputs:
                units.append(Unit(unit.inputs, unit.bias, unit.activation, outputs, unit.margin))
                live.update(s for s, _ in unit.inputs)
        if units:
            kept.append(Mlp(tuple(units), operation.label))
    order = sorted(live)
    index = {old: new for new, old in enumerate(order)}

    def moved(pairs):
        return tuple((index[s], c) for s, c in pairs)

    operations = tuple(
        Read(index[op.source], index[op.target], op.offset) if isinstance(op, Read) else
        Mlp(tuple(Unit(moved(u.inputs), u.bias, u.activation, moved(u.outputs), u.margin)
                  for u in op.units), op.label)
        for op in reversed(kept)
    )
    return Lowered(
        labels=tuple(lowered.labels[s] for s in order),
        token_slots={t: tuple(index[s] for s in slots if s in index)
                     for t, slots in lowered.token_slots.items()},
        position_slots=tuple(tuple(index[s] for s in slots if s in index)
                             for slots in lowered.position_slots),
        operations=operations,
        outputs=tuple((name, None if s is None else index[s]) for name, s in lowered.outputs),
        output_kind=lowered.output_kind,
        period=lowered.period,
        source=lowered.source,
    )


# ---------------------------------------------------------------- scheduling


EMBEDDING = "embedding"


def dependency_graph(lowered: Lowered) -> nx.DiGraph:
    """Pass 2: a DAG with an edge from the operation writing a slot to every one reading it."""
    graph = nx.DiGraph()
    graph.add_node(EMBEDDING)
    writer: dict[int, object] = {}
    for index, operation in enumerate(lowered.operations):
        graph.add_edge(EMBEDDING, index)
        reads = (operation.source,) if isinstance(operation, Read) else tuple(
            s for unit in operation.units for s, _ in unit.inputs)
        for slot in reads:
            graph.add_edge(writer.get(slot, EMBEDDING), index)
        writes = (operation.target,) if isinstance(operation, Read) else tuple(
            s for unit in operation.units for s, _ in unit.outputs)
        for slot in writes:
            writer[slot] = index
    return graph


@dataclass(frozen=True)
class Schedule:
    """Pass 3's result: the layer of every operation (reads in attention, units in the MLP)."""

    layer: dict[int, int]
    n_layers: int


def allocate_layers(lowered: Lowered, graph: nx.DiGraph) -> Schedule:
    """Pass 3: each operation in the earliest sublayer after all it reads (longest path).

    Sublayer times: the embedding is 0, layer l's attention is 2l + 1 and its MLP 2l + 2.
    """
    time: dict[object, int] = {EMBEDDING: 0}
    for node in nx.topological_sort(graph):
        if node == EMBEDDING:
            continue
        earliest = max(time[p] for p in graph.predecessors(node)) + 1
        wants_odd = isinstance(lowered.operations[node], Read)
        if (earliest % 2 == 1) != wants_odd:
            earliest += 1
        time[node] = earliest
    layer = {node: (t - 1) // 2 for node, t in time.items() if node != EMBEDDING}
    return Schedule(layer, max(layer.values(), default=-1) + 1)


# ---------------------------------------------------------------- weights


DENSE_LIMIT = 1 << 20
"""Weights with more entries than this are stored sparse (coordinates and values)."""


@dataclass(frozen=True)
class SparseArray:
    """A weight given by its nonzero entries: ``indices`` is (ndim, nnz)."""

    shape: tuple[int, ...]
    indices: np.ndarray
    values: np.ndarray

    def dense(self) -> np.ndarray:
        array = np.zeros(self.shape)
        np.add.at(array, tuple(self.indices), self.values)
        return array


class _Entries:
    """Accumulates the nonzero entries of one weight; ``array()`` is dense when small."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape
        self.entries: dict[tuple[int, ...], float] = {}

    def __setitem__(self, index: tuple[int, ...], value: float) -> None:
        self.entries[index] = value

    def add(self, index: tuple[int, ...], value: float) -> None:
        self.entries[index] = self.entries.get(index, 0.0) + value

    def array(self) -> np.ndarray | SparseArray:
        entries = {k: v for k, v in self.entries.items() if v != 0}
        indices = np.array(list(entries), dtype=np.int64).reshape(-1, len(self.shape)).T
        values = np.array(list(entries.values()), dtype=np.float64)
        sparse = SparseArray(self.shape, indices, values)
        return sparse.dense() if math.prod(self.shape) <= DENSE_LIMIT else sparse


@dataclass
class Weights:
    """Pass 4's result: every parameter as a float64 numpy array, plus the spec."""

    spec: ModelSpec
    arrays: dict[str, np.ndarray | SparseArray] = field(default_factory=dict)
    heaviside: list[np.ndarray] = field(default_factory=list)


def emit_weights(lowered: Lowered, schedule: Schedule, config: CompileConfig) -> Weights:
    """Pass 4: embeddings, heads (one uniform head and one head per offset in each layer), MLPs."""
    d = len(lowered.labels)
    vocabulary = tuple(lowered.token_slots)
    arrays: dict[str, np.ndarray] = {}
    W_E = _Entries(len(vocabulary), d)
    for row, symbol in enumerate(vocabulary):
        for slot in lowered.token_slots[symbol]:
            W_E[row, slot] = 1.0
    W_pos = _Entries(lowered.period, d)
    for residue, slots in enumerate(lowered.position_slots):
        for slot in slots:
            W_pos[residue, slot] = 1.0
    arrays["embed.W_E"], arrays["pos_embed.W_pos"] = W_E.array(), W_pos.array()

    layers = range(schedule.n_layers)
    heads: list[list[tuple[int | None, list[Read]]]] = [[] for _ in layers]
    units: list[list[Unit]] = [[] for _ in layers]
    for index, operation in enumerate(lowered.operations):
        layer = schedule.layer[index]
        if isinstance(operation, Read):
            group = next((g for g in heads[layer] if g[0] == operation.offset), None)
            if group is None:
                group = (operation.offset, [])
                heads[layer].append(group)
            group[1].append(operation)
        else:
            units[layer].extend(operation.units)
    for layer_heads in heads:
        layer_heads.sort(key=lambda g: -1 if g[0] is None else g[0])
    d_head = max((len(reads) for layer_heads in heads for _, reads in layer_heads), default=1)

    infos, windows, widths, margins, heaviside = [], [], [], [], []
    label = lowered.labels
    for layer in layers:
        n_heads = len(heads[layer])
        window = max((g[0] + 1 for g in heads[layer] if g[0] is not None), default=0)
        W_V = _Entries(n_heads, d, d_head)
        W_O = _Entries(n_heads, d_head, d)
        phi = np.zeros((n_heads, window))
        layer_infos = []
        for h, (offset, reads) in enumerate(heads[layer]):
            for k, read in enumerate(reads):
                W_V[h, read.source, k] = 1.0
                W_O[h, k, read.target] = 1.0
            if offset is not None:
                phi[h, offset] = config.bias
            layer_infos.append(HeadInfo(
                "uniform" if offset is None else "offset",
                tuple(label[r.source] for r in reads), tuple(label[r.target] for r in reads), offset))
        prefix = f"blocks.{layer}"
        arrays[f"{prefix}.attn.W_Q"] = np.zeros((n_heads, d, 0))
        arrays[f"{prefix}.attn.W_K"] = np.zeros((n_heads, d, 0))
        arrays[f"{prefix}.attn.W_V"], arrays[f"{prefix}.attn.W_O"] = W_V.array(), W_O.array()
        arrays[f"{prefix}.attn.phi"], arrays[f"{prefix}.attn.phi_tail"] = phi, np.zeros(n_heads)
        width = len(units[layer])
        W_in, b_in, W_out = _Entries(d, width), np.zeros(width), _Entries(width, d)
        for u, unit in enumerate(units[layer]):
            for slot, coefficient in unit.inputs:
                W_in.add((slot, u), coefficient)
            b_in[u] = unit.bias
            for slot, coefficient in unit.outputs:
                W_out.add((u, slot), coefficient)
        arrays[f"{prefix}.mlp.W_in"], arrays[f"{prefix}.mlp.b_in"] = W_in.array(), b_in
        arrays[f"{prefix}.mlp.W_out"], arrays[f"{prefix}.mlp.b_out"] = W_out.array(), np.zeros(d)
        infos.append(tuple(layer_infos))
        windows.append(window)
        widths.append(width)
        margins.append(tuple(u.margin for u in units[layer]))
        heaviside.append(np.array([u.activation == HEAVISIDE for u in units[layer]], dtype=bool))

    W_U = _Entries(d, len(lowered.outputs))
    for column, (_, slot) in enumerate(lowered.outputs):
        if slot is not None:
            W_U[slot, column] = 1.0
    arrays["unembed.W_U"] = W_U.array()
    spec = ModelSpec(
        vocabulary=vocabulary, labels=lowered.labels, period=lowered.period, heads=tuple(infos),
        outputs=tuple(name for name, _ in lowered.outputs), output_kind=lowered.output_kind,
        mlp_widths=tuple(widths), margins=tuple(margins), window=tuple(windows), d_head=d_head,
        local_bias=config.bias, max_length=config.max_length, dtype=config.dtype,
        source=lowered.source, bos=BOS_TOKEN,
    )
    return Weights(spec, arrays, heaviside)


def to_tensor(array: np.ndarray | SparseArray, dtype: torch.dtype, device: str) -> torch.Tensor:
    """A dense tensor, or a coalesced sparse COO tensor for a :class:`SparseArray`."""
    if isinstance(array, SparseArray):
        return torch.sparse_coo_tensor(torch.from_numpy(array.indices), torch.from_numpy(array.values),
                                       array.shape, dtype=dtype, device=device,
                                       check_invariants=False).coalesce()  # indices are our own
    return torch.from_numpy(array).to(device=device, dtype=dtype)


def assemble(weights: Weights, device: str = "cpu") -> LimitTransformer:
    """Pass 5: the torch module holding the weights."""
    with torch.device("meta"):
        model = LimitTransformer(weights.spec)
    dtype = torch_dtype(weights.spec.dtype)
    state = {module_name(k): to_tensor(v, dtype, device) for k, v in weights.arrays.items()}
    for layer, mask in enumerate(weights.heaviside):
        state[f"blocks.{layer}.mlp.heaviside"] = torch.from_numpy(mask).to(device)
    model.load_state_dict(state, assign=True)
    return model.eval().requires_grad_(False)


@dataclass(frozen=True)
class Size:
    """What a compiled model's finite parts will need, known before anything is built."""

    period: int
    local_offsets: int
    window: int


def model_size(checked: CheckedProgram) -> Size:
    """The positional table's rows (the period) and the local offsets the model needs.

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
