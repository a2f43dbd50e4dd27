"""How long must the training inputs be? What published theory says, with the learner it assumes.

All the results here are about *idealized* learners, which see every input up to length N with
its label and return the simplest hypothesis consistent with all of them; the question is the
least N from which that hypothesis is the task itself. Real training samples inputs and runs
gradient descent, so these lengths say what the data must contain at least in principle, not what
a transformer will need (docs/depth-and-length.md compares them with training runs).

* **Finite automata** (Chen, Ma & Li, ICML 2025, arXiv 2506.03085, abstract: the length complexity
  of DFAs is 2n - 2). Learner: it returns a complete DFA with the fewest states that agrees with the
  task on every word of length at most N. If the task's minimal complete DFA has n states, N = 2n - 2
  suffices: a DFA of at most n states accepting another language differs from it on a word of length
  at most 2n - 2 (Moore 1956: automata of m and n states that differ, differ on a word of length at
  most m + n - 2). An exhaustive search of the automata of at most n states (within a budget,
  :func:`idealized_length`) finds the exact least N for the task (often below 2n - 2). It applies to
  accept tasks and next-character-set tasks with an automaton whose inputs are all words (their
  labels then contain the membership of every word up to N); on an automaton learned from the
  reference it is extrapolated.
* **C-RASP** (Yang, Bergsträßer, Zetzsche, Chiang & Lin, arXiv 2603.02238, abstract): no computable
  length-generalization bound exists for C-RASP already with two layers. Learner: the idealized
  program learner of the Limit Transformer framework. Where the task's shallowest plain program
  has count depth two or more and no automaton bound applies, we note that no tool can compute
  such a length for every program of that class: a statement about the class (strength none),
  which does not say this task needs long inputs.
* For one-layer C-RASP, Chen et al. prove a bound of order T^2 in the program's precision T; its
  constant and the precise class are not in what we could read, so no number is given.

Izzo, Nichani & Lee (arXiv 2510.27015) bound training lengths for Limit Transformers in terms of
weight norms, precision, period and locality with unstated constants; no number is computed from it.

>>> from tasks.regular.dfa import from_regex
>>> dfa_bound(from_regex("a*b*", "ab")), idealized_length(from_regex("a*b*", "ab"))
(4, 3)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .evidence.context import Evidence
from .findings import Strength
from .regular.dfa import Dfa, words
from .types import Format

CHEN_MA_LI = ("Chen, Ma & Li, Non-Asymptotic Length Generalization, ICML 2025 (arXiv 2506.03085), abstract: the "
              "length complexity of DFAs is 2n - 2; Moore 1956 for the distinguishing word")
YANG_BOUNDS = ("Yang, Bergsträßer, Zetzsche, Chiang & Lin, Length Generalization Bounds for Transformers "
               "(arXiv 2603.02238), abstract: no computable length-generalization bound for C-RASP with two layers")
CHEN_ONE_LAYER = "Chen, Ma & Li 2025 (arXiv 2506.03085), abstract: O(T^2) for one-layer C-RASP of precision T"
DFA_LEARNER = ("a learner that returns a complete DFA with the fewest states agreeing with the task on every word "
               "of length at most N")
PROGRAM_LEARNER = ("the idealized learner that returns the simplest C-RASP program agreeing with the task on every "
                   "input of length at most N")
DOMAIN_CHECK = 2_000
"""The most words (all words, shortest first) checked to lie in the task's domain."""


def dfa_bound(dfa: Dfa) -> int:
    """2n - 2 for a minimal complete DFA of n states: the DFA learner's training length suffices."""
    return max(2 * dfa.n_states - 2, 0)


def shortest_difference(first: Dfa, second: Dfa) -> int | None:
    """The length of a shortest word on which two DFAs over the same symbols disagree (None: none).

    >>> from tasks.regular.dfa import from_regex
    >>> shortest_difference(from_regex("(ab)*", "ab"), from_regex("(ab)*|b", "ab"))
    1
    """
    start = (first.start, second.start)
    seen, frontier, depth = {start}, [start], 0
    while frontier:
        if any((p in first.accepting) != (q in second.accepting) for p, q in frontier):
            return depth
        following = []
        for p, q in frontier:
            for k in range(len(first.symbols)):
                pair = (first.table[p][k], second.table[q][k])
                if pair not in seen:
                    seen.add(pair)
                    following.append(pair)
        frontier, depth = following, depth + 1
    return None


SEARCH_LIMIT = 1_000_000
"""The most choices :func:`idealized_length` tries before it declines."""


def idealized_length(dfa: Dfa, limit: int = SEARCH_LIMIT) -> int | None:
    """The least N from which the DFA learner returns ``dfa``'s language: the longest shortest
    difference between it and any other language of a DFA with at most as many states (None when
    the search needs more than ``limit`` choices).

    For N = 2n - 3, 2n - 4, ... it searches for a *rival*: a DFA of at most n states that agrees
    with ``dfa`` on every word of length at most N and accepts another language; the first N with a
    rival gives N + 1 (a rival differs from ``dfa`` first beyond N, and none does beyond 2n - 2).
    The search builds the rival's transitions as the product with ``dfa`` needs them, breadth first
    (each new state numbered in order of discovery, so no rival is built twice), and an acceptance
    that contradicts ``dfa`` on a word of length at most N ends a branch.
    """
    n = dfa.n_states
    budget = [limit]
    for longest in range(dfa_bound(dfa) - 1, -1, -1):
        found = _rival_agreeing_up_to(dfa, longest, n, budget)
        if found is None:
            return None
        if found is not False:
            return longest + 1
    return 0


def _rival_agreeing_up_to(dfa: Dfa, longest: int, n: int, budget: list[int]) -> Dfa | bool | None:
    """A DFA of at most ``n`` states that agrees with ``dfa`` on every word of length at most
    ``longest`` and accepts another language; False where there is none (None: ``budget[0]``
    choices spent)."""
    symbols, table = len(dfa.symbols), dfa.table
    wanted = [p in dfa.accepting for p in range(dfa.n_states)]
    trans: list[list[int | None]] = [[None] * symbols for _ in range(n)]
    accept: list[bool | None] = [None] * n
    accept[0] = wanted[dfa.start]
    queue = [(dfa.start, 0, 0)]  # pairs (state of dfa, state of the rival, depth), breadth first
    seen = {(dfa.start, 0)}

    def add(pair: tuple[int, int], depth: int, used: int, head: int, k: int) -> Dfa | bool | None:
        """Continue with ``pair`` reached at ``depth`` (already checked to be consistent)."""
        fresh = pair not in seen
        if fresh:
            seen.add(pair)
            queue.append((*pair, depth))
        found = search(head, k, used)
        if fresh:
            seen.discard(pair)
            queue.pop()
        return found

    def search(head: int, k: int, used: int) -> Dfa | bool | None:
        while head < len(queue):
            p, q, depth = queue[head]
            if depth >= longest or k == symbols:
                head, k = head + 1, 0
                continue
            target = table[p][k]
            r = trans[q][k]
            if r is not None:
                if (target, r) not in seen:
                    if accept[r] != wanted[target]:
                        return False
                    return add((target, r), depth + 1, used, head, k + 1)
                k += 1
                continue
            for r in range(min(used + 1, n)):
                budget[0] -= 1
                if budget[0] < 0:
                    return None
                new = r == used
                if not new and (target, r) not in seen and accept[r] != wanted[target]:
                    continue
                trans[q][k] = r
                if new:
                    accept[r] = wanted[target]
                found = add((target, r), depth + 1, used + new, head, k + 1)
                trans[q][k] = None
                if new:
                    accept[r] = None
                if found is not False:
                    return found
            return False
        return _some_completion_differs(dfa, trans, accept, used, n, budget)

    return search(0, 0, 1)


def _completed(dfa: Dfa, trans, accept, used: int, moves: dict | None = None) -> Dfa:
    """The rival with its missing transitions set by ``moves`` ({(state, symbol): target}), the
    others to state 0."""
    moves = moves or {}
    def target(q: int, k: int) -> int:
        return moves.get((q, k), trans[q][k] if trans[q][k] is not None else 0)

    rows = tuple(tuple(target(q, k) for k in range(len(dfa.symbols))) for q in range(used))
    return Dfa(dfa.symbols, 0, frozenset(q for q in range(used) if accept[q]), rows)


def _some_completion_differs(dfa: Dfa, trans, accept, used: int, n: int, budget: list[int]) -> Dfa | bool | None:
    """A completion of the rival (its missing transitions, and a state it has room for) whose
    language differs from ``dfa``'s; False where every completion accepts ``dfa``'s language."""
    symbols, table = len(dfa.symbols), dfa.table
    wanted = [p in dfa.accepting for p in range(dfa.n_states)]
    pairs, frontier = {(dfa.start, 0)}, [(dfa.start, 0)]
    open_moves = []
    while frontier:  # the product as far as the rival's transitions are known
        p, q = frontier.pop()
        if accept[q] != wanted[p]:
            return _completed(dfa, trans, accept, used)
        for k in range(symbols):
            r = trans[q][k]
            if r is None:
                open_moves.append((table[p][k], q, k))
            elif (table[p][k], r) not in pairs:
                pairs.add((table[p][k], r))
                frontier.append((table[p][k], r))
    if not open_moves:
        return False
    target, q, k = open_moves[0]
    if used < n:  # a new state, accepting where dfa rejects the word that reaches it (or the reverse)
        return _completed(dfa, trans, [*accept[:used], not wanted[target]], used + 1, {(q, k): used})
    for target, q, k in open_moves:
        for r in range(used):
            if accept[r] != wanted[target]:
                return _completed(dfa, trans, accept, used, {(q, k): r})
    # Every existing state agrees with dfa where a missing move leads: try the completions.
    holes = sorted({(q, k) for _, q, k in open_moves})
    for choice in itertools.product(range(used), repeat=len(holes)):
        budget[0] -= 1
        if budget[0] < 0:
            return None
        rival = _completed(dfa, trans, accept, used, dict(zip(holes, choice)))
        if shortest_difference(dfa, rival) is not None:
            return rival
    return False


@dataclass(frozen=True)
class LengthFinding:
    """One statement about the training length: ``kind`` is "at_most" (a length that suffices),
    "exact" (the least length, for the learner named), "no_computable_bound" or "note"."""

    kind: str
    length: int | None
    claim: str
    learner: str
    strength: Strength | None
    citation: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "length": self.length, "claim": self.claim, "learner": self.learner,
                "strength": self.strength.value if self.strength else None, "citation": self.citation}


@dataclass(frozen=True)
class TrainingLength:
    """The findings; ``at_most`` the least length shown to suffice, ``exact`` the least length where
    it was computed (both for the DFA learner: None elsewhere)."""

    findings: tuple[LengthFinding, ...]

    @property
    def at_most(self) -> int | None:
        found = [f.length for f in self.findings if f.kind in ("at_most", "exact") and f.length is not None]
        return min(found) if found else None

    @property
    def exact(self) -> int | None:
        return next((f.length for f in self.findings if f.kind == "exact"), None)

    @property
    def learner(self) -> str | None:
        """The learner ``at_most`` and ``exact`` are about (None when there is no number)."""
        return next((f.learner for f in self.findings if f.kind in ("at_most", "exact")), None)

    def to_json(self) -> dict:
        return {"at_most": self.at_most, "exact": self.exact, "learner": self.learner,
                "findings": [f.to_json() for f in self.findings]}

    def lines(self) -> list[str]:
        return [f"[{f.kind}, {f.strength.value if f.strength else 'no claim'}] {f.claim} (learner: {f.learner}; "
                f"{f.citation})" for f in self.findings]

    def brief(self) -> str:
        """One line: the least length shown to suffice for the DFA learner, or why there is none."""
        if self.at_most is None:
            return "no bound (" + (self.findings[0].claim if self.findings else "nothing applies") + ")"
        exact = f", exactly {self.exact}" if self.exact is not None else ""
        strength = next(f.strength for f in self.findings if f.kind in ("at_most", "exact"))
        assert strength is not None  # "at_most" and "exact" findings carry their strength
        return f"at most {self.at_most}{exact} for the minimal-DFA learner ({strength.value})"


def _automaton_findings(evidence: Evidence) -> list[LengthFinding]:
    from .evidence import regular

    task = evidence.task
    language = regular.language_of(evidence, learn=False)
    if isinstance(language, str):
        return [LengthFinding("note", None, f"the finite-automaton bound does not apply: {language}", DFA_LEARNER,
                              None, CHEN_MA_LI)]
    dfas, exact = language
    if task.format is Format.NEXT_SET and not regular.inputs_include(
            task, itertools.islice(words(task.symbols, DOMAIN_CHECK), DOMAIN_CHECK)):
        return [LengthFinding("note", None, "the finite-automaton bound assumes every word up to N is labelled; this "
                              "task's inputs are only some words (e.g. prefixes of its language's words)",
                              DFA_LEARNER, None, CHEN_MA_LI)]
    strength = Strength.PROOF if exact else Strength.EXTRAPOLATED
    source = "the task's own automaton" if exact else "an automaton learned from the reference"
    dfa = max(dfas, key=lambda d: d.n_states)
    n = dfa.n_states
    readings = ("" if len(set(dfas)) == 1 else "; the empty word is no input and may be read either way: n is the "
                "larger of the two automata")
    found = [LengthFinding("at_most", dfa_bound(dfa), f"the minimal complete automaton has {n} states ({source}), so "
                           f"inputs up to length 2n - 2 = {dfa_bound(dfa)} suffice{readings}", DFA_LEARNER, strength,
                           CHEN_MA_LI)]
    searched = len(set(dfas)) == 1 and evidence.budget.seconds > 0
    least = idealized_length(dfa, evidence.budget.rivals) if searched else None
    if least is None and len(set(dfas)) == 1:
        why = (f"more than {evidence.budget.rivals:,} choices; --budget rivals=N raises it" if searched else
               "the searches are off")
        found.append(LengthFinding("note", None, f"the exact least length was not searched to its end ({why})",
                                   DFA_LEARNER, None, "computed from the learner's definition"))
    if least is not None:
        found.append(LengthFinding("exact", least, f"an exhaustive search of the DFAs of at most {n} states over "
                                   f"{len(dfa.symbols)} symbols that agree with the task up to a length: the least "
                                   f"length is {least}", DFA_LEARNER, strength,
                                   "computed from the learner's definition"))
    return found


def _program_findings(count_depth: int | None, plain: bool, bounded: bool) -> list[LengthFinding]:
    """What the program learners' results say; ``bounded``: a finite-automaton bound applies to the
    task itself (then the class-level statement is left out: it says nothing about this task)."""
    if count_depth is None:
        return [LengthFinding("note", None, "no verified program, so no bound for a program learner",
                              PROGRAM_LEARNER, None, YANG_BOUNDS)]
    if not plain:
        return [LengthFinding("note", None, "the shallowest verified program uses positional predicates; the "
                              "published bounds we read are for C-RASP without them", PROGRAM_LEARNER, None,
                              YANG_BOUNDS)]
    if count_depth >= 2:
        if bounded:
            return []
        return [LengthFinding("no_computable_bound", None, f"the shallowest verified plain program has count depth "
                              f"{count_depth}; for C-RASP with two or more layers no computable function of a "
                              "program bounds the training length. That is a statement about the class, not about "
                              "this task: it may still have a bound (a shallower program, or another argument)",
                              PROGRAM_LEARNER, None, YANG_BOUNDS)]
    return [LengthFinding("note", None, f"the shallowest verified plain program has count depth {count_depth}: "
                          "Chen et al.'s bound for one-layer C-RASP is of order T^2 in its precision T, with a "
                          "constant we could not read, so no number is given", PROGRAM_LEARNER, None,
                          CHEN_ONE_LAYER)]


def training_length(evidence: Evidence, shallowest: tuple[int, bool] | None) -> TrainingLength:
    """The findings for the evidence's task: ``shallowest`` is (count depth, plain) of the
    shallowest verified program (None: none)."""
    depth, plain = shallowest if shallowest is not None else (None, False)
    automaton = _automaton_findings(evidence)
    bounded = any(f.kind in ("at_most", "exact") for f in automaton)
    return TrainingLength((*automaton, *_program_findings(depth, plain, bounded)))


__all__ = ["training_length", "TrainingLength", "LengthFinding", "dfa_bound", "idealized_length",
           "shortest_difference", "CHEN_MA_LI", "YANG_BOUNDS"]
