"""A naive C-RASP evaluator written straight from the definitions, as the tests' reference.

It shares nothing with :mod:`crasp.interpreter`: it walks the AST at one position at a time,
evaluates a count by looping over every j <= i and testing the guard as the predicate
psi(i, j) itself, and asks the registry's predicates directly. O(n^2) per count.
"""

from __future__ import annotations

from crasp import ast
from crasp.predicates import DEFAULT_REGISTRY, BinaryPredicate, PredicateRegistry, UnaryPredicate

_OPS = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
}


class NaiveEvaluator:
    def __init__(self, program: ast.Program, tokens: list[str], offset: int = 0,
                 registry: PredicateRegistry = DEFAULT_REGISTRY) -> None:
        self.program = program
        self.tokens = tokens
        self.offset = offset
        self.registry = registry
        self.imports = {s.name: registry[s.name] for s in program.imports}
        self.values: dict[str, list] = {}
        for definition in program.definitions:
            self.values[definition.name] = [
                self.at(definition.expr, i) for i in range(1, len(tokens) + 1)
            ]

    def guard(self, guard: ast.Guard | None, i: int, j: int) -> bool:
        if guard is None:
            return True
        if isinstance(guard, ast.NamedGuard):
            predicate = self.imports[guard.name]
            assert isinstance(predicate, BinaryPredicate)
            return predicate.holds(i, j)
        if isinstance(guard, ast.OffsetSet):
            return (i - j) in guard.offsets
        return _OPS[guard.op](i - j, guard.bound)

    def at(self, node: ast.Expr, i: int):
        """The value of ``node`` at (1-based, relative) position ``i``."""
        if isinstance(node, ast.TokenIs):
            return self.tokens[i - 1] == node.token
        if isinstance(node, ast.BoolConst):
            return node.value
        if isinstance(node, ast.Periodic):
            return (self.offset + i) % node.modulus in node.residues
        if isinstance(node, ast.Ref):
            if node.name in self.values:
                return self.values[node.name][i - 1]
            predicate = self.imports[node.name]
            assert isinstance(predicate, UnaryPredicate)
            return predicate.holds(self.offset + i)
        if isinstance(node, ast.Not):
            return not self.at(node.operand, i)
        if isinstance(node, ast.And):
            return self.at(node.left, i) and self.at(node.right, i)
        if isinstance(node, ast.Or):
            return self.at(node.left, i) or self.at(node.right, i)
        if isinstance(node, ast.Compare):
            return _OPS[node.op](self.at(node.left, i), self.at(node.right, i))
        if isinstance(node, ast.Count):
            return sum(
                1 for j in range(1, i + 1)
                if self.guard(node.guard, i, j) and self.at(node.operand, j)
            )
        if isinstance(node, ast.Const):
            return node.value
        if isinstance(node, ast.Add):
            return self.at(node.left, i) + self.at(node.right, i)
        if isinstance(node, ast.Sub):
            return self.at(node.left, i) - self.at(node.right, i)
        if isinstance(node, ast.Scale):
            return node.factor * self.at(node.operand, i)
        if isinstance(node, ast.Min):
            return min(self.at(node.left, i), self.at(node.right, i))
        if isinstance(node, ast.Max):
            return max(self.at(node.left, i), self.at(node.right, i))
        if isinstance(node, ast.Cond):
            branch = node.then if self.at(node.condition, i) else node.otherwise
            return self.at(branch, i)
        raise TypeError(node)

    def output(self, expr: ast.Expr) -> list:
        return [self.at(expr, i) for i in range(1, len(self.tokens) + 1)]


def naive_values(program: ast.Program, tokens: list[str], offset: int = 0) -> dict[str, list]:
    """Every definition's value at every position."""
    return NaiveEvaluator(program, tokens, offset).values


def naive_accepts(program: ast.Program, tokens: list[str], offset: int = 0) -> bool:
    """Acceptance: the declared 'accept' Boolean, else the last definition, at the last position."""
    evaluator = NaiveEvaluator(program, tokens, offset)
    declared = [s for s in program.statements if isinstance(s, ast.Accept)]
    if declared:
        return bool(evaluator.at(declared[0].expr, len(tokens)))
    return bool(evaluator.values[program.definitions[-1].name][-1])
