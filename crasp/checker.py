"""Static checks: names, sorts, positional predicates and outputs.

:func:`check` turns a parsed :class:`~crasp.ast.Program` into a :class:`CheckedProgram` in which
every name has a sort, every import and guard is resolved to a periodic residue set or a finite
offset set, and the outputs are known. The first error found is raised, located in the source.

>>> from crasp.parser import parse
>>> checked = check(parse('#import pred\\nA = #[pred] "a" >= 1'))
>>> checked.info.plain, checked.info.depth, sorted(checked.info.offsets)
(False, 1, [1])
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Mapping

from . import ast
from .errors import NameResolutionError, OutputError, PredicateError, SortError, SourceError, StaticError
from .intsets import IntSet
from .limits import MAX_NESTING, TOO_DEEP, ensure_stack
from .predicates import DEFAULT_REGISTRY, BinaryPredicate, PredicateRegistry, UnaryPredicate


class Sort(enum.Enum):
    BOOL = "Boolean"
    COUNT = "count"


@dataclass(frozen=True)
class ProgramInfo:
    """What the checker learned about a program.

    ``plain`` is True for plain C-RASP (no positional predicates: the NoPE class); ``depth`` is
    the count-nesting depth; ``periods`` the moduli of its periodic predicates (``period`` their
    least common multiple); ``offsets`` the union of its local guards' offsets.
    """

    plain: bool
    depth: int
    periods: frozenset[int]
    offsets: IntSet
    alphabet: frozenset[str]
    definitions: int

    @property
    def period(self) -> int:
        return math.lcm(*self.periods) if self.periods else 1

    @property
    def model_class(self) -> str:
        return "C-RASP (NoPE)" if self.plain else "C-RASP[periodic, local] (APE)"


@dataclass(frozen=True)
class CheckedProgram:
    """A program that passed :func:`check`, with everything consumers need resolved."""

    program: ast.Program
    sorts: Mapping[str, Sort]
    unary: Mapping[str, UnaryPredicate]
    binary: Mapping[str, BinaryPredicate]
    accept: ast.Expr | None
    next_tokens: tuple[tuple[str, ast.Expr], ...]
    info: ProgramInfo
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    """What consumers compute once per program (the interpreter's plan, vocabulary, bounds)."""

    @property
    def definitions(self) -> tuple[ast.Definition, ...]:
        return self.program.definitions

    def guard_offsets(self, guard: ast.Guard) -> IntSet:
        """The finite offset set i - j of a (checked) guard."""
        if isinstance(guard, ast.NamedGuard):
            return self.binary[guard.name].offsets
        return offsets_of(guard)

    def periodic(self, node: ast.Periodic | ast.Ref) -> tuple[int, IntSet]:
        """(modulus, residues) of a periodic atom or of a reference to a unary import."""
        if isinstance(node, ast.Periodic):
            return node.modulus, node.residues
        predicate = self.unary[node.name]
        return predicate.modulus, predicate.residues

    def __repr__(self) -> str:
        info = self.info
        return (f"<CheckedProgram {self.program.source}: {info.definitions} definitions, {info.model_class}, "
                f"depth {info.depth}, {self._outputs()}>")

    def _outputs(self) -> str:
        """The outputs in words: ``accept EXPR`` or the next tokens."""
        from .printer import format_expr

        if self.accept is not None:
            return f"accept {format_expr(self.accept)}"
        return ", ".join(f'next "{token}"' for token, _ in self.next_tokens)

    def _repr_html_(self) -> str:
        """The program in a notebook: its source highlighted, its class, count depth and outputs,
        and a table of its definitions (name, sort, depth)."""
        from .display import program_html
        from .errors import CraspError
        from .printer import format_expr, format_program

        program, info = self.program, self.info
        try:
            source: str | None = program.text if program.text is not None else format_program(program)
        except CraspError:  # a set with no short form
            source = None
        kind = "plain C-RASP (NoPE)" if info.plain else "C-RASP[periodic, local] (APE)"
        kind += (f"; period {info.period}" if info.periods else "") + (f"; offsets {info.offsets}" if info.offsets else "")
        depths = ast.definition_depths(self.definitions)
        rows = [(d.name, self.sorts[d.name].value, depths[d.name], format_expr(d.expr)) for d in self.definitions]
        return program_html(program.source, source, kind=kind, depth=info.depth, outputs=self._outputs(),
                            alphabet=info.alphabet, definitions=rows)


_FINITE_OPS = ("==", "<", "<=")  # i - j OP k holds for finitely many offsets i - j >= 0


def offsets_of(guard: ast.OffsetSet | ast.OffsetCompare) -> IntSet:
    """Offsets d >= 0 with guard true at i - j = d, as intervals; raises if there are infinitely many.

    >>> print(offsets_of(ast.OffsetCompare("<", 10**10)))
    {0..9999999999}
    """
    if isinstance(guard, ast.OffsetSet):
        return guard.offsets
    if guard.op not in _FINITE_OPS:
        raise PredicateError(
            f"guard 'i - j {guard.op} {guard.bound}' holds for infinitely many offsets, so it is "
            "not local; a local guard names finitely many offsets, e.g. 'i - j in {1, 2}'",
            guard.loc,
        )
    if guard.op == "==":
        return IntSet.of({guard.bound}) if guard.bound >= 0 else IntSet()
    return IntSet.span(0, guard.bound + (guard.op == "<="))


class _Checker:
    def __init__(self, program: ast.Program, registry: PredicateRegistry) -> None:
        self.program = program
        self.registry = registry
        self.sorts: dict[str, Sort] = {}
        self.depths: dict[str, int] = {}
        self.defined_at: dict[str, ast.Loc | None] = {}
        self.unary: dict[str, UnaryPredicate] = {}
        self.binary: dict[str, BinaryPredicate] = {}
        self.periods: set[int] = set()
        self.offsets = IntSet()
        self.alphabet: set[str] = set()
        self.later = {d.name: d.loc for d in program.definitions}
        self.positional = False

    # ------------------------------------------------------------ statements

    def run(self) -> CheckedProgram:
        accept: ast.Expr | None = None
        accept_loc = None
        next_tokens: dict[str, ast.Expr] = {}
        alphabet_loc = None
        for statement in self.program.statements:
            if isinstance(statement, ast.Import):
                self.import_(statement)
            elif isinstance(statement, ast.Alphabet):
                if alphabet_loc is not None:
                    raise OutputError(
                        f"a second 'alphabet' declaration (the first is at line {_line(alphabet_loc)})",
                        statement.loc,
                    )
                alphabet_loc = statement.loc
                self.alphabet |= statement.tokens
            elif isinstance(statement, ast.Definition):
                self.define(statement)
            elif isinstance(statement, ast.Accept):
                if accept is not None:
                    raise OutputError(
                        f"a second 'accept' (the first is at line {_line(accept_loc)})", statement.loc
                    )
                self.expect(statement.expr, Sort.BOOL, "'accept' needs a Boolean")
                accept, accept_loc = statement.expr, statement.loc
            else:
                if statement.token in next_tokens:
                    raise OutputError(f"'next \"{statement.token}\"' is declared twice", statement.loc)
                self.expect(statement.expr, Sort.BOOL, f"'next \"{statement.token}\"' needs a Boolean")
                next_tokens[statement.token] = statement.expr
                self.alphabet.add(statement.token)
        if accept is not None and next_tokens:
            raise OutputError(
                "a program declares either 'accept' or 'next' outputs, not both", accept_loc
            )
        if accept is None and not next_tokens:
            accept = self.default_accept()
        depth = max(self.depths.values(), default=0)
        for expr in ([accept] if accept is not None else list(next_tokens.values())):
            depth = max(depth, ast.count_depth(expr, self.depths))
        info = ProgramInfo(
            plain=not self.positional,
            depth=depth,
            periods=frozenset(self.periods),
            offsets=self.offsets,
            alphabet=frozenset(self.alphabet),
            definitions=len(self.program.definitions),
        )
        return CheckedProgram(
            self.program, dict(self.sorts), dict(self.unary), dict(self.binary),
            accept, tuple(next_tokens.items()), info,
        )

    def default_accept(self) -> ast.Expr:
        definitions = self.program.definitions
        if not definitions:
            raise OutputError("the program has no definitions and declares no output", None)
        last = definitions[-1]
        if self.sorts[last.name] is not Sort.BOOL:
            raise OutputError(
                f"the program's output is its last definition, '{last.name}', which is a count; "
                "make the last definition a Boolean or declare 'accept NAME'",
                last.loc,
            )
        return ast.Ref(last.name, last.loc)

    def import_(self, statement: ast.Import) -> None:
        name = statement.name
        if name not in self.registry:
            known = ", ".join(self.registry.names()) or "none"
            raise NameResolutionError(
                f"unknown predicate '{name}' (registered predicates: {known}; register more with "
                "crasp.predicates.register_unary/register_binary)",
                statement.loc,
            )
        self.claim(name, statement.loc)
        predicate = self.registry[name]
        if isinstance(predicate, UnaryPredicate):
            self.unary[name] = predicate
        else:
            self.binary[name] = predicate

    def claim(self, name: str, loc: ast.Loc | None) -> None:
        if name in self.defined_at:
            raise NameResolutionError(
                f"'{name}' is already defined at line {_line(self.defined_at[name])}", loc
            )
        self.defined_at[name] = loc

    def define(self, definition: ast.Definition) -> None:
        sort = self.sort(definition.expr)
        self.claim(definition.name, definition.loc)
        self.sorts[definition.name] = sort
        self.depths[definition.name] = ast.count_depth(definition.expr, self.depths)

    # ------------------------------------------------------------ expressions

    def expect(self, node: ast.Expr, want: Sort, context: str) -> None:
        got = self.sort(node)
        if got is not want:
            article = "a Boolean" if want is Sort.BOOL else "a count"
            found = "a count" if got is Sort.COUNT else "a Boolean"
            raise SortError(f"{context}: expected {article} here, but this is {found}", node.loc)

    def sort(self, node: ast.Expr) -> Sort:
        if isinstance(node, ast.TokenIs):
            self.alphabet.add(node.token)
            return Sort.BOOL
        if isinstance(node, ast.BoolConst):
            return Sort.BOOL
        if isinstance(node, ast.Periodic):
            self.check_periodic(node)
            return Sort.BOOL
        if isinstance(node, ast.Ref):
            return self.resolve(node)
        if isinstance(node, ast.Not):
            self.expect(node.operand, Sort.BOOL, "'!' negates Booleans")
            return Sort.BOOL
        if isinstance(node, (ast.And, ast.Or)):
            op = "&&" if isinstance(node, ast.And) else "||"
            self.expect(node.left, Sort.BOOL, f"'{op}' combines Booleans")
            self.expect(node.right, Sort.BOOL, f"'{op}' combines Booleans")
            return Sort.BOOL
        if isinstance(node, ast.Compare):
            self.expect(node.left, Sort.COUNT, f"'{node.op}' compares counts")
            self.expect(node.right, Sort.COUNT, f"'{node.op}' compares counts")
            return Sort.BOOL
        if isinstance(node, ast.Count):
            if node.guard is not None:
                self.check_guard(node.guard)
            self.expect(node.operand, Sort.BOOL, "'#' counts positions where a Boolean holds")
            return Sort.COUNT
        if isinstance(node, ast.Const):
            return Sort.COUNT
        if isinstance(node, (ast.Add, ast.Sub, ast.Min, ast.Max)):
            what = {ast.Add: "'+'", ast.Sub: "'-'", ast.Min: "'min'", ast.Max: "'max'"}[type(node)]
            self.expect(node.left, Sort.COUNT, f"{what} works on counts")
            self.expect(node.right, Sort.COUNT, f"{what} works on counts")
            return Sort.COUNT
        if isinstance(node, ast.Scale):
            self.expect(node.operand, Sort.COUNT, "'*' scales counts")
            return Sort.COUNT
        if isinstance(node, ast.Cond):
            self.expect(node.condition, Sort.BOOL, "the condition of 'if'")
            sort = self.sort(node.then)
            self.expect(node.otherwise, sort, f"both branches of 'if' must have one sort ({sort.value})")
            return sort
        raise TypeError(f"not a C-RASP expression node: {node!r}")

    def resolve(self, ref: ast.Ref) -> Sort:
        name = ref.name
        if name in self.sorts:
            return self.sorts[name]
        if name in self.unary:
            self.periods.add(self.unary[name].modulus)
            self.positional = True
            return Sort.BOOL
        if name in self.binary:
            raise SortError(
                f"'{name}' is a binary predicate: use it as a guard, as in '#[{name}] \"a\"'", ref.loc
            )
        if name in self.later:
            raise NameResolutionError(
                f"'{name}' is used before it is defined (at line {_line(self.later[name])}); "
                "a definition may only refer to earlier ones",
                ref.loc,
            )
        if name in self.registry:
            raise NameResolutionError(
                f"undefined name '{name}' (a registered predicate: add '#import {name}')", ref.loc
            )
        raise NameResolutionError(f"undefined name '{name}'", ref.loc)

    def check_periodic(self, node: ast.Periodic) -> None:
        if node.modulus < 1:
            raise PredicateError(f"the modulus of a periodic predicate must be >= 1, not {node.modulus}", node.loc)
        outside = node.residues - IntSet.span(0, node.modulus)
        if outside:
            raise PredicateError(
                f"residue {outside.min()} is not in 0..{node.modulus - 1} (positions mod {node.modulus})",
                node.loc,
            )
        self.periods.add(node.modulus)
        self.positional = True

    def check_guard(self, guard: ast.Guard) -> None:
        self.positional = True
        if isinstance(guard, ast.NamedGuard):
            if guard.name in self.binary:
                self.offsets |= self.binary[guard.name].offsets
                return
            if guard.name in self.unary:
                raise PredicateError(
                    f"'{guard.name}' is a unary predicate; a guard needs a binary one such as 'pred'",
                    guard.loc,
                )
            if guard.name in self.sorts:
                raise PredicateError(
                    f"'{guard.name}' is a definition; a guard must be a binary predicate or 'i - j in {{...}}'",
                    guard.loc,
                )
            hint = f" (add '#import {guard.name}')" if guard.name in self.registry else ""
            raise NameResolutionError(f"undefined guard '{guard.name}'{hint}", guard.loc)
        offsets = offsets_of(guard)
        if offsets and offsets.min() < 0:
            raise PredicateError(
                f"guard offset {offsets.min()} is negative, but j <= i always, so i - j >= 0", guard.loc
            )
        self.offsets |= offsets



def _check_nesting(program: ast.Program) -> None:
    """Refuse an expression nested deeper than MAX_NESTING (programs built in Python are not parsed)."""
    found = ast.deeper_than(program, MAX_NESTING)
    if found is not None:
        node, statement = found
        raise StaticError(TOO_DEEP, node.loc or statement.loc)


def _line(loc: ast.Loc | None) -> str:
    return str(loc.line) if loc is not None else "?"


def check(program: ast.Program, registry: PredicateRegistry | None = None) -> CheckedProgram:
    """Check ``program``; raise the first :class:`~crasp.errors.StaticError`, located in its source."""
    ensure_stack()
    try:
        _check_nesting(program)
        return _Checker(program, registry or DEFAULT_REGISTRY).run()
    except SourceError as error:
        raise type(error)(error.message, error.loc, source=program.source, text=program.text) from None
