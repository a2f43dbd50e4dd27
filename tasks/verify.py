"""Check a program against a task's reference: exhaustively on short inputs, by sampling on long ones.

Every input is checked at every position offset modulo the program's period (the offsets a
periodic predicate can tell apart) and at a few random large offsets. The first disagreement is
returned with the program's trace on that input.

>>> import tasks
>>> report = verify(tasks.get("bin_majority"), exhaustive_length=6, samples=5, max_length=40)
>>> report.ok, report.exhaustive_inputs
(True, 98)
"""

from __future__ import annotations

import dataclasses
import itertools
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp.ast import Program
from crasp.checker import CheckedProgram, check
from crasp.interpreter import RunResult, run_in_chunks
from crasp.trace import Trace, trace

from .coverage import Exercise, derived_inputs, exercise, largest_constant, probes
from .types import Example, Format, Task, TaskError

EXHAUSTIVE_BUDGET = 20_000  # inputs enumerated by default
BIN_SAMPLES = 10  # inputs drawn from each published bin, as the published generator draws them
DERIVED = 200  # inputs read off the program by default
MARGIN = 64  # how far past twice its largest constant the derived inputs reach
REACH_CAP = 4000  # the longest derived input
MEMORY = 1 << 27  # the bytes a batch of the interpreter may hold (run_in_chunks)


@dataclass(frozen=True)
class Counterexample:
    """Where a program and the reference first disagree (``position`` indexes ``example.tokens``)."""

    example: Example
    offset: int
    position: int
    expected: object
    got: object
    trace: Trace | None

    def describe(self) -> str:
        tokens = " ".join(self.example.tokens)
        return (f"input (offset {self.offset}): {tokens}\n"
                f"at position {self.position + 1} (token {self.example.tokens[self.position]!r}): "
                f"expected {_show(self.expected)}, program gives {_show(self.got)}")

    def facts(self) -> dict[str, str]:
        """Where and how the program is wrong, as texts by name (the notebook view's rows)."""
        tokens = self.example.tokens
        return {"input": " ".join(tokens), "offset": str(self.offset),
                "position": f"{self.position + 1} (token {tokens[self.position]!r})",
                "expected": _show(self.expected), "program gives": _show(self.got)}

    def to_json(self) -> dict:
        """The counterexample as JSON: the input, its offset, the position (0-based, into
        ``tokens``) and its token, and the expected and given outputs (a set of next tokens as a
        sorted list; null where zero or several next(t) hold)."""
        return {"tokens": list(self.example.tokens), "offset": self.offset, "position": self.position,
                "token": self.example.tokens[self.position], "expected": _json_value(self.expected),
                "got": _json_value(self.got)}


@dataclass(frozen=True)
class Report:
    """What :func:`verify` checked, and the first counterexample if any."""

    task: str
    program: str
    exhaustive_length: int
    exhaustive_symbols: tuple[str, ...]
    exhaustive_inputs: int
    sampled_inputs: int
    max_sampled_length: int
    offsets: tuple[int, ...]
    checks: int
    counterexample: Counterexample | None
    derived_inputs: int = 0
    reach: int = 0
    largest_constant: int = 0
    exercised: tuple[Exercise, ...] = ()
    longest_possible: int = 10**9

    @property
    def unexercised(self) -> tuple[Exercise, ...]:
        """The comparisons the inputs never took to both sides of their threshold."""
        return tuple(e for e in self.exercised if not e.both_sides)

    @property
    def reaches_constants(self) -> bool:
        """Whether the inputs went past twice the program's largest constant (or, for a task of
        bounded length, to its longest input)."""
        return self.reach >= min(2 * self.largest_constant, self.longest_possible)

    @property
    def ok(self) -> bool:
        return self.counterexample is None

    def __repr__(self) -> str:
        from crasp.display import report_repr

        return report_repr(self)

    def _repr_html_(self) -> str:
        """The report in a notebook: PASS with what was checked, or the counterexample and its trace."""
        from crasp.display import report_html

        return report_html(self)

    def checked_facts(self) -> list[tuple[str, str]]:
        """What was checked, as (name, text) pairs: the lines of :meth:`summary` and of the notebook view."""
        over = (f"over {{{', '.join(self.exhaustive_symbols)}}}" if self.exhaustive_symbols
                else "(the task's own enumeration)")
        return [
            ("exhaustive", f"{self.exhaustive_inputs} inputs up to length {self.exhaustive_length} {over}"),
            ("sampled", f"{self.sampled_inputs} inputs up to length {self.max_sampled_length}"),
            ("derived", f"{self.derived_inputs} inputs read off the program, up to length {self.reach} "
                        f"(largest constant {self.largest_constant})"),
            ("exercised", self.coverage_text()),
            ("offsets", ", ".join(map(str, self.offsets))),
            ("checked", f"{self.checks} (input, offset, position) targets"),
        ]

    def summary(self) -> str:
        verdict = "PASS" if self.ok else "FAIL"
        lines = [f"  {name + ':':<12}{text}" for name, text in self.checked_facts()]
        return "\n".join([f"{verdict} {self.task} with {self.program}", *lines])


    def to_json(self) -> dict:
        """What :meth:`summary` says, as JSON: ``ok`` and ``status`` (PASS or FAIL), the task and
        program, every count checked, each comparison's exercise and the counterexample (null when
        there is none).

        >>> import tasks
        >>> data = verify(tasks.get("bin_majority"), exhaustive_length=4, samples=2, max_length=20).to_json()
        >>> data["status"], data["exhaustive_inputs"], data["counterexample"]
        ('PASS', 22, None)
        """
        return {
            "ok": self.ok, "status": "PASS" if self.ok else "FAIL", "task": self.task, "program": self.program,
            "exhaustive_length": self.exhaustive_length, "exhaustive_symbols": list(self.exhaustive_symbols),
            "exhaustive_inputs": self.exhaustive_inputs, "sampled_inputs": self.sampled_inputs,
            "max_sampled_length": self.max_sampled_length, "derived_inputs": self.derived_inputs,
            "reach": self.reach, "largest_constant": self.largest_constant,
            "reaches_constants": self.reaches_constants, "offsets": list(self.offsets), "checks": self.checks,
            "exercised": [{"comparison": e.probe.text, "true": e.true, "false": e.false, "boundary": e.boundary,
                           "both_sides": e.both_sides} for e in self.exercised],
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
        }

    def coverage_text(self) -> str:
        if not self.exercised:
            return "the program compares nothing"
        if not self.unexercised:
            return f"all {len(self.exercised)} comparisons, on both sides of their thresholds"
        return "not " + "; ".join(e.describe() for e in self.unexercised)


def _json_value(value):
    """An output as JSON takes it: a set of tokens as a sorted list."""
    return sorted(value) if isinstance(value, frozenset) else value


def _show(value) -> str:
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(value)) + "}"
    return "nothing (zero or several next(t) hold)" if value is None else repr(value)


def exhaustive_inputs(task: Task, max_length: int, symbols: Sequence[str]) -> list[tuple[str, ...]]:
    """Every valid input of length <= ``max_length`` over ``symbols`` (or the task's own enumeration)."""
    if task.enumerate_inputs is not None:
        return list(task.enumerate_inputs(max_length))
    found = []
    for n in range(max(task.min_length - len(task.prefix) + 1, 0), max_length + 1):
        for x in itertools.product(symbols, repeat=n):
            if task.valid(x):
                found.append(x)
    return found


def default_exhaustive(task: Task, budget: int = EXHAUSTIVE_BUDGET) -> tuple[int, tuple[str, ...]]:
    """The longest exhaustive length (and the symbols used: at most 5) within ``budget`` candidates."""
    enumerate_inputs = task.enumerate_inputs
    if enumerate_inputs is not None:  # the inputs grow with the length: search for the longest that fits
        def fits(length: int) -> bool:
            return sum(1 for _ in itertools.islice(enumerate_inputs(length), budget + 1)) <= budget
        low, high = 0, 1  # gallop: fits(low) holds (or low is 0), then halve the gap to the first that does not
        while high <= 64 and fits(high):
            low, high = high, 2 * high
        if high > 64:
            return 64 if fits(64) else low, ()
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        return low, ()
    symbols = tuple(task.symbols[:5])
    length, total = 0, 1
    while total + len(symbols) ** (length + 1) <= budget and length < 16:
        length += 1
        total += len(symbols) ** length
    return length, symbols


def _sampled(task: Task, count: int, max_length: int, rng: np.random.Generator) -> list[Example]:
    """``count`` inputs with lengths spread up to ``max_length``, then a few from each published bin."""
    longest = min(max_length, task.max_input_length())
    lengths: np.ndarray | list[int] = (np.linspace(task.min_length, longest, num=count).round().astype(int)
                                       if count else [])
    out = []
    for length in lengths:
        drawn = task.draw_length(max(task.min_length, int(length) - 6), int(length), rng)
        out.append(task.sample(drawn, rng))
    per_bin = min(count, BIN_SAMPLES)
    for low, high in task.bins:
        if per_bin and high <= longest:
            out.extend(task.sample_bin(low, high, per_bin, rng))
    return out


def predictions(task: Task, result: RunResult, row: int, example: Example) -> list:
    """The program's outputs at the example's checked positions."""
    if task.format is Format.SEQ2SEQ:
        chosen = result.next_tokens(row)
        return [chosen[k] for k in example.checked]
    if task.format is Format.NEXT_SET:
        assert result.next is not None  # the task's program has 'next' outputs (_check_outputs)
        return [frozenset(t for t, values in result.next.items() if values[row, k]) for k in example.checked]
    if task.format is Format.ALIGNED:
        chosen = result.next_tokens(row)
        return [chosen[k] for k in example.checked]
    assert result.accept is not None  # an accept task's program has 'accept' (_check_outputs)
    return [bool(result.accept[row])]


class _Comparison:
    """The program's outputs on one batch against the examples' targets, an example at a time,
    with numpy over its checked positions (the targets in the form compared are kept per example
    in the task's memo, shared by every program and offset)."""

    def __init__(self, task: Task, result: RunResult, memo: dict) -> None:
        self.task = task
        self.result = result
        if result.next is not None:
            self.tokens = tuple(result.next)
            self.outputs = np.stack([result.next[t] for t in self.tokens])  # tokens x rows x positions
            self.wanted = memo.setdefault(("wanted", self.tokens), {})

    def _want(self, example: Example) -> np.ndarray:
        """Next-set targets: token x checked position, True where the token is legal (a row of
        True beyond the tokens where a target holds a token the program has no output for);
        seq2seq targets: the index of the target token per checked position (-1: none)."""
        found = self.wanted.get(id(example))
        if found is None:
            index = {t: k for k, t in enumerate(self.tokens)}
            if self.task.format is Format.NEXT_SET:
                found = np.zeros((len(self.tokens) + 1, len(example.targets)), dtype=bool)
                for column, target in enumerate(example.targets):
                    for token in target:
                        found[index.get(token, len(self.tokens)), column] = True
            else:
                found = np.array([index.get(t, -1) for t in example.targets], dtype=np.int64)
            self.wanted[id(example)] = found
        return found

    def first_difference(self, row: int, example: Example) -> int | None:
        """The index (into ``example.checked``) of the first position where the program's output
        differs from the target, or None."""
        if self.result.next is None:
            assert self.result.accept is not None  # a program has either 'accept' or 'next' outputs
            return None if bool(self.result.accept[row]) == bool(example.targets[0]) else 0
        have = self.outputs[:, row, list(example.checked)]
        want = self._want(example)
        if self.task.format is Format.NEXT_SET:
            wrong = (have != want[:-1]).any(axis=0) | want[-1]
        else:
            columns = np.arange(len(want))
            wrong = (have.sum(axis=0) != 1) | (want < 0) | ~have[np.maximum(want, 0), columns]
        where = np.flatnonzero(wrong)
        return int(where[0]) if len(where) else None


def _check_outputs(task: Task, checked: CheckedProgram) -> None:
    if task.format is Format.ACCEPT:
        if checked.accept is None:
            raise TaskError(f"task {task.name!r} needs an acceptance program ('accept'), not 'next' outputs")
        return
    if not checked.next_tokens:
        raise TaskError(f"task {task.name!r} needs a program with 'next \"t\"' outputs")
    unknown = sorted({t for t, _ in checked.next_tokens} - set(task.alphabet))
    if unknown:
        raise TaskError(f"the program declares next(t) for tokens the task never uses: {', '.join(unknown)}")


def verify(
    task: Task,
    program: Program | CheckedProgram | None = None,
    *,
    scheme: str = "ape",
    exhaustive_length: int | None = None,
    exhaustive_symbols: Sequence[str] | None = None,
    samples: int = 200,
    max_length: int = 500,
    random_offsets: int = 2,
    seed: int = 0,
    exhaustive_budget: int = EXHAUSTIVE_BUDGET,
    derived: int = DERIVED,
    reach_cap: int = REACH_CAP,
    max_work: int | None = None,
) -> Report:
    """Check ``program`` (default: the task's library program for ``scheme``, "ape" or "nope") against the reference.

    Three input sets: every input up to ``exhaustive_length`` (default: as many as
    ``exhaustive_budget`` allows), ``samples`` drawn from the task's own distribution up to
    ``max_length``, and ``derived`` inputs read off the program (:mod:`tasks.coverage`): symbol
    counts skewed at random, lengths up to twice the program's largest constant plus a margin
    (at most ``reach_cap``), so that each comparison is seen on both sides of its threshold.
    Every input runs at each offset modulo the program's period and, where the program has
    periodic predicates (the only ones that read absolute positions), at ``random_offsets`` random
    ones. ``max_work`` bounds the work, counted as the program's definitions times the positions
    it runs on: where the inputs would exceed it, the exhaustive length shrinks until the
    exhaustive inputs take at most a third of it, and the sampled and derived inputs are thinned
    evenly over their lengths, the longest kept (the report counts what ran). The report holds the
    shortest counterexample found, and which comparisons the inputs exercised."""
    if program is None:
        program = task.program(scheme)
        if program is None:
            reason = task.no_program.get(scheme, "none is registered")
            raise TaskError(f"task {task.name!r} has no {scheme} program: {reason}")
    checked = program if isinstance(program, CheckedProgram) else check(program)
    _check_outputs(task, checked)
    from .evidence.reference import check_reference  # here: the evidence sources import this module

    check_reference(task, inputs=60, seed=seed)  # once per task object: the reference is what is trusted
    rng = np.random.default_rng(seed)
    memo = _memo(task)
    default_length, default_symbols = memo.get(("default exhaustive", exhaustive_budget)) or memo.setdefault(
        ("default exhaustive", exhaustive_budget), default_exhaustive(task, exhaustive_budget))
    length = default_length if exhaustive_length is None else exhaustive_length
    symbols = tuple(exhaustive_symbols or default_symbols)

    period = checked.info.period
    # Only periodic predicates read absolute positions: without them every offset gives the same run.
    runs = period + (random_offsets if checked.info.periods else 0)
    found = probes(checked)
    size = len(checked.definitions) + len(checked.next_tokens) + 1
    positions = None if max_work is None else max(1, max_work // (size * runs))

    exhaustive = _kept(memo, ("exhaustive", length, symbols),
                       lambda: [task.example(x) for x in exhaustive_inputs(task, length, symbols)])
    while positions is not None and length > 0 and _positions(exhaustive) > positions // 3:
        length -= 1
        exhaustive = _kept(memo, ("exhaustive", length, symbols),
                           lambda: [task.example(x) for x in exhaustive_inputs(task, length, symbols)])
    sampled = _kept(memo, ("sampled", samples, max_length, seed), lambda: _sampled(task, samples, max_length, rng),
                    rng)
    constant = largest_constant(checked)
    reach = min(max(max_length, 2 * constant + MARGIN), reach_cap, task.max_input_length())
    from_program = _kept(memo, ("derived", samples, max_length, seed, derived, reach),
                         lambda: _derived(task, derived, reach, rng) if derived else [], rng)
    drawn = tuple(int(v) for v in rng.integers(period, 10**6, size=random_offsets))
    offsets = tuple(range(period)) + (drawn if checked.info.periods else ())
    if positions is not None:
        left = max(0, positions - _positions(exhaustive))
        sampled = _thin(sampled, left // 2)
        from_program = _thin(from_program, left - _positions(sampled))
    examples = exhaustive + sampled + from_program
    checks = 0
    shortest: Counterexample | None = None
    exercises: dict[str, Exercise] = {}
    for offset in offsets:
        traced = offset < period and bool(found)  # every residue: a periodic comparison may flip only with it
        extra = {p.name: p.difference for p in found} if traced else None
        inputs = [e.tokens for e in examples]
        for indices, result in run_in_chunks(checked, inputs, offset=offset, alphabet=task.alphabet, extra=extra,
                                             memory=MEMORY):
            if traced:
                _record_probes(found, result, [examples[i] for i in indices], exercises)
            compare = _Comparison(task, result, memo)
            for row, index in enumerate(indices):
                example = examples[index]
                if shortest is not None and len(example.tokens) >= len(shortest.example.tokens):
                    continue
                first = compare.first_difference(row, example)
                checks += len(example.checked) if first is None else first + 1
                if first is not None:
                    have = predictions(task, result, row, example)[first]
                    shortest = Counterexample(example, offset, example.checked[first], example.targets[first], have,
                                              None)
    if shortest is not None:
        shortest = dataclasses.replace(shortest, trace=trace(checked, shortest.example.tokens, offset=shortest.offset,
                                                             alphabet=task.alphabet))
    exercised = tuple(exercises.get(p.name) or exercise(p, np.zeros(0, np.int64)) for p in found)
    return _report(task, checked, length, symbols, exhaustive, sampled, offsets, checks, shortest,
                   from_program, constant, exercised)


_MEMO: dict[int, tuple[weakref.ref, dict]] = {}
"""Per task object (by id, with a weak reference to it) the inputs verifications drew: the
exhaustive, sampled and derived examples, so that several programs of one task share them."""


def _memo(task: Task) -> dict:
    known = _MEMO.get(id(task))
    if known is None or known[0]() is not task:
        for key in [k for k, (ref, _) in _MEMO.items() if ref() is None]:
            del _MEMO[key]
        known = _MEMO[id(task)] = (weakref.ref(task), {})
    return known[1]


def _kept(memo: dict, key: tuple, make, rng: np.random.Generator | None = None) -> list[Example]:
    """``make()`` once per ``key``; with ``rng``, the generator's state after it is kept too and
    restored, so that what is drawn next is the same whether or not the examples were kept."""
    found = memo.get(key)
    if found is None:
        examples = make()
        memo[key] = found = (examples, rng.bit_generator.state if rng is not None else None)
    elif rng is not None:
        rng.bit_generator.state = found[1]
    return found[0]


def _positions(examples: Sequence[Example]) -> int:
    return sum(len(e.tokens) for e in examples)


def _thin(examples: list[Example], positions: int) -> list[Example]:
    """At most about ``positions`` positions of ``examples``: evenly spaced over their lengths,
    the shortest and the longest kept (all of them where they fit)."""
    total = _positions(examples)
    if total <= positions or not examples:
        return examples
    ordered = sorted(examples, key=lambda e: len(e.tokens))
    keep = max(2, min(len(ordered), positions * len(ordered) // max(1, total)))
    chosen = np.unique(np.linspace(0, len(ordered) - 1, num=keep).round().astype(int))
    return [ordered[k] for k in chosen]


def _derived(task: Task, count: int, reach: int, rng: np.random.Generator) -> list[Example]:
    """``count`` inputs read off the program: skewed symbol counts at lengths spread up to ``reach``;
    where such strings are outside the task's domain, the task's own inputs of those lengths."""
    low = max(task.min_length - len(task.prefix) + 1, 1)
    lengths = [int(v) for v in np.linspace(low, max(reach, low), num=count).round()]
    found = []
    for length, x in zip(lengths, derived_inputs(task.symbols, lengths, rng)):
        if task.valid(x) and task.measure is None:
            found.append(task.example(x))
        else:  # the task's own inputs near that length, drawn as its published code draws lengths
            high = min(max(task.min_length, length), task.max_input_length())
            found.append(task.sample(task.draw_length(max(task.min_length, high - 6), high, rng), rng))
    return found


def _record_probes(found, result: RunResult, examples: list[Example], into: dict) -> None:
    """Fold how this batch exercises each probe into ``into`` (probe name -> Exercise): a nested
    probe at every position of an input, the others at its checked positions."""
    width = next(iter(result.values.values())).shape[1] if result.values else 0
    lengths = np.array([len(e.tokens) for e in examples])
    every = np.arange(width)[None, :] < lengths[:, None]
    checked = np.zeros_like(every)
    for row, example in enumerate(examples):
        checked[row, list(example.checked)] = True
    for probe in found:
        before = into.get(probe.name)
        if before is not None and before.both_sides:
            continue
        assert result.values is not None  # run with the probes as ``extra``: their values are recorded
        seen = exercise(probe, result.values[probe.name][every if probe.nested else checked])
        into[probe.name] = seen if before is None else dataclasses.replace(
            before, true=before.true or seen.true, false=before.false or seen.false,
            boundary=before.boundary or seen.boundary)


def _report(task, checked, length, symbols, exhaustive, sampled, offsets, checks, counterexample,
            from_program=(), constant=0, exercised=()) -> Report:
    return Report(
        task=task.name,
        program=checked.program.source,
        exhaustive_length=length,
        exhaustive_symbols=symbols,
        exhaustive_inputs=len(exhaustive),
        sampled_inputs=len(sampled),
        max_sampled_length=max((e.length for e in sampled), default=0),
        offsets=offsets,
        checks=checks,
        counterexample=counterexample,
        derived_inputs=len(from_program),
        reach=max((e.length for e in (*sampled, *from_program)), default=0),
        largest_constant=constant,
        exercised=exercised,
        longest_possible=task.max_input_length(),
    )


__all__ = ["Counterexample", "Report", "verify", "exhaustive_inputs", "default_exhaustive", "predictions"]
