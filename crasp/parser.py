"""Parse C-RASP source text into :mod:`crasp.ast` nodes with the Lark grammar ``grammar.lark``.

>>> program = parse('C = # "a"\\nA = C >= 2')
>>> program.definitions[1].expr
Compare(op='>=', left=Ref(name='C'), right=Const(value=2))
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from . import ast, cache, lalr
from .errors import CraspSyntaxError, SortError, SourceError
from .intsets import IntSet
from .limits import MAX_LITERAL, MAX_NESTING, TOO_DEEP, ensure_stack

if TYPE_CHECKING:
    from lark import Token

_TERMINAL_NAMES = {
    "NAME": "a name",
    "STRING": 'a token literal such as "a"',
    "INT": "an integer",
    "SIGNED_INT": "an integer",
    "CMP_OP": "a comparison (< <= == != >= >)",
    "IMPORT": "'#import'",
    "$END": "end of input",
}
_GRAMMAR = os.path.join(os.path.dirname(__file__), "grammar.lark")


@functools.cache
def _grammar() -> str:
    with open(_GRAMMAR, encoding="utf-8") as file:
        return file.read()


@functools.cache
def _lark():
    from lark import Lark

    return Lark(_grammar(), parser="lalr", propagate_positions=True, maybe_placeholders=True,
                cache=_grammar_cache())


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
    return os.path.join(folder, cache.LARK_TABLES) if os.access(folder, os.W_OK) else False


def _tables() -> tuple | None:
    """The grammar's parser as plain data for :mod:`crasp.lalr`, from the cache (built with Lark
    and kept there on first use); None when the cache is off, or Lark's parser cannot be exported."""
    return None if cache.disabled() else _cached_tables()


@functools.cache
def _cached_tables() -> tuple | None:
    tables = cache.load("lalr", _grammar())
    if tables is None:
        if not _grammar_cache():  # nowhere to keep them: exporting in every process costs more than Lark
            return None
        try:
            tables = lalr.export(_lark())
        except lalr.Unsupported:
            tables = ()
        cache.store("lalr", _grammar(), tables)
    return tables or None


def parse(text: str, source: str = "<program>") -> ast.Program:
    """Parse program ``text``; ``source`` names it in error messages.

    Raises :class:`~crasp.errors.CraspSyntaxError` (or a static error for non-linear arithmetic
    and malformed positional syntax) carrying file, line, column and what was expected; a program
    nested deeper than :data:`~crasp.limits.MAX_NESTING` is refused where it passes the limit.
    A well-formed program is parsed by :mod:`crasp.lalr` on the grammar's tables, without
    importing Lark; Lark parses the others, and its errors are the ones reported.
    """
    ensure_stack()
    statements = _parse_without_lark(text)
    if statements is None:
        statements = _parse_with_lark(text, source)
    program = ast.Program(tuple(statements), source=source, comments=_comments(text), text=text)
    found = ast.deeper_than(program, MAX_NESTING)
    if found is not None:
        node, statement = found
        raise CraspSyntaxError(TOO_DEEP, node.loc or statement.loc, source=source, text=text)
    return program


def _parse_without_lark(text: str) -> list | None:
    tables = _tables()
    if tables is None:
        return None
    try:
        return lalr.parse(tables, text, _SPAN_BUILDERS)
    except lalr.NotParsed:
        return None


def _parse_with_lark(text: str, source: str) -> list:
    from lark.exceptions import UnexpectedInput

    try:
        tree = _lark().parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(error, text, source) from None
    try:
        return _to_ast().transform(tree)  # without recursion: any depth is built, then measured
    except SourceError as error:  # a builder's (Lark calls __default__ without wrapping its errors)
        raise type(error)(error.message, error.loc, source=source, text=text) from None


@functools.cache
def _to_ast():
    """A Lark transformer from the parse tree to the AST, by :data:`BUILDERS`."""
    from lark import Tree
    from lark.visitors import Transformer_NonRecursive

    class ToAst(Transformer_NonRecursive):
        def __default__(self, data, children, meta):
            build = BUILDERS.get(data)
            return build(_loc(meta), children) if build is not None else Tree(data, children, meta)

    return ToAst()


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


def _syntax_error(error, text: str, source: str) -> CraspSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(error, UnexpectedCharacters):
        char = text[cast(int, error.pos_in_stream)]  # Lark declares it None; UnexpectedCharacters sets an int
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
    line, column, end_line, end_column = token.line, token.column, token.end_line, token.end_column
    # A lexed token always has its span; Lark's Token allows None only for tokens made by hand.
    assert line is not None and column is not None and end_line is not None and end_column is not None
    return ast.Loc(line, column, end_line, end_column)


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


def _build_start(loc, children):
    return children


def _build_import_stmt(loc, children):
    return ast.Import(children[1].value, loc)


def _build_alphabet_stmt(loc, children):
    return ast.Alphabet(frozenset(unquote(c.value) for c in children if c is not None), loc)


def _build_definition(loc, children):
    name, expr = children
    return ast.Definition(name.value, expr, loc)


def _build_accept_stmt(loc, children):
    return ast.Accept(children[0], loc)


def _build_next_stmt(loc, children):
    token, expr = children
    return ast.NextToken(unquote(token.value), expr, loc)


def _build_cond(loc, children):
    then, condition, otherwise = children
    return ast.Cond(then, condition, otherwise, loc)


def _build_or_(loc, children):
    return ast.Or(children[0], children[1], loc)


def _build_and_(loc, children):
    return ast.And(children[0], children[1], loc)


def _build_not_(loc, children):
    return ast.Not(children[0], loc)


def _build_compare(loc, children):
    left, op, right = children
    return ast.Compare(op.value, left, right, loc)


def _build_add(loc, children):
    return ast.Add(children[0], children[1], loc)


def _build_sub(loc, children):
    return ast.Sub(children[0], children[1], loc)


def _build_mul(loc, children):
    left, right = children
    if isinstance(left, ast.Const):
        return ast.Scale(left.value, right, loc)
    if isinstance(right, ast.Const):
        return ast.Scale(right.value, left, loc)
    raise SortError(
        "multiplication needs an integer literal on one side (C-RASP is linear): write 'k * expr'",
        loc,
    )


def _build_neg(loc, children):
    (operand,) = children
    if isinstance(operand, ast.Const):
        return ast.Const(-operand.value, loc)
    return ast.Scale(-1, operand, loc)


def _build_count(loc, children):
    guard, operand = children
    return ast.Count(operand, guard, loc)


def _build_named_guard(loc, children):
    return ast.NamedGuard(children[0].value, loc)


def _build_offset_set(loc, children):
    i, j, offsets = children
    _require_position_names([i, j], ["i", "j"], "a guard")
    return ast.OffsetSet(offsets, loc)


def _build_offset_compare(loc, children):
    i, j, op, bound = children
    _require_position_names([i, j], ["i", "j"], "a guard")
    return ast.OffsetCompare(op.value, bound, loc)


def _build_token(loc, children):
    return ast.TokenIs(unquote(children[0].value), loc)


def _build_ref(loc, children):
    return ast.Ref(children[0].value, loc)


def _build_const(loc, children):
    return ast.Const(_int(children[0]), loc)


def _build_true(loc, children):
    return ast.BoolConst(True, loc)


def _build_false(loc, children):
    return ast.BoolConst(False, loc)


def _build_min_(loc, children):
    return ast.Min(children[0], children[1], loc)


def _build_max_(loc, children):
    return ast.Max(children[0], children[1], loc)


def _build_periodic_set(loc, children):
    name, modulus, residues = children
    _require_position_names([name], ["i"], "a periodic predicate")
    return ast.Periodic(_int(modulus), residues, loc)


def _build_periodic_eq(loc, children):
    name, modulus, op, residue = children
    _require_position_names([name], ["i"], "a periodic predicate")
    m, r = _int(modulus), _int(residue)
    if m < 1 or op.value == "==":
        return ast.Periodic(m, IntSet.of({r}), loc)  # the checker validates the range
    return ast.Periodic(m, residues_where(op.value, r, m), loc)


def _build_int_set(loc, children):
    return frozenset(c for c in children if c is not None)


def _build_signed_int(loc, children):
    return _int(children[0])


BUILDERS = {
    "start": _build_start,
    "import_stmt": _build_import_stmt,
    "alphabet_stmt": _build_alphabet_stmt,
    "definition": _build_definition,
    "accept_stmt": _build_accept_stmt,
    "next_stmt": _build_next_stmt,
    "cond": _build_cond,
    "or_": _build_or_,
    "and_": _build_and_,
    "not_": _build_not_,
    "compare": _build_compare,
    "add": _build_add,
    "sub": _build_sub,
    "mul": _build_mul,
    "neg": _build_neg,
    "count": _build_count,
    "named_guard": _build_named_guard,
    "offset_set": _build_offset_set,
    "offset_compare": _build_offset_compare,
    "token": _build_token,
    "ref": _build_ref,
    "const": _build_const,
    "true": _build_true,
    "false": _build_false,
    "min_": _build_min_,
    "max_": _build_max_,
    "periodic_set": _build_periodic_set,
    "periodic_eq": _build_periodic_eq,
    "int_set": _build_int_set,
    "signed_int": _build_signed_int,
}
"""What each rule of the grammar (by its name or alias) builds from its children and its location."""

_SPAN_BUILDERS = {
    name: (lambda span, children, build=build: build(ast.Loc(*span) if span is not None else None, children))
    for name, build in BUILDERS.items()
}


__all__ = ["parse", "parse_file", "unquote"]
