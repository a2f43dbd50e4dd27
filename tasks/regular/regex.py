"""Regular expressions over a finite alphabet: parser, syntax tree and position automaton.

Syntax (the precedence is the usual one: postfix operators, then concatenation, then ``|``):

* a literal is one symbol of the alphabet; ``.`` is any symbol of the alphabet;
* ``[abc]``, ``[a-c]`` and ``[^ab]`` are character classes (ranges by code point, restricted to
  the alphabet; every symbol named in a class must be in the alphabet);
* ``|`` is union, juxtaposition is concatenation, ``( )`` groups, and ``()`` is the empty word;
* postfix ``*`` (zero or more), ``+`` (one or more, never union) and ``?`` (zero or one); they
  stack (``a**`` is ``(a*)*``).

An empty expression, an empty alternative (``a|``), an unbalanced parenthesis or a symbol outside
the alphabet is a :class:`RegexError` that names the 1-based column.

>>> parse_regex("(ab|b)*", "ab")
Star(inner=Union(parts=(Concat(parts=(Symbol(symbol='a'), Symbol(symbol='b'))), Symbol(symbol='b'))))
>>> parse_regex("(ab", "ab")
Traceback (most recent call last):
...
tasks.regular.regex.RegexError: regex '(ab': column 4: expected ')'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union as TypingUnion

from ..types import TaskError

METACHARACTERS = frozenset("|()*+?[].^-\\")


class RegexError(TaskError):
    """A malformed regular expression, or one that names a symbol outside the alphabet.

    The message quotes the expression and the 1-based column of the problem."""

    def __init__(self, text: str, column: int, problem: str) -> None:
        self.text, self.column, self.problem = text, column, problem
        super().__init__(f"regex {text!r}: column {column}: {problem}")


# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class Epsilon:
    """The empty word, written ``()``."""


@dataclass(frozen=True)
class Symbol:
    symbol: str


@dataclass(frozen=True)
class Class:
    """A set of symbols (a character class or ``.``), one position of the automaton."""

    symbols: frozenset[str]


@dataclass(frozen=True)
class Concat:
    parts: tuple["Regex", ...]


@dataclass(frozen=True)
class Union:
    parts: tuple["Regex", ...]


@dataclass(frozen=True)
class Star:
    inner: "Regex"


@dataclass(frozen=True)
class Plus:
    inner: "Regex"


@dataclass(frozen=True)
class Optional:
    inner: "Regex"


Regex = TypingUnion[Epsilon, Symbol, Class, Concat, Union, Star, Plus, Optional]


def alphabet_tuple(alphabet: str | Sequence[str]) -> tuple[str, ...]:
    """The alphabet as a tuple of distinct symbols, in the order given."""
    symbols = tuple(alphabet)
    if not symbols:
        raise TaskError("the alphabet is empty")
    if len(set(symbols)) != len(symbols):
        raise TaskError(f"the alphabet {symbols} repeats a symbol")
    return symbols


# ---------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str, symbols: tuple[str, ...]) -> None:
        self.text, self.symbols, self.pos = text, symbols, 0
        self.known = frozenset(symbols)

    def error(self, problem: str, pos: int | None = None) -> RegexError:
        return RegexError(self.text, (self.pos if pos is None else pos) + 1, problem)

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def parse(self) -> Regex:
        if not self.text:
            raise self.error("empty regular expression (write () for the language {ε})")
        tree = self.union()
        if self.pos < len(self.text):
            char = self.text[self.pos]
            raise self.error("unbalanced ')': no '(' opens it" if char == ")" else f"unexpected {char!r}")
        return tree

    def union(self) -> Regex:
        parts = [self.concat()]
        while self.peek() == "|":
            self.pos += 1
            parts.append(self.concat())
        return parts[0] if len(parts) == 1 else Union(tuple(parts))

    def concat(self) -> Regex:
        parts = []
        while self.peek() not in (None, "|", ")"):
            parts.append(self.postfix())
        if not parts:
            char = self.peek()
            where = "at the end" if char is None else f"before {char!r}"
            raise self.error(f"empty alternative {where}: expected a symbol, '(', '[' or '.' "
                             f"(write () for the empty word)")
        return parts[0] if len(parts) == 1 else Concat(tuple(parts))

    def postfix(self) -> Regex:
        node = self.atom()
        while self.peek() in ("*", "+", "?"):
            op = self.text[self.pos]
            self.pos += 1
            node = Star(node) if op == "*" else Plus(node) if op == "+" else Optional(node)
        return node

    def atom(self) -> Regex:
        char = self.peek()
        start = self.pos
        if char == "(":
            self.pos += 1
            if self.peek() == ")":
                self.pos += 1
                return Epsilon()
            inner = self.union()
            if self.peek() != ")":
                raise self.error("expected ')'" + (f" to close the '(' at column {start + 1}"
                                                   if self.peek() is not None else ""))
            self.pos += 1
            return inner
        if char == "[":
            return self.char_class()
        if char == ".":
            self.pos += 1
            return Class(self.known)
        if char in ("*", "+", "?"):
            raise self.error(f"{char!r} has nothing to repeat")
        if char == "]":
            raise self.error("unbalanced ']': no '[' opens it")
        return Symbol(self.symbol())

    def symbol(self) -> str:
        char = self.text[self.pos]
        if char not in self.known:
            if char in METACHARACTERS:
                raise self.error(f"unexpected {char!r}")
            raise self.error(f"symbol {char!r} is not in the alphabet {{{', '.join(self.symbols)}}}")
        self.pos += 1
        return char

    def char_class(self) -> Regex:
        opening = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        chosen: set[str] = set()
        while self.peek() != "]":
            if self.peek() is None:
                raise self.error(f"expected ']' to close the '[' at column {opening + 1}")
            low_pos = self.pos
            low = self.symbol()
            if self.peek() == "-" and self.pos + 1 < len(self.text) and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self.symbol()
                if ord(high) < ord(low):
                    raise self.error(f"empty range {low}-{high}", low_pos)
                chosen.update(s for s in self.symbols if ord(low) <= ord(s) <= ord(high))
            else:
                chosen.add(low)
        self.pos += 1
        if negated:
            chosen = set(self.symbols) - chosen
        if not chosen:
            raise self.error("empty character class", opening)
        return Class(frozenset(chosen))


def parse_regex(text: str, alphabet: str | Sequence[str]) -> Regex:
    """Parse ``text`` into a syntax tree over ``alphabet`` (a string of one-character symbols or a
    sequence of them); see the module docstring for the syntax.

    >>> parse_regex("a+b?", "ab")
    Concat(parts=(Plus(inner=Symbol(symbol='a')), Optional(inner=Symbol(symbol='b'))))
    """
    symbols = alphabet_tuple(alphabet)
    bad = [s for s in symbols if len(s) != 1 or s in METACHARACTERS or s.isspace()]
    if bad:
        raise TaskError(f"a regex alphabet needs one-character symbols other than {''.join(sorted(METACHARACTERS))} "
                        f"and spaces; got {bad[0]!r}")
    if not isinstance(text, str):
        raise TaskError(f"a regex is a string, not {type(text).__name__}")
    return _Parser(text, symbols).parse()


def to_text(node: Regex) -> str:
    """The expression written back in this module's syntax (fully parenthesised where needed).

    >>> to_text(parse_regex("(a|bc)*a?", "abc"))
    '(a|bc)*a?'
    """
    if isinstance(node, Epsilon):
        return "()"
    if isinstance(node, Symbol):
        return node.symbol
    if isinstance(node, Class):
        return "[" + "".join(sorted(node.symbols)) + "]"
    if isinstance(node, Union):
        return "|".join(to_text(p) for p in node.parts)
    if isinstance(node, Concat):
        return "".join(f"({to_text(p)})" if isinstance(p, Union) else to_text(p) for p in node.parts)
    inner = to_text(node.inner)
    if not isinstance(node.inner, (Symbol, Class, Epsilon)):
        inner = f"({inner})"
    return inner + {Star: "*", Plus: "+", Optional: "?"}[type(node)]


# ---------------------------------------------------------------- position automaton


@dataclass
class _Positions:
    """Glushkov's construction: positions 1..n (0 is the virtual start position)."""

    labels: list[frozenset[str]]
    follow: list[int]  # bit masks, indexed by position


def _glushkov(node: Regex, acc: _Positions) -> tuple[bool, int, int]:
    """(nullable, first, last) of ``node`` as bit masks; fills positions and follow sets."""
    if isinstance(node, Epsilon):
        return True, 0, 0
    if isinstance(node, (Symbol, Class)):
        acc.labels.append(frozenset([node.symbol]) if isinstance(node, Symbol) else node.symbols)
        acc.follow.append(0)
        bit = 1 << (len(acc.labels) - 1)
        return False, bit, bit
    if isinstance(node, Union):
        nullable, first, last = False, 0, 0
        for part in node.parts:
            n, f, l_ = _glushkov(part, acc)
            nullable, first, last = nullable or n, first | f, last | l_
        return nullable, first, last
    if isinstance(node, Concat):
        nullable, first, last = True, 0, 0
        for part in node.parts:
            n, f, l_ = _glushkov(part, acc)
            _link(acc, last, f)
            first = first | f if nullable else first
            last = last | l_ if n else l_
            nullable = nullable and n
        return nullable, first, last
    n, f, l_ = _glushkov(node.inner, acc)
    if isinstance(node, (Star, Plus)):
        _link(acc, l_, f)
    return (n or not isinstance(node, Plus)), f, l_


def _link(acc: _Positions, sources: int, targets: int) -> None:
    while sources:
        low = sources & -sources
        acc.follow[low.bit_length() - 1] |= targets
        sources ^= low


def subset_automaton(node: Regex, symbols: tuple[str, ...]) -> tuple[list[list[int]], list[bool]]:
    """A complete DFA for ``node`` by the subset construction on its position automaton:
    (table, accepting), state 0 the start. Not minimal."""
    acc = _Positions(labels=[frozenset()], follow=[0])  # position 0: the virtual start
    nullable, first, last = _glushkov(node, acc)
    acc.follow[0] = first
    last |= 1 if nullable else 0
    # by_symbol[k]: mask of the positions labelled symbols[k]
    by_symbol = [sum(1 << p for p, label in enumerate(acc.labels) if s in label) for s in symbols]
    follow = acc.follow
    index = {1: 0}
    states = [1]
    table: list[list[int]] = []
    for state in states:
        reach = 0
        rest = state
        while rest:
            low = rest & -rest
            reach |= follow[low.bit_length() - 1]
            rest ^= low
        row = []
        for mask in by_symbol:
            target = reach & mask
            number = index.get(target)
            if number is None:
                number = index[target] = len(states)
                states.append(target)
            row.append(number)
        table.append(row)
    return table, [bool(state & last) for state in states]


__all__ = ["RegexError", "Regex", "Epsilon", "Symbol", "Class", "Concat", "Union", "Star", "Plus", "Optional",
           "parse_regex", "to_text", "subset_automaton", "alphabet_tuple"]
