"""Seeded, deterministic token-level mutants of the library's ``.cr`` programs.

A program's text is split into tokens by a small tokenizer that follows the terminals of
``crasp/grammar.lark``; a mutant applies a few random edits to the token list (insert, delete,
swap, duplicate, replace, and wrap a span in deep nesting) and joins the tokens back with spaces.
Inserted tokens come from the grammar's literals, the names and token literals of the program,
and edge cases: huge and negative integers, deep nesting, long chains, odd token literals.

>>> mutant(7) == mutant(7)
True
>>> tokenize('C = #"(" - 2 // c\\nV = i mod 2 in {-1}')
['C', '=', '#', '"("', '-', '2', '// c', '\\n', 'V', '=', 'i', 'mod', '2', 'in', '{', '-1', '}']
>>> join(['A', '=', '#', '"a"', '\\n', 'B', '=', 'A', '>', '1'])
'A = # "a"\\nB = A > 1'
"""

from __future__ import annotations

import functools
import random
import re
from importlib import resources

from crasp import library
from crasp.predicates import BUILTINS

_TOKEN = re.compile(
    r"""
      (?P<space>[ \t\f\r]+)
    | (?P<newline>\n)
    | (?P<comment>//[^\n]*)
    | (?P<import>\#import\b)
    | (?P<string>"(?:\\.|[^"\\\n])*")
    | (?P<cmp><=|>=|==|!=|<|>)
    | (?P<logic>\|\||&&)
    | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<signed>-[0-9]+)
    | (?P<int>[0-9]+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` (grammar terminals, comments, newlines; spaces dropped)."""
    return [m.group() for m in _TOKEN.finditer(text) if m.lastgroup != "space"]


def join(tokens: list[str]) -> str:
    """Source text of a token list: tokens separated by a space, newline tokens kept."""
    out: list[str] = []
    for index, token in enumerate(tokens):
        if token == "\n":
            out.append("\n")
            continue
        if out and out[-1] != "\n":
            out.append(" ")
        out.append(token)
        if token.startswith("//") and tokens[index + 1:index + 2] != ["\n"]:
            out.append("\n")  # a comment would swallow the rest of the line
    return "".join(out)


def join_compact(tokens: list[str]) -> str:
    """Like :func:`join`, without spaces in runs of one token, after ``( ! # [ { min max`` and
    before ``) ] } ,`` (where the tokens stay apart).

    >>> join_compact(tokenize('A = ! ! "a" && ( ( x - 1 ) ) == - 1 + # [ i - j in { 1 , 2 } ] "a"'))
    'A = !!"a" && ((x - 1)) == - 1 + #[i - j in {1, 2}] "a"'
    """
    out: list[str] = []
    previous = "\n"
    for index, token in enumerate(tokens):
        tight = (previous == token or previous in ("(", "!", "#", "[", "{", "min", "max")
                 or token in (")", "]", "}", ","))
        if token != "\n" and previous != "\n" and not (tight and tokenize(previous + token) == [previous, token]):
            out.append(" ")
        out.append(token)
        if token.startswith("//") and tokens[index + 1:index + 2] != ["\n"]:
            token = "\n"
            out.append(token)
        previous = token
    return "".join(out)


@functools.cache
def grammar_literals() -> tuple[str, ...]:
    """Every quoted literal of the grammar's rules and terminals, plus ``#import``."""
    grammar = resources.files("crasp").joinpath("grammar.lark").read_text(encoding="utf-8")
    found: set[str] = {"#import"}
    for line in grammar.splitlines():
        line = line.strip()
        if line.startswith("//") or "/" in line:  # comments and regular-expression terminals
            continue
        found.update(re.findall(r'"([^"\\]+)"', line))
    return tuple(sorted(found))


@functools.cache
def sources() -> dict[str, str]:
    """The text of every library program, by name."""
    return {name: library.path(name).read_text(encoding="utf-8") for name in library.names()}


BIG = 10**30
HUGE_DIGITS = "1" + "0" * 4999  # a 5000-digit integer
EDGE_INTEGERS = (
    "0", "1", "2", "3", "7", "4096", str(2**31), str(2**53 + 1), str(2**62), str(2**63),
    str(2**64), str(BIG), HUGE_DIGITS, "-1", "-2", "-7", f"-{2**63}", f"-{BIG}", f"-{HUGE_DIGITS}",
)
EDGE_STRINGS = (
    '""', '" "', '"a b"', '"\\""', '"\\\\"', '"ä"', '"日本"', '"😀"', '"\\u0000"',
    '"<|bos|>"', '"<|other|>"', '"' + "x" * 300 + '"',
)
DEPTHS = (3, 50, 250, 400, 500, 3000)
_SWAPS = (("true", "false"), ("min", "max"), ("&&", "||"), ("+", "-"), ("accept", "next"),
          ("alphabet", "accept"), ("in", "mod"), ("[", "("), ("]", ")"), ("{", "("), ("}", ")"))


def _kind(token: str) -> str:
    match = _TOKEN.fullmatch(token)
    return match.lastgroup if match else "snippet"


def _names(tokens: list[str]) -> list[str]:
    keywords = set(grammar_literals())
    seen = {t for t in tokens if _kind(t) == "name" and t not in keywords}
    seen |= {"i", "j", "x"} | {p.name for p in BUILTINS}
    return sorted(seen)


class _Mutator:
    """Edits of one token list, drawn from ``rng``."""

    def __init__(self, rng: random.Random, tokens: list[str]) -> None:
        self.rng = rng
        self.tokens = tokens
        self.keywords = set(grammar_literals())
        self.names = _names(tokens)
        self.strings = sorted({t for t in tokens if _kind(t) == "string"} | set(EDGE_STRINGS))

    def pool_token(self) -> str:
        """Any token: a grammar literal, a name, a token literal, an edge integer or a deep snippet."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.30:
            return rng.choice(grammar_literals())
        if kind < 0.50:
            return rng.choice(self.names)
        if kind < 0.62:
            return rng.choice(self.strings)
        if kind < 0.85:
            return rng.choice(EDGE_INTEGERS)
        return self.deep(rng.choice(self.strings[:3] + self.names[:3] + ["true", "1"]))

    def deep(self, operand: str) -> str:
        """``operand`` deeply nested, negated or chained (or a bare run of openers)."""
        rng = self.rng
        n = rng.choice(DEPTHS)
        kind = rng.randrange(8)
        if kind == 0:
            return "(" * n + operand + ")" * n
        if kind == 1:
            return "!" * n + operand
        if kind == 2:
            return "- " * n + operand
        if kind == 3:
            return " ".join([operand] + ["&&", operand] * n)
        if kind == 4:
            return " ".join([operand] + ["||", operand] * n)
        if kind == 5:
            return " ".join([operand] + [rng.choice("+-"), rng.choice(["1", "#true", operand])] * n)
        if kind == 6:
            return "min(" * n + operand + ", 1)" * n
        return rng.choice(["(", "!", "#", "["]) * n

    def similar(self, token: str) -> str:
        """A token of the same lexical class (so that the program more often still parses)."""
        rng, kind = self.rng, _kind(token)
        for pair in _SWAPS:
            if token in pair and rng.random() < 0.7:
                return pair[1 - pair.index(token)]
        if kind == "int":
            return rng.choice([e for e in EDGE_INTEGERS if not e.startswith("-")] + list("0123456789"))
        if kind == "signed":
            return rng.choice([e for e in EDGE_INTEGERS if e.startswith("-")])
        if kind == "string":
            return rng.choice(self.strings)
        if kind == "name" and token not in self.keywords:
            return rng.choice(self.names)
        if kind == "cmp":
            return rng.choice(["<", "<=", "==", "!=", ">=", ">"])
        return self.pool_token()

    def position(self, end: bool = True) -> int:
        return self.rng.randrange(len(self.tokens) + (1 if end else 0)) if self.tokens else 0

    def editable(self) -> int:
        """A position that holds a token of the program (not a newline or a comment)."""
        choices = [k for k, t in enumerate(self.tokens) if t != "\n" and not t.startswith("//")]
        return self.rng.choice(choices) if choices else self.position(False)

    def atoms(self) -> list[int]:
        """Positions of the operands of expressions (not defined names, imports or i and j)."""
        tokens, found = self.tokens, []
        for k, token in enumerate(tokens):
            kind = _kind(token)
            if kind == "name" and (token in self.keywords or token in ("i", "j")):
                kind = "keyword"
            if token in ("true", "false") or kind in ("string", "int", "name"):
                after = tokens[k + 1] if k + 1 < len(tokens) else ""
                before = tokens[k - 1] if k else ""
                if after != "=" and before not in ("#import", "next", "{", ",", "mod", "["):
                    found.append(k)
        return found

    def apply(self) -> None:
        rng, tokens = self.rng, self.tokens
        op = rng.choices(
            ["similar", "insert", "replace", "delete", "swap", "duplicate", "deepen", "wrap"],
            weights=[30, 15, 8, 10, 7, 10, 14, 6],
        )[0]
        if not tokens:
            op = "insert"
        if op == "similar":
            index = self.editable()
            tokens[index] = self.similar(tokens[index])
        elif op == "insert":
            tokens.insert(self.position(), self.pool_token())
        elif op == "replace":
            tokens[self.position(False)] = self.pool_token()
        elif op == "delete":
            start = self.position(False)
            del tokens[start:start + rng.choice([1, 1, 1, 2, 3])]
        elif op == "swap":
            a, b = self.position(False), self.position(False)
            tokens[a], tokens[b] = tokens[b], tokens[a]
        elif op == "duplicate":
            start = self.position(False)
            span = tokens[start:start + rng.randint(1, 8)]
            tokens[start:start] = span * rng.choice([1, 1, 2, 50])
        elif op == "deepen" and self.atoms():
            index = rng.choice(self.atoms())
            tokens[index] = self.deep(tokens[index])
        else:  # wrap a span in parentheses, or prefix it with '!', '-' or '#'
            start = self.position(False)
            stop = min(len(tokens), start + rng.randint(1, 6))
            n = rng.choice(DEPTHS)
            opener = rng.choice(["(", "(", "!", "-", "#"])
            closer = [")" * n] if opener == "(" else []
            tokens[start:stop] = [opener * n, *tokens[start:stop], *closer]


def mutant(seed: int) -> str:
    """The mutant numbered ``seed``: 1 to 3 random edits of one library program's tokens."""
    rng = random.Random(f"crasp-fuzz:{seed}")
    programs = sources()
    name = rng.choice(sorted(programs))
    mutator = _Mutator(rng, tokenize(programs[name]))
    for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 3])):
        mutator.apply()
    return join(mutator.tokens)


def mutants(count: int, seed: int = 0) -> list[str]:
    """Mutants ``seed``, ``seed + 1``, ... (``count`` of them)."""
    return [mutant(seed + k) for k in range(count)]


__all__ = ["mutant", "mutants", "tokenize", "join", "join_compact", "grammar_literals", "sources"]
