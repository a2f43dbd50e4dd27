"""Programs from the search's derivations: sizes, AST expressions, shared definitions, the text."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Callable, Sequence, get_args

from crasp import ast
from crasp.intsets import IntSet
from crasp.parser import parse
from crasp.printer import format_program

from .atoms import Atom
from .examples import Output

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


# ---------------------------------------------------------------- sizes


def expr_size(node: ast.Expr) -> int:
    """AST nodes of an expression; a local guard counts one node, a reference one.

    >>> from crasp.parser import parse
    >>> expr_size(parse('A = #[i - j == 1] "a" >= 1').definitions[0].expr)
    5
    """
    total = 0
    for sub in ast.walk(node):
        total += 1 + (isinstance(sub, ast.Count) and sub.guard is not None)
    return total


def program_size(program: ast.Program) -> int:
    """AST nodes of every definition and output of ``program`` (names count one node each).

    >>> from crasp import library
    >>> program_size(library.load("dyck1"))
    15
    """
    total = 0
    for statement in program.statements:
        if isinstance(statement, (ast.Definition, ast.Accept, ast.NextToken)):
            total += expr_size(statement.expr)
    return total


# ---------------------------------------------------------------- programs


_BINARY: dict[str, Callable[[ast.Expr, ast.Expr], ast.Expr]] = {
    "and": ast.And, "or": ast.Or, "add": ast.Add, "sub": ast.Sub, "min": ast.Min, "max": ast.Max}


class _Builder:
    """AST expressions from derivations."""

    def __init__(self, nodes: list[tuple], atoms: Sequence[Atom] = ()) -> None:
        self.nodes = nodes
        self.atoms = atoms
        self.memo: dict[int, ast.Expr] = {}

    def __call__(self, gid: int) -> ast.Expr:
        found = self.memo.get(gid)
        if found is None:
            found = self.memo[gid] = self.build(self.nodes[gid])
        return found

    def build(self, node: tuple) -> ast.Expr:
        tag = node[0]
        if tag == "tok":
            return ast.TokenIs(node[1])
        if tag == "bool":
            return ast.BoolConst(node[1])
        if tag == "per":
            return ast.Periodic(node[1], IntSet.of(node[2]))
        if tag == "const":
            return ast.Const(node[1])
        if tag == "atom":
            return self.atoms[node[1]].expr
        if tag == "not":
            return ast.Not(self(node[1]))
        if tag == "count":
            return ast.Count(self(node[1]))
        if tag == "local":
            offsets = node[1]
            guard = ast.OffsetCompare("==", min(offsets)) if len(offsets) == 1 else ast.OffsetSet(offsets)
            return ast.Count(self(node[2]), guard)
        if tag == "scale":
            return ast.Scale(node[1], self(node[2]))
        if tag == "cmp":
            left, right = self(node[2]), self(node[3])
            if isinstance(left, ast.Const) and not isinstance(right, ast.Const):
                return ast.Compare(_FLIP[node[1]], right, left)
            return ast.Compare(node[1], left, right)
        if tag in ("bcond", "ccond"):
            return ast.Cond(self(node[2]), self(node[1]), self(node[3]))
        left, right = self(node[1]), self(node[2])
        if tag in ("add", "min", "max") and isinstance(left, ast.Const) and not isinstance(right, ast.Const):
            left, right = right, left
        return _BINARY[tag](left, right)


_EXPR_TYPES = get_args(ast.Expr)


def _replace(node: ast.Expr, target: ast.Expr, name: str) -> ast.Expr:
    if node == target:
        return ast.Ref(name)
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, _EXPR_TYPES):
            replaced = _replace(value, target, name)
            if replaced is not value:
                changes[f.name] = replaced
    if not changes:
        return node
    return dataclasses.replace(node, **changes)  # type: ignore[arg-type]  # mypy checks each node type of the union


def _is_count(node: ast.Expr) -> bool:
    if isinstance(node, ast.Cond):
        return _is_count(node.then)
    return isinstance(node, (ast.Count, ast.Const, ast.Add, ast.Sub, ast.Scale, ast.Min, ast.Max))


def _share(outputs: list[tuple[str, ast.Expr]]) -> tuple[list[ast.Definition], list[tuple[str, ast.Expr]]]:
    """Name every sub-expression (of 3 nodes or more) that occurs twice, largest first."""
    definitions: list[ast.Definition] = []
    numbers = {"B": 0, "C": 0}
    while True:
        seen: Counter = Counter()
        for expr in [d.expr for d in definitions] + [e for _, e in outputs]:
            for sub in ast.walk(expr):
                if not isinstance(sub, ast.Ref) and expr_size(sub) >= 3:
                    seen[sub] += 1
        repeated = [sub for sub, n in seen.items() if n >= 2]
        if not repeated:
            return definitions, outputs
        target = max(repeated, key=expr_size)
        prefix = "C" if _is_count(target) else "B"
        numbers[prefix] += 1
        name = f"{prefix}{numbers[prefix]}"
        definitions = [ast.Definition(name, target)] + [
            ast.Definition(d.name, _replace(d.expr, target, name)) for d in definitions]
        outputs = [(t, _replace(e, target, name)) for t, e in outputs]


def expressions(outputs: Sequence[Output], nodes: list[tuple], atoms: Sequence[Atom]) -> list[tuple[str, ast.Expr]]:
    """Each solved output's expression (atoms written out in full)."""
    build = _Builder(nodes, atoms)
    found = []
    for o in outputs:
        assert o.solution is not None  # only solved outputs are passed
        found.append((o.name, build(o.solution)))
    return found


def _name_atoms(found: list[tuple[str, ast.Expr]], atoms: Sequence[Atom]
                ) -> tuple[list[ast.Definition], list[tuple[str, ast.Expr]]]:
    """A definition for each named atom of more than a token count that the outputs use."""
    named: list[ast.Definition] = []
    for atom in reversed(atoms):  # an atom may contain earlier ones, never later ones
        if not atom.name.isidentifier() or expr_size(atom.expr) <= 2:
            continue
        used = any(sub == atom.expr for _, e in found for sub in ast.walk(e))
        used = used or any(sub == atom.expr for d in named for sub in ast.walk(d.expr))
        if used:
            found = [(t, _replace(e, atom.expr, atom.name)) for t, e in found]
            named = [ast.Definition(atom.name, atom.expr)] + [
                ast.Definition(d.name, _replace(d.expr, atom.expr, atom.name)) for d in named]
    return named, found


def assemble(task, found: list[tuple[str, ast.Expr]], alphabet: Sequence[str], atoms: Sequence[Atom] = ()
             ) -> ast.Program:
    """The program of the outputs' expressions ``found``: named atoms and repeated
    sub-expressions become definitions; tokens of ``alphabet`` the program does not mention are
    declared."""
    named, found = _name_atoms(found, atoms)
    definitions, found = _share(found)
    definitions = named + definitions
    statements: list[ast.Statement] = []
    mentioned = {n.token for _, e in found for n in ast.walk(e) if isinstance(n, ast.TokenIs)}
    mentioned |= {n.token for d in definitions for n in ast.walk(d.expr) if isinstance(n, ast.TokenIs)}
    is_accept = len(found) == 1 and found[0][0] == "accept" and task.format.value == "accept"
    if not is_accept:
        mentioned |= {name for name, _ in found}
    extra = [t for t in alphabet if t not in mentioned]
    if extra:
        statements.append(ast.Alphabet(frozenset(extra)))
    statements.extend(definitions)
    if is_accept:
        statements.append(ast.Accept(found[0][1]))
    else:
        statements.extend(ast.NextToken(name, expr) for name, expr in found)
    return ast.Program(tuple(statements), source=f"<synthesized for {task.name}>")


def canonical(program: ast.Program) -> tuple[ast.Program, str]:
    """The program as ``crasp fmt`` prints it, parsed back (so that it carries its text)."""
    text = format_program(program)
    parsed = parse(text, source=program.source)
    return (parsed if parsed == program else program), text
