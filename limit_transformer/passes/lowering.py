"""Pass 1, lowering: a checked C-RASP program to its lowered form.

Takes a :class:`~crasp.checker.CheckedProgram` and a :class:`~limit_transformer.config.CompileConfig`
and gives a :class:`~limit_transformer.passes.lowered.Lowered`: residual slots and the attention
reads and MLP units that fill them.

Values stay symbolic (:mod:`~limit_transformer.passes.symbolic`): a Boolean or a count at one
position is a polynomial over atoms, each atom a sign test one hidden unit can make. A value is
written into the residual stream (*materialized*) only where something reads it as a slot: a head
that counts it, an output, or a unit that needs it as an on/off gate. A polynomial is written by
one MLP: each monomial is one unit (two for a bounded interval) that tests at most one atom
*inline* and reads the others as 0/1 slots written earlier, each of which shuts the unit with a
large negative weight where it is 0. The inline atom is the one whose inputs come last, so a unit
sits in the MLP right after the attention that produced its latest input; the other atoms are
written in earlier MLPs (or, written no earlier than the inline one, cost one MLP more).

Lowering knows the sublayer each slot is ready after (the embedding is 0, layer l's attention
2l + 1 and its MLP 2l + 2: the same earliest-sublayer rule :func:`allocate_layers` applies), and
chooses by it. It raises ``CompileError`` for a comparison whose sign the config's dtype cannot
keep up to ``max_length``, and for a program that uses the reserved tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Sequence

from crasp import ast
from crasp.checker import CheckedProgram, Sort
from crasp.intsets import IntSet
from crasp.printer import format_expr

from ..activations import HEAVISIDE, RELU
from ..config import CompileConfig
from .errors import CompileError
from .lowered import BOS_TOKEN, OTHER_TOKEN, Lowered, Mlp, Operation, Read, Unit
from .symbolic import (
    COUNT, FULL, INF, INTEGER, LOCAL, Affine, Atom, Form, Monomial, Poly, add, complement, constant,
    contains, elementary, integer_range, make_poly, merge_adjacent, multiply, normalize, of_affine,
    of_atom, scale,
)

CELL_LIMIT = 32
"""The most cells a comparison of a piecewise value may be split into; beyond it the value's
pieces are written to slots first (one MLP more), and the comparison reads them linearly."""
TERM_LIMIT = 32
"""The most monomials a value keeps symbolic; a larger one is written to slots."""
PRODUCT_LIMIT = 32
"""The most monomial pairs a product may form before its Boolean factor is written to a slot."""
COUNT_PRODUCT_LIMIT = 8
FORM_LIMIT = 256
"""The most slots a comparison's form may read; a wider form is first summed into one slot."""
"""The most (atom, monomial) pairs a Boolean times a count may form before the count is written
to one slot (:meth:`_Lowering.collapse`)."""


@dataclass(frozen=True)
class Rails:
    """A materialized Boolean: the slot that is 1 where it holds and the slot that is 1 where it
    does not (both 0 at the beginning of sequence); None stands for a constant 0."""

    pos: int | None
    neg: int | None


def mlp_time(time: int) -> int:
    """The earliest MLP sublayer (even) after sublayer ``time``."""
    return time + 1 if time % 2 else time + 2


def attention_time(time: int) -> int:
    """The earliest attention sublayer (odd) after sublayer ``time``."""
    return time + 1 if time % 2 == 0 else time + 2


class _Lowering:
    """Turns a checked program into slots and operations, sharing every repeated piece."""

    def __init__(self, checked: CheckedProgram, config: CompileConfig) -> None:
        self.checked = checked
        self.config = config
        self.labels: list[str] = []
        self.bound: dict[int, float] = {}
        self.error: dict[int, float] = {}
        self.time: dict[int, int] = {}
        self.signed: set[int] = set()  # count slots that may hold a negative value
        self.rails: dict[int, int] = {}  # a 0/1 slot and the slot of its negation
        self.raw_at_bos: set[int] = set()  # 0/1 slots that may be 1 at the beginning of sequence
        self.operations: list[Operation] = []
        self.memo: dict[tuple, object] = {}
        self.env: dict[str, Poly] = {}
        self.names: dict[Poly, str] = {}
        self.atom_labels: dict[Atom, str] = {}
        self.definition: ast.Definition | None = None
        self.bos = self.slot("bos", time=0)
        self.tok = self.slot("tok", time=0)
        self.vocabulary = sorted(checked.info.alphabet)
        if BOS_TOKEN in self.vocabulary or OTHER_TOKEN in self.vocabulary:
            raise CompileError(f"the tokens {BOS_TOKEN} and {OTHER_TOKEN} are reserved by the compiler",
                               source=checked.program.source)
        self.token_rails: dict[str, Rails] = {}
        self.token_functions: dict[int, frozenset[str]] = {}
        self.periodic_rails: dict[tuple[int, IntSet], Rails] = {}
        self.one = self.read(self.bos, None, "1/(n+1)", error=1.0)

    # ------------------------------------------------------------ slots and operations

    def slot(self, label: str, bound: float = 1.0, error: float = 0.0, time: int | None = None) -> int:
        self.labels.append(label)
        index = len(self.labels) - 1
        self.bound[index], self.error[index] = bound, error
        if time is not None:
            self.time[index] = time
        return index

    def read(self, source: int, offset: int | None, label: str, error: float = 2.0) -> int:
        """A head's average of ``source`` (uniform, or biased at ``offset``) into a new slot."""
        key = ("read", source, offset)
        if key not in self.memo:
            target = self.slot(label, error=error, time=attention_time(self.time[source]))
            self.operations.append(Read(source, target, offset))
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def mlp(self, label: str, units: list[Unit]) -> None:
        """One MLP operation, placed right after the latest slot its units read."""
        when = mlp_time(max(self.time[s] for unit in units for s, _ in unit.inputs))
        for unit in units:
            for slot, _ in unit.outputs:
                self.time[slot] = when
        self.operations.append(Mlp(tuple(units), label))

    def pair(self, label: str) -> Rails:
        """Two new 0/1 slots, a Boolean and its negation."""
        pos, neg = self.slot(label), self.slot(_negated(label))
        self.rails[pos], self.rails[neg] = neg, pos
        return Rails(pos, neg)

    def linear_bound(self, terms: Sequence[tuple[int, float]]) -> float:
        return sum(abs(c) * self.bound[s] for s, c in terms)

    def linear_error(self, terms: Sequence[tuple[int, float]]) -> float:
        n = len(terms)
        return sum(abs(c) * (self.error[s] + n * self.bound[s]) for s, c in terms)

    def fail(self, message: str, node: ast.Expr | None = None) -> CompileError:
        definition = self.definition
        where = f"definition '{definition.name}': " if definition is not None else ""
        loc = getattr(node, "loc", None) or (definition.loc if definition is not None else None)
        program = self.checked.program
        return CompileError(where + message, loc, source=program.source, text=program.text)

    def range_of(self, form: Form) -> tuple[float, float]:
        """Integers a form can take: 0/1 slots bound an integer form; counts are non-negative."""
        if form.kind == INTEGER:
            return integer_range(form)
        if form.kind == COUNT and all(s not in self.signed for s, _ in form.terms):
            if all(c > 0 for _, c in form.terms):
                return 0.0, INF
            if all(c < 0 for _, c in form.terms):
                return -INF, 0.0
        return -INF, INF

    def form_time(self, form: Form) -> int:
        return max(self.time[s] for s, _ in form.terms)

    # ------------------------------------------------------------ leaves

    def rail_atom(self, slot: int) -> Atom:
        """The atom "this 0/1 slot is 1"."""
        return Atom(Form(INTEGER, ((slot, 1),)), 0.5, INF)

    def rail_slot(self, atom: Atom) -> int | None:
        """The slot that already holds an atom on a single 0/1 slot (it, or its negation)."""
        form = atom.form
        if form.kind != INTEGER or len(form.terms) != 1 or form.terms[0][1] != 1:
            return None
        slot = form.terms[0][0]
        if slot not in self.rails:
            return None
        if (atom.low, atom.high) == (0.5, INF):
            return slot
        if (atom.low, atom.high) == (-INF, 0.5):
            return self.rails[slot]
        return None

    def token(self, symbol: str) -> Poly:
        if symbol not in self.token_rails:
            pos, neg = self.slot(f'"{symbol}"', time=0), self.slot(f'!"{symbol}"', time=0)
            self.rails[pos], self.rails[neg] = neg, pos
            self.token_rails[symbol] = Rails(pos, neg)
        return of_atom(self.rail_atom(self.token_rails[symbol].pos))  # type: ignore[arg-type]

    def periodic(self, modulus: int, residues: IntSet, label: str) -> Poly:
        key = (modulus, residues)
        if key not in self.periodic_rails:
            pos, neg = self.slot(label, time=0), self.slot(f"!({label})", time=0)
            self.rails[pos], self.rails[neg] = neg, pos
            self.raw_at_bos.update((pos, neg))
            self.periodic_rails[key] = Rails(pos, neg)
        return of_atom(self.rail_atom(self.periodic_rails[key].pos))  # type: ignore[arg-type]

    # ------------------------------------------------------------ writing values into slots

    def materialize(self, value: Poly, label: str | None = None) -> Rails:
        """A Boolean written into two slots: one MLP whose units compute its monomials."""
        fixed = value.constant_value()
        if fixed is not None:
            return Rails(self.tok, None) if fixed else Rails(None, self.tok)
        if len(value.terms) == 1 and len(value.terms[0][0]) == 1 and value.terms[0][1] == Affine((), 1):
            slot = self.rail_slot(value.terms[0][0][0])
            if slot is not None:
                return Rails(slot, self.rails[slot])
        key = ("rails", value)
        if key not in self.memo:
            label = label or self.names.get(value) or self.describe(value)
            table = self.token_table(value)
            if table is not None:
                self.memo[key] = self.token_function(table, label)
            else:
                rails = self.pair(label)
                assert rails.pos is not None and rails.neg is not None
                units = []
                for monomial, coefficient in value.terms:
                    assert not coefficient.counts, "a Boolean has constant coefficients"
                    c = float(coefficient.const)
                    units += self.monomial_units(monomial, ((rails.pos, c), (rails.neg, -c)))
                units.append(self.true_unit(((rails.neg, 1.0),)))
                self.mlp(label, units)
                self.memo[key] = rails
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def true_unit(self, outputs: tuple[tuple[int, float], ...]) -> Unit:
        """A unit that is 1 at every position but the beginning of sequence."""
        return Unit(((self.tok, 1.0), (self.bos, -1.0)), -0.5, HEAVISIDE, outputs, "boolean")

    def atom_rails(self, atom: Atom) -> Rails:
        """An atom written into two slots (one or two units, in the MLP after its inputs)."""
        key = ("atom", atom)
        if key not in self.memo:
            label = self.describe_atom(atom)
            rails = self.pair(label)
            assert rails.pos is not None and rails.neg is not None
            units = self.atom_units(atom, [], ((rails.pos, 1.0), (rails.neg, -1.0)))
            self.mlp(label, units + [self.true_unit(((rails.neg, 1.0),))])
            self.memo[key] = rails
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def ready(self, atom: Atom) -> int:
        """When an atom not tested inline is in the residual (written, or to be written ASAP)."""
        held = self.memo.get(("atom", atom))
        if isinstance(held, Rails) and held.pos is not None:
            return self.time[held.pos]
        return mlp_time(self.form_time(atom.form))

    def inline_choice(self, pending: list[Atom]) -> Atom:
        """The atom a unit tests itself: the one that leaves the unit earliest when every other is
        read from its slot (ties: one not yet written, so that fewer slots are made)."""
        read = [mlp_time(self.ready(b)) for b in pending]
        first = max(range(len(pending)), key=read.__getitem__)
        second = max((r for k, r in enumerate(read) if k != first), default=0)

        def finish(k: int) -> tuple:
            others = second if k == first else read[first]  # the latest of the other atoms
            atom = pending[k]
            return (max(mlp_time(self.form_time(atom.form)), others), ("atom", atom) in self.memo, atom)
        return pending[min(range(len(pending)), key=finish)]

    def monomial_units(self, monomial: Monomial, outputs: tuple[tuple[int, float], ...]) -> list[Unit]:
        """The unit(s) that are 1 exactly where every atom of ``monomial`` holds."""
        literals: list[int] = []
        pending: list[Atom] = []
        for atom in monomial:
            slot = self.rail_slot(atom)
            if slot is None:
                pending.append(atom)
            else:
                literals.append(slot)
        if not pending:
            if not literals:
                return [self.true_unit(outputs)]
            k = len(literals)
            inputs = _merge([(s, 1.0) for s in literals] + [(self.bos, -float(k + 1))])
            return [Unit(tuple(inputs), -(k - 0.5), HEAVISIDE, outputs, "boolean")]
        inline = self.inline_choice(pending)
        for atom in pending:
            if atom is not inline:
                held = self.atom_rails(atom)
                assert held.pos is not None
                literals.append(held.pos)
        return self.atom_units(inline, [self.rails[s] for s in literals], outputs)

    def atom_units(self, atom: Atom, closed: list[int],
                   outputs: tuple[tuple[int, float], ...]) -> list[Unit]:
        """Units that add ``outputs`` where the atom holds and every slot in ``closed`` is 0.

        A slot of ``closed`` that is 1 subtracts more than the atom's input can reach, so the
        unit is 0; one that is 0 adds an exact zero, so the atom's test is unchanged.
        """
        form = atom.form
        if form.kind == LOCAL:
            gates = [(c, -3.0) for c in closed] + [(self.bos, -3.0)]
            inputs = _merge([(s, float(c)) for s, c in form.terms] + gates)
            return [Unit(tuple(inputs), 0.0, HEAVISIDE, outputs, "local")]
        unit_slot, margin = (self.one, "count") if form.kind == COUNT else (self.tok, "boolean")
        ends = [e for e in (atom.low, atom.high) if math.isfinite(e)]
        big = self.linear_bound(form.terms) + max(abs(e) for e in ends) + 2.0
        gates = [(c, -big) for c in closed] + [(self.bos, -big)]
        terms = [(s, float(c)) for s, c in form.terms]
        if atom.low == -INF:  # value < high
            inputs = [(s, -c) for s, c in terms] + [(unit_slot, atom.high)] + gates
            return [Unit(tuple(_merge(inputs)), 0.0, HEAVISIDE, outputs, margin)]
        units = [Unit(tuple(_merge(terms + [(unit_slot, -atom.low)] + gates)), 0.0, HEAVISIDE, outputs, margin)]
        if atom.high < INF:  # [value > low] - [value > high]
            negated = tuple((s, -c) for s, c in outputs)
            units.append(Unit(tuple(_merge(terms + [(unit_slot, -atom.high)] + gates)), 0.0, HEAVISIDE,
                              negated, margin))
        return units

    def token_table(self, value: Poly) -> tuple[tuple[str, int], ...] | None:
        """The value on every token, when it depends on the token alone (so the embedding holds
        it); None otherwise."""
        atoms = value.atoms()
        if not atoms or any(a.form.kind != INTEGER or len(a.form.terms) != 1 for a in atoms):
            return None
        slots = {rails.pos: symbol for symbol, rails in self.token_rails.items()}
        if any(a.form.terms[0][0] not in slots for a in atoms):
            return None
        table = []
        for symbol in [*self.vocabulary, OTHER_TOKEN]:
            total = 0
            for monomial, coefficient in value.terms:
                if all(contains(a, Atom(a.form, 0.5, INF) if slots[a.form.terms[0][0]] == symbol
                                else Atom(a.form, -INF, 0.5)) for a in monomial):
                    total += coefficient.const
            table.append((symbol, total))
        return tuple(table)

    def token_function(self, table: tuple[tuple[str, int], ...], label: str) -> Rails:
        """A Boolean of the token alone, as two embedding slots (no layer at all)."""
        ones = frozenset(symbol for symbol, value in table if value)
        if len(ones) == len(table):
            return Rails(self.tok, None)
        if not ones:
            return Rails(None, self.tok)
        key = ("token-function", ones)
        if key not in self.memo:
            pos, neg = self.slot(label, time=0), self.slot(_negated(label), time=0)
            self.rails[pos], self.rails[neg] = neg, pos
            self.token_functions[pos] = ones
            self.token_functions[neg] = frozenset(symbol for symbol, _ in table) - ones
            self.memo[key] = Rails(pos, neg)
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def copy(self, slot: int) -> int:
        """A 0/1 slot held over n + 1, so that a comparison can add it to counts: 1/(n+1) where it
        is 1, exactly 0 where its negation shuts the unit."""
        key = ("copy", slot)
        if key not in self.memo:
            target = self.slot(f"{self.labels[slot]}/(n+1)", error=1.0)
            inputs = ((self.one, 1.0), (self.rails[slot], -2.0), (self.bos, -2.0))
            self.mlp(self.labels[target], [Unit(inputs, 0.0, RELU, ((target, 1.0),))])
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def gated(self, counts: tuple[tuple[int, int], ...], closed: int | None, label: str) -> int:
        """A count slot that holds ``counts`` where ``closed`` is 0 and exactly 0 where it is 1."""
        key = ("gated", counts, closed)
        if key not in self.memo:
            bound = self.linear_bound(counts)
            target = self.slot(label, bound=bound, error=self.linear_error(counts) + bound)
            self.signed.add(target)
            big = bound + 2.0
            units = []
            for sign in (1.0, -1.0):  # value = ReLU(value) - ReLU(-value); the closed slot shuts both
                inputs = [(s, sign * c) for s, c in counts] + [(self.bos, -big)]
                if closed is not None:
                    inputs.append((closed, -big))
                units.append(Unit(tuple(_merge(inputs)), 0.0, RELU, ((target, sign),)))
            self.mlp(label, units)
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def collapse(self, value: Poly, label: str = "") -> Poly:
        """A count as its constant part plus one count slot that holds the rest: each monomial's
        coefficient (over n + 1) gated by the monomial's rails, all in one MLP."""
        key = ("collapse", value)
        if key not in self.memo:
            base, pieces = Affine(), []
            for monomial, coefficient in value.terms:
                rails = self.materialize(Poly(((monomial, Affine((), 1)),))) if monomial else Rails(self.tok, None)
                if rails.pos is None:
                    continue
                if rails.pos == self.tok:
                    base = base.plus(coefficient)
                    continue
                terms = _merge([(s, float(c)) for s, c in coefficient.counts] + [(self.one, float(coefficient.const))])
                pieces.append((terms, rails.neg))
            if not pieces:
                self.memo[key] = of_affine(base)
            else:
                bounds = [self.linear_bound(terms) for terms, _ in pieces]
                name = label or self.names.get(value) or "count"
                target = self.slot(f"{name}/(n+1)", bound=sum(bounds),
                                   error=sum(self.linear_error(t) + b for (t, _), b in zip(pieces, bounds)))
                self.signed.add(target)
                units = []
                for (terms, closed), bound in zip(pieces, bounds):
                    big = bound + 2.0
                    for sign in (1.0, -1.0):  # ReLU(v) - ReLU(-v); the closed rail shuts both
                        inputs = [(s, sign * c) for s, c in terms] + [(self.bos, -big)]
                        if closed is not None:
                            inputs.append((closed, -big))
                        units.append(Unit(tuple(_merge(inputs)), 0.0, RELU, ((target, sign),)))
                self.mlp(self.labels[target], units)
                self.memo[key] = of_affine(base.plus(Affine(((target, 1),))))
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def wide(self, counts: tuple[tuple[int, int], ...], linear: dict[int, int]) -> int:
        """One count slot for a form of many terms (count slots plus 0/1 slots held over n + 1),
        written in one MLP so that the atoms on it read one slot, not all of them."""
        key = ("wide", counts, tuple(sorted(linear.items())))
        if key not in self.memo:
            ones = sum(abs(c) for c in linear.values())
            bound = self.linear_bound(counts) + ones
            target = self.slot("Σ/(n+1)", bound=bound,
                               error=self.linear_error([*counts, (self.one, ones)]) + bound)
            self.signed.add(target)
            big = bound + 2.0
            units = [Unit(tuple(_merge([(s, sign * c) for s, c in counts] + [(self.bos, -big)])), 0.0, RELU,
                          ((target, sign),)) for sign in (1.0, -1.0) if counts]
            for slot, c in sorted(linear.items()):  # |c|/(n+1) where the slot is 1, 0 where it is 0
                units.append(Unit(((self.one, float(abs(c))), (self.rails[slot], -big), (self.bos, -big)), 0.0,
                                  RELU, ((target, math.copysign(1.0, c)),)))
            self.mlp(self.labels[target], units)
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def rail_poly(self, value: Poly) -> Poly:
        """A Boolean as the polynomial of its materialized slot."""
        rails = self.materialize(value)
        if rails.pos is None:
            return Poly()
        return constant(1) if rails.pos == self.tok else of_atom(self.rail_atom(rails.pos))

    def split(self, value: Poly) -> tuple[Affine, dict[int, int], list[tuple[Monomial, Affine]]]:
        """The constant part, the part linear in 0/1 slots, and the rest (products, atoms)."""
        base, linear, rest = Affine(), dict[int, int](), list[tuple[Monomial, Affine]]()
        for monomial, coefficient in value.terms:
            slot = self.rail_slot(monomial[0]) if len(monomial) == 1 and not coefficient.counts else None
            if not monomial:
                base = coefficient
            elif slot is not None:
                linear[slot] = linear.get(slot, 0) + coefficient.const
            else:
                rest.append((monomial, coefficient))
        return base, linear, rest

    def linearize(self, value: Poly, label: str = "") -> Poly:
        """A count whose products and atoms are written to slots first: constant plus a form."""
        base, linear, rest = self.split(value)
        terms: dict[Monomial, Affine] = {(): base}
        for slot, c in linear.items():
            terms[(self.rail_atom(slot),)] = Affine((), c)
        for monomial, coefficient in rest:
            rails = self.materialize(Poly(((monomial, Affine((), 1)),)))
            if rails.pos is None:
                continue
            if coefficient.const:
                key: Monomial = () if rails.pos == self.tok else (self.rail_atom(rails.pos),)
                terms[key] = terms.get(key, Affine()).plus(Affine((), coefficient.const))
            if coefficient.counts:
                name = f"{label or 'count'}·[{self.labels[rails.pos]}]"
                gated = self.gated(coefficient.counts, rails.neg, name)
                terms[()] = terms[()].plus(Affine(((gated, 1),)))
        return make_poly(terms)

    def source(self, value: Poly) -> int | None:
        """The slot a head reads to count a Boolean: written, and 0 at the beginning of sequence."""
        rails = self.materialize(value)
        if rails.pos is None or rails.pos not in self.raw_at_bos:
            return rails.pos
        key = ("masked", rails.pos)
        if key not in self.memo:
            label = self.labels[rails.pos]
            target = self.slot(label)
            self.mlp(label, [Unit(((rails.pos, 1.0), (self.bos, -2.0)), -0.5, HEAVISIDE, ((target, 1.0),),
                                  "boolean")])
            self.memo[key] = target
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    # ------------------------------------------------------------ Booleans

    def product(self, p: Poly, q: Poly, q_is_boolean: bool = True) -> Poly:
        """p * q for a Boolean p; a factor is written to a slot first when the product is too big."""
        if len(p) * len(q) > PRODUCT_LIMIT and len(p) > 1:
            p = self.rail_poly(p)
        if not q_is_boolean and len(q) > 1 and len(p.atoms()) * len(q) > COUNT_PRODUCT_LIMIT:
            q = self.collapse(q)
        if len(p) * len(q) > PRODUCT_LIMIT and len(q) > 1:
            q = self.rail_poly(q) if q_is_boolean else self.collapse(q)
        return multiply(p, q, self.range_of)

    def junction(self, conjunction: bool, operands: list[Poly]) -> Poly:
        """AND of Booleans as their product; OR by De Morgan."""
        if not conjunction:
            return complement(self.junction(True, [complement(p, self.range_of) for p in operands]),
                              self.range_of)
        result = constant(1)
        for operand in sorted(operands, key=len):
            result = self.bounded(self.product(result, operand), True)
        return result

    def choose(self, condition: Poly, then: Poly, otherwise: Poly, boolean: bool) -> Poly:
        """``then if condition else otherwise``: condition * then + (1 - condition) * otherwise."""
        if boolean and len(condition) * (len(then) + len(otherwise)) > PRODUCT_LIMIT:
            condition = self.rail_poly(condition)
        taken = self.product(condition, then, boolean)
        other = self.product(complement(condition, self.range_of), otherwise, boolean)
        return self.bounded(merge_adjacent(add(taken, other), self.range_of), boolean)

    def bounded(self, value: Poly, boolean: bool) -> Poly:
        """The value, or its slots where it has grown past :data:`TERM_LIMIT` monomials."""
        if len(value) <= TERM_LIMIT or (not boolean and len(self.split(value)[2]) <= TERM_LIMIT):
            return value
        return self.rail_poly(value) if boolean else self.linearize(value)

    # ------------------------------------------------------------ comparisons

    def compare(self, node: ast.Compare) -> Poly:
        left, right = self.count(node.left), self.count(node.right)
        if node.op == "!=":
            return complement(self.sign(add(left, right, -1), "==", node), self.range_of)
        if node.op in ("<", "<="):
            return self.sign(add(right, left, -1), {"<": ">", "<=": ">="}[node.op], node)
        return self.sign(add(left, right, -1), node.op, node)

    def sign(self, value: Poly, op: str, node: ast.Expr) -> Poly:
        """[value op 0] for op in ``>``, ``>=``, ``==``: split into the cells on which every atom of
        the value is constant, each cell's value an affine form, each form's test one atom."""
        base, linear, rest = self.split(value)
        forms = sorted({atom.form for monomial, _ in rest for atom in monomial})
        cells = [self.cells(form, [a for m, _ in rest for a in m if a.form == form]) for form in forms]
        if math.prod(len(c) for c in cells) > CELL_LIMIT:
            value = self.linearize(value, _label(node))
            base, linear, rest = self.split(value)
            forms, cells = [], []
        result = Poly()
        for choice in product(*cells):
            cell = dict(zip(forms, choice))
            total = base
            for monomial, coefficient in rest:
                if all(_holds(atom, cell[atom.form]) for atom in monomial):
                    total = total.plus(coefficient)
            outcome = self.test(total, linear, op, node)
            if not outcome.terms:
                continue
            for form, held in cell.items():
                if form.kind == LOCAL:
                    atom = [a for m, _ in rest for a in m if a.form == form][0]
                    literal = of_atom(atom) if held is not None else complement(of_atom(atom), self.range_of)
                else:
                    literal = constant(1) if held == FULL else of_atom(held)  # type: ignore[arg-type]
                outcome = multiply(literal, outcome, self.range_of)
            result = add(result, outcome)
        return self.bounded(merge_adjacent(result, self.range_of), True)

    def cells(self, form: Form, atoms: list[Atom]) -> list[Atom | None]:
        """A form's cells: for a local atom, it and its negation (None); else the intervals."""
        if form.kind == LOCAL:
            return [atoms[0], None]
        return list(elementary(form, atoms, self.range_of))

    def test(self, total: Affine, linear: dict[int, int], op: str, node: ast.Expr) -> Poly:
        """[total + linear op 0] as one atom (or a constant): an integer form over 0/1 slots when no
        count takes part, else a count form (the 0/1 slots added as copies held over n + 1)."""
        counts = dict(total.counts)
        if len(counts) + len(linear) > FORM_LIMIT:
            counts, linear = {self.wide(total.counts, linear): 1}, {}
        if counts:
            for slot, c in linear.items():
                copied = self.copy(slot)
                counts[copied] = counts.get(copied, 0) + c
            linear = {}
        terms = tuple(sorted((s, c) for s, c in (counts or linear).items() if c))
        k = total.const
        if not terms:
            return constant(int(ast.COMPARISONS[op](k, 0)))
        low, high = {">": (0.5 - k, INF), ">=": (-0.5 - k, INF), "==": (-0.5 - k, 0.5 - k)}[op]
        divisor = math.gcd(*(c for _, c in terms))
        if terms[0][1] < 0:
            divisor, low, high = -divisor, -high, -low
        form = Form(COUNT if counts else INTEGER, tuple((s, c // divisor) for s, c in terms))
        atom = normalize(Atom(form, low / abs(divisor), high / abs(divisor)), self.range_of)
        if atom is None:
            return Poly()
        if atom == FULL:
            return constant(1)
        if form.kind == COUNT:
            self.check_precision(atom, node)
        self.atom_labels.setdefault(atom, _label(node))
        return of_atom(atom)

    def check_precision(self, atom: Atom, node: ast.Expr) -> None:
        """Refuse a count comparison whose sign the dtype cannot keep up to ``max_length``: its
        rounding error (in unit roundoffs) must stay below half a count, 1/(2(n+1))."""
        for end in (atom.low, atom.high):
            if not math.isfinite(end):
                continue
            terms = list(atom.form.terms) + ([(self.one, -math.trunc(end))] if math.trunc(end) else [])
            error = self.linear_error(terms) + 1.0
            limit = self.config.length_limit(error)
            if limit < self.config.max_length:
                raise self.fail(
                    f"the comparison '{format_expr(node)}' keeps its sign in {self.config.dtype} only "
                    f"up to length {max(limit, 0)}, below max_length {self.config.max_length}; use "
                    "float64 or a smaller max_length", node)

    # ------------------------------------------------------------ counts

    def local_atom(self, value: Poly, offset: int, name: str) -> Atom:
        """P(i - offset): the head biased at the offset is above the uniform head exactly there."""
        source = self.source(value)
        assert source is not None  # counted() drops a constant-false operand
        probe = self.read(source, offset, f"avg@{offset}[{name}]")
        average = self.read(source, None, f"#{name}/(n+1)")
        atom = Atom(Form(LOCAL, ((probe, 1), (average, -1))), 0.0, INF)
        self.atom_labels.setdefault(atom, f"{name}(i-{offset})")
        return atom

    def counted(self, node: ast.Count, label: str) -> Poly:
        value = self.boolean(node.operand)
        if value.constant_value() == 0:
            return Poly()
        offsets = [] if node.guard is None else sorted(self.checked.guard_offsets(node.guard))
        if (node.guard is None or any(offsets)) and self.source(value) is None:
            return Poly()  # a Boolean that is false at every position (say "a" && "b")
        if node.guard is None:
            source = self.source(value)
            assert source is not None
            return of_affine(Affine(((self.read(source, None, f"{label}/(n+1)"), 1),)))
        name = self.names.get(value) or _label(node.operand)
        total = Poly()
        for offset in offsets:
            total = add(total, value if offset == 0 else of_atom(self.local_atom(value, offset, name)))
        return self.bounded(total, False)

    # ------------------------------------------------------------ expressions

    def boolean(self, node: ast.Expr) -> Poly:
        return self.expression(node)

    def count(self, node: ast.Expr) -> Poly:
        return self.expression(node)

    def is_boolean(self, node: ast.Expr) -> bool:
        if isinstance(node, ast.Ref):
            return self.checked.sorts.get(node.name, Sort.BOOL) is Sort.BOOL
        if isinstance(node, ast.Cond):
            return self.is_boolean(node.then)
        return isinstance(node, (ast.TokenIs, ast.BoolConst, ast.Periodic, ast.Not, ast.And, ast.Or,
                                 ast.Compare))

    def expression(self, node: ast.Expr) -> Poly:
        key = ("expr", node)
        if key not in self.memo:
            value = self.compute(node)
            if len(value) > 1 and self.is_boolean(node) and self.token_table(value) is not None:
                value = self.rail_poly(value)  # a function of the token: one embedding slot
            self.names.setdefault(value, _label(node))
            self.memo[key] = value
        return self.memo[key]  # type: ignore[return-value]  # the memo keeps each key's own kind

    def compute(self, node: ast.Expr) -> Poly:
        """The value of one node."""
        if isinstance(node, ast.Ref):
            if node.name in self.env:
                return self.env[node.name]
            modulus, residues = self.checked.periodic(node)
            return self.periodic(modulus, residues, node.name)
        if isinstance(node, ast.TokenIs):
            return self.token(node.token)
        if isinstance(node, ast.BoolConst):
            return constant(int(node.value))
        if isinstance(node, ast.Periodic):
            return self.periodic(node.modulus, node.residues, _label(node))
        if isinstance(node, ast.Not):
            return complement(self.boolean(node.operand), self.range_of)
        if isinstance(node, (ast.And, ast.Or)):
            operands = [self.boolean(part) for part in _flatten(node, type(node))]
            return self.junction(isinstance(node, ast.And), operands)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Count):
            return self.counted(node, _label(node))
        if isinstance(node, ast.Const):
            return constant(node.value)
        if isinstance(node, (ast.Add, ast.Sub)):
            factor = 1 if isinstance(node, ast.Add) else -1
            return self.bounded(add(self.count(node.left), self.count(node.right), factor), False)
        if isinstance(node, ast.Scale):
            return scale(self.count(node.operand), node.factor)
        if isinstance(node, (ast.Min, ast.Max)):
            left, right = self.count(node.left), self.count(node.right)
            op = ">=" if isinstance(node, ast.Max) else "<="
            if op == "<=":  # min: left where left <= right
                condition = self.sign(add(right, left, -1), ">=", node)
            else:
                condition = self.sign(add(left, right, -1), ">=", node)
            return self.choose(condition, left, right, False)
        if isinstance(node, ast.Cond):
            condition = self.boolean(node.condition)
            fixed = condition.constant_value()
            if fixed is not None:  # a constant condition
                return self.expression(node.then if fixed else node.otherwise)
            boolean = self.is_boolean(node.then)
            return self.choose(condition, self.expression(node.then), self.expression(node.otherwise), boolean)
        raise TypeError(f"not a C-RASP expression node: {node!r}")  # pragma: no cover

    def define(self, definition: ast.Definition) -> None:
        first_new = len(self.labels)
        self.definition = definition
        value = self.expression(definition.expr)
        self.definition = None
        self.env[definition.name] = value
        self.names[value] = definition.name
        if len(value.terms) == 1 and not value.terms[0][0]:
            counts = value.terms[0][1].counts
            if len(counts) == 1 and counts[0][1] == 1 and counts[0][0] >= first_new:
                self.labels[counts[0][0]] = f"{definition.name}/(n+1)"

    # ------------------------------------------------------------ labels

    def describe_atom(self, atom: Atom) -> str:
        if atom in self.atom_labels:
            return self.atom_labels[atom]
        form = atom.form
        text = " + ".join(f"{c}*{self.labels[s].removesuffix('/(n+1)')}" for s, c in form.terms)
        text = text.replace("+ -", "- ").replace("1*", "")
        if atom.low == -INF:
            return f"{text} <= {atom.high - 0.5:g}"
        if atom.high == INF:
            return f"{text} >= {atom.low + 0.5:g}"
        if atom.high - atom.low == 1:
            return f"{text} == {atom.low + 0.5:g}"
        return f"{atom.low + 0.5:g} <= {text} <= {atom.high - 0.5:g}"

    def describe(self, value: Poly) -> str:
        parts = []
        for monomial, coefficient in value.terms:
            factors = [self.describe_atom(a) if self.rail_slot(a) is None else self.labels[self.rail_slot(a)]  # type: ignore[index]
                       for a in monomial] or ["1"]
            factor = "" if coefficient.const == 1 else f"{coefficient.const}*"
            parts.append(factor + " && ".join(factors))
        text = " + ".join(parts).replace("+ -", "- ")
        return text if len(text) <= 40 else text[:39] + "…"


def _negated(label: str) -> str:
    return f"!{label}" if label.replace("_", "").isalnum() or label.startswith('"') else f"!({label})"


def _holds(atom: Atom, cell: Atom | None) -> bool:
    if atom.form.kind == LOCAL:
        return cell is not None
    assert cell is not None
    return contains(atom, cell)


def _flatten(node: ast.Expr, kind: type[ast.And] | type[ast.Or]) -> list[ast.Expr]:
    if isinstance(node, kind):
        return _flatten(node.left, kind) + _flatten(node.right, kind)
    return [node]


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
        outputs: tuple[tuple[str, int | None], ...] = (
            ("accept", lowering.materialize(lowering.boolean(checked.accept)).pos),)
        kind = "accept"
    else:
        outputs = tuple((token, lowering.materialize(lowering.boolean(expr)).pos)
                        for token, expr in checked.next_tokens)
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
        ones += [slot for slot, symbols in lowering.token_functions.items() if symbol in symbols]
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


def _rail(rails: Rails, truth: bool) -> int:
    """The slot that is 1 where a token's or a residue set's Boolean is ``truth``."""
    slot = rails.pos if truth else rails.neg
    assert slot is not None
    return slot
