"""Parse C-RASP source text into :mod:`crasp.ast` nodes with the Lark grammar ``grammar.lark``.

>>> program = parse('C = # "a"\\nA = C >= 2')
>>> program.definitions[1].expr
Compare(op='>=', left=Ref(name='C'), right=Const(value=2))
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from lark import Lark, Token, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.visitors import Transformer_NonRecursive

from . import ast, cache
from .errors import CraspSyntaxError, SortError, SourceError
from .intsets import IntSet
from .limits import MAX_LITERAL, MAX_NESTING, TOO_DEEP, ensure_stack

_TERMINAL_NAMES = {
    "NAME": "a name",
    "STRING": 'a token literal such as "a"',
    "INT": "an integer",
    "SIGNED_INT": "an integer",
    "CMP_OP": "a comparison (< <= == != >= >)",
    "IMPORT": "'#import'",
    "$END": "end of input",
}


@functools.cache
def _lark() -> Lark:
    with open(os.path.join(os.path.dirname(__file__), "grammar.lark"), encoding="utf-8") as file:
        grammar = file.read()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=_grammar_cache())


def _grammar_cache() -> str | bool:
    """Where Lark keeps its parse tables (it checks them against the grammar, its options and its
    own version, and rebuilds a stale or damaged file); False when the cache is off or unwritable."""
    if cache.disabled():
        return False
    folder = cache.directory()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.path.join(folder, "grammar.lark-tables") if os.access(folder, os.W_OK) else False


def parse(text: str, source: str = "<program>") -> ast.Program:
    """Parse program ``text``; ``source`` names it in error messages.

    Raises :class:`~crasp.errors.CraspSyntaxError` (or a static error for non-linear arithmetic
    and malformed positional syntax) carrying file, line, column and what was expected; a program
    nested deeper than :data:`~crasp.limits.MAX_NESTING` is refused where it passes the limit.
    """
    ensure_stack()
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(error, text, source) from None
    try:
        statements = _ToAst().transform(tree)  # without recursion: any depth is built, then measured
    except VisitError as error:
        inner = error.orig_exc
        if isinstance(inner, SourceError):
            raise type(inner)(inner.message, inner.loc, source=source, text=text) from None
        raise
    program = ast.Program(tuple(statements), source=source, comments=_comments(text), text=text)
    found = ast.deeper_than(program, MAX_NESTING)
    if found is not None:
        node, statement = found
        raise CraspSyntaxError(TOO_DEEP, node.loc or statement.loc, source=source, text=text)
    return program


def parse_file(path: str | Path) -> ast.Program:
    """Parse the program stored at ``path`` (errors name the file)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark some editors write is dropped
    except UnicodeDecodeError as error:
        raise CraspSyntaxError(f"file is not UTF-8 text ({error.reason})", source=str(path)) from None
    return parse(text, source=str(path))


# ---------------------------------------------------------------- syntax errors


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    for terminal in _lark().terminals:
        if terminal.name == name and terminal.pattern.type == "str":
            return repr(terminal.pattern.value)
    return name


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of input"
    if token.type == "NAME":
        return f"name '{token.value}'"
    if token.type == "STRING":
        return f"token literal {token.value}"
    if token.type in ("INT", "SIGNED_INT"):
        return f"integer {token.value}"
    return repr(str(token.value))


def _syntax_error(error: UnexpectedInput, text: str, source: str) -> CraspSyntaxError:
    if isinstance(error, UnexpectedCharacters):
        char = text[error.pos_in_stream]
        loc = ast.Loc(error.line, error.column, error.line, error.column + 1)
        message = f"unexpected character {char!r}"
        if char == '"':
            message = "unterminated token literal (a literal ends with \" on the same line)"
        # The lexer's allowed set is LALR-approximate here, so it is not shown.
        return CraspSyntaxError(message, loc, source=source, text=text)
    if isinstance(error, UnexpectedToken):
        token = error.token
        expected = tuple(sorted({_describe_terminal(n) for n in error.accepts or error.expected}))
        if token.type == "$END":
            lines = text.rstrip().splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
            return CraspSyntaxError(
                "unexpected end of input", ast.Loc(line, column, line, column + 1),
                source=source, text=text, expected=expected,
            )
        loc = ast.Loc(token.line, token.column, token.end_line, token.end_column)
        message = f"unexpected {_describe_token(token)}"
        if token.value == "=":
            message += " (is the previous statement incomplete, or did you mean '=='?)"
        return CraspSyntaxError(message, loc, source=source, text=text, expected=expected)
    if isinstance(error, UnexpectedEOF):  # pragma: no cover - LALR reports $END tokens instead
        return CraspSyntaxError("unexpected end of input", source=source, text=text)
    raise error  # pragma: no cover


# ---------------------------------------------------------------- comments


def _comments(text: str) -> tuple[ast.Comment, ...]:
    """``//`` comments outside token literals, with their positions."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        in_string = escaped = False
        for index, char in enumerate(line):
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif line.startswith("//", index):
                found.append(ast.Comment(line[index:].rstrip(), number, index + 1))
                break
    return tuple(found)


# ---------------------------------------------------------------- tree -> AST


def residues_where(op: str, bound: int, modulus: int) -> IntSet:
    """The residues x in 0..modulus-1 with ``x op bound``, as intervals (never enumerated).

    >>> print(residues_where(">=", 1, 10**12))
    {1..999999999999}
    """
    everything = IntSet.span(0, modulus)
    if op == "!=":
        return everything - {bound}
    below = {"<": bound, "<=": bound + 1}.get(op)
    if below is not None:
        return everything.clip(0, below)
    above = {">": bound + 1, ">=": bound}[op]
    return everything.clip(above, modulus)


def _loc(meta) -> ast.Loc | None:
    if getattr(meta, "empty", True):
        return None
    return ast.Loc(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_loc(token: Token) -> ast.Loc:
    return ast.Loc(token.line, token.column, token.end_line, token.end_column)


def unquote(literal: str) -> str:
    """The token named by a string literal (``"a"`` -> ``a``; ``\\"`` and ``\\\\`` escapes)."""
    body, out, index = literal[1:-1], [], 0
    while index < len(body):
        if body[index] == "\\" and index + 1 < len(body):
            index += 1
        out.append(body[index])
        index += 1
    return "".join(out)


def _int(token: Token) -> int:
    digits = token.value.lstrip("-").lstrip("0")
    if len(digits) > len(str(MAX_LITERAL)) or int(digits or "0") > MAX_LITERAL:
        shown = token.value if len(token.value) <= 24 else f"{token.value[:12]}... ({len(digits)} digits)"
        raise CraspSyntaxError(
            f"integer {shown} is out of range: literals are limited to +-10^{len(str(MAX_LITERAL)) - 1} "
            "(counts and positions are exact 64-bit integers)",
            _token_loc(token),
        )
    return int(token.value)


_POSITION_ROLES = {"i": "the current position", "j": "the counted position"}


def _require_position_names(names: list[Token], expected: list[str], what: str) -> None:
    for token, want in zip(names, expected):
        if token.value != want:
            raise CraspSyntaxError(
                f"{what} is written with '{want}' for {_POSITION_ROLES[want]}, found '{token.value}'",
                _token_loc(token),
            )


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    def start(self, meta, children):
        return children

    def import_stmt(self, meta, children):
        return ast.Import(children[1].value, _loc(meta))

    def alphabet_stmt(self, meta, children):
        return ast.Alphabet(frozenset(unquote(c.value) for c in children if c is not None), _loc(meta))

    def definition(self, meta, children):
        name, expr = children
        return ast.Definition(name.value, expr, _loc(meta))

    def accept_stmt(self, meta, children):
        return ast.Accept(children[0], _loc(meta))

    def next_stmt(self, meta, children):
        token, expr = children
        return ast.NextToken(unquote(token.value), expr, _loc(meta))

    def cond(self, meta, children):
        then, condition, otherwise = children
        return ast.Cond(then, condition, otherwise, _loc(meta))

    def or_(self, meta, children):
        return ast.Or(children[0], children[1], _loc(meta))

    def and_(self, meta, children):
        return ast.And(children[0], children[1], _loc(meta))

    def not_(self, meta, children):
        return ast.Not(children[0], _loc(meta))

    def compare(self, meta, children):
        left, op, right = children
        return ast.Compare(op.value, left, right, _loc(meta))

    def add(self, meta, children):
        return ast.Add(children[0], children[1], _loc(meta))

    def sub(self, meta, children):
        return ast.Sub(children[0], children[1], _loc(meta))

    def mul(self, meta, children):
        left, right = children
        if isinstance(left, ast.Const):
            return ast.Scale(left.value, right, _loc(meta))
        if isinstance(right, ast.Const):
            return ast.Scale(right.value, left, _loc(meta))
        raise SortError(
            "multiplication needs an integer literal on one side (C-RASP is linear): write 'k * expr'",
            _loc(meta),
        )

    def neg(self, meta, children):
        (operand,) = children
        if isinstance(operand, ast.Const):
            return ast.Const(-operand.value, _loc(meta))
        return ast.Scale(-1, operand, _loc(meta))

    def count(self, meta, children):
        guard, operand = children
        return ast.Count(operand, guard, _loc(meta))

    def named_guard(self, meta, children):
        return ast.NamedGuard(children[0].value, _loc(meta))

    def offset_set(self, meta, children):
        i, j, offsets = children
        _require_position_names([i, j], ["i", "j"], "a guard")
        return ast.OffsetSet(offsets, _loc(meta))

    def offset_compare(self, meta, children):
        i, j, op, bound = children
        _require_position_names([i, j], ["i", "j"], "a guard")
        return ast.OffsetCompare(op.value, bound, _loc(meta))

    def token(self, meta, children):
        return ast.TokenIs(unquote(children[0].value), _loc(meta))

    def ref(self, meta, children):
        return ast.Ref(children[0].value, _loc(meta))

    def const(self, meta, children):
        return ast.Const(_int(children[0]), _loc(meta))

    def true(self, meta, children):
        return ast.BoolConst(True, _loc(meta))

    def false(self, meta, children):
        return ast.BoolConst(False, _loc(meta))

    def min_(self, meta, children):
        return ast.Min(children[0], children[1], _loc(meta))

    def max_(self, meta, children):
        return ast.Max(children[0], children[1], _loc(meta))

    def periodic_set(self, meta, children):
        name, modulus, residues = children
        _require_position_names([name], ["i"], "a periodic predicate")
        return ast.Periodic(_int(modulus), residues, _loc(meta))

    def periodic_eq(self, meta, children):
        name, modulus, op, residue = children
        _require_position_names([name], ["i"], "a periodic predicate")
        m, r = _int(modulus), _int(residue)
        if m < 1 or op.value == "==":
            return ast.Periodic(m, IntSet.of({r}), _loc(meta))  # the checker validates the range
        return ast.Periodic(m, residues_where(op.value, r, m), _loc(meta))

    def int_set(self, meta, children):
        return frozenset(c for c in children if c is not None)

    def signed_int(self, meta, children):
        return _int(children[0])


__all__ = ["parse", "parse_file", "unquote"]
