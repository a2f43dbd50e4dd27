"""The symbolic values of lowering: every value at one position as a polynomial over atoms.

Lowering (pass 1) does not give each Boolean operation a layer of its own. It keeps every value
symbolic, as a :class:`Poly`: a sum of monomials, each a product of :class:`Atom` s times an
:class:`Affine` coefficient. An atom is a sign test that one hidden unit can make on the
residual stream: an integer-valued linear :class:`Form` (counts held as C/(n+1), or 0/1 slots)
lying in an open interval with half-integer ends, or a local read P(i - d). A Boolean is a
polynomial whose value is 0 or 1 at every position; a count is a polynomial whose coefficients
may hold count slots. Products of atoms of one form are their intersection, so a chain of
comparisons and case splits on one count (``x - (80 if x >= 80 else 0) >= 40``) stays one union
of intervals of that count.

This module is the algebra alone (pure functions on frozen values); lowering decides where the
values are written into the residual stream.

>>> a = Form(INTEGER, ((3, 1),))                    # a 0/1 slot, say the token "a"
>>> x = Form(COUNT, ((5, 1), (6, -1)))              # #"(" - #")", held over n + 1
>>> p = multiply(of_atom(Atom(a, 0.5)), of_atom(Atom(x, -0.5, 0.5)), integer_range)
>>> len(p.terms), p.terms[0][1]
(1, Affine(counts=(), const=1))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

INF = math.inf
COUNT, INTEGER, LOCAL = "count", "integer", "local"


@dataclass(frozen=True, order=True)
class Form:
    """An integer combination of residual slots that atoms test.

    ``COUNT``: the slots hold counts divided by n + 1, so the form is Z/(n+1) with Z an integer;
    a constant is added on the 1/(n+1) slot. ``INTEGER``: the slots are 0/1 Booleans and the
    constant sits on the non-BOS indicator ``tok``. ``LOCAL``: (head biased at an offset) minus
    (uniform head), positive exactly where the read slot was 1 at that offset.
    """

    kind: str
    terms: tuple[tuple[int, int], ...]


@dataclass(frozen=True, order=True)
class Atom:
    """True where ``low < value(form) < high`` (half-integer ends, or infinite); a local atom is
    always ``(0, INF)``."""

    form: Form
    low: float = -INF
    high: float = INF


Monomial = tuple[Atom, ...]
"""A product of atoms on distinct forms, sorted."""

Range = Callable[[Form], tuple[float, float]]
"""The least and greatest integer a form can take (or infinite); used to simplify intervals."""


@dataclass(frozen=True)
class Affine:
    """An integer combination of count slots (held over n + 1) plus an integer constant.

    >>> Affine(((4, 2),), 1).plus(Affine(((4, -2),), 3))
    Affine(counts=(), const=4)
    """

    counts: tuple[tuple[int, int], ...] = ()
    const: int = 0

    def plus(self, other: "Affine", factor: int = 1) -> "Affine":
        merged = dict(self.counts)
        for slot, coefficient in other.counts:
            merged[slot] = merged.get(slot, 0) + factor * coefficient
        return Affine(tuple(sorted((s, c) for s, c in merged.items() if c)), self.const + factor * other.const)

    def times(self, factor: int) -> "Affine":
        return Affine(tuple((s, factor * c) for s, c in self.counts if factor), factor * self.const)

    @property
    def zero(self) -> bool:
        return not self.counts and not self.const


@dataclass(frozen=True)
class Poly:
    """A sum of monomials with affine coefficients; the empty monomial is the constant part."""

    terms: tuple[tuple[Monomial, Affine], ...] = ()

    def __len__(self) -> int:
        return len(self.terms)

    def atoms(self) -> set[Atom]:
        return {atom for monomial, _ in self.terms for atom in monomial}

    def constant_value(self) -> int | None:
        """The integer this polynomial always equals, or None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and not self.terms[0][0] and not self.terms[0][1].counts:
            return self.terms[0][1].const
        return None


def make_poly(terms: dict[Monomial, Affine]) -> Poly:
    return Poly(tuple(sorted((m, a) for m, a in terms.items() if not a.zero)))


def constant(value: int) -> Poly:
    return make_poly({(): Affine((), value)})


def of_atom(atom: Atom) -> Poly:
    return Poly((((atom,), Affine((), 1)),))


def of_affine(value: Affine) -> Poly:
    return make_poly({(): value})


def add(p: Poly, q: Poly, factor: int = 1) -> Poly:
    """p + factor * q."""
    terms = dict(p.terms)
    for monomial, coefficient in q.terms:
        terms[monomial] = terms.get(monomial, Affine()).plus(coefficient, factor)
    return make_poly(terms)


def scale(p: Poly, factor: int) -> Poly:
    return make_poly({m: a.times(factor) for m, a in p.terms})


def integer_range(form: Form) -> tuple[float, float]:
    """The range of an ``INTEGER`` form (its slots are 0/1); unbounded for the other kinds."""
    if form.kind != INTEGER:
        return -INF, INF
    return (float(sum(min(c, 0) for _, c in form.terms)), float(sum(max(c, 0) for _, c in form.terms)))


FULL = Atom(Form("", ()))
"""Stands for an interval that holds at every value a form can take (the atom drops out)."""


def normalize(atom: Atom, ranges: Range) -> Atom | None:
    """The atom with its ends moved to the half-integers around the integers it admits within the
    form's range; None when it admits none, ``FULL`` when it admits all.

    >>> normalize(Atom(Form(INTEGER, ((1, 3),)), 1.0), integer_range)   # 3b > 1: 3b >= 2
    Atom(form=Form(kind='integer', terms=((1, 3),)), low=1.5, high=inf)
    """
    if atom.form.kind == LOCAL:
        return atom
    least, most = ranges(atom.form)
    lowest = max(math.floor(atom.low) + 1 if atom.low > -INF else -INF, least)
    highest = min(math.ceil(atom.high) - 1 if atom.high < INF else INF, most)
    if lowest > highest:
        return None
    low = -INF if lowest <= least else lowest - 0.5
    high = INF if highest >= most else highest + 0.5
    if low == -INF and high == INF:
        return FULL
    return Atom(atom.form, low, high)


def intersect(a: Atom, b: Atom, ranges: Range) -> Atom | None:
    """Two atoms on one form hold together where their intervals meet."""
    return normalize(Atom(a.form, max(a.low, b.low), min(a.high, b.high)), ranges)


def monomial_product(m: Monomial, n: Monomial, ranges: Range) -> Monomial | None:
    """The product of two monomials (atoms of one form intersected), or None where it is 0."""
    by_form = {atom.form: atom for atom in m}
    for atom in n:
        held = by_form.get(atom.form)
        if held is not None:
            met = intersect(held, atom, ranges)
            if met is None:
                return None
            atom = met
        by_form[atom.form] = atom
    return tuple(sorted(a for a in by_form.values() if a != FULL))


def multiply(p: Poly, q: Poly, ranges: Range) -> Poly:
    """p * q; one of them must have constant coefficients (a Boolean times a value)."""
    terms: dict[Monomial, Affine] = {}
    for m, a in p.terms:
        for n, b in q.terms:
            monomial = monomial_product(m, n, ranges)
            if monomial is None:
                continue
            if a.counts and b.counts:
                raise ValueError("a product of two counts is not a C-RASP value")
            coefficient = b.times(a.const) if not a.counts else a.times(b.const)
            terms[monomial] = terms.get(monomial, Affine()).plus(coefficient)
    return merge_adjacent(make_poly(terms), ranges)


def complement(p: Poly, ranges: Range) -> Poly:
    """1 - p for a Boolean p; one interval atom becomes the (at most two) intervals around it.

    >>> b = Atom(Form(INTEGER, ((1, 1),)), 0.5)
    >>> complement(of_atom(b), integer_range).terms[0][0]
    (Atom(form=Form(kind='integer', terms=((1, 1),)), low=-inf, high=0.5),)
    """
    if len(p.terms) == 1 and len(p.terms[0][0]) == 1 and p.terms[0][1] == Affine((), 1):
        atom = p.terms[0][0][0]
        if atom.form.kind != LOCAL:
            pieces = [normalize(Atom(atom.form, -INF, atom.low), ranges) if atom.low > -INF else None,
                      normalize(Atom(atom.form, atom.high, INF), ranges) if atom.high < INF else None]
            terms: dict[Monomial, Affine] = {}
            for piece in pieces:
                if piece is not None:
                    key: Monomial = () if piece == FULL else (piece,)
                    terms[key] = terms.get(key, Affine()).plus(Affine((), 1))
            return make_poly(terms)
    return add(constant(1), p, -1)


def merge_adjacent(p: Poly, ranges: Range) -> Poly:
    """Monomials that differ only in adjacent intervals of one form, with equal coefficients,
    merged into one over the union (repeated until none is left).

    >>> x = Form(COUNT, ((5, 1),))
    >>> low, high = of_atom(Atom(x, -INF, 2.5)), of_atom(Atom(x, 2.5, INF))
    >>> merge_adjacent(add(low, high), integer_range)
    Poly(terms=(((), Affine(counts=(), const=1)),))
    """
    terms = dict(p.terms)
    while True:
        holding: dict[Form, list[tuple[Monomial, Affine, int]]] = {}
        for monomial, coefficient in terms.items():
            for i, atom in enumerate(monomial):
                if atom.form.kind != LOCAL:
                    holding.setdefault(atom.form, []).append((monomial, coefficient, i))
        for form in sorted(holding):
            merged = _merge_form(terms, form, holding[form], ranges)
            if merged is not None:
                terms = merged
                break
        else:
            return make_poly(terms)


def _merge_form(terms: dict[Monomial, Affine], form: Form, holding: list[tuple[Monomial, Affine, int]],
                ranges: Range) -> dict[Monomial, Affine] | None:
    """One sweep of :func:`merge_adjacent` over one form (``holding``: the monomials with an atom
    on it, and where): every run of touching intervals with the same rest and coefficient becomes
    one monomial; None when there is none."""
    if len(holding) < 2 or not ({m[i].high for m, _, i in holding} & {m[i].low for m, _, i in holding}):
        return None  # no two intervals touch
    groups: dict[tuple[Monomial, Affine], list[Atom]] = {}
    for monomial, coefficient, i in holding:
        groups.setdefault((monomial[:i] + monomial[i + 1:], coefficient), []).append(monomial[i])
    removed: list[Monomial] = []
    added: list[tuple[Monomial, Affine]] = []
    for (rest, coefficient), atoms in groups.items():
        if len(atoms) < 2:
            continue
        atoms.sort(key=lambda a: (a.low, a.high))
        runs: list[list[Atom]] = [[atoms[0]]]
        for atom in atoms[1:]:
            if runs[-1][-1].high == atom.low:
                runs[-1].append(atom)
            else:
                runs.append([atom])
        for run in runs:
            if len(run) < 2:
                continue
            removed += [tuple(sorted(rest + (atom,))) for atom in run]
            union = normalize(Atom(form, run[0].low, run[-1].high), ranges)
            if union is not None:
                added.append((rest if union == FULL else tuple(sorted(rest + (union,))), coefficient))
    if not removed:
        return None
    result = dict(terms)
    for monomial in removed:
        del result[monomial]
    for monomial, coefficient in added:
        result[monomial] = result.get(monomial, Affine()).plus(coefficient)
    return {m: a for m, a in result.items() if not a.zero}


def elementary(form: Form, atoms: list[Atom], ranges: Range) -> list[Atom]:
    """The cells of a form's line cut at every end of ``atoms``: the least intervals on which
    each of them is constant (``FULL`` alone when there is no cut)."""
    if form.kind == LOCAL:
        raise ValueError("a local form has two cells, the atom and its negation")
    cuts = sorted({e for a in atoms for e in (a.low, a.high) if math.isfinite(e)})
    ends = [-INF, *cuts, INF]
    cells = [normalize(Atom(form, lo, hi), ranges) for lo, hi in zip(ends, ends[1:])]
    return [c for c in cells if c is not None]


def contains(atom: Atom, cell: Atom) -> bool:
    """Whether an elementary cell (of the same form) lies inside the atom's interval."""
    if cell == FULL:
        return atom == FULL
    return atom.low <= cell.low and cell.high <= atom.high
