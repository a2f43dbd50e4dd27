"""The grammar's LALR(1) parser run without importing Lark, for a fast start of the command line.

Lark (about 25 ms to import, 10 more to load its cached tables) builds the parser of
``grammar.lark`` once; :func:`export` copies what that parser does into plain data: the parse
table, the contextual lexer's per-state regular expressions and keyword tables, and for every
rule how Lark shapes its tree (anonymous tokens dropped, ``_rule`` children inlined, ``[x]``
placeholders, ``?rule`` single children passed through, and the positions Lark propagates).
:func:`parse` runs that data on a text and calls a builder per rule name, as Lark's tree and a
transformer over it would, without building the tree. The data is kept in the per-user cache
(:mod:`crasp.cache`), so only the first run of a version of the tool imports Lark to build it.

This runtime only accepts: on any input that is not a well-formed program, or a builder that
raises, it raises :class:`NotParsed` and the caller asks Lark, whose error messages are the
reference. Its trees are tested equal to Lark's on the library, on random programs and on
mutated texts (``tests/test_lalr.py``).

>>> import lark
>>> grammar = 'start: NAME ("," NAME)*\\nNAME: /[a-z]+/\\n%ignore " "'
>>> tables = export(lark.Lark(grammar, parser="lalr", propagate_positions=True))
>>> parse(tables, "ab, c", {"start": lambda loc, children: [t.value for t in children]})
['ab', 'c']
"""

from __future__ import annotations

import re
from typing import Callable

SHIFT, REDUCE = 0, 1
_END = "$END"


class NotParsed(Exception):
    """The runtime did not accept the text (or a builder raised): ask Lark."""


class Unsupported(Exception):
    """The grammar uses a Lark feature this runtime does not reproduce."""


class Token:
    """A token as the builders see it: its terminal's name, its text and its 1-based span."""

    __slots__ = ("type", "value", "line", "column", "end_line", "end_column")

    def __init__(self, type_: str, value: str, line: int, column: int, end_line: int, end_column: int):
        self.type, self.value = type_, value
        self.line, self.column, self.end_line, self.end_column = line, column, end_line, end_column

    @property
    def span(self) -> tuple[int, int, int, int]:
        return self.line, self.column, self.end_line, self.end_column

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


class _Inline:
    """The children of a ``_rule``, spliced into the rule that contains it."""

    __slots__ = ("children",)

    def __init__(self, children: list):
        self.children = children


# ---------------------------------------------------------------- export (needs Lark)


def export(parser) -> tuple:
    """The plain-data tables of a ``lark.Lark`` LALR parser built with ``propagate_positions``
    (marshal-able: tuples, dicts, ints and strings). Raises :class:`Unsupported` for options and
    grammar features the runtime does not reproduce."""
    from lark.lexer import ContextualLexer, UnlessCallback
    from lark.parse_tree_builder import (ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild,
                                         PropagatePositions)
    from lark.parsers.lalr_analysis import Shift

    options = parser.options
    if (options.parser != "lalr" or options.transformer is not None or options.postlex is not None
            or options.propagate_positions is not True or options.lexer_callbacks or options.g_regex_flags
            or options.regex or options.use_bytes or len(options.start) != 1):
        raise Unsupported("only a plain LALR parser with propagate_positions=True is exported")

    frontend = parser.parser
    lexer = frontend.lexer
    if not isinstance(lexer, ContextualLexer):
        raise Unsupported("only Lark's contextual lexer is exported")
    table = frontend.parser.parser.parse_table

    rule_index: dict[object, int] = {}
    rules: list[tuple] = []
    for rule, chain in parser._parse_tree_builder.rule_builders:
        rule_index[rule] = len(rules)
        rules.append(_export_rule(rule, chain, ExpandSingleChild, ChildFilterLALR,
                                  ChildFilterLALR_NoPlaceholders, PropagatePositions))

    states = {}
    for state, actions in table.states.items():
        states[int(state)] = {str(symbol): (SHIFT, int(argument)) if action is Shift
                              else (REDUCE, rule_index[argument]) for symbol, (action, argument) in actions.items()}

    lexers: list[tuple] = []
    lexer_of_state, seen = {}, {}
    for state, basic in lexer.lexers.items():
        if id(basic) not in seen:
            seen[id(basic)] = len(lexers)
            lexers.append(_export_lexer(basic, UnlessCallback))
        lexer_of_state[int(state)] = seen[id(basic)]

    (start,) = options.start
    return (states, tuple(rules), lexer_of_state, tuple(lexers), int(table.start_states[start]),
            int(table.end_states[start]))


def _export_rule(rule, chain, expand_single, filter_placeholders, filter_plain, positions) -> tuple:
    expand1, include, append_none, has_positions = False, None, 0, False
    for wrapper in chain:
        if wrapper is expand_single:
            expand1 = True
        elif wrapper is positions:
            has_positions = True
        elif getattr(wrapper, "func", None) is filter_placeholders:
            include, append_none = tuple((int(i), bool(x), int(n)) for i, x, n in wrapper.args[0]), wrapper.args[1]
        elif getattr(wrapper, "func", None) is filter_plain:
            include = tuple((int(index), bool(expand), 0) for index, expand in wrapper.args[0])
        else:
            raise Unsupported(f"rule {rule}: tree-building step {wrapper!r} is not reproduced")
    name = rule.alias or rule.options.template_source or rule.origin.name
    if not has_positions or rule.options.template_source:
        raise Unsupported(f"rule {rule}: templates are not reproduced")
    if expand1 and name.startswith("_"):
        raise Unsupported(f"rule {rule}: an inlined rule that passes its single child through")
    return (str(rule.origin.name), str(name), len(rule.expansion), include, int(append_none), expand1)


def _export_lexer(basic, unless_callback) -> tuple:
    scanner = basic.scanner  # built (and the keyword callbacks with it) on first access
    if basic.user_callbacks:
        raise Unsupported("lexer callbacks are not reproduced")
    keywords = {}
    for terminal, callback in basic.callback.items():
        if not isinstance(callback, unless_callback):
            raise Unsupported(f"terminal {terminal}: lexer callback {callback!r} is not reproduced")
        strings = {}
        for keyword in callback.scanner.terminals:
            if keyword.pattern.type != "str" or keyword.pattern.flags:
                raise Unsupported(f"keyword {keyword.name} is not a plain string")
            strings[str(keyword.pattern.value)] = str(keyword.name)
        keywords[str(terminal)] = strings
    patterns = tuple(compiled.pattern for compiled in scanner._mres)
    if any(compiled.flags & ~re.UNICODE for compiled in scanner._mres):
        raise Unsupported("lexer regular expressions with flags are not reproduced")
    return (tuple(str(p) for p in patterns), tuple(sorted(str(t) for t in basic.ignore_types)), keywords)


# ---------------------------------------------------------------- runtime (no Lark)


def parse(tables: tuple, text: str, builders: dict[str, Callable]):
    """Run exported ``tables`` on ``text``; ``builders[name](loc, children)`` builds each rule's
    value, ``loc`` being ``(line, column, end_line, end_column)`` or None where Lark's node has no
    position. Returns the start rule's value; raises :class:`NotParsed` where Lark would raise,
    or a builder raised."""
    states, rules, lexer_of_state, lexers, state, end_state = tables
    state_stack, values, spans = [state], [], []
    scanners: dict[int, tuple] = {}
    position, line, line_start, size = 0, 1, 0, len(text)
    try:
        while True:
            if position < size:
                index = lexer_of_state[state_stack[-1]]
                scanner = scanners.get(index)
                if scanner is None:
                    patterns, ignore, keywords = lexers[index]
                    scanner = scanners[index] = (tuple(re.compile(p) for p in patterns), frozenset(ignore), keywords)
                compiled, ignore, keywords = scanner
                for pattern in compiled:
                    match = pattern.match(text, position)
                    if match:
                        break
                else:
                    raise NotParsed(f"no token at offset {position}")
                value, kind = match.group(0), match.lastgroup
                start_line, start_column = line, position - line_start + 1
                newlines = value.count("\n")
                if newlines:
                    line += newlines
                    line_start = position + value.rindex("\n") + 1
                position += len(value)
                if kind in ignore:
                    continue
                kind = keywords.get(kind, {}).get(value, kind)
                token = Token(kind, value, start_line, start_column, line, position - line_start + 1)
            else:
                token = Token(_END, "", line, position - line_start + 1, line, position - line_start + 1)
            while True:
                action = states[state_stack[-1]].get(token.type)
                if action is None:
                    raise NotParsed(f"unexpected {token.type}")
                if action[0] == SHIFT:
                    if token.type == _END:
                        raise NotParsed("shift at end of input")
                    state_stack.append(action[1])
                    values.append(token)
                    spans.append(token.span)
                    break
                origin = _reduce(rules[action[1]], state_stack, values, spans, builders)
                goto = states[state_stack[-1]][origin]
                state_stack.append(goto[1])
                if token.type == _END and goto[1] == end_state:
                    return values[-1]
    except NotParsed:
        raise
    except Exception as error:  # a builder's error, or a table that does not fit: Lark decides
        raise NotParsed(f"{type(error).__name__}: {error}") from error


def _reduce(rule: tuple, state_stack: list, values: list, spans: list, builders: dict) -> str:
    origin, name, size, include, append_none, expand1 = rule
    if size:
        children, raw_spans = values[-size:], spans[-size:]
        del state_stack[-size:], values[-size:], spans[-size:]
    else:
        children, raw_spans = [], []
    first = next((span for span in raw_spans if span is not None), None)
    span = None
    if first is not None:
        end = next(span for span in reversed(raw_spans) if span is not None)
        span = (first[0], first[1], end[2], end[3])
    if include is not None:
        kept = []
        for index, expand, nones in include:
            if nones:
                kept += [None] * nones
            if expand:
                kept += children[index].children
            else:
                kept.append(children[index])
        if append_none:
            kept += [None] * append_none
        children = kept
    if expand1 and len(children) == 1:
        value = children[0]
        if isinstance(value, Token):  # Lark gives a token its own position, never its container's
            span = value.span
    elif origin.startswith("_"):
        value = _Inline(children)
    else:
        value = builders[name](span, children)
    values.append(value)
    spans.append(span)
    return origin


__all__ = ["NotParsed", "Token", "Unsupported", "export", "parse"]
