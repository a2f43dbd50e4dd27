"""Hypothesis strategies for every object of the theory: regular expressions, minimal automata (of
a chosen algebraic kind), tasks of each format, inputs that reach a program's thresholds, and
programs with their compiled Limit Transformers.

Write a conjecture as a property over them; Hypothesis looks for a counterexample and shrinks it
(fewest states, shortest expression, shortest input, offset 0):

>>> from hypothesis import find, settings
>>> same = settings(database=None, derandomize=True)  # the same search on every run (for this page)
>>> from tasks.regular import aperiodic
>>> dfa = find(automata("ab", max_states=3), lambda d: not aperiodic(d)[0], settings=same)  # a smallest periodic one
>>> dfa.n_states, aperiodic(dfa)[0]
(2, False)
>>> find(regexes("ab"), lambda r: "*" in r, settings=same)
'a*'

* :func:`regexes`: text of regular expressions (:mod:`tasks.regular.regex` syntax);
* :func:`automata`: minimal complete automata (:class:`tasks.regular.Dfa`), any or of one kind:
  ``"aperiodic"`` (star-free), ``"local"`` (locally testable, :func:`locally_testable`) or
  ``"group"`` (every letter permutes the states);
* :func:`tasks`: tasks of each format built from a program, an automaton or a small reference
  function, each passing its own reference check;
* :func:`inputs`: a token sequence and a position offset, many of them near the values where a
  program's comparisons flip;
* :func:`compiled`: a program with its compiled Limit Transformer.

Every strategy checks its arguments and raises ValueError naming the one that is wrong.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from hypothesis import strategies as st

from crasp import ast
from crasp.checker import CheckedProgram, check
from crasp.interpreter import run
from crasp.printer import format_program
from crasp.strategies import programs

from ..catalogue import balanced
from ..regular.dfa import Dfa, from_regex, minimize
from ..regular.monoid import aperiodic
from ..regular.regex import METACHARACTERS, Class, Concat, Epsilon, Optional, Plus, Regex, Star, Symbol, Union, to_text
from ..regular.task import dfa_task
from ..types import BOS, EOS, SEP, Format, Task

if TYPE_CHECKING:
    from limit_transformer.config import CompileConfig
    from limit_transformer.model import LimitTransformer

SPECIAL = (BOS, SEP, EOS)
ATTEMPTS = 20
"""Random automata drawn per example while none has the kind asked and the number of states drawn
(then the largest of the kind is taken, or, where none is, one of the kind is built directly)."""
TRIES = 8
"""Draws a balanced sampler of a generated accept or one-token task makes for the rarer answer."""
TRAIN_RANGE = (0, 20)
BINS = ((0, 20), (21, 40), (41, 60))
"""The lengths of a generated task (short: its reference checks stay fast)."""


# ---------------------------------------------------------------- arguments


def _symbols(alphabet: str | Sequence[str], what: str = "alphabet", *, special: bool = False) -> tuple[str, ...]:
    """The alphabet as a tuple of distinct non-empty tokens without spaces (nor, unless ``special``,
    the framing tokens)."""
    if isinstance(alphabet, str):
        symbols = tuple(alphabet)
    else:
        try:
            symbols = tuple(alphabet)
        except TypeError:
            raise ValueError(f"{what} must be a string or a sequence of strings, not {type(alphabet).__name__}") \
                from None
    if not symbols:
        raise ValueError(f"{what} is empty")
    bad = next((s for s in symbols if not isinstance(s, str) or not s or any(c.isspace() for c in s)), None)
    if bad is not None:
        raise ValueError(f"{what} holds {bad!r}: every symbol is a non-empty string without spaces")
    if len(set(symbols)) != len(symbols):
        raise ValueError(f"{what} {symbols} repeats a symbol")
    framing = [s for s in symbols if s in SPECIAL]
    if framing and not special:
        raise ValueError(f"{what} holds {framing[0]!r}, a token the tasks reserve for framing")
    return symbols


def _positive(value: int, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, not {value!r}")
    return value


def _choice(value, name: str, table: dict):
    if value not in table:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, table))}, not {value!r}")
    return table[value]


# ---------------------------------------------------------------- regular expressions


def size(node: Regex) -> int:
    """The number of nodes of a syntax tree (:mod:`tasks.regular.regex`).

    >>> from tasks.regular.regex import parse_regex
    >>> size(parse_regex("(ab|b)*", "ab"))
    6
    """
    if isinstance(node, (Concat, Union)):
        return 1 + sum(size(part) for part in node.parts)
    if isinstance(node, (Star, Plus, Optional)):
        return 1 + size(node.inner)
    return 1


_LEAVES = ("symbol", "class", "epsilon")
_UNARY = ("star", "plus", "optional")
_BINARY = ("concat", "union")


def _regex_tree(draw, symbols: tuple[str, ...], budget: int) -> Regex:
    """A syntax tree of at most ``budget`` nodes; the kinds are tried in an order that shrinks
    toward a lone symbol."""
    kinds = list(_LEAVES) + (list(_UNARY) if budget >= 2 else []) + (list(_BINARY) if budget >= 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "symbol":
        return Symbol(draw(st.sampled_from(symbols)))
    if kind == "class":
        return Class(frozenset(draw(st.sets(st.sampled_from(symbols), min_size=1))))
    if kind == "epsilon":
        return Epsilon()
    if kind in _UNARY:
        inner = _regex_tree(draw, symbols, budget - 1)
        return Star(inner) if kind == "star" else Plus(inner) if kind == "plus" else Optional(inner)
    left = _regex_tree(draw, symbols, budget - 2)
    right = _regex_tree(draw, symbols, budget - 1 - size(left))
    return Concat((left, right)) if kind == "concat" else Union((left, right))


def regexes(alphabet: str | Sequence[str] = "ab", *, max_size: int = 8) -> st.SearchStrategy[str]:
    """Text of regular expressions over ``alphabet`` in the syntax of :mod:`tasks.regular.regex`:
    each parses with ``parse_regex(text, alphabet)`` into a tree of at most ``max_size`` nodes
    (:func:`size`). Symbols, character classes, ``()``, ``* + ?``, concatenation and ``|``;
    shrinks toward a single symbol.

    >>> from hypothesis import find, settings
    >>> find(regexes("xy"), lambda r: "|" in r, settings=settings(database=None, derandomize=True))
    'x|x'
    """
    symbols = _symbols(alphabet)
    bad = [s for s in symbols if len(s) != 1 or s in METACHARACTERS]
    if bad:
        raise ValueError(f"a regular expression's alphabet has one-character symbols other than "
                         f"{''.join(sorted(METACHARACTERS))}; got {bad[0]!r}")
    _positive(max_size, "max_size")

    @st.composite
    def draw_regex(draw) -> str:
        return to_text(_regex_tree(draw, symbols, max_size))

    return draw_regex()


# ---------------------------------------------------------------- automata


def semigroup(dfa: Dfa) -> list[tuple[int, ...]]:
    """The transformations ``q -> q.w`` of the non-empty words w (the transition semigroup, which
    for a minimal automaton is the syntactic semigroup), breadth-first from the letters."""
    n = dfa.n_states
    letters = [tuple(dfa.table[q][k] for q in range(n)) for k in range(len(dfa.symbols))]
    elements = list(dict.fromkeys(letters))
    seen = set(elements)
    for f in elements:  # grows while it is read
        for g in letters:
            h = tuple(g[x] for x in f)
            if h not in seen:
                seen.add(h)
                elements.append(h)
    return elements


def _then(f: tuple[int, ...], g: tuple[int, ...]) -> tuple[int, ...]:
    """f, then g."""
    return tuple(g[x] for x in f)


def locally_testable(dfa: Dfa) -> bool:
    """Whether the language of ``dfa`` is *locally testable*: for some k, whether a word belongs
    is decided by its prefix and suffix of length k - 1 and the set of its factors of length k (a
    word shorter than k - 1 by itself), i.e. it is a Boolean combination of "begins with u",
    "ends with u" and "contains the factor u" (required and forbidden factors). Decided by the
    theorem of Brzozowski and Simon (1973) and McNaughton (1974): the syntactic semigroup S is
    locally idempotent and locally commutative, e S e is idempotent and commutative for every
    idempotent e of S. (The project decides no other notion of "local" for languages.)

    >>> [locally_testable(from_regex(r, "ab")) for r in ("(ab)*", "a*b*", "(a|b)*ab(a|b)*", "a*ba*")]
    [True, True, True, False]
    """
    elements = semigroup(minimize(dfa))
    for e in elements:
        if _then(e, e) != e:
            continue
        local = {_then(_then(e, s), e) for s in elements}
        for x in local:
            if _then(x, x) != x or any(_then(x, y) != _then(y, x) for y in local):
                return False
    return True


def _random_table(draw, n: int, width: int, *, forward: bool = False) -> list[list[int]]:
    """A transition table of at most n states, all reachable from state 0: its slots are read in
    breadth-first order and each names a state met so far or, while fewer than n are, the next
    new one (so zeros shrink toward one state). ``forward``: no transition goes back to a lower
    state."""
    table: list[list[int]] = []
    created = 1
    for q in range(n):
        if q >= created:
            break
        row = []
        for _ in range(width):
            target = draw(st.integers(q if forward else 0, min(created, n - 1)))
            created = max(created, target + 1)
            row.append(target)
        table.append(row)
    return table


def _dfa(symbols: tuple[str, ...], accepting, table) -> Dfa:
    """The minimal automaton of a table (state 0 the start)."""
    return minimize(Dfa(symbols, 0, frozenset(accepting), tuple(map(tuple, table))))


def _accepting(draw, n: int) -> set[int]:
    """Accepting states of n: never all or none of several (the language would have one state)."""
    accepting = {q for q in range(n) if draw(st.booleans())}
    return accepting ^ {n - 1} if n > 1 and len(accepting) in (0, n) else accepting


def _any(draw, symbols: tuple[str, ...], n: int) -> Dfa:
    table = _random_table(draw, n, len(symbols))
    return _dfa(symbols, _accepting(draw, len(table)), table)


def _group(draw, symbols: tuple[str, ...], n: int) -> Dfa:
    columns = [draw(st.permutations(range(n))) for _ in symbols]
    table = [[column[q] for column in columns] for q in range(n)]
    return _dfa(symbols, _accepting(draw, n), table)


def _forward(draw, symbols: tuple[str, ...], n: int) -> Dfa:
    """An automaton whose transitions never go back (R-trivial, so aperiodic)."""
    table = _random_table(draw, n, len(symbols), forward=True)
    return _dfa(symbols, _accepting(draw, len(table)), table)


def _atom(draw, symbols: tuple[str, ...], max_states: int) -> Dfa:
    """A locally testable language that fits: "begins with u", "ends with u" or "contains u" for a
    word u of one or two symbols, or its complement; the empty or full language where none fits."""
    found = []
    for u in [*symbols, *(a + b for a in symbols for b in symbols)] if all(len(s) == 1 for s in symbols) else []:
        for text in (f"{u}.*", f".*{u}", f".*{u}.*"):
            dfa = from_regex(text, symbols)
            found += [dfa, dfa.complement()]
    found = [d for d in found if d.n_states <= max_states]
    if not found:
        return _dfa(symbols, {0} if draw(st.booleans()) else set(), [[0] * len(symbols)])
    return draw(st.sampled_from(found))


@dataclass(frozen=True)
class _Kind:
    """How automata of one kind are drawn: ``draw`` a candidate of at most n states; where
    ``has`` is given, candidates are drawn until one has the kind (at most :data:`ATTEMPTS`),
    then ``fallback`` builds one that has it."""

    draw: Callable
    has: Callable[[Dfa], bool] | None = None
    fallback: Callable | None = None


KINDS: dict[str | None, _Kind] = {
    None: _Kind(_any),
    "aperiodic": _Kind(_any, lambda d: aperiodic(d)[0], lambda draw, s, n, m: _forward(draw, s, n)),
    "local": _Kind(_any, locally_testable, lambda draw, s, n, m: _atom(draw, s, m)),
    "group": _Kind(_group),
}
"""The kinds :func:`automata` draws, by name."""


def automata(alphabet: str | Sequence[str] = "ab", *, max_states: int = 4,
             kind: str | None = None) -> st.SearchStrategy[Dfa]:
    """Minimal complete automata over ``alphabet`` with at most ``max_states`` states, in the
    canonical form :func:`tasks.regular.minimize` returns (so equal languages give equal values).

    ``kind``: None (any), ``"aperiodic"`` (star-free, decided by :func:`tasks.regular.aperiodic`),
    ``"local"`` (locally testable, :func:`locally_testable`) or ``"group"`` (every letter permutes
    the states: a group language). A number of states n is drawn, then automata of at most n
    states, every state reachable (group automata: a permutation per letter), until one has the
    kind and n states once minimized (at most :data:`ATTEMPTS`; else the largest of the kind, or
    where none is, one built to have it: transitions that never go back for aperiodic, a
    begins/ends with/contains-a-short-factor language for local). Shrinks toward fewest states.

    >>> from hypothesis import find, settings
    >>> find(automata(kind="group", max_states=5), lambda d: d.n_states > 1, settings=settings(database=None, derandomize=True)).n_states
    2
    """
    symbols = _symbols(alphabet, special=True)
    _positive(max_states, "max_states")
    chosen = _choice(kind, "kind", KINDS)

    @st.composite
    def draw_automaton(draw) -> Dfa:
        n = draw(st.integers(1, max_states))
        if chosen.has is None:  # one draw: its choices shrink straight toward fewer states
            return chosen.draw(draw, symbols, n)
        best = None
        for _ in range(ATTEMPTS):
            dfa = chosen.draw(draw, symbols, n)
            if chosen.has(dfa):
                if dfa.n_states == n:
                    return dfa
                best = dfa if best is None or dfa.n_states > best.n_states else best
        if best is not None:
            return best
        assert chosen.fallback is not None  # every filtered kind has one
        return chosen.fallback(draw, symbols, n, max_states)

    return draw_automaton()


# ---------------------------------------------------------------- tasks


FORMATS = {"accept": "accept", "seq2seq": "seq2seq", "next_set": "next_set", "next-set": "next_set",
           "one_token": "one_token"}
"""The formats :func:`tasks` draws (``next-set`` is :class:`tasks.types.Format`'s spelling)."""
SOURCES = ("program", "automaton", "function")
ANSWER_PAIRS = (("T", "F"), ("yes", "no"), ("1", "0"), ("<T>", "<F>"))


def _answer_pair(symbols: tuple[str, ...]) -> tuple[str, str]:
    """Two output tokens for a yes/no answer, neither an input symbol."""
    return next(p for p in ANSWER_PAIRS if not set(p) & set(symbols))


def _name(*parts: object) -> str:
    text = "_".join(str(p) for p in parts)
    return "theory_" + "".join(c if c.isalnum() or c in "_-*(){},." else "_" for c in text)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _uniform(symbols: tuple[str, ...]) -> Callable[[int, np.random.Generator], tuple[str, ...]]:
    def sample(n: int, rng: np.random.Generator) -> tuple[str, ...]:
        return tuple(symbols[k] for k in rng.integers(0, len(symbols), size=n).tolist())
    return sample


def _make(name: str, family: str, format: Format, symbols: tuple[str, ...], outputs: tuple[str, ...],
          answer: Callable, sampler: Callable, description: str, **fields) -> Task:
    return Task(name=name, family=family, format=format, symbols=symbols, outputs=outputs, sample_input=sampler,
                answer=answer, valid=lambda x: True, train_range=TRAIN_RANGE, bins=BINS, min_length=0,
                separator=None if format in (Format.ACCEPT, Format.NEXT_SET) else SEP,
                description=description, reference=f"tasks.theory.strategies ({family})", **fields)


def _remembered(answer: Callable) -> Callable:
    """The reference with its answers kept per input (an interpreter run costs more than a look-up)."""
    known: dict = {}

    def remembered(x):
        x = tuple(x)
        found = known.get(x)
        if found is None:
            found = known[x] = answer(x)
        return found
    return remembered


# -------------------------------- from a program


def _with_program(program: ast.Program) -> dict:
    checked = check(program)
    factory = lambda: program  # noqa: E731
    return {"programs": {"ape": factory, **({"nope": factory} if checked.info.plain else {})}}


def _answer_slots(program: ast.Program, tokens: tuple[str, str], slots: int) -> ast.Program:
    """``program`` (an acceptance program) turned into a token producer: at ``<sep>`` and at each
    of the first ``slots - 1`` answer tokens, next is ``tokens[0]`` where its accept output holds
    there and ``tokens[1]`` where it does not; after ``slots`` answer tokens, ``<eos>``."""
    kept = [s for s in program.statements if not isinstance(s, ast.Accept)]
    accept = next(s for s in program.statements if isinstance(s, ast.Accept))
    seen = ast.Compare(">=", ast.Count(ast.TokenIs(SEP)), ast.Const(1))
    slot = ast.And(ast.Ref("Seen_sep"), ast.Compare("<=", ast.Ref("Since_sep"), ast.Const(slots)))
    return ast.Program((*kept,
                        ast.Definition("Answer_bit", accept.expr),
                        ast.Definition("Seen_sep", seen),
                        ast.Definition("Since_sep", ast.Count(ast.Ref("Seen_sep"))),
                        ast.Definition("Slot", slot),
                        ast.NextToken(tokens[0], ast.And(ast.Ref("Slot"), ast.Ref("Answer_bit"))),
                        ast.NextToken(tokens[1], ast.And(ast.Ref("Slot"), ast.Not(ast.Ref("Answer_bit")))),
                        ast.NextToken(EOS, ast.Not(ast.Ref("Slot")))),
                       source="<theory: answer slots>")


def _program_task(draw, form: str, symbols: tuple[str, ...], max_definitions: int) -> Task:
    outputs = "next" if form == "next_set" else "accept"
    program = draw(programs(alphabet=symbols, periodic=False, local=True, outputs=outputs,
                            max_definitions=max_definitions, max_depth=2))
    checked = check(program)
    alphabet = (*SPECIAL, *symbols)
    name = _name("program", form, _digest(format_program(program)))
    if form == "accept":
        def accept(x: tuple[str, ...]) -> bool:
            result = run(checked, [(BOS, *x)], alphabet=alphabet)
            assert result.accept is not None  # an acceptance program
            return bool(result.accept[0])
        answer = _remembered(accept)
        return _make(name, "theory-program", Format.ACCEPT, symbols, (), answer, balanced(_uniform(symbols), answer,
                     tries=TRIES), "the verdict of a random program at the last position", **_with_program(program))
    if form == "next_set":
        def next_sets(x: tuple[str, ...]) -> tuple[frozenset, ...]:
            result = run(checked, [(BOS, *x)], alphabet=alphabet)
            assert result.next is not None  # a token-producing program
            return tuple(frozenset(t for t, values in result.next.items() if values[0, k])
                         for k in range(len(x) + 1))
        return _make(name, "theory-program", Format.NEXT_SET, symbols, symbols, _remembered(next_sets),
                     _uniform(symbols), "the next(t) of a random program at every position", **_with_program(program))
    slots = 1 if form == "one_token" else draw(st.integers(1, 3))
    pair = _answer_pair(symbols)
    producer = _answer_slots(program, pair, slots)
    alphabet = (*alphabet, *pair)

    def tokens(x: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for _ in range(slots):  # teacher forcing: each answer token is read with those before it
            result = run(checked, [(BOS, *x, SEP, *out)], alphabet=alphabet)
            assert result.accept is not None  # an acceptance program
            out.append(pair[0] if result.accept[0] else pair[1])
        return tuple(out)
    answer = _remembered(tokens)
    sampler = balanced(_uniform(symbols), answer, tries=TRIES) if slots == 1 else _uniform(symbols)
    return _make(name, "theory-program", Format.SEQ2SEQ, symbols, pair, answer, sampler,
                 f"{slots} answer token(s), each the verdict of a random program", **_with_program(producer))


# -------------------------------- from an automaton


def _legal_sampler(legal: Callable[[tuple[str, ...]], frozenset], symbols: tuple[str, ...]):
    """Words drawn one symbol at a time among those ``legal(prefix)`` allows (uniformly among all
    once none is allowed)."""
    def sample(n: int, rng: np.random.Generator) -> tuple[str, ...]:
        out: tuple[str, ...] = ()
        for _ in range(n):
            allowed = [s for s in symbols if s in legal(out)] or list(symbols)
            out = (*out, allowed[int(rng.integers(0, len(allowed)))])
        return out
    return sample


def _automaton_task(draw, form: str, symbols: tuple[str, ...], max_states: int) -> Task:
    dfa = draw(automata(symbols, max_states=max_states))
    text = "-".join(f"{''.join(map(str, row))}" for row in dfa.table) + "-" + "".join(map(str, sorted(dfa.accepting)))
    name = _name("automaton", form, _digest(repr(dfa)))
    if form == "accept":
        return dfa_task(dfa, name, description=f"a random minimal automaton ({text})")
    if form == "next_set":
        from ..automata import from_table

        live = dfa.live()
        table = {q: {s: row[k] for k, s in enumerate(dfa.symbols) if row[k] in live}
                 for q, row in enumerate(dfa.table) if q in live}
        walker = from_table(dfa.symbols, dfa.start, dfa.accepting & live, table)
        return _make(name, "theory-automaton", Format.NEXT_SET, symbols, symbols, walker.next_sets,
                     _legal_sampler(lambda w: walker.next_sets(w)[-1], symbols), f"the next-character sets of a random automaton "
                     f"({text})", batch_answer=walker.batch_next_sets, automaton=dfa)
    pair = _answer_pair(symbols)
    if form == "one_token":
        answer = lambda x: (pair[0] if dfa.accepts(x) else pair[1],)  # noqa: E731
        return _make(name, "theory-automaton", Format.SEQ2SEQ, symbols, pair, answer,
                     balanced(_uniform(symbols), answer, tries=TRIES), f"membership in a random automaton's "
                     f"language as one token ({text})")

    def prefixes(x: tuple[str, ...]) -> tuple[str, ...]:
        state, out = dfa.start, []
        for k in dfa.symbol_ids(x):
            state = dfa.table[state][k]
            out.append(pair[0] if state in dfa.accepting else pair[1])
        return tuple(out)
    return _make(name, "theory-automaton", Format.SEQ2SEQ, symbols, pair, prefixes, _uniform(symbols),
                 f"the membership of every non-empty prefix in a random automaton's language ({text})")


# -------------------------------- from a reference function


def _accept_functions(draw, symbols: tuple[str, ...]) -> tuple[str, Callable[[tuple[str, ...]], bool]]:
    """A small reference predicate on words, with a name that says what it is."""
    s = draw(st.sampled_from(symbols))
    family = draw(st.sampled_from(["at_least", "more", "mod", "first_is_last", "contains", "ends_with"]))
    if family == "at_least":
        c = draw(st.integers(0, 5))
        return f"at_least_{c}_{s}", lambda x: x.count(s) >= c
    if family == "more":
        t = draw(st.sampled_from(symbols))
        return f"more_{s}_than_{t}", lambda x: x.count(s) > x.count(t)
    if family == "mod":
        m = draw(st.integers(2, 3))
        r = draw(st.integers(0, m - 1))
        return f"count_{s}_mod_{m}_is_{r}", lambda x: x.count(s) % m == r
    if family == "first_is_last":
        return "first_is_last", lambda x: len(x) > 0 and x[0] == x[-1]
    if family == "contains":
        u = tuple(draw(st.lists(st.sampled_from(symbols), min_size=1, max_size=3)))
        return f"contains_{'.'.join(u)}", lambda x: any(x[i:i + len(u)] == u for i in range(len(x) - len(u) + 1))
    return f"ends_with_{s}", lambda x: len(x) > 0 and x[-1] == s


def _transductions(draw, symbols: tuple[str, ...]) -> tuple[str, Callable[[tuple[str, ...]], tuple[str, ...]]]:
    """A small reference transduction of words over ``symbols`` into words over ``symbols``."""
    family = draw(st.sampled_from(["copy", "reverse", "sort", "first", "shift"]))
    if family == "copy":
        return "copy", lambda x: tuple(x)
    if family == "reverse":
        return "reverse", lambda x: tuple(reversed(x))
    if family == "sort":
        order = {s: k for k, s in enumerate(symbols)}
        return "sort", lambda x: tuple(sorted(x, key=order.__getitem__))
    if family == "first":
        k = draw(st.integers(1, 4))
        return f"first_{k}", lambda x: tuple(x[:k])
    following = dict(zip(symbols, symbols[1:] + symbols[:1]))
    return "shift", lambda x: tuple(following[s] for s in x)


class _NextSets:
    """The next-character sets of a language given by its legal continuations after a prefix
    (``legal(prefix)``, ``<eos>`` included where the prefix is a word; empty once it cannot be
    completed)."""

    def __init__(self, legal: Callable[[tuple[str, ...]], frozenset]) -> None:
        self.legal = legal

    def __call__(self, x: tuple[str, ...]) -> tuple[frozenset, ...]:
        x = tuple(x)
        return tuple(self.legal(x[:k]) for k in range(len(x) + 1))


def _languages(draw, symbols: tuple[str, ...]) -> tuple[str, _NextSets]:
    """A small language given by its legal continuations: at most c of a symbol; no symbol twice
    in a row; balanced brackets (two symbols or more)."""
    every = frozenset(symbols)
    families = ["at_most", "no_repeat"] + (["brackets"] if len(symbols) >= 2 else [])
    family = draw(st.sampled_from(families))
    if family == "at_most":
        s = draw(st.sampled_from(symbols))
        c = draw(st.integers(0, 3))

        def at_most(w):
            n = w.count(s)
            return frozenset() if n > c else (every - {s} if n == c else every) | {EOS}
        return f"at_most_{c}_{s}", _NextSets(at_most)
    if family == "no_repeat":
        def no_repeat(w):
            if any(a == b for a, b in zip(w, w[1:])):
                return frozenset()
            return (every - set(w[-1:])) | {EOS}
        return "no_repeat", _NextSets(no_repeat)
    opening, closing = symbols[0], symbols[1]

    def brackets(w):
        depth = 0
        for t in w:
            depth += (t == opening) - (t == closing)
            if depth < 0 or t not in (opening, closing):
                return frozenset()
        return frozenset({opening} | ({closing} if depth else {EOS}))
    return f"brackets_{opening}_{closing}", _NextSets(brackets)


def _function_task(draw, form: str, symbols: tuple[str, ...]) -> Task:
    if form == "next_set":
        label, next_sets = _languages(draw, symbols)
        return _make(_name("function", label), "theory-function", Format.NEXT_SET, symbols, symbols, next_sets,
                     _legal_sampler(next_sets.legal, symbols), f"next-character sets: {label}")
    if form == "seq2seq":
        label, transduce = _transductions(draw, symbols)
        return _make(_name("function", label), "theory-function", Format.SEQ2SEQ, symbols, symbols, transduce,
                     _uniform(symbols), f"transduction: {label}")
    if form == "one_token" and draw(st.booleans()):
        order = {s: k for k, s in enumerate(symbols)}
        most = lambda x: (max(symbols, key=lambda s: (x.count(s), -order[s])),)  # noqa: E731
        return _make(_name("function", "most_frequent"), "theory-function", Format.SEQ2SEQ, symbols, symbols,
                     most, _uniform(symbols), "the most frequent symbol (the first on ties)")
    label, predicate = _accept_functions(draw, symbols)
    if form == "accept":
        return _make(_name("function", label), "theory-function", Format.ACCEPT, symbols, (), predicate,
                     balanced(_uniform(symbols), predicate, tries=TRIES), f"accept: {label}")
    pair = _answer_pair(symbols)
    answer = lambda x: (pair[0] if predicate(x) else pair[1],)  # noqa: E731
    return _make(_name("function", label, "token"), "theory-function", Format.SEQ2SEQ, symbols, pair, answer,
                 balanced(_uniform(symbols), answer, tries=TRIES), f"one token: {label}")


def tasks(format: str = "accept", alphabet: str | Sequence[str] = "ab", *, source: str = "any",
          max_definitions: int = 4, max_states: int = 4) -> st.SearchStrategy[Task]:
    """Tasks over ``alphabet`` of one format of the suite, built from a program, an automaton or a
    small reference function, each passing its own reference check
    (:func:`tasks.evidence.reference.check_reference`).

    ``format``: ``"accept"``, ``"seq2seq"``, ``"next_set"`` (``"next-set"`` too) or
    ``"one_token"`` (a seq2seq task whose answer is one token). ``source``: ``"program"``,
    ``"automaton"``, ``"function"`` or ``"any"``:

    * a program (:func:`crasp.strategies.programs`, plain or with local guards: no periodic
      predicate, so every offset gives the same answers, and at most ``max_definitions``
      definitions) is the reference and the task's "ape" program (also "nope" where plain):
      :func:`tasks.verify.verify` of it passes. Accept: its verdict on ``<bos> x``; next-set:
      its next(t) at every position; seq2seq: 1 to 3 answer tokens (one-token: 1), each the
      verdict of its accept output on everything before it (teacher forcing), the program
      rewritten to produce them;
    * an automaton (:func:`automata`, at most ``max_states`` states): accept
      (:func:`tasks.regular.dfa_task`), next-set (its next-character sets), one-token (membership
      as a token) and seq2seq (the membership of each non-empty prefix);
    * a function: thresholds, comparisons and residues of counts, factors, first and last symbols
      (accept, one-token), copy/reverse/sort/first k/shift (seq2seq), at most c of a symbol, no
      repeated symbol, brackets (next-set).

    Yes/no answers are the tokens T and F (another pair where the alphabet holds them).

    >>> from hypothesis import find, settings
    >>> task = find(tasks("accept", source="function"), lambda t: "contains" in t.name, settings=settings(database=None, derandomize=True))
    >>> task.name, task.answer(("b", "a")), task.answer(("b", "b"))
    ('theory_function_contains_a', True, False)
    """
    form = _choice(format, "format", FORMATS)
    symbols = _symbols(alphabet)
    sources = _choice(source, "source", {"any": SOURCES, **{s: (s,) for s in SOURCES}})
    _positive(max_definitions, "max_definitions")
    _positive(max_states, "max_states")
    build = {
        "program": lambda draw: _program_task(draw, form, symbols, max_definitions),
        "automaton": lambda draw: _automaton_task(draw, form, symbols, max_states),
        "function": lambda draw: _function_task(draw, form, symbols),
    }

    @st.composite
    def draw_task(draw) -> Task:
        return build[draw(st.sampled_from(sources))](draw)

    return draw_task()


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Landmarks:
    """What :func:`inputs` reads off a program: the counts where its comparisons may flip (each
    constant c of a comparison, with c - 1 and c + 1), the tokens it reads, the moduli of its
    periodic predicates (and their period, the lcm) and the offsets of its local guards."""

    thresholds: tuple[int, ...]
    tokens: tuple[str, ...]
    moduli: tuple[int, ...]
    period: int
    offsets: tuple[int, ...]


def landmarks(program: ast.Program | CheckedProgram, *, limit: int = 10_000) -> Landmarks:
    """The landmarks of a program (constants, moduli and offsets up to ``limit``).

    >>> from crasp import parse
    >>> landmarks(parse('A = #"a" >= 3 && #[i - j in {2}] "b" == 1\\nB = A && i mod 4 in {1}'))
    Landmarks(thresholds=(0, 1, 2, 3, 4), tokens=('a', 'b'), moduli=(4,), period=4, offsets=(2,))
    """
    checked = program if isinstance(program, CheckedProgram) else check(program)
    constants: set[int] = set()
    tokens: set[str] = set()
    moduli: set[int] = set()
    statements = [s for s in checked.program.statements if hasattr(s, "expr")]
    for statement in statements:
        for node in ast.walk(statement.expr):
            if isinstance(node, ast.Compare):
                constants.update(abs(c.value) for c in ast.walk(node) if isinstance(c, ast.Const))
                constants.update(abs(c.factor) for c in ast.walk(node) if isinstance(c, ast.Scale))
            elif isinstance(node, ast.TokenIs):
                tokens.add(node.token)
            elif isinstance(node, ast.Periodic):
                moduli.add(node.modulus)
            elif isinstance(node, ast.Ref) and node.name in checked.unary:
                moduli.add(checked.unary[node.name].modulus)
    thresholds = sorted({v for c in constants for v in (c - 1, c, c + 1) if 0 <= v <= limit})
    offsets = tuple(itertools.islice(iter(checked.info.offsets.clip(0, limit + 1)), 64))
    return Landmarks(tuple(thresholds), tuple(sorted(tokens)), tuple(sorted(m for m in moduli if m <= limit)),
                     checked.info.period, offsets)


def inputs(program: ast.Program | CheckedProgram, *, alphabet: str | Sequence[str] | None = None,
           max_length: int = 40, max_offset: int = 1000,
           min_length: int = 1) -> st.SearchStrategy[tuple[tuple[str, ...], int]]:
    """A token sequence over ``alphabet`` (default: the tokens the program reads, ``<bos>`` left
    to the framing) of ``min_length`` to ``max_length`` tokens, and a position offset in
    0..``max_offset``. Most land where the program's comparisons may flip (:func:`landmarks`):
    a token counted near a constant of a comparison, two tokens counted equally or one apart,
    a length near a multiple of a modulus with an offset near a multiple of the period, a length
    near a local guard's offset; the rest are uniform. Shrinks toward short inputs and offset 0.

    >>> from hypothesis import find, settings
    >>> from crasp import parse
    >>> find(inputs(parse('A = #"a" >= 2'), alphabet="ab"), lambda io: io[0].count("a") >= 2, settings=settings(database=None, derandomize=True))
    (('a', 'a'), 0)
    """
    checked = program if isinstance(program, CheckedProgram) else check(program)
    _positive(max_length, "max_length", 0)
    _positive(max_offset, "max_offset", 0)
    _positive(min_length, "min_length", 0)
    if min_length > max_length:
        raise ValueError(f"min_length {min_length} exceeds max_length {max_length}")
    if alphabet is None:
        symbols = tuple(sorted(t for t in checked.info.alphabet if t != BOS))
        if not symbols:
            raise ValueError("the program reads no token but <bos>: pass alphabet=")
    else:
        symbols = _symbols(alphabet, special=True)
    marks = landmarks(checked, limit=max_length + max_offset)
    counted = [t for t in marks.tokens if t in symbols] or list(symbols)
    modes = ["uniform"]
    if marks.thresholds:
        modes.append("threshold")
    if len(symbols) >= 2:
        modes.append("tie")
    if marks.moduli:
        modes.append("period")
    if marks.offsets:
        modes.append("guard")

    def offset(draw) -> int:
        return draw(st.integers(0, max_offset))

    def word(draw, length: int) -> tuple[str, ...]:
        length = max(min_length, min(length, max_length))
        return tuple(draw(st.lists(st.sampled_from(symbols), min_size=length, max_size=length)))

    def with_counts(draw, wanted: dict[str, int], length: int) -> tuple[str, ...]:
        """A word holding exactly ``wanted[t]`` of each t (cut to fit ``max_length``), and other
        symbols up to ``length`` in all."""
        others = [s for s in symbols if s not in wanted]
        wanted = dict(wanted)
        budget = max_length
        for t in wanted:
            wanted[t] = min(wanted[t], budget)
            budget -= wanted[t]
        room = min(budget, max(length - sum(wanted.values()), 0)) if others else 0
        filler = draw(st.lists(st.sampled_from(others), min_size=room, max_size=room)) if others else []
        out = list(filler)
        for t, c in wanted.items():
            for _ in range(c):
                out.insert(draw(st.integers(0, len(out))), t)
        while len(out) < min_length:
            out.append(symbols[0])
        return tuple(out)

    @st.composite
    def draw_input(draw) -> tuple[tuple[str, ...], int]:
        # The mode first and the length next, shared by the modes: lowering the mode to "uniform"
        # keeps the length, so inputs shrink toward short uniform words.
        mode = draw(st.sampled_from(modes))
        length = draw(st.integers(min_length, max_length))
        if mode == "uniform":
            return word(draw, length), offset(draw)
        if mode == "threshold":
            t = draw(st.sampled_from(counted))
            return with_counts(draw, {t: draw(st.sampled_from(marks.thresholds))}, length), offset(draw)
        if mode == "tie":
            first = draw(st.sampled_from(counted))
            second = draw(st.sampled_from([s for s in symbols if s != first]))
            base = draw(st.integers(0, length // 2))
            return with_counts(draw, {first: max(0, base + draw(st.integers(-1, 1))), second: base},
                               length), offset(draw)
        if mode == "period":
            m = draw(st.sampled_from(marks.moduli))
            residue = draw(st.integers(0, min(marks.period, max_offset + 1) - 1))
            turns = draw(st.integers(0, max((max_offset - residue) // marks.period, 0)))
            near = m * round(length / m) + draw(st.integers(-1, 1))
            return word(draw, near), min(turns * marks.period + residue, max_offset)
        d = draw(st.sampled_from(marks.offsets))
        return word(draw, d + 1 + draw(st.integers(-1, 1))), offset(draw)

    return draw_input()


# ---------------------------------------------------------------- compiled programs


POSITIONS = {"ape": (True, True), "nope": (False, False)}
"""(periodic, local) for each positional scheme of :func:`compiled`."""


def compiled(alphabet: str | Sequence[str] = "ab", *, max_definitions: int = 4, positions: str = "ape",
             max_depth: int = 3, config: CompileConfig | None = None,
             ) -> st.SearchStrategy[tuple[CheckedProgram, LimitTransformer]]:
    """A program (:func:`crasp.strategies.programs`: periodic predicates and local guards for
    ``positions="ape"``, plain C-RASP for ``"nope"``) with its Limit Transformer
    (:func:`limit_transformer.compile_program` under ``config``, default
    ``CompileConfig(max_length=512)``). The rare program the compiler refuses (its
    ``CompileError``) is skipped. torch is imported on the first draw.

    >>> from hypothesis import find, settings
    >>> checked, model = find(compiled(positions="nope"), lambda pair: True, settings=settings(database=None, derandomize=True))
    >>> checked.info.plain, model.spec.n_layers >= 0
    (True, True)
    """
    symbols = _symbols(alphabet)
    periodic, local = _choice(positions, "positions", POSITIONS)
    _positive(max_definitions, "max_definitions")
    _positive(max_depth, "max_depth", 0)
    drawn = programs(alphabet=symbols, periodic=periodic, local=local, max_definitions=max_definitions,
                     max_depth=max_depth)

    def build(program: ast.Program):
        from limit_transformer.compiler import CompileError, compile_program
        from limit_transformer.config import CompileConfig

        checked = check(program)
        try:
            return checked, compile_program(checked, config or CompileConfig(max_length=512))
        except CompileError:
            return None

    return drawn.map(build).filter(lambda pair: pair is not None)


__all__ = ["regexes", "automata", "tasks", "inputs", "compiled", "locally_testable", "landmarks", "Landmarks",
           "semigroup", "size", "KINDS", "FORMATS", "SOURCES", "POSITIONS"]
