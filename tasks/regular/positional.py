"""C-RASP[periodic, local] programs for regular languages: states separated by what a position
reads (the symbols just before it and its position modulo m) as well as by balanced counts.

An APE program can read more at a position than its token: a local count ``#[i - j in {d}] "x"``
tells whether the token d positions back is x, and a periodic predicate with a count of
``<bos>`` tells the position (counted from ``<bos>``) modulo m. So run the minimal automaton of
the language in product with a tracker of the last ``window`` symbols and of the position modulo
``modulus``, and relabel each transition by everything the program reads where it is taken: the
symbol, the ``window`` tokens before it and the residue. This *product* reads a relabelled word
deterministically, one letter per position, and accepts exactly when the automaton does.

**The construction.** Where the balanced-potential refinement of the decision procedure
(:func:`tasks.regular.decide.separate_edges`, Yang et al. 2026, App. J) separates every state of
every strongly connected component of the product, :func:`tasks.regular.program.track` tracks
the product's state before every position with counts of relabelled letters, each letter read by
the formula that recognises it. The product has only its reachable transitions: a letter that
cannot occur in a state is no transition of it, so no cycle constrains it (a language over every
window letter would also have to reject inconsistent relabellings, which no count can check).

**Why the program is right** (our argument, not a published theorem): at a word position exactly
one letter's formula holds, that of the transition the run takes (the tokens at the offsets it
names, up to ``<bos>``, and the residue determine the letter); the tracker of
:mod:`tasks.regular.program` needs nothing else: entries, balanced potentials along any path
inside a component and exits are all counts of the letters taken. So the program computes the
product's state, hence the automaton's. Its count depth is the tracker's (the depth of the
letters' formulas, 1, below it). Failing for every (window, modulus) tried proves nothing: an
APE "does not generalize" still needs a published argument.

>>> from tasks.regular.dfa import from_regex
>>> found = search(from_regex("(aa)*", "a"))
>>> found.window, found.modulus
(0, 2)
>>> from crasp.interpreter import accepts
>>> program = program_for(from_regex("(aa)*", "a"))
>>> [accepts(program, "<bos> " + " ".join("a" * n)) for n in range(1, 6)]
[False, True, False, True, False]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from crasp import ast
from crasp.builder import Expr, ProgramBuilder, all_of, any_of, count, offsets, periodic, tok

from ..types import BOS
from .decide import separate_edges
from .dfa import Dfa, minimize
from .monoid import strongly_connected_components
from .program import track

EXHAUSTIVE_SYMBOLS = 200_000
"""The exhaustive part of :func:`agreement` takes every word up to the length whose words hold this
many symbols in all: 13 over two letters, 8 over three, 631 over one."""

NOTHING = ""
"""The window's entry for an offset before ``<bos>``: no position there."""


@dataclass(frozen=True)
class Limits:
    """How far :func:`search` looks: windows of 0..``window`` symbols, moduli 1..``modulus``,
    products of at most ``states`` states, within ``seconds`` (None: no deadline)."""

    window: int = 6
    modulus: int = 6
    states: int = 1_000
    seconds: float | None = None

    def describe(self) -> str:
        return (f"windows of up to {self.window} symbols, moduli up to {self.modulus}, products of up to "
                f"{self.states:,} states")


@dataclass(frozen=True)
class Letter:
    """What a program reads at a word position: its ``symbol``, the tokens ``before`` it (the
    last entry one position back; :data:`NOTHING` before ``<bos>``) and its ``residue``, the
    position counted from ``<bos>`` (the first symbol is 1) modulo the product's modulus."""

    symbol: str
    before: tuple[str, ...]
    residue: int


@dataclass(frozen=True)
class Product:
    """The minimal automaton run with a tracker of the last ``window`` tokens and the position
    modulo ``modulus``, reachable states only: ``edges[s]`` holds ``(letter, target)`` pairs,
    ``letters[letter]`` what the letter reads, ``origin[s]`` the automaton's state in ``s``
    (the states where it is dead merged into one)."""

    window: int
    modulus: int
    start: int
    edges: tuple[tuple[tuple[int, int], ...], ...]
    letters: tuple[Letter, ...]
    origin: tuple[int, ...]

    @property
    def n_states(self) -> int:
        return len(self.edges)

    def components(self) -> list[list[int]]:
        return strongly_connected_components([sorted({t for _, t in out}) for out in self.edges])

    @property
    def visible(self) -> tuple[tuple[tuple[str, ...], int], ...]:
        """Per state what a position shows of it: the tokens before the position and its
        residue (those of the letters leaving it)."""
        seen = {}
        for s, out in enumerate(self.edges):
            for k, _ in out:
                seen[s] = (self.letters[k].before, self.letters[k].residue)
        return tuple(seen.get(s, ((), -1)) for s in range(self.n_states))

    def separated(self) -> bool:
        """Whether the refinement, started from what positions show, separates every state of
        every strongly connected component."""
        visible = self.visible
        for states in self.components():
            if len(states) > 1:
                edges = [(q, k, t) for q in states for k, t in self.edges[q]]
                if not separate_edges(states, edges, {q: visible[q] for q in states}, certify=False).separated:
                    return False
        return True


def _dead(dfa: Dfa) -> set[int]:
    return set(range(dfa.n_states)) - dfa.live()


def product(dfa: Dfa, window: int, modulus: int, max_states: int | None = None) -> Product | None:
    """The product of the minimal automaton of ``dfa`` with the tracker (None when it would have
    more than ``max_states`` states).

    >>> from tasks.regular.dfa import from_regex
    >>> p = product(from_regex("(ab)*", "ab"), 0, 2)
    >>> p.n_states, len(p.letters)
    (3, 4)
    """
    if window < 0 or modulus < 1:
        raise ValueError(f"a window of {window} symbols and a modulus of {modulus} make no tracker")
    dfa = minimize(dfa)
    dead = _dead(dfa)
    sink = next(iter(sorted(dead)), None)
    first = (dfa.start, (NOTHING,) * (window - 1) + (BOS,) if window else (), 1 % modulus)
    number = {first: 0}
    order = [first]
    letter_number: dict[Letter, int] = {}
    edges: list[tuple[tuple[int, int], ...]] = []
    for q, before, residue in order:
        out = []
        if q not in dead:
            for k, symbol in enumerate(dfa.symbols):
                target = dfa.table[q][k]
                nxt: tuple[int, tuple[str, ...], int]
                if target in dead:
                    assert sink is not None  # dead holds target
                    nxt = (sink, (), 0)
                else:
                    nxt = (target, (before + (symbol,))[1:] if window else (), (residue + 1) % modulus)
                if nxt not in number:
                    if max_states is not None and len(order) >= max_states:
                        return None
                    number[nxt] = len(order)
                    order.append(nxt)
                letter = letter_number.setdefault(Letter(symbol, before, residue), len(letter_number))
                out.append((letter, number[nxt]))
        edges.append(tuple(out))
    letters = tuple(sorted(letter_number, key=letter_number.__getitem__))
    return Product(window, modulus, 0, tuple(edges), letters, tuple(q for q, _, _ in order))


@dataclass(frozen=True)
class Found:
    """The smallest tracker that separates, with what was tried before it."""

    product: Product
    tried: int
    seconds: float

    @property
    def window(self) -> int:
        return self.product.window

    @property
    def modulus(self) -> int:
        return self.product.modulus


@dataclass(frozen=True)
class NotFound:
    """No tracker within the limits separates: ``tried`` trackers, ``why`` the search stopped."""

    tried: int
    why: str
    seconds: float


def trackers(dfa: Dfa, limits: Limits) -> list[tuple[int, int]]:
    """Every (window, modulus) within the limits, in order of the product's size bound
    ``states * (symbols + 1)^window * modulus``; (0, 1) first: no positions, the plain program of
    a language in C-RASP.

    >>> from tasks.regular.dfa import from_regex
    >>> trackers(from_regex("(aa)*", "a"), Limits(window=1, modulus=3))
    [(0, 1), (0, 2), (1, 1), (0, 3), (1, 2), (1, 3)]
    """
    width = len(dfa.symbols) + 1
    pairs = [(w, m) for w in range(limits.window + 1) for m in range(1, limits.modulus + 1)]
    return sorted(pairs, key=lambda p: (width ** p[0] * p[1], p[0], p[1]))


def search(dfa: Dfa, limits: Limits = Limits()) -> Found | NotFound:
    """The first tracker, smallest first (:func:`trackers`), whose product separates.

    >>> from tasks.regular.dfa import from_regex
    >>> found = search(from_regex("(abab)*", "ab"))
    >>> found.window, found.modulus
    (0, 4)
    >>> search(from_regex("(aa)*", "a"), Limits(window=0, modulus=1)).why
    'no tracker within windows of up to 0 symbols, moduli up to 1, products of up to 1,000 states separates'
    """
    began = time.perf_counter()
    tried = 0
    too_large = 0
    for window, modulus in trackers(dfa, limits):
        if limits.seconds is not None and time.perf_counter() - began > limits.seconds:
            return NotFound(tried, f"the search ran out of its {limits.seconds:g} s after {tried} trackers",
                            time.perf_counter() - began)
        built = product(dfa, window, modulus, limits.states)
        if built is None:
            too_large += 1
            continue
        tried += 1
        if built.separated():
            return Found(built, tried, time.perf_counter() - began)
    skipped = f" ({too_large} products too large)" if too_large else ""
    return NotFound(tried, f"no tracker within {limits.describe()} separates{skipped}", time.perf_counter() - began)


class Reader:
    """The formulas that read letters, defined once per program: the token at an offset and the
    position modulo m, counted from ``<bos>``; or, where the input is the bare word (``framed``
    False), from one position before the first (so the first symbol is 1 either way), the window's
    ``<bos>`` then read as "no position there"."""

    def __init__(self, b: ProgramBuilder, framed: bool = True) -> None:
        self.b = b
        self.first = None if framed else b.let(f"First_{len(b.statements)}", count(True) == 1)
        self._at: dict[tuple[int, str], Expr] = {}
        self._residue: dict[tuple[int, int], Expr] = {}
        self._origin: dict[tuple[int, int], Expr] = {}

    def at(self, offset: int, token: str) -> Expr:
        """True where the token ``offset`` positions back is ``token`` (``<bos>`` of a bare word:
        where there is no position ``offset`` back)."""
        key = (offset, token)
        if key not in self._at:
            name = f"Back{offset}_{_slug(token)}_{len(self.b.statements)}"
            if token == BOS and self.first is not None:
                self._at[key] = self.b.let(name, count(True, offsets(offset)) == 0)
            else:
                self._at[key] = self.b.let(name, count(tok(token), offsets(offset)) >= 1)
        return self._at[key]

    def residue(self, modulus: int, residue: int) -> Expr:
        """True where the position, counted as above, is ``residue`` modulo ``modulus``."""
        if modulus == 1:
            return Expr(ast.BoolConst(True))
        key = (modulus, residue)
        if key not in self._residue:
            shift = 0 if self.first is None else -1  # the first symbol: one after <bos>, or the origin itself
            ways = [self._origin_at(modulus, r) & periodic(modulus, {(r + residue + shift) % modulus})
                    for r in range(modulus)]
            self._residue[key] = self.b.let(f"Pos_mod{modulus}_is{residue}_{len(self.b.statements)}", any_of(ways))
        return self._residue[key]

    def _origin_at(self, modulus: int, r: int) -> Expr:
        """True where ``<bos>`` (or the first position of a bare word) is at r modulo ``modulus``."""
        key = (modulus, r)
        if key not in self._origin:
            marker = tok(BOS) if self.first is None else self.first
            self._origin[key] = self.b.let(f"Origin_mod{modulus}_at{r}_{len(self.b.statements)}",
                                           count(marker & periodic(modulus, {r})) >= 1)
        return self._origin[key]

    def letter(self, letter: Letter, modulus: int) -> Expr:
        """The formula true exactly at the positions that read ``letter``."""
        if not letter.before and modulus == 1:
            return tok(letter.symbol)
        return tok(letter.symbol) & self.shows(letter.before, letter.residue, modulus)

    def shows(self, before: tuple[str, ...], residue: int, modulus: int) -> Expr:
        """True exactly where the tokens before the position are ``before`` up to ``<bos>`` (the
        entries before ``<bos>`` follow from it) and the position is ``residue`` mod ``modulus``
        (a ``residue`` of -1: nowhere, the dead state's)."""
        if residue < 0:
            return Expr(ast.BoolConst(False))
        parts = []
        for offset, token in enumerate(reversed(before), start=1):
            if token == NOTHING:
                break
            parts.append(self.at(offset, token))
            if token == BOS:
                break
        if modulus > 1:
            parts.append(self.residue(modulus, residue))
        return all_of(parts)


def _slug(token: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in token) or "t"


def states_before(b: ProgramBuilder, reader: Reader, found: Product) -> dict[int, Expr]:
    """Per state of the product the Boolean "the run was in it before this position's token"."""
    shown = {key: reader.shows(*key, found.modulus) for key in set(found.visible)}
    return track(b, found.start, found.edges, [reader.letter(x, found.modulus) for x in found.letters],
                 [(key, shown[key]) for key in found.visible], first=reader.first,
                 pinned=[_pinned(x) for x in found.letters])


def _pinned(letter: Letter) -> int | None:
    """The position (the symbols before it) at which a letter whose window reaches back past the
    word's first symbol is read; None for a letter that may be read anywhere."""
    start = {NOTHING, BOS}
    if not start & set(letter.before):
        return None
    return sum(1 for t in letter.before if t not in start)


def accepting(found: Product, dfa: Dfa, prev: dict[int, Expr], reader: Reader, end: str | None) -> Expr:
    """Where the word read so far is in the language: at the token ``end`` after it, or (``end``
    None) at its last position, from the state before it and the letter it reads."""
    minimal = minimize(dfa)
    final = {s for s, q in enumerate(found.origin) if q in minimal.accepting}
    if end is not None:
        return tok(end) & any_of([prev[s] for s in sorted(final)])
    ways = [prev[s] & reader.letter(found.letters[k], found.modulus)
            for s, out in enumerate(found.edges) for k, t in out if t in final]
    if minimal.start in minimal.accepting and reader.first is None:
        ways.append(tok(BOS))  # the empty word: the last token is <bos>
    return any_of(ways)


def program_for(dfa: Dfa, end: str | None = None, limits: Limits = Limits()) -> ast.Program | None:
    """A C-RASP[periodic, local] program accepting exactly the language of ``dfa`` at the last
    position of ``<bos> w`` (or at the token ``end`` after it); None when no tracker within
    ``limits`` separates.

    >>> from tasks.regular.dfa import from_regex
    >>> from crasp.interpreter import accepts
    >>> program = program_for(from_regex("(a|b)*bb(a|b)*", "ab"), end="<eos>")
    >>> accepts(program, "<bos> a b b a <eos>"), accepts(program, "<bos> a b a b <eos>")
    (True, False)
    """
    found = search(dfa, limits)
    if isinstance(found, NotFound):
        return None
    return build(dfa, found.product, end)


@dataclass(frozen=True)
class Agreement:
    """A program checked against the automaton: ``words`` checked, every word up to
    ``exhaustive_length`` symbols and ``sampled`` random ones up to ``longest``, each at a random
    offset; ``disagreement`` the first word (and its offset) where they differ, if any."""

    words: int
    exhaustive_length: int
    sampled: int
    longest: int
    disagreement: tuple[tuple[str, ...], int] | None

    @property
    def ok(self) -> bool:
        return self.disagreement is None

    def describe(self) -> str:
        return (f"checked against the automaton on all words up to length {self.exhaustive_length} and {self.sampled} "
                f"random words up to length {self.longest} ({self.words:,} in all, each at a random offset)")


def agreement(program: ast.Program, dfa: Dfa, end: str | None = None, framed: bool = True,
              max_symbols: int = EXHAUSTIVE_SYMBOLS, sampled: int = 200, longest: int = 200,
              seed: int = 0) -> Agreement:
    """Run ``program`` on words of ``dfa``'s alphabet (framed as :func:`build` frames them: ``<bos>
    w``, ``<bos> w end`` or the bare ``w``) and compare its verdicts with the automaton's: every word
    up to the longest length whose words hold at most ``max_symbols`` symbols in all
    (:func:`~tasks.regular.dfa.longest_within`), then ``sampled`` random words.

    >>> from tasks.regular.dfa import from_regex
    >>> dfa = from_regex("(aa)*", "a")
    >>> found = agreement(program_for(dfa, end="<eos>"), dfa, end="<eos>", max_symbols=50, sampled=10)
    >>> found.ok, found.exhaustive_length
    (True, 9)
    """
    import numpy as np

    from crasp.checker import check
    from crasp.interpreter import run_in_chunks

    from .dfa import longest_within, words

    length = longest_within(len(dfa.symbols), max_symbols)
    rng = np.random.default_rng(seed)
    inputs = [w for w in words(dfa.symbols, length) if framed or w]
    inputs += [tuple(rng.choice(dfa.symbols, size=int(n))) for n in rng.integers(1, longest + 1, size=sampled)]
    framing = (BOS,) if framed else ()
    tail = (end,) if end is not None else ()
    offsets = rng.integers(0, 64, size=len(inputs))
    checked = check(program)
    framed_inputs = [(*framing, *w, *tail) for w in inputs]
    verdicts = np.zeros(len(inputs), dtype=bool)
    short = len(inputs) - sampled  # the exhaustive words, then the long ones: two batches, little padding
    for part in (slice(0, short), slice(short, len(inputs))):
        rows = np.arange(len(inputs))[part]
        for indices, result in run_in_chunks(checked, framed_inputs[part], offset=offsets[part]):
            verdicts[rows[indices]] = result.accept
    expected = np.array([dfa.accepts(w) for w in inputs], dtype=bool)
    wrong = np.flatnonzero(verdicts != expected)
    bad = (inputs[wrong[0]], int(offsets[wrong[0]])) if len(wrong) else None
    return Agreement(len(inputs), length, sampled, longest, bad)


def bare_program(dfa: Dfa, limits: Limits = Limits()) -> ast.Program | None:
    """The program of the smallest separating tracker for bare words (``w``, accepting at its last
    symbol), checked against the automaton (:func:`agreement`); None when no tracker within
    ``limits`` separates.

    >>> from tasks.regular.dfa import from_regex
    >>> from crasp.interpreter import accepts
    >>> program = bare_program(from_regex("(a|b)*bb", "ab"))
    >>> [accepts(program, w) for w in ("a b b", "b b a", "b")]
    [True, False, False]
    """
    found = search(dfa, limits)
    if isinstance(found, NotFound):
        return None
    program = build(dfa, found.product, framed=False)
    checked = agreement(program, dfa, framed=False)
    if checked.disagreement is not None:
        word, offset = checked.disagreement
        raise AssertionError(f"internal error: the program for bare words disagrees with the automaton on "
                             f"{' '.join(word)!r} at offset {offset}")
    return program


def build(dfa: Dfa, found: Product, end: str | None = None, framed: bool = True) -> ast.Program:
    """The program of one separated product (see the module docstring): on ``<bos> w`` (``end``
    None: accepting at the last position) or ``<bos> w end``; with ``framed`` False on the bare
    word ``w``, accepting at its last symbol (a word of at least one symbol).

    >>> from tasks.regular.dfa import from_regex
    >>> from crasp.interpreter import accepts
    >>> dfa = from_regex("(ab)*", "ab")
    >>> bare = build(dfa, search(dfa).product, framed=False)
    >>> [accepts(bare, " ".join(w)) for w in ("ab", "aba", "abab", "ba")]
    [True, False, True, False]
    """
    if not framed and end is not None:
        raise ValueError("a bare word has no end token")
    b = ProgramBuilder(source="<tasks.regular.positional>")
    b.alphabet([*dfa.symbols, *([BOS] if framed else []), *([end] if end else [])])
    reader = Reader(b, framed)
    b.accept(accepting(found, dfa, states_before(b, reader, found), reader, end))
    return b.build()


def outputs_program(languages: dict[str, tuple[Dfa, Product]], read_at: str | None = None,
                    tokens: tuple[str, ...] = ()) -> ast.Program:
    """:func:`tasks.regular.program.outputs_program` with a separated product per language:
    ``next "t"`` where the word read so far is in ``languages[t]``, at every position or at
    ``read_at``."""
    symbols = next(iter(languages.values()))[0].symbols if languages else ()
    b = ProgramBuilder(source="<tasks.regular.positional>")
    b.alphabet(dict.fromkeys([*symbols, BOS, *([read_at] if read_at else []), *tokens, *languages]))
    reader = Reader(b)
    tracked: dict[Product, dict[int, Expr]] = {}
    for token, (dfa, found) in languages.items():
        if found not in tracked:
            tracked[found] = states_before(b, reader, found)
        accept = accepting(found, dfa, tracked[found], reader, read_at)
        b.next(token, accept)
    if read_at is not None:
        b.next("<eos>", ~tok(read_at))
    return b.build()


__all__ = ["Limits", "Letter", "Product", "Found", "NotFound", "Reader", "product", "trackers", "search",
           "program_for", "build", "bare_program", "agreement", "Agreement", "outputs_program", "states_before", "accepting"]
