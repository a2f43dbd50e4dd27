"""Is a regular language in C-RASP (the NoPE class)? An exact decision with its evidence.

**The theorem** (Yang, Veseli, Barloy, Cadilhac, Krebs, Paperman, Straubing & Hahn 2026,
arXiv 2608.13433, Thm 15 and Appendix J, Lemmas 84-86 and 88): a regular language, accepted at an
appended end-of-sequence position (their Definition 39), is C-RASP-definable iff in every strongly
connected component of its minimal DFA all states are separated by totally balanced count terms.
The authors' decider (github pentagonalize/crasp_reg, ``decider.py``) enumerates the simple cycles
of each component and takes null spaces of their Parikh vectors; this module is an independent
implementation of the same procedure that never enumerates cycles:

* In a strongly connected component C, a weighting phi of the edge labels sums to 0 on every
  cycle iff it is a potential difference: phi(label of u -> v) = p(v) - p(u) for some p: C -> Q
  (fix a root; p(v) is phi summed along any path from the root, well defined because the cycles
  cancel). So the balanced weightings are the potentials p whose difference p(v) - p(u) is the
  same on all internal edges that carry one label, a linear space B = W^perp with
  W = span{(e_v - e_u) - (e_v' - e_u') : u -> v and u' -> v' carry the same label}.
* Two states u, v get equal values under every balanced potential iff e_u - e_v lies in W; the
  integer row echelon form of W gives each state a canonical normal form (its vector of values
  under a basis of B), equal exactly for the states B cannot tell apart.
* Refinement: an edge's label at the next round is its letter together with the class of its
  source state; the decider's relabelling (an edge gets the pair of its old label and the
  potential of its source plus the old label's weight) induces exactly this partition, because
  within one old label the weight is common. Rounds repeat until the partition of the states is
  stable (at most |C| rounds); the component passes iff every class is a single state.
* Transitions that leave the component lie on no cycle and constrain nothing; they are left out
  (the decider routes them to a 'garbage' state with free weights, which has the same effect).
* Parallel edges (two letters from u to v) are two edges with two labels here: the commit
  pentagonalize/crasp_reg@71daa01 reuses one key for them and so answers `(cab|c)*` wrongly
  (the data README); this implementation keeps them apart and says no, as Table 1 does.

Cheaper certificates settle most languages and are checked as well: a partially ordered minimal
DFA (every component one state) has an R-trivial syntactic monoid (Brzozowski & Fich 1980) and
R ⊆ C-RASP (Yang et al. 2026, Example 43.1); for a "no", the transition monoid is searched (up to
a size limit) for a non-trivial group (not aperiodic) or for two idempotents in one R-class
(not R^omega), both necessary conditions (Yang et al. 2026, Thm 13/14; Huang et al. 2025, Lemma
38 for periodic languages), and the two answers are checked against each other.

>>> from tasks.regular.dfa import from_regex
>>> decide_nope(from_regex("(ab|ba)*", "ab")).member
True
>>> decision = decide_nope(from_regex("(ab|bba)*", "ab"))
>>> decision.member, decision.criterion
(False, 'balanced-potential decision procedure (Yang et al. 2026, Thm 15)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from .dfa import Dfa, minimize
from .monoid import r_omega_violation, strongly_connected_components, transition_monoid

YANG_2026 = ("Yang, Veseli, Barloy, Cadilhac, Krebs, Paperman, Straubing & Hahn, Algebraic Decomposition Theory "
             "for Transformer Length Generalization, arXiv 2608.13433 (2026): Thm 15, Appendix H and J "
             "(Lemmas 84-86, 88)")
YANG_2026_NECESSARY = ("Yang et al. 2026 (arXiv 2608.13433), Thm 13/14: C-RASP ∩ REG ⊆ R^omega "
                       "(aperiodic, at most one idempotent per R-class)")
YANG_2026_R = "Yang et al. 2026 (arXiv 2608.13433), Example 43.1: R ⊆ C-RASP"
BRZOZOWSKI_FICH = ("Brzozowski & Fich, Languages of R-trivial monoids, JCSS 20 (1980): a language is R-trivial "
                   "iff its minimal DFA is partially ordered")
HUANG_2025 = ("Huang et al. 2025, A Formal Framework for Understanding Length Generalization in Transformers "
              "(arXiv 2410.02140): C-RASP functions length-generalize with NoPE transformers under the idealized "
              "learner; periodic languages such as (aa)* are outside C-RASP (Lemma 38, as cited in arXiv 2608.13433, "
              "Example 43)")
CRASP_REG = ("pentagonalize/crasp_reg@71daa01, decider.py: the authors' decider (simple cycles, "
             "null spaces); this is an independent re-implementation without cycle enumeration")
DATA_README = ("data README (tasks/data/regular_languages.csv, docs/regular.md): derived, unpublished "
               "criterion for last-position acceptance")

PROCEDURE = "balanced-potential decision procedure (Yang et al. 2026, Thm 15)"
MONOID_LIMIT = 5_000
"""How many monoid elements decide_nope explores when it looks for an algebraic obstruction."""


@dataclass(frozen=True)
class Decision:
    """Whether a regular language is in C-RASP, with the test that settled it.

    ``member``: in C-RASP under the end-of-sequence convention (that of the data set).
    ``criterion``: the test that settled it. ``obstruction``: for a "no", why, in words.
    ``certificate``: what was checked (for a "yes": the separating balanced potentials of each
    component). ``references``: where the criterion is proved.

    >>> from tasks.regular.dfa import from_regex
    >>> print(decide_nope(from_regex("(aa)*", "a")).obstruction)
    the word 'a' permutes the states 0 -> 1 -> 0 (a cycle of length 2), so a^k never equals a^(k+1): the syntactic monoid contains a non-trivial group
    """

    member: bool
    criterion: str
    obstruction: str | None
    certificate: str
    references: tuple[str, ...]

    def _repr_html_(self) -> str:
        """The decision in a notebook: the verdict, the criterion, the obstruction and the certificate."""
        from crasp.display import decision_html

        return decision_html(self)


# ---------------------------------------------------------------- exact linear algebra


def _primitive(vector: list[int], pivot: int) -> list[int]:
    """The integer vector divided by the gcd of its entries, with a positive entry at ``pivot``."""
    g = math.gcd(*vector)
    if vector[pivot] < 0:
        g = -g
    return vector if g == 1 else [x // g for x in vector]


class RowSpace:
    """A subspace of Q^m spanned by integer vectors, kept in fully reduced integer echelon form:
    ``rows[p]`` has a positive entry at its pivot p and 0 at every other row's pivot.

    >>> space = RowSpace(3)
    >>> space.add([1, -1, 0]), space.add([2, -2, 0]), space.rank
    (True, False, 1)
    >>> space.normal_forms()
    [(1, (1, 0)), (1, (1, 0)), (1, (0, 1))]
    """

    def __init__(self, m: int) -> None:
        self.m = m
        self.rows: dict[int, list[int]] = {}

    @property
    def rank(self) -> int:
        return len(self.rows)

    def add(self, vector: list[int]) -> bool:
        """Add a vector; True if it enlarged the space."""
        v = list(vector)
        for p, row in self.rows.items():
            c = v[p]
            if c:
                a = row[p]
                v = [a * x - c * y for x, y in zip(v, row)]
                g = math.gcd(*v)
                if g > 1:
                    v = [x // g for x in v]
        pivot = next((i for i, x in enumerate(v) if x), None)
        if pivot is None:
            return False
        v = _primitive(v, pivot)
        for p, row in list(self.rows.items()):
            c = row[pivot]
            if c:
                self.rows[p] = _primitive([v[pivot] * x - c * y for x, y in zip(row, v)], p)
        self.rows[pivot] = v
        return True

    def free(self) -> list[int]:
        """The non-pivot coordinates, ascending."""
        return [i for i in range(self.m) if i not in self.rows]

    def normal_forms(self) -> list[tuple[int, tuple[int, ...]]]:
        """For each coordinate i, e_i reduced modulo the space, as (denominator, numerators over
        the free coordinates) in lowest terms: e_i - e_j is in the space iff their forms agree.
        The form of i is also i's value under the basis of the orthogonal complement that has one
        vector per free coordinate."""
        free = self.free()
        forms = []
        for i in range(self.m):
            row = self.rows.get(i)
            if row is None:
                forms.append((1, tuple(int(i == j) for j in free)))
                continue
            d = row[i]
            numerators = [-row[j] for j in free]
            g = math.gcd(d, *numerators)
            forms.append((d // g, tuple(x // g for x in numerators)))
        return forms


# ---------------------------------------------------------------- one component


@dataclass
class Round:
    """One refinement round: the partition of the component's states it produced and integer
    balanced potentials (modulo constants) that realise it."""

    labels: int
    classes: list[list[int]]
    potentials: list[dict[int, int]]


@dataclass
class ComponentResult:
    states: list[int]
    rounds: list[Round] = field(default_factory=list)
    initial: list[list[int]] | None = None
    """The partition the refinement started from (None: one class)."""

    @property
    def classes(self) -> list[list[int]]:
        return self.rounds[-1].classes if self.rounds else self.initial or [self.states]

    @property
    def separated(self) -> bool:
        return all(len(c) == 1 for c in self.classes)


def separate_component(dfa: Dfa, states: list[int]) -> ComponentResult:
    """Run the refinement of balanced potentials on one strongly connected component."""
    return separate_edges(states, [(q, k, t) for q in states for k, t in enumerate(dfa.table[q])])


def separate_edges(states: list[int], edges: list[tuple[int, int, int]],
                   visible: dict[int, object] | None = None, certify: bool = True) -> ComponentResult:
    """The refinement on one strongly connected component given as its states and labelled edges
    ``(source, label, target)`` (edges that leave ``states`` are ignored): an automaton need not be
    complete here, so a product that only has its reachable transitions is separated the same way.
    ``visible`` (state -> key) is a partition known before counting (what a position reads
    directly): the refinement starts from it instead of from one class. With ``certify`` False
    only the classes are computed (no potentials, no re-check): a quick test of separation."""
    local = {q: i for i, q in enumerate(states)}
    m = len(states)
    edges = [(local[q], k, local[t]) for q, k, t in edges if q in local and t in local]
    result = ComponentResult(list(states))
    cls = _initial(states, visible)
    count = len(set(cls))
    if visible is not None:
        groups_of: dict[int, list[int]] = {}
        for i, c in enumerate(cls):
            groups_of.setdefault(c, []).append(states[i])
        result.initial = list(groups_of.values())
        if count == m:
            return result  # what the positions show already tells every state apart: no counting needed
    while True:
        groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for u, k, v in edges:
            groups.setdefault((k, cls[u]), []).append((u, v))
        space = RowSpace(m)
        for members in groups.values():
            u0, v0 = members[0]
            for u, v in members[1:]:
                if (u, v) == (u0, v0) or space.rank == m - 1:
                    continue
                vector = [0] * m
                vector[v] += 1
                vector[u] -= 1
                vector[v0] -= 1
                vector[u0] += 1
                space.add(vector)
        forms = space.normal_forms()
        keys: dict[tuple, int] = {}
        refined = [keys.setdefault((cls[i], forms[i]), len(keys)) for i in range(m)]
        classes: dict[int, list[int]] = {}
        for i, c in enumerate(refined):
            classes.setdefault(c, []).append(states[i])
        if len(keys) == count and result.rounds:
            break  # stable: this round separates nothing new
        potentials = _potentials(space, states) if certify else []
        result.rounds.append(Round(len(groups), list(classes.values()), potentials))
        if len(keys) == count or len(keys) == m:
            break
        cls, count = refined, len(keys)
    if certify:
        _check_balanced(edges, result, m, _initial(states, visible))
    return result


def _initial(states: list[int], visible: dict[int, object] | None) -> list[int]:
    if visible is None:
        return [0] * len(states)
    keys: dict[object, int] = {}
    return [keys.setdefault(visible[q], len(keys)) for q in states]


def _potentials(space: RowSpace, states: list[int]) -> list[dict[int, int]]:
    """A basis of the balanced potentials modulo constants, scaled to integers, as state -> value."""
    free = space.free()
    forms = space.normal_forms()
    out = []
    for j in range(1, len(free)):  # the constant 1 is the sum of all basis vectors: drop the first
        values = [Fraction(num[j], d) for d, num in forms]
        scale = math.lcm(*(v.denominator for v in values))
        out.append({q: int(v * scale) for q, v in zip(states, values)})
    return out


def _check_balanced(edges, result: ComponentResult, m: int, cls: list[int]) -> None:
    """Re-check each round's potentials: constant difference on every label, and the classes are
    exactly the states with equal values (guards against a bug in the elimination)."""
    position = {q: i for i, q in enumerate(result.states)}
    for rnd in result.rounds:
        for p in rnd.potentials:
            seen: dict[tuple[int, int], int] = {}
            for u, k, v in edges:
                diff = p[result.states[v]] - p[result.states[u]]
                if seen.setdefault((k, cls[u]), diff) != diff:
                    raise AssertionError(f"internal error: potential {p} is not balanced on label {(k, cls[u])}")
        keys: dict[tuple, int] = {}
        new = [keys.setdefault((cls[i], *(p[result.states[i]] for p in rnd.potentials)), len(keys)) for i in range(m)]
        expected = sorted(sorted(c) for c in rnd.classes)
        got: dict[int, list[int]] = {}
        for i, c in enumerate(new):
            got.setdefault(c, []).append(result.states[i])
        if sorted(sorted(c) for c in got.values()) != expected:
            raise AssertionError("internal error: the potentials do not realise the partition")
        cls = [new[position[q]] for q in result.states]


# ---------------------------------------------------------------- the decision


def _components(dfa: Dfa) -> list[list[int]]:
    return strongly_connected_components([sorted(set(row)) for row in dfa.table])


def _set(states) -> str:
    return "{" + ", ".join(map(str, states)) + "}"


def _describe_component(dfa: Dfa, result: ComponentResult, max_potentials: int = 4) -> str:
    lines = [f"component {_set(result.states)}:"]
    for n, rnd in enumerate(result.rounds):
        what = "letters" if n == 0 else "letters paired with the class of their source state"
        shown = rnd.potentials[:max_potentials]
        pots = "; ".join(", ".join(f"{q}:{v}" for q, v in p.items()) for p in shown) or "only constants"
        more = f" (+{len(rnd.potentials) - len(shown)} more)" if len(rnd.potentials) > len(shown) else ""
        lines.append(f"  round {n + 1} ({rnd.labels} labels: {what}): balanced potentials [{pots}]{more} "
                     f"-> classes {' '.join(_set(c) for c in rnd.classes)}")
    return "\n".join(lines)


def decide_nope(dfa: Dfa) -> Decision:
    """Decide whether the language of ``dfa`` is C-RASP-definable (NoPE), end-of-sequence
    acceptance; exact, for any DFA (it is minimised first; state numbers in the texts are those of
    the canonical minimal DFA, :func:`tasks.regular.minimize`).

    >>> from tasks.regular.dfa import from_regex
    >>> d = decide_nope(from_regex("a*b*", "ab"))
    >>> d.member, d.criterion
    (True, 'R-trivial')
    >>> decide_nope(from_regex("(a|b)*b", "ab")).criterion
    'fails R^omega'
    """
    dfa = minimize(dfa)
    components = _components(dfa)
    cyclic = [c for c in components if len(c) > 1]
    if not cyclic:
        return Decision(True, "R-trivial", None,
                        f"the minimal DFA ({dfa.n_states} states) is partially ordered: every strongly connected "
                        "component is a single state, so the syntactic monoid is R-trivial",
                        (BRZOZOWSKI_FICH, YANG_2026_R, YANG_2026))
    results = [separate_component(dfa, c) for c in cyclic]
    failed = [r for r in results if not r.separated]
    certificate = "\n".join(_describe_component(dfa, r) for r in results)
    if not failed:
        return Decision(True, PROCEDURE, None,
                        "every state of every strongly connected component gets its own values under the "
                        "balanced potentials (integer weights of the labels that sum to 0 on every cycle):\n"
                        + certificate, (YANG_2026, CRASP_REG))
    bad = failed[0]
    pair = next(c for c in bad.classes if len(c) > 1)[:2]
    rounds = len(bad.rounds)
    procedure_text = (f"states {pair[0]} and {pair[1]} of the component {_set(bad.states)} are not separated by any "
                      f"balanced counting term: the refinement (letters paired with the class of their source "
                      f"state) is stable after {rounds} round{'s' * (rounds != 1)}, and every integer potential that "
                      f"sums to 0 on every cycle of the component gives them equal values")
    monoid, witness = transition_monoid(dfa, MONOID_LIMIT, stop_at_group=True)
    if witness is not None:
        return Decision(False, "not aperiodic", witness, f"{procedure_text}\n{certificate}",
                        (HUANG_2025, YANG_2026_NECESSARY, YANG_2026))
    if monoid.complete:
        violation = r_omega_violation(monoid)
        if violation is not None:
            return Decision(False, "fails R^omega", violation, f"{procedure_text}\n{certificate}",
                            (YANG_2026_NECESSARY, YANG_2026))
        note = (f"the syntactic monoid ({len(monoid.elements)} elements) is aperiodic with at most one idempotent "
                "per R-class, so the necessary condition R^omega holds and only the procedure settles it")
    else:
        note = (f"the syntactic monoid has more than {MONOID_LIMIT} elements; no non-trivial group among those "
                "searched")
    return Decision(False, PROCEDURE, procedure_text, f"{note}\n{certificate}", (YANG_2026, CRASP_REG))


def decide_nope_last_position(dfa: Dfa) -> Decision:
    """C-RASP membership when acceptance is read at the LAST position (no end-of-sequence symbol;
    Yang & Chiang's and Huang et al.'s basic definition). None of this is a published theorem:

    * "yes" when :func:`decide_nope` says yes: an EOS formula is simulated at the last position
      (a count up to the EOS position is the count up to the last position plus the EOS
      position's own term, computed by the same recursion) — a direct argument, not a citation;
    * "no" when some right quotient L sigma^-1 = {w : w sigma in L} is not EOS-definable: a
      last-position formula for L, with the EOS position read as sigma, is an EOS formula for
      L sigma^-1 — also a direct argument;
    * otherwise (L is EOS-no but every quotient is EOS-yes) "yes", resting on the data README's
      derived, unpublished criterion (L is last-position definable iff every right quotient is
      EOS-definable).

    >>> from tasks.regular.dfa import from_regex
    >>> d = decide_nope_last_position(from_regex("(a|b)*b", "ab"))
    >>> d.member, d.criterion.startswith("every right quotient")
    (True, True)
    """
    dfa = minimize(dfa)
    eos = decide_nope(dfa)
    if eos.member:
        return Decision(True, f"EOS-definable ({eos.criterion}), and EOS acceptance can be simulated at the last "
                        "position", None, eos.certificate, eos.references)
    quotients = []
    for symbol in dfa.symbols:
        quotient = dfa.right_quotient(symbol)
        decision = decide_nope(quotient)
        if not decision.member:
            obstruction = (f"the right quotient L{symbol}^-1 = {{w : w{symbol} in L}} is not C-RASP-definable under "
                           f"EOS ({decision.criterion}: {decision.obstruction}); a last-position formula for L, with "
                           f"the EOS position read as {symbol!r}, would define it")
            return Decision(False, "a right quotient is not EOS-definable", obstruction,
                            decision.certificate, decision.references)
        quotients.append(f"L{symbol}^-1: {decision.criterion}")
    return Decision(True, "every right quotient L sigma^-1 is EOS-definable (derived, unpublished criterion)",
                    None, f"L itself is not EOS-definable ({eos.criterion}: {eos.obstruction}); " + "; ".join(quotients),
                    (DATA_README, YANG_2026))


__all__ = ["Decision", "decide_nope", "decide_nope_last_position", "separate_component", "separate_edges", "RowSpace",
           "ComponentResult", "PROCEDURE"]
