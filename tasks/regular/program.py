"""A plain C-RASP program for a C-RASP-definable regular language, built from the decider's
certificate (this construction is ours; it follows the idea of the decision procedure but is not
the paper's proof).

The program reads ``<bos>`` followed by the word and accepts at the last token. At every position
it computes which state the DFA was in *before* reading that position's token (``Prev_q``),
strongly connected component by component, in topological order:

* the run enters a component C once, at a position where the previous state lies in an earlier
  component (known already) and the token leads into C, or at ``<bos>`` for the start's
  component; a count of these entry positions tells, at every later position, that C was entered
  and in which state e;
* while the run stays in C, the potentials of the certificate identify the state: at round r an
  edge's label is its letter and the round r-1 class of its source state, and the potential of
  the current state minus that of e is the weighted sum of the counts of the labels since the
  entry; a comparison of that count expression with a constant gives the round r class; after
  the last round every class is one state. These "hypothetical" states are right until the run
  first leaves C (after it, they are ignored);
* the first position where the hypothetical state takes a transition out of C is the exit; a
  count of such positions switches C off.

Strict counts over the positions before the current one are a count minus the current position's
term (``C - (w if P else 0)``). The result is checked against the DFA in the tests.

>>> from tasks.regular.dfa import from_regex
>>> from crasp.interpreter import accepts
>>> program = program_for(from_regex("(ab|ba)*", "ab"))
>>> [accepts(program, "<bos> " + " ".join(w)) for w in ("", "ab", "abba", "aab", "b")]
[True, True, True, False, False]
"""

from __future__ import annotations

import random
from typing import Sequence

from crasp import ast
from crasp.builder import Expr, ProgramBuilder, any_of, count, sum_of, tok, where

from ..types import BOS
from .decide import decide_nope, separate_edges
from .dfa import Dfa, minimize
from .monoid import strongly_connected_components


def _combined(potentials: list[dict[int, int]], states: list[int], before: dict[int, int],
              classes: list[list[int]]) -> dict[int, int]:
    """One potential that, within each class of the previous round (``before``: state -> class),
    separates the states the round's ``classes`` separate: a small integer combination of the
    round's potentials (coefficients tried from a fixed pseudo-random sequence, then growing), or
    their mixed-radix combination when no small one is found."""
    if not potentials:
        return {q: 0 for q in states}
    target = {q: n for n, members in enumerate(classes) for q in members}

    def separates(values: dict[int, int]) -> bool:
        seen: dict[tuple[int, int], int] = {}
        return all(seen.setdefault((before[q], values[q]), target[q]) == target[q] for q in states)

    if len(potentials) == 1:
        return dict(potentials[0])
    generator = random.Random(0)
    for bound in (1, 3, 10, 100, 10_000):
        for _ in range(8):
            weights = [generator.randint(-bound, bound) for _ in potentials]
            values = {q: sum(w * p[q] for w, p in zip(weights, potentials)) for q in states}
            if separates(values):
                return values
    largest = 1 + max(abs(v) for p in potentials for v in p.values())
    radix = 2 * largest + 1
    return {q: sum(p[q] * radix ** t for t, p in enumerate(potentials)) for q in states}


def program_for(dfa: Dfa, end: str | None = None) -> ast.Program | None:
    """A plain C-RASP program that accepts exactly the words of ``dfa``'s language, read at the last
    position of ``<bos> w`` (or, with ``end``, of ``<bos> w end``: the end-of-sequence convention);
    None when the language is not in C-RASP (end-of-sequence convention).

    >>> from tasks.regular.dfa import from_regex
    >>> program_for(from_regex("(a|b)*b", "ab")) is None
    True
    """
    dfa = minimize(dfa)
    if not decide_nope(dfa).member:
        return None
    b = ProgramBuilder(source="<tasks.regular.program_for>")
    b.alphabet([*dfa.symbols, BOS, *([end] if end else [])])
    b.accept(membership(b, dfa, end))
    return b.build()


def outputs_program(languages: dict[str, Dfa], read_at: str | None = None,
                    tokens: tuple[str, ...] = ()) -> ast.Program | None:
    """A plain C-RASP program with ``next "t"`` true exactly where the word read so far is in the
    language ``languages[t]``: at every position (``read_at`` None: a next-character-set program)
    or at the token ``read_at`` (``<sep>`` of a one-token answer, with ``next "<eos>"`` everywhere
    else); None when some language is not in C-RASP (end-of-sequence convention). ``tokens``: the
    other tokens inputs may hold. Languages with the same minimal automaton share its states.

    >>> from tasks.regular.dfa import from_regex
    >>> from crasp.interpreter import run
    >>> sorted_, unsorted = from_regex("a*b*", "ab"), from_regex("a*b*", "ab").complement()
    >>> program = outputs_program({"y": sorted_, "n": unsorted}, read_at="<sep>", tokens=("<eos>",))
    >>> [run(program, [f"<bos> {w} <sep> y"]).next_tokens(0)[-2] for w in ("a b", "b a")]
    ['y', 'n']
    """
    minimal = {token: minimize(dfa) for token, dfa in languages.items()}
    if not all(decide_nope(dfa).member for dfa in minimal.values()):
        return None
    symbols = next(iter(minimal.values())).symbols if minimal else ()
    b = ProgramBuilder(source="<tasks.regular.outputs_program>")
    b.alphabet(dict.fromkeys([*symbols, BOS, *([read_at] if read_at else []), *tokens, *languages]))
    tracked: dict[tuple, dict[int, Expr]] = {}
    for token, dfa in minimal.items():
        key = (dfa.table, dfa.start)
        if key not in tracked:
            tracked[key] = states_before(b, dfa)
        accept = _accepting(dfa, tracked[key], read_at)
        b.next(token, tok(read_at) & accept if read_at else accept)
    if read_at is not None:
        b.next("<eos>", ~tok(read_at))
    return b.build()


def membership(b: ProgramBuilder, dfa: Dfa, end: str | None = None) -> Expr:
    """The Boolean "the word read so far is in the language of ``dfa``" (a minimal DFA whose
    language is in C-RASP), read at the last position, or at the token ``end`` after the word."""
    return _accepting(dfa, states_before(b, dfa), end)


def _accepting(dfa: Dfa, prev: dict[int, Expr], end: str | None) -> Expr:
    if end is not None:  # at the end token, Prev_q is the state the whole word reached
        return tok(end) & any_of([prev[q] for q in sorted(dfa.accepting)])
    accepting = [prev[q] & tok(dfa.symbols[k]) for q, row in enumerate(dfa.table) for k, t in enumerate(row)
                 if t in dfa.accepting]
    if dfa.start in dfa.accepting:
        accepting.append(tok(BOS))  # the empty word: the last token is <bos>
    return any_of(accepting)


def states_before(b: ProgramBuilder, dfa: Dfa) -> dict[int, Expr]:
    """Per state q of ``dfa`` (minimal, its language in C-RASP) the Boolean "the run was in q
    before reading this position's token", defined in ``b`` (see the module docstring)."""
    edges = [tuple(enumerate(row)) for row in dfa.table]
    return track(b, dfa.start, edges, [tok(s) for s in dfa.symbols])


def _exits_once(edges: Sequence[Sequence[tuple[int, int]]], successors: Sequence[Sequence[int]],
                inside: set[int], pinned: Sequence[int | None] | None) -> bool:
    """Whether the Boolean "the run leaves the component ``inside`` here" can be true at one
    position at most, the real exit (while the run is in the component its states are known
    exactly; after, they are not). Either every leaving label is read at one and the same position
    of every input (``pinned[label]``: a window that reaches back to the start), or no label that
    leaves can be read once the run has left: no state reachable from a leaving transition's target
    has a transition with that label (a label is a property of the position: its token, what
    surrounds it, its residue), and none of them is a state whose transitions are left out (a
    sink, where any label may follow)."""
    leaving = {k for q in inside for k, t in edges[q] if t not in inside}
    if pinned is not None and len({pinned[k] for k in leaving}) == 1 and pinned[next(iter(leaving))] is not None:
        return True
    frontier = [t for q in inside for _, t in edges[q] if t not in inside]
    after = set(frontier)
    while frontier:
        for t in successors[frontier.pop()]:
            if t not in after:
                after.add(t)
                frontier.append(t)
    if any(not edges[r] for r in after):
        return False
    return not any(k in leaving for r in after for k, _ in edges[r])


def track(b: ProgramBuilder, start: int, edges: Sequence[Sequence[tuple[int, int]]],
          read: Sequence[Expr], visible: Sequence[tuple[object, Expr]] | None = None,
          first: Expr | None = None, pinned: Sequence[int | None] | None = None) -> dict[int, Expr]:
    """:func:`states_before` for any deterministic automaton: ``edges[q]`` lists the transitions
    ``(label, target)`` of state q (it need not be complete: a transition that never occurs may be
    left out), and ``read[label]`` is the Boolean true at exactly the positions whose token takes
    that transition (a token, or a formula of the token and what surrounds it); at most one label
    holds at a position, none at ``<bos>``. ``visible[q]`` is a key and a Boolean true at exactly
    the positions where the state before could be q as far as the position itself shows (equal
    keys, equal Booleans); the refinement starts from the partition by these keys. Every strongly
    connected component must be separated (:func:`tasks.regular.decide.separate_edges`).
    ``first``: the Boolean true at the word's first position where the input has no ``<bos>`` (the
    run is in the start state before it; with ``<bos>``, before the position after it).
    ``pinned[label]``: the one position at which the label can be read, where there is one."""
    successors = [sorted({t for _, t in out}) for out in edges]
    components = list(reversed(strongly_connected_components(successors)))
    prev: dict[int, Expr] = {}

    def let(stem: str, value) -> Expr:
        return b.let(f"{stem}_{len(b.statements)}", value)  # the statement's index: unique in the builder

    for states in components:
        inside = set(states)
        tag = "s" + "_".join(map(str, states)) if len(states) <= 4 else f"s{states[0]}_etc"
        keys = {q: visible[q][0] for q in states} if visible is not None else None
        result = (separate_edges(states, [(q, k, t) for q in states for k, t in edges[q]], keys)
                  if len(states) > 1 else None)
        if result is not None and not result.separated:
            raise AssertionError("internal error: a tracked component is not separated")
        entries: dict[int, list[Expr]] = {}
        if start in inside:
            entries.setdefault(start, []).append(tok(BOS) if first is None else first)
        for p in range(len(edges)):
            if p in inside or p not in prev:
                continue
            for k, t in edges[p]:
                if t in inside:
                    entries.setdefault(t, []).append(prev[p] & read[k])
        # the run enters C at most once, at one of its entry states: one indicator per entry state,
        # and the counts of labels since the entry shared by all of them
        entered: dict[int, Expr | None] = {}
        enters: list[Expr] = []
        # entered only at <bos>, which is every input's first position: entered before every other
        # position, with no count (its comparison could never come out false)
        at_bos = first is None and set(entries) == {start} and len(entries[start]) == 1
        for e, ways in sorted(entries.items()):
            enter = let(f"Enter_{tag}_at{e}", any_of(ways))
            enters.append(enter)
            entered[e] = None if at_bos else count(enter) >= 1
        enter_any = enters[0] if len(enters) == 1 else let(f"Enter_{tag}", any_of(enters))
        at_start = first is not None and start in inside  # the first position: the run was in C before it
        if at_bos:
            before = let(f"In_{tag}", ~enter_any)
        else:
            count_any = let(f"N_enter_{tag}", count(enter_any))
            before = let(f"In_{tag}", (count_any >= 1) if at_start else (count_any >= 1) & ~enter_any)
        classes: dict[int, int] = {q: 0 for q in states}
        class_expr: dict[int, Expr] = {0: before}
        if visible is not None and keys is not None and result is not None:
            index = {key: n for n, key in enumerate(dict.fromkeys(keys[q] for q in states))}
            classes = {q: index[keys[q]] for q in states}
            class_expr = {index[keys[q]]: let(f"Shown_{tag}", before & visible[q][1])
                          for q in dict((keys[q], q) for q in states).values()}
        for rnd in (result.rounds if result else []):
            potential = _combined(rnd.potentials, states, classes, rnd.classes)
            weights: dict[tuple[int, int], int] = {}
            for q in states:
                for k, t in edges[q]:
                    if t in inside:
                        weights[(k, classes[q])] = potential[t] - potential[q]
            by_weight: dict[int, list[Expr]] = {}
            for (k, c), weight in sorted(weights.items()):
                if weight:
                    by_weight.setdefault(weight, []).append(read[k] & class_expr[c])
            totals, current = [], []
            for weight, labels in sorted(by_weight.items()):
                label = let(f"W_{tag}", any_of(labels))
                totals.append(weight * count(label))
                current.append(where(label, weight, 0))
            # the potential of the state before this position: the entry state's, plus the
            # weights of the labels read since the entry
            at_entry = [potential[e] if (when := entered[e]) is None else where(when, potential[e], 0)
                        for e in sorted(entered) if potential[e]]
            value = let(f"P_{tag}", sum_of(totals) - sum_of(current) + sum_of(at_entry))
            new_classes: dict[int, int] = {}
            new_expr: dict[int, Expr] = {}
            for c, members in enumerate(rnd.classes):
                q0 = members[0]
                new_expr[c] = let(f"Cls_{tag}", class_expr[classes[q0]] & (value == potential[q0]))
                for q in members:
                    new_classes[q] = c
            classes, class_expr = new_classes, new_expr
        identified = {q: [class_expr[classes[q]]] for q in states}
        leaving = [identified_q & read[k] for q in states for identified_q in identified[q]
                   for k, t in edges[q] if t not in inside]
        if not leaving:  # a component the run never leaves
            for q in states:
                prev[q] = let(f"Prev_{q}", any_of(identified[q]))
            continue
        leave = let(f"Exit_{tag}", any_of(leaving))
        left = let(f"N_exit_{tag}", count(leave))
        if _exits_once(edges, successors, inside, pinned):
            gone = let(f"Gone_{tag}", (left >= 1) & ~leave)
        else:  # after the run has left C, its Booleans may take a leaving label again
            gone = let(f"Gone_{tag}", (left >= 2) | ((left >= 1) & ~leave))
        for q in states:
            prev[q] = let(f"Prev_{q}", any_of(identified[q]) & ~gone)
    return prev


__all__ = ["program_for", "outputs_program", "membership", "states_before", "track"]
