"""Pass 1, lowering: a checked C-RASP program to its lowered form.

Takes a :class:`~crasp.checker.CheckedProgram` and a :class:`~limit_transformer.config.CompileConfig`
and gives a :class:`~limit_transformer.passes.lowered.Lowered`: every Boolean as two 0/1 slots,
every count as a linear form over slots holding C/(n+1), and the attention reads and MLP units
that fill the slots, with repeated pieces shared. It raises ``CompileError`` for a comparison
whose sign the config's dtype cannot keep up to ``max_length``, and for a program that uses the
reserved tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import ast
from crasp.checker import CheckedProgram
from crasp.intsets import IntSet
from crasp.printer import format_expr

from ..config import CompileConfig
from ..activations import HEAVISIDE, RELU
from .errors import CompileError
from .lowered import BOS_TOKEN, OTHER_TOKEN, Lowered, Mlp, Operation, Read, Unit


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
        self.periodic_rails: dict[tuple[int, IntSet], Bool] = {}
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
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

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

    def periodic(self, modulus: int, residues: IntSet, label: str) -> Bool:
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

    def flatten(self, node: ast.Expr, kind: type[ast.And] | type[ast.Or]) -> list[ast.Expr]:
        if isinstance(node, kind):
            return self.flatten(node.left, kind) + self.flatten(node.right, kind)
        return [node]

    def masked(self, value: Bool) -> Bool:
        """The same Boolean with both slots 0 at the beginning of sequence."""
        if value.zero_at_bos:
            return value
        key = ("masked", value)
        if key not in self.memo:
            assert value.pos is not None and value.neg is not None  # nonzero at BOS: a periodic rail, with both slots
            pos = self.gate(f"{self.labels[value.pos]}", [(value.pos, 1.0)], -0.5)
            neg = self.gate(f"{self.labels[value.neg]}", [(value.neg, 1.0)], -0.5)
            self.memo[key] = Bool(pos, neg)
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

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
            assert value.pos is not None  # counted() drops a constant-false operand
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
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def counted(self, node: ast.Count, label: str) -> Linear:
        value = self.boolean(node.operand)
        if value.pos is None:
            return Linear()
        value = self.masked(value)
        assert value.pos is not None  # masked() keeps the slot checked above, or makes new ones
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
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

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
        assert condition.pos is not None and condition.neg is not None  # compute() handles a constant condition
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
            return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind
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


def _rail(value: Bool, truth: bool) -> int:
    """The slot that is 1 where ``value`` is ``truth``: a token's and a residue set's Booleans have both."""
    slot = value.pos if truth else value.neg
    assert slot is not None
    return slot


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
        outputs: tuple[tuple[str, int | None], ...] = (("accept", lowering.boolean(checked.accept).pos),)
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
            ones.append(_rail(rails, name == symbol))
        token_slots[symbol] = tuple(ones)
    period = checked.info.period
    position_slots = tuple(
        tuple(_rail(rails, residue % modulus in residues)
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
