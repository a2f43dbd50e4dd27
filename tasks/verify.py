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
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp.ast import Program
from crasp.checker import CheckedProgram, check
from crasp.interpreter import RunResult, run_in_chunks
from crasp.trace import Trace, trace

from .coverage import Exercise, derived_inputs, exercise, largest_constant, probe_program, probes
from .types import Example, Format, Task, TaskError

EXHAUSTIVE_BUDGET = 20_000  # inputs enumerated by default
BIN_SAMPLES = 10  # inputs drawn from each published bin, as the published generator draws them
DERIVED = 200  # inputs read off the program by default
MARGIN = 64  # how far past twice its largest constant the derived inputs reach
REACH_CAP = 4000  # the longest derived input


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

    def summary(self) -> str:
        verdict = "PASS" if self.ok else "FAIL"
        over = (f"over {{{', '.join(self.exhaustive_symbols)}}}" if self.exhaustive_symbols
                else "(the task's own enumeration)")
        return (
            f"{verdict} {self.task} with {self.program}\n"
            f"  exhaustive: {self.exhaustive_inputs} inputs up to length {self.exhaustive_length} {over}\n"
            f"  sampled:    {self.sampled_inputs} inputs up to length {self.max_sampled_length}\n"
            f"  derived:    {self.derived_inputs} inputs read off the program, up to length {self.reach} "
            f"(largest constant {self.largest_constant})\n"
            f"  exercised:  {self.coverage_text()}\n"
            f"  offsets:    {', '.join(map(str, self.offsets))}\n"
            f"  checked:    {self.checks} (input, offset, position) targets"
        )


    def coverage_text(self) -> str:
        if not self.exercised:
            return "the program compares nothing"
        if not self.unexercised:
            return f"all {len(self.exercised)} comparisons, on both sides of their thresholds"
        return "not " + "; ".join(e.describe() for e in self.unexercised)


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
    if task.enumerate_inputs is not None:
        length = 0
        while length < 64 and sum(1 for _ in itertools.islice(task.enumerate_inputs(length + 1), budget + 1)) <= budget:
            length += 1
        return length, ()
    symbols = tuple(task.symbols[:5])
    length, total = 0, 1
    while total + len(symbols) ** (length + 1) <= budget and length < 16:
        length += 1
        total += len(symbols) ** length
    return length, symbols


def _sampled(task: Task, count: int, max_length: int, rng: np.random.Generator) -> list[Example]:
    """``count`` inputs with lengths spread up to ``max_length``, then a few from each published bin."""
    longest = min(max_length, task.max_input_length())
    lengths = np.linspace(task.min_length, longest, num=count).round().astype(int) if count else []
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
        return [frozenset(t for t, values in result.next.items() if values[row, k]) for k in example.checked]
    if task.format is Format.ALIGNED:
        chosen = result.next_tokens(row)
        return [chosen[k] for k in example.checked]
    return [bool(result.accept[row])]


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
) -> Report:
    """Check ``program`` (default: the task's library program for ``scheme``, "ape" or "nope") against the reference.

    Three input sets: every input up to ``exhaustive_length`` (default: as many as
    ``exhaustive_budget`` allows), ``samples`` drawn from the task's own distribution up to
    ``max_length``, and ``derived`` inputs read off the program (:mod:`tasks.coverage`): symbol
    counts skewed at random, lengths up to twice the program's largest constant plus a margin
    (at most ``reach_cap``), so that each comparison is seen on both sides of its threshold.
    Every input runs at each offset modulo the program's period and at ``random_offsets`` random
    ones. The report holds the shortest counterexample found, and which comparisons the inputs
    exercised."""
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
    default_length, default_symbols = default_exhaustive(task, exhaustive_budget)
    length = default_length if exhaustive_length is None else exhaustive_length
    symbols = tuple(exhaustive_symbols or default_symbols)

    exhaustive = [task.example(x) for x in exhaustive_inputs(task, length, symbols)]
    sampled = _sampled(task, samples, max_length, rng)
    constant = largest_constant(checked)
    reach = min(max(max_length, 2 * constant + MARGIN), reach_cap, task.max_input_length())
    from_program = _derived(task, derived, reach, rng) if derived else []
    period = checked.info.period
    offsets = tuple(range(period)) + tuple(
        int(v) for v in rng.integers(period, 10**6, size=random_offsets))
    examples = exhaustive + sampled + from_program
    found = probes(checked)
    checks, shortest, exercises = 0, None, {}
    for offset in offsets:
        traced = offset == 0 and bool(found)
        runner = probe_program(checked, found) if traced else checked
        inputs = [e.tokens for e in examples]
        for indices, result in run_in_chunks(runner, inputs, offset=offset, alphabet=task.alphabet, trace=traced):
            if traced:
                _record_probes(found, result, [examples[i] for i in indices], exercises)
            for row, index in enumerate(indices):
                example = examples[index]
                if shortest is not None and len(example.tokens) >= len(shortest.example.tokens):
                    continue
                got = predictions(task, result, row, example)
                for position, want, have in zip(example.checked, example.targets, got):
                    checks += 1
                    if want != have:
                        shortest = Counterexample(example, offset, position, want, have, None)
                        break
    if shortest is not None:
        shortest = dataclasses.replace(shortest, trace=trace(checked, shortest.example.tokens, offset=shortest.offset,
                                                             alphabet=task.alphabet))
    exercised = tuple(exercise(p, np.concatenate(exercises[p.name]) if exercises.get(p.name) else np.zeros(0, np.int64))
                      for p in found)
    return _report(task, checked, length, symbols, exhaustive, sampled, offsets, checks, shortest,
                   from_program, constant, exercised)


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
    for probe in found:
        values = result.values[probe.name]
        for row, example in enumerate(examples):
            n = len(example.tokens)
            at = values[row, :n] if probe.nested else values[row, list(example.checked)]
            into.setdefault(probe.name, []).append(np.asarray(at))


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
