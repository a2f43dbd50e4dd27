"""Turn any AST back into source text that parses to an equal AST.

>>> from crasp.parser import parse
>>> print(format_expr(parse('A = 2 * # "a" - # "b" + 3').definitions[0].expr))
2 * #"a" - #"b" + 3
>>> print(format_expr(parse("A = x - (y - z)").definitions[0].expr))
x - (y - z)
"""

from __future__ import annotations

from . import ast
from .errors import CraspError
from .intsets import IntSet

_LISTED = 64
"""Sets with at most this many elements are written out; larger ones as a comparison."""

# Binding strength of each syntactic level (higher binds tighter), as in grammar.lark.
COND, OR, AND, NOT, COMPARE, SUM, PRODUCT, UNARY, ATOM = range(9)


def _quote(token: str) -> str:
    return '"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _int_set(values: IntSet) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


def _periodic(node: ast.Periodic) -> str:
    m, residues = node.modulus, node.residues
    if len(residues) <= _LISTED or m < 1:
        return f"i mod {m} in {_int_set(residues)}"
    if residues.spans == ((residues.min(), m),):
        return f"i mod {m} >= {residues.min()}"
    if residues.spans == ((0, residues.max() + 1),):
        return f"i mod {m} < {residues.max() + 1}"
    missing = residues.complement(0, m)
    if len(missing) == 1:
        return f"i mod {m} != {missing.min()}"
    raise CraspError(f"residues {residues} mod {m} have no short form: list at most {_LISTED} of them")


def _offsets(offsets: IntSet) -> str:
    if len(offsets) > _LISTED and offsets.spans == ((0, offsets.max() + 1),):
        return f"[i - j < {offsets.max() + 1}]"
    if len(offsets) > 100_000:
        raise CraspError(f"offsets {offsets} have no short form: list at most 100000 of them")
    return f"[i - j in {_int_set(offsets)}]"


def _guard(guard: ast.Guard) -> str:
    if isinstance(guard, ast.NamedGuard):
        return f"[{guard.name}]"
    if isinstance(guard, ast.OffsetSet):
        return _offsets(guard.offsets)
    return f"[i - j {guard.op} {guard.bound}]"


def _level(node: ast.Expr) -> int:
    if isinstance(node, ast.Cond):
        return COND
    if isinstance(node, ast.Or):
        return OR
    if isinstance(node, ast.And):
        return AND
    if isinstance(node, ast.Not):
        return NOT
    if isinstance(node, (ast.Compare, ast.Periodic)):
        return COMPARE
    if isinstance(node, (ast.Add, ast.Sub)):
        return SUM
    if isinstance(node, ast.Scale):
        return PRODUCT
    if isinstance(node, ast.Count) or (isinstance(node, ast.Const) and node.value < 0):
        return UNARY
    return ATOM


def _count_operand(node: ast.Expr) -> str:
    if isinstance(node, ast.Not):
        return "!" + _count_operand(node.operand)
    return _at(node, ATOM)


def _at(node: ast.Expr, level: int) -> str:
    text = _bare(node)
    return f"({text})" if _level(node) < level else text


def _bare(node: ast.Expr) -> str:
    if isinstance(node, ast.TokenIs):
        return _quote(node.token)
    if isinstance(node, ast.BoolConst):
        return "true" if node.value else "false"
    if isinstance(node, ast.Periodic):
        return _periodic(node)
    if isinstance(node, ast.Ref):
        return node.name
    if isinstance(node, ast.Const):
        return str(node.value)
    if isinstance(node, ast.Cond):
        return f"{_at(node.then, OR)} if {_at(node.condition, OR)} else {_at(node.otherwise, COND)}"
    if isinstance(node, ast.Or):
        return f"{_at(node.left, OR)} || {_at(node.right, AND)}"
    if isinstance(node, ast.And):
        return f"{_at(node.left, AND)} && {_at(node.right, NOT)}"
    if isinstance(node, ast.Not):
        return "!" + _at(node.operand, NOT)
    if isinstance(node, ast.Compare):
        return f"{_at(node.left, SUM)} {node.op} {_at(node.right, SUM)}"
    if isinstance(node, ast.Add):
        return f"{_at(node.left, SUM)} + {_at(node.right, PRODUCT)}"
    if isinstance(node, ast.Sub):
        return f"{_at(node.left, SUM)} - {_at(node.right, PRODUCT)}"
    if isinstance(node, ast.Scale):
        return f"{node.factor} * {_at(node.operand, UNARY)}"
    if isinstance(node, ast.Count):
        guard = _guard(node.guard) + " " if node.guard is not None else ""
        return f"#{guard}{_count_operand(node.operand)}"
    if isinstance(node, ast.Min):
        return f"min({_bare(node.left)}, {_bare(node.right)})"
    if isinstance(node, ast.Max):
        return f"max({_bare(node.left)}, {_bare(node.right)})"
    raise TypeError(f"not a C-RASP expression node: {node!r}")


def format_expr(node: ast.Expr) -> str:
    """Source text of one expression, with only the parentheses it needs."""
    return _bare(node)


def format_statement(statement: ast.Statement) -> str:
    """Source text of one statement."""
    if isinstance(statement, ast.Import):
        return f"#import {statement.name}"
    if isinstance(statement, ast.Alphabet):
        return "alphabet {" + ", ".join(_quote(t) for t in sorted(statement.tokens)) + "}"
    if isinstance(statement, ast.Definition):
        return f"{statement.name} = {format_expr(statement.expr)}"
    if isinstance(statement, ast.Accept):
        return f"accept {format_expr(statement.expr)}"
    if isinstance(statement, ast.NextToken):
        return f"next {_quote(statement.token)} = {format_expr(statement.expr)}"
    raise TypeError(f"not a C-RASP statement: {statement!r}")


def format_program(program: ast.Program) -> str:
    """Source text of a program: one statement a line, comments and paragraph breaks kept.

    >>> from crasp.parser import parse
    >>> print(format_program(parse('// Dyck-1\\nC=#"("   // opens\\n\\nD = C>0')), end="")
    // Dyck-1
    C = #"("  // opens
    <BLANKLINE>
    D = C > 0
    """
    comments = sorted(program.comments, key=lambda c: (c.line, c.column))
    lines: list[str] = []
    previous_end: int | None = None
    position = 0

    def blank_before(line: int) -> None:
        if previous_end is not None and line > previous_end + 1 and lines and lines[-1] != "":
            lines.append("")

    for statement in program.statements:
        loc = statement.loc
        if loc is not None:
            while position < len(comments) and comments[position].line < loc.line:
                blank_before(comments[position].line)
                lines.append(comments[position].text)
                previous_end = comments[position].line
                position += 1
            blank_before(loc.line)
        text = format_statement(statement)
        if loc is not None and position < len(comments) and comments[position].line == loc.end_line:
            text += "  " + comments[position].text
            position += 1
        lines.append(text)
        previous_end = loc.end_line if loc is not None else previous_end
    for comment in comments[position:]:
        blank_before(comment.line)
        lines.append(comment.text)
        previous_end = comment.line
    return "\n".join(lines) + "\n" if lines else ""
