"""The theory's statements as executable properties: a catalogue a user runs (``crasp theory``).

Each :class:`Statement` names a published result (or a fact of the toolkit's own construction),
its hypotheses and what is checked, and runs as a Hypothesis property: random objects of the
theory are drawn (programs, inputs near the values where a comparison flips, automata, findings),
the statement is checked on each, and the result is a typed :class:`Outcome`: passed or not, how
many examples were tried, how long it took, and on failure the counterexample Hypothesis shrank,
rendered as text (the program's source, the automaton's table, the tokens and the offset).

A PASS means the statement held on every example tried, not that it is proved.

Every property takes the functions it checks as keyword arguments, the real ones by default, so
that a planted bug can be injected cleanly (tests/test_theory_planted.py):

>>> statement = named("nope-verdicts-carry-to-ape")
>>> outcome = statement.run(Budget(examples=20))
>>> outcome.passed, outcome.examples
(True, 20)
>>> carry_nothing = lambda own: {scheme: tuple(found) for scheme, found in own.items()}
>>> print(statement.run(Budget(examples=100), contain=carry_nothing).report())  # doctest: +ELLIPSIS
FAIL nope-verdicts-carry-to-ape (... examples, ... s)
  violated: nope's GENERALIZES (...) from program is not carried to ape
  counterexample:
    ape: (empty)
    nope: GENERALIZES (...)
"""

from __future__ import annotations

import functools
import math
import re
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning

from crasp import ast
from crasp.checker import CheckedProgram, check
from crasp.interpreter import RunResult, run as interpret
from crasp.printer import format_program
from crasp.strategies import offsets, programs

from ..regular.dfa import Dfa, minimize, words

ALPHABET = ("a", "b")
"""The symbols random programs and inputs are drawn over: two, so that counts compare often."""


# ---------------------------------------------------------------- outcomes and budgets


@dataclass(frozen=True)
class Outcome:
    """What one statement's run found.

    ``examples``: examples tried (every call of the check, shrinking included); ``seconds``: time
    taken. On failure ``counterexample`` is the shrunk example as text, ``message`` what was
    violated on it, and ``example`` the example's values themselves (for tests and tools).
    """

    name: str
    passed: bool
    examples: int
    seconds: float
    counterexample: str | None = None
    message: str | None = None
    example: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def line(self) -> str:
        """``PASS name (N examples, S s)`` or ``FAIL name (...)``."""
        return f"{'PASS' if self.passed else 'FAIL'} {self.name} ({self.examples} examples, {self.seconds:.1f} s)"

    def report(self) -> str:
        """The line, then for a failure what was violated and the counterexample, indented."""
        if self.passed:
            return self.line()
        lines = [self.line(), f"  violated: {self.message}"]
        if self.counterexample:
            lines.append("  counterexample:")
            lines += ["    " + text for text in self.counterexample.splitlines()]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"name": self.name, "passed": self.passed, "examples": self.examples,
                "seconds": round(self.seconds, 3), "counterexample": self.counterexample, "message": self.message}


@dataclass(frozen=True)
class Budget:
    """How hard a statement is tried: ``examples`` per Hypothesis run, the run's ``seed``, and
    with ``seconds`` further runs (seeds ``seed + 1``, ...) until that many seconds are spent.
    ``thorough`` draws larger objects (longer inputs, more definitions, larger k)."""

    examples: int
    seed: int = 0
    seconds: float | None = None
    thorough: bool = False

    def __post_init__(self) -> None:
        if self.examples < 1:
            raise ValueError(f"a budget needs at least one example, not {self.examples}")
        if self.seconds is not None and not self.seconds >= 0:
            raise ValueError(f"a budget's seconds must be at least 0, not {self.seconds}")


class Violation(AssertionError):
    """A statement that does not hold on an example: the message says what was violated."""


def require(condition: bool, message: str | Callable[[], str]) -> None:
    """Raise :class:`Violation` with ``message`` unless ``condition``."""
    if not condition:
        raise Violation(message() if callable(message) else message)


# ---------------------------------------------------------------- rendering a counterexample


def render_value(value: Any) -> str:
    """One drawn value as text: a program as its source, an automaton as its table, tokens joined."""
    if isinstance(value, CheckedProgram):
        value = value.program
    if isinstance(value, ast.Program):
        return format_program(value).rstrip("\n")
    if isinstance(value, Dfa):
        return value.format()
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return " ".join(value) if value else "(empty)"
    if isinstance(value, Mapping):
        return "\n".join(f"{key}: {render_value(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return "\n".join(render_value(item) for item in value) if value else "(empty)"
    brief = getattr(value, "headline", None)
    if callable(brief):
        return str(brief())
    return repr(value)


def render_example(example: Mapping[str, Any]) -> str:
    """Every drawn value of an example, one ``name:`` entry each (multi-line values indented)."""
    out = []
    for name, value in example.items():
        text = render_value(value)
        if "\n" in text:
            out.append(f"{name}:")
            out += ["  " + line for line in text.splitlines()]
        else:
            out.append(f"{name}: {text}")
    return "\n".join(out)


# ---------------------------------------------------------------- running a property


def explore(name: str, examples: st.SearchStrategy[dict[str, Any]], check_example: Callable[[dict[str, Any]], None],
            budget: Budget) -> Outcome:
    """Run ``check_example`` on examples drawn from ``examples`` under ``budget``; a check that
    raises (a :class:`Violation`, or any crash) is a failure, shrunk by Hypothesis.

    >>> explore("small", st.fixed_dictionaries({"n": st.integers(0, 100)}),
    ...         lambda e: require(e["n"] < 10, "n is not below 10"), Budget(examples=50)).counterexample
    'n: 10'
    """
    tried = 0
    failure: list[Any] = []

    def body(example: dict[str, Any]) -> None:
        nonlocal tried
        tried += 1
        try:
            check_example(example)
        except Exception as error:
            failure[:] = [example, error]
            raise

    start = time.perf_counter()
    round_ = 0
    while True:
        test = settings(max_examples=budget.examples, deadline=None, database=None, report_multiple_bugs=False,
                        suppress_health_check=list(HealthCheck), print_blob=False)(given(examples)(body))
        test = hypothesis_seed(budget.seed + round_)(test)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", HypothesisWarning)
                test()
        except Exception as error:
            seconds = time.perf_counter() - start
            if not failure:  # Hypothesis itself gave up (no example could be drawn)
                return Outcome(name, False, tried, seconds, None, f"{type(error).__name__}: {error}")
            example, raised = failure
            message = str(raised) if isinstance(raised, Violation) else f"{type(raised).__name__}: {raised}"
            return Outcome(name, False, tried, seconds, render_example(example), message, example)
        round_ += 1
        if budget.seconds is None or time.perf_counter() - start >= budget.seconds:
            return Outcome(name, True, tried, time.perf_counter() - start)


# ---------------------------------------------------------------- the statements and their catalogue


@dataclass(frozen=True)
class Statement:
    """One statement of the theory: a short ``name``, where it is proved (``citation``), what it
    assumes (``hypotheses``), what the property checks (``checks``), and the property itself,
    ``check(budget, **seams) -> Outcome`` (seams: the functions it checks, real by default).
    ``examples``: how many examples one run of the quick profile tries."""

    name: str
    citation: str
    hypotheses: str
    checks: str
    check: Callable[..., Outcome] = field(repr=False)
    examples: int = 50

    def run(self, budget: Budget, **seams: Callable) -> Outcome:
        """Run the property under ``budget``, with ``seams`` replacing the functions it checks."""
        return self.check(budget, **seams)

    def describe(self) -> str:
        return (f"{self.name}\n  citation:   {self.citation}\n  hypotheses: {self.hypotheses}\n"
                f"  checks:     {self.checks}")

    def to_json(self) -> dict:
        return {"name": self.name, "citation": self.citation, "hypotheses": self.hypotheses, "checks": self.checks,
                "examples": self.examples}


_SECTIONS = ("Citation", "Hypotheses", "Checks")


def from_docstring(check_function: Callable[..., Outcome], name: str, examples: int) -> Statement:
    """A :class:`Statement` whose citation, hypotheses and checks are the ``Citation:``,
    ``Hypotheses:`` and ``Checks:`` paragraphs of the property's docstring (one text, no copy)."""
    doc = check_function.__doc__ or ""
    found: dict[str, str] = {}
    pattern = r"^\s*(%s):\s*(.*?)(?=^\s*(?:%s):|\Z)" % ("|".join(_SECTIONS), "|".join(_SECTIONS))
    for key, text in re.findall(pattern, doc, flags=re.S | re.M):
        found[key] = " ".join(text.split())
    missing = [s for s in _SECTIONS if not found.get(s)]
    if missing:
        raise ValueError(f"the docstring of {check_function.__name__} lacks {', '.join(missing)}")
    return Statement(name, found["Citation"], found["Hypotheses"], found["Checks"], check_function, examples)


# ---------------------------------------------------------------- the real functions (the seams' defaults)


def evaluate_program(checked: CheckedProgram, tokens: Sequence[str], offset: int) -> dict[str, list]:
    """Every definition's and output's value at every position of one input (the interpreter)."""
    return _values(interpret(checked, [list(tokens)], offset=offset, trace=True, allow_unknown=True, raw=True),
                   len(tokens))


def _values(result: RunResult, n: int) -> dict[str, list]:
    out = {name: values[0, :n].tolist() for name, values in (result.values or {}).items()}
    out.update({f"output {name}": values for name, values in _outputs(result, n).items()})
    return out


def _outputs(result: RunResult, n: int) -> dict[str, list[bool]]:
    """Each output at every position: ``accept``, or ``next "t"`` per declared token."""
    if result.accept_values is not None:
        return {"accept": [bool(v) for v in result.accept_values[0, :n].tolist()]}
    return {f'next "{t}"': [bool(v) for v in values[0, :n].tolist()] for t, values in (result.next or {}).items()}


def program_outputs(checked: CheckedProgram, tokens: Sequence[str], offset: int) -> dict[str, list[bool]]:
    """The program's outputs at every position of one input, by the interpreter."""
    return _outputs(interpret(checked, [list(tokens)], offset=offset, trace=True, allow_unknown=True, raw=True),
                    len(tokens))


def compile_model(checked: CheckedProgram):
    """The Limit Transformer of a program (:func:`limit_transformer.compile`, default config)."""
    from limit_transformer.compiler import compile_program

    return compile_program(checked)


def model_outputs(model, tokens: Sequence[str], offset: int) -> dict[str, list[bool]]:
    """A compiled (or translated) model's outputs at every position of one input."""
    from limit_transformer.runner import run as run_model

    result = run_model(model, [list(tokens)], offset=[offset], allow_unknown=True, raw=True, check_length=False)
    return _outputs(result, len(tokens))


def translate_to_ape(model, n_positions: int):
    """The APE transformer of a Limit Transformer for N positions (:func:`limit_transformer.to_ape`)."""
    from limit_transformer.ape import to_ape

    return to_ape(model, n_positions)


def model_properties(model):
    """PERIODIC and LOCAL read off a model's weights (:func:`limit_transformer.check_properties`)."""
    from limit_transformer.properties import check_properties

    return check_properties(model)


def once_per_program(function: Callable[[CheckedProgram], Any], keep: int = 64) -> Callable[[CheckedProgram], Any]:
    """``function`` of a checked program, computed once per program (shrinking tries one program on
    many inputs; compiling it again each time is waste); what is kept is dropped every ``keep``
    programs."""
    kept: dict[ast.Program, Any] = {}

    def once(checked: CheckedProgram) -> Any:
        if checked.program not in kept:
            if len(kept) >= keep:
                kept.clear()
            kept[checked.program] = function(checked)
        return kept[checked.program]

    return once


def _differences(expected: Mapping[str, list], got: Mapping[str, list], what: str,
                 offset: int | None = None) -> str | None:
    """The first position where two per-position tables differ, in words (with the absolute
    position where ``offset`` is given); None where they agree."""
    if set(expected) != set(got):
        return f"{what}: outputs {sorted(got)} instead of {sorted(expected)}"
    for name in expected:
        for k, (want, have) in enumerate(zip(expected[name], got[name])):
            if want != have:
                where = f" (absolute {offset + k + 1})" if offset is not None else ""
                return f"{what}: {name} at position {k + 1}{where} is {have}, the program says {want}"
        if len(expected[name]) != len(got[name]):
            return f"{what}: {name} has {len(got[name])} positions, not {len(expected[name])}"
    return None


# ---------------------------------------------------------------- drawing programs and inputs


def _program_strategy(budget: Budget, *, plain: bool = False) -> st.SearchStrategy[ast.Program]:
    return programs(alphabet=ALPHABET, max_definitions=6 if budget.thorough else 4,
                    max_depth=3 if budget.thorough else 2, periodic=not plain, local=not plain)


@functools.lru_cache(maxsize=512)
def _inputs(program: ast.Program, max_length: int, max_offset: int) -> st.SearchStrategy[tuple[tuple[str, ...], int]]:
    """:func:`tasks.theory.strategies.inputs` of a program, made once per program (shrinking draws
    inputs for one program many times)."""
    from .strategies import inputs

    return inputs(program, alphabet=ALPHABET, max_length=max_length, max_offset=max_offset, min_length=1)


@st.composite
def program_and_input(draw, budget: Budget, *, plain: bool = False, max_length: int | None = None,
                      max_offset: int = 1000) -> dict[str, Any]:
    """A program, an input of at least one token and an offset; the input and offset are drawn
    near the values where the program's comparisons flip (:func:`tasks.theory.strategies.inputs`)."""
    program = draw(_program_strategy(budget, plain=plain))
    longest = max_length if max_length is not None else (160 if budget.thorough else 40)
    tokens, offset = draw(_inputs(program, longest, max_offset))
    return {"program": program, "tokens": list(tokens), "offset": offset}


# ---------------------------------------------------------------- (a) Theorem 9: the compiled model


def compiled_equals_program(budget: Budget, *, compile: Callable = compile_model, execute: Callable = model_outputs,
                            properties: Callable = model_properties) -> Outcome:
    """The compiled Limit Transformer computes its program.

    Citation: Huang et al. 2025 (arXiv 2410.02140), Theorem 9 and its construction (every
    C-RASP[periodic, local] program is expressed by a Limit Transformer with PERIODIC and LOCAL),
    the hypothesis of Theorem 7's length-generalization guarantee; the construction compiled here is
    docs/compiler.md's.

    Hypotheses: a random C-RASP[periodic, local] program over {a, b} (periodic predicates, local
    guards, imported predicates, any outputs); an input of up to 40 tokens (160 thorough) and an
    offset up to 1000, drawn near the values where the program's comparisons flip.

    Checks: the compiled model's outputs equal the interpreter's at every position of the input at
    that offset, and the model's weights are PERIODIC and LOCAL (check_properties), with a period
    dividing the program's.
    """

    model_of = once_per_program(compile)

    def check_example(example: dict[str, Any]) -> None:
        checked = check(example["program"])
        model = model_of(checked)
        found = properties(model)
        require(checked.info.period % found.period == 0,
                lambda: f"the model's period {found.period} does not divide the program's {checked.info.period}")
        tokens, offset = example["tokens"], example["offset"]
        wrong = _differences(program_outputs(checked, tokens, offset), execute(model, tokens, offset),
                             "the compiled model", offset)
        require(wrong is None, lambda: str(wrong))

    return explore("compiled-equals-program", program_and_input(budget), check_example, budget)


# ---------------------------------------------------------------- (b) the APE translation


APE_POSITIONS = 24
"""The context length N of the quick profile's translations (64 thorough)."""


@st.composite
def _within_context(draw, budget: Budget, n_positions: int) -> dict[str, Any]:
    example = draw(program_and_input(budget, max_length=n_positions - 1, max_offset=n_positions))
    length = len(example["tokens"])
    return {**example, "offset": min(example["offset"], n_positions - 1 - length), "N": n_positions}


def ape_translation_equals_program(budget: Budget, *, compile: Callable = compile_model,
                                   translate: Callable = translate_to_ape, execute: Callable = model_outputs) -> Outcome:
    """The APE translation of a compiled model computes the program up to its context length N.

    Citation: Huang et al. 2025 (arXiv 2410.02140): a Limit Transformer with PERIODIC and LOCAL is
    realized at each context size N by an ordinary transformer with absolute positional encodings
    (the transformers T_n of Theorem 7); the translation is the toolkit's own,
    limit_transformer.ape.to_ape (docs/compiler.md, "Checks, translation, export").

    Hypotheses: a random C-RASP[periodic, local] program over {a, b}; N = 24 (64 thorough); an
    input and an offset whose every position lies below N.

    Checks: the translated model has no positional bias phi and no Heaviside unit, and its outputs
    equal the interpreter's at every position of the input.
    """
    n_positions = 64 if budget.thorough else APE_POSITIONS

    ape_of = once_per_program(lambda checked: translate(compile(checked), n_positions))

    def check_example(example: dict[str, Any]) -> None:
        checked = check(example["program"])
        ape = ape_of(checked)
        require(all(block.attn.phi.numel() == 0 and not bool(block.mlp.heaviside.any()) for block in ape.blocks),
                "the translation keeps a positional bias or a Heaviside unit")
        tokens, offset = example["tokens"], example["offset"]
        wrong = _differences(program_outputs(checked, tokens, offset), execute(ape, tokens, offset),
                             f"the APE translation for N = {example['N']}", offset)
        require(wrong is None, lambda: str(wrong))

    return explore("ape-translation-equals-program", _within_context(budget, n_positions), check_example, budget)


# ---------------------------------------------------------------- (c) offsets


@st.composite
def _two_offsets(draw, budget: Budget, plain: bool) -> dict[str, Any]:
    example = draw(program_and_input(budget, plain=plain))
    if plain:
        return {**example, "other offset": draw(offsets(1000))}
    period = check(example["program"]).info.period
    return {**example, "shift": period * draw(st.integers(1, 3))}


def plain_offset_invariance(budget: Budget, *, evaluate: Callable = evaluate_program) -> Outcome:
    """A plain C-RASP program does not see where its input sits.

    Citation: Huang et al. 2025 (arXiv 2410.02140), plain C-RASP as the NoPE class (a NoPE
    transformer reads no positions); DESIGN: positions count from offset + 1 and only periodic
    predicates see absolute positions.

    Hypotheses: a random plain C-RASP program over {a, b} (no periodic predicate, no local guard);
    an input near its comparisons' flips; two offsets in 0..1000.

    Checks: every definition and every output has the same value at every position under both
    offsets.
    """

    def check_example(example: dict[str, Any]) -> None:
        checked = check(example["program"])
        require(checked.info.plain, "the drawn program is not plain")
        tokens, first, second = example["tokens"], example["offset"], example["other offset"]
        wrong = _differences(evaluate(checked, tokens, first), evaluate(checked, tokens, second),
                             f"at offset {second} (the program at offset {first} is the reference)")
        require(wrong is None, lambda: str(wrong))

    return explore("plain-offset-invariance", _two_offsets(budget, True), check_example, budget)


def period_shift_invariance(budget: Budget, *, evaluate: Callable = evaluate_program) -> Outcome:
    """A C-RASP[periodic, local] program reads positions only modulo its period.

    Citation: Huang et al. 2025 (arXiv 2410.02140), PERIODIC (positional encodings periodic in the
    absolute position) and the C-RASP[periodic, local] predicates; DESIGN: a program is correct for
    a task when it is correct at every offset residue modulo its period.

    Hypotheses: a random C-RASP[periodic, local] program over {a, b} of period p (the least common
    multiple of its moduli); an input near its comparisons' flips; an offset and a shift of 1 to 3
    periods.

    Checks: every definition and every output has the same value at every position at the offset
    and at the offset plus the shift.
    """

    def check_example(example: dict[str, Any]) -> None:
        checked = check(example["program"])
        tokens, offset = example["tokens"], example["offset"]
        shifted = offset + example["shift"]
        wrong = _differences(evaluate(checked, tokens, offset), evaluate(checked, tokens, shifted),
                             f"at offset {shifted} (the program at offset {offset} is the reference)")
        require(wrong is None, lambda: str(wrong))

    return explore("period-shift-invariance", _two_offsets(budget, False), check_example, budget)


# ---------------------------------------------------------------- (d) Theorem 12


def _alice(*args, **kwargs):
    from crasp.theorem12 import alice

    return alice(*args, **kwargs)


def _bob(*args, **kwargs):
    from crasp.theorem12 import bob

    return bob(*args, **kwargs)


def _counts(checked: CheckedProgram) -> list[ast.Count]:
    """Every distinct count expression of the program (definitions and outputs)."""
    roots = [d.expr for d in checked.definitions]
    roots += [checked.accept] if checked.accept is not None else [e for _, e in checked.next_tokens]
    found: dict[ast.Count, None] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Count):
            found.setdefault(node)
        stack.extend(ast.children(node))
    return list(found)


@st.composite
def _split_input(draw, budget: Budget) -> dict[str, Any]:
    example = draw(program_and_input(budget))
    return {**example, "split": draw(st.integers(0, len(example["tokens"]) - 1))}


def theorem12_protocol(budget: Budget, *, alice: Callable = _alice, bob: Callable = _bob) -> Outcome:
    """Theorem 12's one-way protocol: O(log N) bits from Alice let Bob compute every output.

    Citation: Huang et al. 2025 (arXiv 2410.02140), Theorem 12 (Alice, holding the first half of
    the input to a Limit Transformer with PERIODIC and LOCAL, sends C log N bits from which Bob
    computes every activation of the second half), applied through Theorem 9 to programs; the
    protocol is crasp/theorem12.py's.

    Hypotheses: a random C-RASP[periodic, local] program over {a, b}; an input near its
    comparisons' flips, an offset, and a split: Alice holds the first `split` tokens, Bob the rest.

    Checks: Bob's values of every definition and output, from Alice's message and his tokens, equal
    the full evaluation at each of his positions; the message holds one total per unguarded count
    of the program, each an integer in [0, split] (so ceil(log2(split + 1)) bits suffice for it),
    and per guarded count the last D values of its operand (D its largest offset): its size is at
    most counts * ceil(log2(split + 1)) + the tails, as message_bits says.
    """
    from crasp.theorem12 import message_bits

    def check_example(example: dict[str, Any]) -> None:
        checked = check(example["program"])
        tokens, offset, split = example["tokens"], example["offset"], example["split"]
        message = alice(checked, tokens, split=split, offset=offset, allow_unknown=True)
        counts = _counts(checked)
        unguarded = [c for c in counts if c.guard is None]
        guarded = {c: max(checked.guard_offsets(c.guard), default=0) for c in counts if c.guard is not None}
        require(set(message.totals) == set(unguarded),
                lambda: f"Alice sends {len(message.totals)} totals for {len(unguarded)} unguarded counts")
        for count, total in message.totals.items():
            require(isinstance(total, int) and 0 <= total <= split,
                    lambda: f"a total of {total} for Alice's {split} tokens does not fit in "
                            f"ceil(log2({split} + 1)) bits")
        require(set(message.tails) == set(guarded) and all(len(message.tails[c]) == d for c, d in guarded.items()),
                "Alice's tails are not the last D values of each guarded count's operand")
        bound = len(unguarded) * max(1, math.ceil(math.log2(split + 1))) + sum(guarded.values())
        require(message.bits <= bound and message.bits == message_bits(len(unguarded), list(guarded.values()), split),
                lambda: f"the message has {message.bits} bits, more than the bound {bound}")
        full = evaluate_program(checked, tokens, offset)
        part = _values(bob(checked, message, tokens[split:], allow_unknown=True), len(tokens) - split)
        expected = {name: values[split:] for name, values in full.items()}
        wrong = _differences(expected, part, f"Bob (split {split})", offset + split)
        require(wrong is None, lambda: str(wrong))

    return explore("theorem12-protocol", _split_input(budget), check_example, budget)


# ---------------------------------------------------------------- (e) the regular-language decision


def _decide(dfa: Dfa):
    from ..regular.decide import decide_nope

    return decide_nope(dfa)


def _build(dfa: Dfa):
    from ..regular.program import program_for

    return program_for(dfa)


def _transformation(dfa: Dfa, word: Sequence[str]) -> tuple[int, ...]:
    """The map q -> q.word on the states of ``dfa``."""
    return tuple(dfa.run(tuple(word), state=q) for q in range(dfa.n_states))


_QUOTED = r"(?:'((?:[^'\\]|\\.)*)'|(the empty word))"


def _word(match: re.Match, index: int) -> tuple[str, ...]:
    text = match.group(index)
    return tuple(text) if text is not None else ()


def check_group_witness(dfa: Dfa, obstruction: str) -> None:
    """The obstruction names a word and a cycle of states it permutes: check both on ``dfa``."""
    found = re.search(r"the word '([^']*)' permutes the states ([\d ->]+) \(", obstruction)
    require(found is not None, lambda: f"no word and cycle in the obstruction: {obstruction}")
    assert found is not None
    word = tuple(found.group(1))
    cycle = [int(q) for q in found.group(2).split("->")]
    require(len(set(cycle[:-1])) >= 2 and cycle[0] == cycle[-1], f"{cycle} is not a cycle of two states or more")
    for q, nxt in zip(cycle, cycle[1:]):
        require(dfa.run(word, state=q) == nxt,
                lambda: f"the word {''.join(word)!r} takes state {q} to {dfa.run(word, state=q)}, not {nxt}")


def check_idempotent_witness(dfa: Dfa, obstruction: str) -> None:
    """The obstruction names words e, f, u, v: e and f act as distinct idempotents with e·u acting
    as f and f·v as e (one R-class of the transition monoid): check all of it on ``dfa``."""
    found = re.search(rf"the words {_QUOTED} and {_QUOTED} act as two distinct idempotents.*?\({_QUOTED}·'([^']*)' "
                      rf"acts as {_QUOTED} and {_QUOTED}·'([^']*)' as {_QUOTED}\)", obstruction)
    require(found is not None, lambda: f"no idempotents in the obstruction: {obstruction}")
    assert found is not None
    e, f = _word(found, 1), _word(found, 3)
    u, v = tuple(found.group(7)), tuple(found.group(12))
    te, tf = _transformation(dfa, e), _transformation(dfa, f)
    require(te != tf, "the two idempotents act alike")
    require(_transformation(dfa, e + e) == te and _transformation(dfa, f + f) == tf,
            "a word named as an idempotent is not one")
    require(_transformation(dfa, e + u) == tf and _transformation(dfa, f + v) == te,
            "the two idempotents are not in one R-class")


def null_space(rows: Sequence[Sequence[int]], width: int) -> list[tuple[Fraction, ...]]:
    """A basis of {x : r . x = 0 for every row r}, in exact rational arithmetic (reduced row
    echelon form; one basis vector per free column).

    >>> null_space([[1, -1, 0]], 3)
    [(Fraction(1, 1), Fraction(1, 1), Fraction(0, 1)), (Fraction(0, 1), Fraction(0, 1), Fraction(1, 1))]
    """
    matrix = [[Fraction(v) for v in row] for row in rows]
    pivots: list[int] = []
    r = 0
    for c in range(width):
        found = next((i for i in range(r, len(matrix)) if matrix[i][c] != 0), None)
        if found is None:
            continue
        matrix[r], matrix[found] = matrix[found], matrix[r]
        lead = matrix[r][c]
        matrix[r] = [v / lead for v in matrix[r]]
        for i in range(len(matrix)):
            if i != r and matrix[i][c] != 0:
                factor = matrix[i][c]
                matrix[i] = [a - factor * b for a, b in zip(matrix[i], matrix[r])]
        pivots.append(c)
        r += 1
    basis = []
    for free in (c for c in range(width) if c not in pivots):
        vector = [Fraction(0)] * width
        vector[free] = Fraction(1)
        for row, c in zip(matrix, pivots):
            vector[c] = -row[free]
        basis.append(tuple(vector))
    return basis


def unseparated(dfa: Dfa, component: Sequence[int], p: int, q: int) -> bool:
    """Whether no balanced count term separates states p and q of a strongly connected component,
    by the published procedure taken literally (Yang et al. 2026, Appendix J): the simple cycles'
    Parikh vectors over the edge labels, their exact null space, potentials from a root, and labels
    refined by the source's potentials, until the labels stop splitting."""
    import itertools

    import networkx as nx

    inside = set(component)
    edges = [(u, k, dfa.table[u][k]) for u in component for k in range(len(dfa.symbols)) if dfa.table[u][k] in inside]
    graph = nx.DiGraph([(u, v) for u, _, v in edges])
    between: dict[tuple[int, int], list[int]] = {}
    for index, (u, _, v) in enumerate(edges):
        between.setdefault((u, v), []).append(index)
    cycles = [combo for cycle in nx.simple_cycles(graph)
              for combo in itertools.product(*(between[cycle[j], cycle[(j + 1) % len(cycle)]]
                                               for j in range(len(cycle))))]
    labels: list[Any] = [k for _, k, _ in edges]
    while True:
        column = {label: j for j, label in enumerate(dict.fromkeys(labels))}
        parikh = [[0] * len(column) for _ in cycles]
        for row, cycle in zip(parikh, cycles):
            for index in cycle:
                row[column[labels[index]]] += 1
        basis = null_space(parikh, len(column))
        root = component[0]
        potential = {root: tuple(Fraction(0) for _ in basis)}
        frontier = [root]
        while frontier:
            u = frontier.pop()
            for index, (a, _, v) in enumerate(edges):
                if a == u and v not in potential:
                    potential[v] = tuple(x + b[column[labels[index]]] for x, b in zip(potential[u], basis))
                    frontier.append(v)
        if potential[p] != potential[q]:
            return False
        refined = [(labels[index], potential[u]) for index, (u, _, _) in enumerate(edges)]
        if len(set(refined)) == len(set(labels)):
            return True
        labels = refined


def check_procedure_witness(dfa: Dfa, obstruction: str) -> None:
    """The obstruction names two states of a strongly connected component that no balanced count
    term separates: check that they share a component and :func:`unseparated` agrees."""
    from ..regular.monoid import strongly_connected_components

    found = re.search(r"states (\d+) and (\d+) of the component \{([\d, ]+)\}", obstruction)
    require(found is not None, lambda: f"no pair of states in the obstruction: {obstruction}")
    assert found is not None
    p, q = int(found.group(1)), int(found.group(2))
    component = [int(s) for s in found.group(3).split(",")]
    components = strongly_connected_components([sorted(set(row)) for row in dfa.table])
    require(p != q and sorted(component) in components and p in component and q in component,
            lambda: f"{{{found.group(3)}}} is not a strongly connected component holding states {p} and {q}")
    require(unseparated(dfa, component, p, q),
            lambda: f"a balanced count term separates states {p} and {q}: they are no witness")


WITNESS_CHECKS = {"not aperiodic": check_group_witness, "fails R^omega": check_idempotent_witness}
"""How a "not in C-RASP" decision's witness is checked, by its criterion (the balanced-potential
procedure's own witnesses by :func:`check_procedure_witness`)."""


def _shown(word: Sequence[str]) -> str:
    return repr("".join(word)) if word else "the empty word"


def _words_up_to(symbols: Sequence[str], length: int) -> list[tuple[str, ...]]:
    return list(words(tuple(symbols), length))


def _accepts_all(program: ast.Program, inputs: Sequence[Sequence[str]]) -> list[bool]:
    from crasp.interpreter import run_in_chunks

    verdicts = [False] * len(inputs)
    for indices, result in run_in_chunks(program, [("<bos>", *w) for w in inputs], raw=True):
        assert result.accept is not None
        for i, verdict in zip(indices, result.accept.tolist()):
            verdicts[i] = bool(verdict)
    return verdicts


@st.composite
def bounded_counters(draw) -> Dfa:
    """The minimal DFA of a bounded counter over {a, b}: #a - #b, starting at 0, must stay within
    [low, high] on every prefix (else a dead state) and end in a drawn set of values: strongly
    connected components of several states, as in (ab|ba)* (low -1, high 1, end at 0)."""
    low, high = draw(st.integers(-3, 0)), draw(st.integers(0, 3))
    values = list(range(low, high + 1))
    dead = len(values)
    index = {v: n for n, v in enumerate(values)}
    table = [(index.get(v + 1, dead), index.get(v - 1, dead)) for v in values] + [(dead, dead)]
    ends = draw(st.sets(st.sampled_from(values)))
    return minimize(Dfa(("a", "b"), index[0], frozenset(index[v] for v in ends), tuple(table)))


def regular_certificates(budget: Budget, *, decide: Callable = _decide, build: Callable = _build) -> Outcome:
    """The regular decision's certificates: a program for every "in", a witness for every "not in".

    Citation: Yang, Veseli, Barloy, Cadilhac, Krebs, Paperman, Straubing & Hahn 2026 (arXiv
    2608.13433), Thm 15 (C-RASP membership of a regular language, end-of-sequence acceptance),
    Thm 13/14 (C-RASP ∩ REG ⊆ R^omega) and Huang et al. 2025 Lemma 38 (no non-trivial group);
    the decider is tasks/regular/decide.py, the program tasks/regular/program.py's construction.

    Hypotheses: a random minimal complete DFA over {a, b}: any of at most 6 states (8 thorough), an
    aperiodic one, or a bounded counter (#a - #b kept in a window, several states to a component);
    up to three random words of up to 40 letters.

    Checks: for an "in C-RASP" decision, the program built from it is plain C-RASP and accepts
    exactly the automaton's words, read at the last position of `<bos> w`, on every word of up to 7
    letters (9 thorough) and on the longer words; for a "not in", no program is built and the
    witness holds on the automaton: a word that permutes a cycle of states (not aperiodic), two
    distinct idempotent words in one R-class (not R^omega), or two states of one component that
    the published procedure, taken literally (simple cycles, exact null spaces), cannot separate.
    """
    from .strategies import automata

    length = 9 if budget.thorough else 7

    def check_example(example: dict[str, Any]) -> None:
        dfa = minimize(example["automaton"])
        decision = decide(dfa)
        program = build(dfa)
        if decision.member:
            require(program is not None, "the decision says in C-RASP but no program is built")
            require(check(program).info.plain, "the program built for an 'in' is not plain C-RASP")
            inputs = [*_words_up_to(dfa.symbols, length), *example["longer words"]]
            for word, verdict in zip(inputs, _accepts_all(program, inputs)):
                require(verdict == dfa.accepts(word),
                        lambda: f"the program {'accepts' if verdict else 'rejects'} {_shown(word)}, "
                                f"which the automaton {'rejects' if verdict else 'accepts'}")
            return
        require(program is None, "the decision says not in C-RASP, yet a program is built")
        require(decision.obstruction is not None, "a 'not in' decision without an obstruction")
        witness = WITNESS_CHECKS.get(decision.criterion, check_procedure_witness)
        witness(dfa, decision.obstruction)

    states = 8 if budget.thorough else 6
    examples = st.fixed_dictionaries({
        "automaton": st.one_of(automata("ab", max_states=states), automata("ab", max_states=states, kind="aperiodic"),
                               bounded_counters()),
        "longer words": st.lists(st.text("ab", min_size=length + 1, max_size=40).map(tuple), max_size=3)})
    return explore("regular-certificates", examples, check_example, budget)


# ---------------------------------------------------------------- (f) the depth hierarchy


def _recognizer(k: int):
    from ..regular.blocks import recognizer

    return recognizer(k)


def _predictor(k: int):
    from ..depth_languages import alternating_blocks

    return alternating_blocks(k)


def depth_hierarchy_programs(budget: Budget, *, recognizer: Callable = _recognizer,
                             predictor: Callable = _predictor) -> Outcome:
    """The languages L_k of the depth hierarchy have programs of count depth k.

    Citation: Yang, Cadilhac & Chiang 2025 (arXiv 2506.16055), the depth hierarchy: L_k, the words
    of k alternating non-empty blocks a+b+a+..., is recognized with count depth k (their
    construction; they prove depth k is needed, which no test can check); the prediction problem
    (is each prefix of a word of L_k in L_k?) with depth k - 2; programs tasks/regular/blocks.py's
    recognizer and tasks/depth_languages.py's alternating_blocks.

    Hypotheses: k from 2 to 7 (2 to 10 thorough); every word over {a, b} of up to 8 letters (10
    thorough), and one longer word of L_k's alternating shape.

    Checks: the recognizer is plain C-RASP of count depth exactly k and accepts exactly L_k (blocks
    counted by hand) on those words; the prediction program is plain C-RASP of depth k - 2 and says
    "in L_k" (`next "<eos>"`) exactly at the prefixes in L_k.
    """
    from ..depth_languages import in_language

    length = 10 if budget.thorough else 8

    @st.composite
    def example_of(draw) -> dict[str, Any]:
        k = draw(st.integers(2, 10 if budget.thorough else 7))
        sizes = draw(st.lists(st.integers(1, 12), min_size=k, max_size=k))
        long_word = [("a", "b")[m % 2] for m, size in enumerate(sizes) for _ in range(size)]
        return {"k": k, "word": long_word}

    def check_example(example: dict[str, Any]) -> None:
        k = example["k"]
        program = recognizer(k)
        info = check(program).info
        require(info.plain and info.depth == k, lambda: f"the recognizer of L_{k} has count depth {info.depth}"
                + ("" if info.plain else " and is not plain"))
        inputs = [*_words_up_to(("a", "b"), length), tuple(example["word"])]
        for word, verdict in zip(inputs, _accepts_all(program, inputs)):
            require(verdict == in_language(word, k), lambda: f"the recognizer of L_{k} {'accepts' if verdict else 'rejects'} "
                                                       f"{_shown(word)}")
        predicting = predictor(k)
        info = check(predicting).info
        require(info.plain and info.depth == k - 2, lambda: f"the prediction program of L_{k} has count depth "
                                                            f"{info.depth}, not {k - 2}")
        word = tuple(example["word"])
        result = interpret(predicting, [("<bos>", *word)], raw=True)
        assert result.next is not None
        labels = [bool(v) for v in result.next["<eos>"][0, : len(word) + 1].tolist()]
        for i, label in enumerate(labels):
            require(label == in_language(word[:i], k), lambda: f"the prediction program of L_{k} says "
                                                         f"{_shown(word[:i])} is {'' if label else 'not '}in L_{k}")

    return explore("depth-hierarchy-programs", example_of(), check_example, budget)


# ---------------------------------------------------------------- (g) containment


def plain_in_periodic_local(budget: Budget, *, checker: Callable = check, compile: Callable = compile_model,
                            properties: Callable = model_properties, evaluate: Callable = evaluate_program) -> Outcome:
    """Plain C-RASP is contained in C-RASP[periodic, local], with the same meaning.

    Citation: Huang et al. 2025 (arXiv 2410.02140): plain C-RASP (the NoPE class) is the fragment
    of C-RASP[periodic, local] without positional predicates, and a NoPE transformer is an APE
    transformer without positional table (docs/predict.md, containment).

    Hypotheses: a random plain C-RASP program over {a, b}; an input near its comparisons' flips and
    an offset.

    Checks: the checker calls it plain; its compiled Limit Transformer passes the PERIODIC and LOCAL
    checks with period 1 and no positional bias (a NoPE model); and the program with every output
    conjoined with the always-true periodic predicate `i mod 1 in {0}` (so a C-RASP[periodic, local]
    program that is not plain) has the same values everywhere.
    """

    model_of = once_per_program(compile)

    def check_example(example: dict[str, Any]) -> None:
        program = example["program"]
        checked = checker(program)
        require(checked.info.plain, "the checker does not call a plain program plain")
        found = properties(model_of(checked))
        require(found.period == 1 and found.tau == -1,
                lambda: f"the compiled model reads positions: period {found.period}, largest offset {found.tau}")
        widened = checker(_with_vacuous_periodic(checked))
        require(not widened.info.plain, "the program with a periodic predicate is called plain")
        tokens, offset = example["tokens"], example["offset"]
        wrong = _differences(evaluate(checked, tokens, offset), evaluate(widened, tokens, offset),
                             "the program with a vacuous periodic predicate", offset)
        require(wrong is None, lambda: str(wrong))

    return explore("plain-in-periodic-local", program_and_input(budget, plain=True), check_example, budget)


def _with_vacuous_periodic(checked: CheckedProgram) -> ast.Program:
    """The program with every output conjoined with ``i mod 1 in {0}`` (true everywhere); the
    default output made explicit."""
    from crasp.intsets import IntSet

    always = ast.Periodic(1, IntSet.of([0]))
    statements: list[ast.Statement] = [s for s in checked.program.statements
                                       if not isinstance(s, (ast.Accept, ast.NextToken))]
    if checked.accept is not None:
        statements.append(ast.Accept(ast.And(checked.accept, always)))
    statements += [ast.NextToken(token, ast.And(expr, always)) for token, expr in checked.next_tokens]
    return ast.Program(tuple(statements))


def _contained(own):
    from ..engine import contained

    return contained(own)


def _combine(findings):
    from ..predict import combine

    return combine(findings)


@st.composite
def _findings(draw) -> dict[str, Any]:
    from ..findings import Finding, Reason, Strength, Verdict

    kinds = [(Verdict.GENERALIZES, Reason.PROGRAM_VERIFIED), (Verdict.GENERALIZES, Reason.LANGUAGE_INSIDE),
             (Verdict.FAILS, Reason.LANGUAGE_OUTSIDE), (Verdict.FAILS, Reason.EXPONENTIAL_COMMUNICATION),
             (Verdict.FAILS, Reason.MODULAR_COUNTING), (Verdict.UNDETERMINED, Reason.NO_PROGRAM),
             (Verdict.UNDETERMINED, Reason.INCONCLUSIVE), (Verdict.UNDETERMINED, Reason.OUT_OF_SCOPE)]
    sources = ["program", "regular language", "communication", "synthesis"]

    def finding(drawn) -> Finding:
        source, (claim, reason), strength = drawn
        claims = claim is not Verdict.UNDETERMINED
        return Finding(source, claim, strength if claims else None, f"{source}: {reason.value}", reason)

    one = st.tuples(st.sampled_from(sources), st.sampled_from(kinds), st.sampled_from(list(Strength))).map(finding)
    return {"ape": draw(st.lists(one, max_size=3)), "nope": draw(st.lists(one, max_size=3))}


def nope_verdicts_carry_to_ape(budget: Budget, *, contain: Callable = _contained,
                               combine: Callable = _combine) -> Outcome:
    """Every NoPE "generalizes" holds for APE, every APE "does not generalize" for NoPE.

    Citation: Huang et al. 2025 (arXiv 2410.02140), Theorems 7 and 9 with containment: plain C-RASP
    ⊆ C-RASP[periodic, local] and NoPE transformers are APE transformers without positional table;
    the rule is docs/predict.md's (the combiner, rule 4) and tasks/engine.py's.

    Hypotheses: random findings for APE and for NoPE (sources, claims, strengths; claims and
    findings that claim nothing).

    Checks: after containment each scheme keeps its own findings and holds every decisive NoPE
    "generalizes" (for APE) and APE "does not generalize" (for NoPE), or one of the same source at
    least as strong, and nothing carried the other way; the combined verdicts follow: NoPE
    generalizes => APE generalizes, APE does not generalize => NoPE does not.
    """
    from ..findings import Verdict

    def check_example(example: dict[str, Any]) -> None:
        own = {"ape": example["ape"], "nope": example["nope"]}
        held = contain(own)
        for scheme in ("ape", "nope"):
            require(tuple(held[scheme][: len(own[scheme])]) == tuple(own[scheme]),
                    f"containment changed {scheme}'s own findings")
        for origin, target, claim in (("nope", "ape", Verdict.GENERALIZES), ("ape", "nope", Verdict.FAILS)):
            for f in own[origin]:
                if f.decisive and f.claim is claim:
                    require(any(g.source == f.source and g.claim is claim and g.decisive
                                and g.claimed_strength.rank >= f.claimed_strength.rank for g in held[target]),
                            lambda: f"{origin}'s {f.headline()} from {f.source} is not carried to {target}")
            for g in held[target][len(own[target]):]:
                require(g.carried_from == origin and g.claim is claim,
                        lambda: f"{g.headline()} is carried from {g.carried_from} to {target}")
        ape, nope = combine(held["ape"]).verdict, combine(held["nope"]).verdict
        require(nope is not Verdict.GENERALIZES or ape is Verdict.GENERALIZES,
                lambda: f"NoPE generalizes but APE is {ape.value}")
        require(ape is not Verdict.FAILS or nope is Verdict.FAILS,
                lambda: f"APE does not generalize but NoPE is {nope.value}")

    return explore("nope-verdicts-carry-to-ape", _findings(), check_example, budget)


# ---------------------------------------------------------------- the catalogue


CATALOGUE: tuple[Statement, ...] = (
    from_docstring(plain_offset_invariance, "plain-offset-invariance", 300),
    from_docstring(period_shift_invariance, "period-shift-invariance", 300),
    from_docstring(compiled_equals_program, "compiled-equals-program", 200),
    from_docstring(ape_translation_equals_program, "ape-translation-equals-program", 100),
    from_docstring(theorem12_protocol, "theorem12-protocol", 300),
    from_docstring(regular_certificates, "regular-certificates", 300),
    from_docstring(depth_hierarchy_programs, "depth-hierarchy-programs", 30),
    from_docstring(plain_in_periodic_local, "plain-in-periodic-local", 200),
    from_docstring(nope_verdicts_carry_to_ape, "nope-verdicts-carry-to-ape", 1000),
)
"""Every statement, cheapest first; ``examples`` is what the quick profile tries of each."""

NAMES = tuple(statement.name for statement in CATALOGUE)


def named(name: str) -> Statement:
    """The statement called ``name``; a ``KeyError`` listing the names otherwise."""
    for statement in CATALOGUE:
        if statement.name == name:
            return statement
    raise KeyError(f"no statement {name!r} in the catalogue (known: {', '.join(NAMES)})")


__all__ = ["Budget", "CATALOGUE", "NAMES", "Outcome", "Statement", "Violation", "explore", "named", "require",
           "render_example", "render_value", "evaluate_program", "program_outputs", "compile_model", "model_outputs",
           "translate_to_ape", "model_properties", "null_space", "unseparated", "compiled_equals_program",
           "ape_translation_equals_program", "plain_offset_invariance", "period_shift_invariance",
           "theorem12_protocol", "regular_certificates", "depth_hierarchy_programs", "plain_in_periodic_local",
           "nope_verdicts_carry_to_ape"]
