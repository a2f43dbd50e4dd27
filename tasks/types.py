"""What a task is: its format, its examples, its labels, anchors and data-set protocol, and the
Task itself (a generator with a reference, length bins and library programs).

This module defines what a task is and imports no task; the catalogue of tasks is
:mod:`tasks.catalogue`, and :mod:`tasks.registry` is the public face of both.

>>> Dataset(10_000, 2_000).epochs
100
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from crasp.ast import Program

from .split import Split

if TYPE_CHECKING:
    from .regular.dfa import Dfa

BOS, SEP, EOS = "<bos>", "<sep>", "<eos>"
INVALID = -1
"""The code a vectorised reference gives an input outside the task's domain."""


from .findings import TaskError  # noqa: E402  (defined beside the findings, which registry re-exports)


class Format(enum.Enum):
    SEQ2SEQ = "seq2seq"
    """``<bos> x <sep> y <eos>``: the next token is checked from ``<sep>`` to the last of y."""
    NEXT_SET = "next-set"
    """The set of legal next symbols is checked at every position."""
    ACCEPT = "accept"
    """One verdict, read at the last position."""
    ALIGNED = "aligned"
    """Outputs predicted in parallel at input positions (encoder-only): ``answer(x)`` maps positions
    of ``<bos> x`` to their target token."""


Answer = Any
"""A reference answer, shaped by the task's format: the output tokens (seq2seq), one set of legal
symbols per position (next-set), a bool (accept), or (position, token) pairs (aligned)."""


@dataclass(frozen=True)
class Example:
    """A framed example: ``targets[n]`` is the target at 0-based position ``checked[n]``.

    A target is the next token (seq2seq), the frozenset of legal next symbols (next-set) or the
    verdict (accept). ``length`` is the task's length L of the input; ``offset`` the position
    offset the example is presented at (token k at absolute position offset + k).
    """

    tokens: tuple[str, ...]
    checked: tuple[int, ...]
    targets: tuple
    length: int
    offset: int = 0


@dataclass(frozen=True)
class UniformOffset:
    """Training offsets uniform in [0, room] (0 where the room is negative), the room a function of
    an example's length and its count of tokens, as the published code draws them. The room is
    plain arithmetic, so it also takes tensors of lengths and counts (the training batches drawn
    on a device).

    >>> rule = UniformOffset(lambda length, tokens: 10 - tokens)
    >>> rule(Example(("a",) * 4, (), (), 3), np.random.default_rng(0)) in range(7)
    True
    """

    room: Callable[[Any, Any], Any]

    def __call__(self, example: Example, rng: np.random.Generator) -> int:
        return int(rng.integers(0, max(int(self.room(example.length, len(example.tokens))), 0) + 1))


NO_OFFSET = UniformOffset(lambda length, tokens: 0)
"""Every training example at offset 0."""


@dataclass(frozen=True)
class Labels:
    """The source paper's expressibility labels (None where the paper gives none)."""

    ape: bool | None
    nope: bool | None


@dataclass(frozen=True)
class Anchor:
    """A published result: accuracy per length bin for one model variant."""

    variant: str
    bins: tuple[float | str, ...]
    config: str = ""
    source: str = ""


@dataclass(frozen=True)
class Dataset:
    """The published data-set protocol: sizes, whether duplicate inputs are dropped, and the
    training epochs the paper ran."""

    train_size: int
    test_size: int
    unique: bool = True
    epochs: int = 100


@dataclass(frozen=True)
class Task:
    """One task of the suite (or a user's). See :func:`register`.

    ``sample_input(length, rng)`` draws x with exactly the published distribution for that
    length; ``answer(x)`` is the reference output tokens (seq2seq), or for next-set tasks the
    tuple of legal-next sets after each prefix; ``valid(x)`` says whether x is in the task's
    domain (used to enumerate inputs exhaustively); ``draw_length(low, high, rng)``, where given,
    draws a length for the bin [low, high] as the published code does (else uniformly);
    ``train_offset(example, rng)`` draws the published random position offset of training (a
    :class:`UniformOffset` wherever training batches may be drawn on a device).
    ``max_length`` bounds the lengths a task can produce, where it has a bound. ``programs`` maps
    "ape"/"nope" to a program factory; a missing entry has its reason in ``no_program``.
    ``sample_window(low, high, rng)``, where given, draws an input for the length window
    [low, high] exactly as the published generator does (it replaces draw_length + sample_input
    for bins and training); ``dataset`` is the published data-set protocol; ``aliases`` are other
    names (the paper's spelling) that :func:`get` accepts. ``measure(x)``, where given, is the length
    in the task's own unit (digits for arithmetic; default: symbols); ``enumerate_inputs(n)``, where
    given, lists every input of length at most n for exhaustive checks (default: all strings).
    ``batch_answer(ids)``, where given, is the reference vectorised for the communication checker:
    ``ids[b, k]`` indexes ``symbols``, and row b of the int64 result numbers the outputs of input b
    (the answer for seq2seq and accept tasks, the next-set after each prefix, the empty one
    first, for next-set tasks) so that rows are equal exactly when the outputs are; an input
    outside the task's domain gets a row of :data:`INVALID`. It may raise NotImplementedError
    for inputs it does not cover; the checker then calls ``answer``. ``n_positions``, where given,
    is the size of the positional table the published code trains with (training offsets and the
    longest test sequence fit in it). ``modulus`` is the modulus of a modular-arithmetic answer;
    ``split``, where set, is how the communication checker cuts an input between Alice and Bob
    (default: the first N symbols and the next N); ``automaton``, where set, is the exact minimal
    automaton (a :class:`tasks.regular.Dfa`) of an accept task that is a regular language, or of
    the language whose membership is a next-character-set task's ``<eos>`` target;
    ``end``, where set, is a token appended after the input of an accept task, at which the
    verdict is read (regular-expression tasks append ``<eos>``: the end-of-sequence convention of
    the algebraic theory); ``fixed_width``, where set, pads every operand to that many digits, so that every sequence has
    the same length and "longer" means nonzero digits where training had zeros (Xu et al.).
    """

    name: str
    family: str
    format: Format
    symbols: tuple[str, ...]
    outputs: tuple[str, ...]
    sample_input: Callable[[int, np.random.Generator], tuple[str, ...]]
    answer: Callable[[tuple[str, ...]], Answer]
    valid: Callable[[tuple[str, ...]], bool]
    train_range: tuple[int, int]
    bins: tuple[tuple[int, int], ...]
    min_length: int = 1
    max_length: int | None = None
    length_rule: Callable[[int, int, np.random.Generator], int] | None = None
    train_offset: Callable[[Example, np.random.Generator], int] = NO_OFFSET
    prefix: tuple[str, ...] = (BOS,)
    separator: str | None = SEP
    labels: Labels = Labels(None, None)
    programs: dict[str, Callable[[], Program]] = field(default_factory=dict, compare=False)
    no_program: dict[str, str] = field(default_factory=dict)
    anchors: tuple[Anchor, ...] = ()
    description: str = ""
    reference: str = ""
    sample_window: Callable[[int, int, np.random.Generator], tuple[str, ...]] | None = None
    measure: Callable[[tuple[str, ...]], int] | None = None
    enumerate_inputs: Callable[[int], Iterable[tuple[str, ...]]] | None = None
    dataset: Dataset | None = None
    aliases: tuple[str, ...] = ()
    batch_answer: Callable[[np.ndarray], np.ndarray] | None = field(default=None, compare=False)
    n_positions: int | None = None
    split: Split | None = None
    automaton: Dfa | None = field(default=None, compare=False)
    end: str | None = None
    modulus: int | None = None
    fixed_width: int | None = None
    protocol: str | None = None
    """The paper whose training protocol trains this task ("xu", "duan", "sabbaghi"); None: the suite's."""
    operation: str | None = None
    """The arithmetic operation the task computes ("addition", "multiplication", ...), where there is one."""
    distribution: str | None = None
    """The named training distribution, where the paper defines several (Sabbaghi et al.'s "uniform",
    "balanced", "mixed")."""
    sample_batch: Callable[..., object] | None = field(default=None, compare=False)
    """``sample_batch(draws, low, high)``, where given: one training example per entry of ``draws``
    (a :class:`tasks.keyed_random.Draws`) for the length window [low, high], drawn at once as tensor
    operations on the draws' device (a :class:`tasks.vectorised.Drawn`), with the distribution of
    ``sample_input``, ``draw_length`` and ``train_offset``."""
    scaffold: tuple[tuple[str, bool], ...] | None = None
    """Duan et al.'s attention-bias scaffold: the source line families each output reads, as
    (family, moving) pairs (see :mod:`validation.models.attention_bias`); None where none is known."""

    @property
    def training_bin(self) -> int:
        """The index of the bin a run must learn: see :func:`training_bin`."""
        return training_bin(self.train_range, self.bins)

    @property
    def alphabet(self) -> tuple[str, ...]:
        """Every token an example can contain."""
        extra = [*self.prefix, *([self.separator] if self.separator else []), *([self.end] if self.end else []), EOS]
        seen = dict.fromkeys([*extra, *self.symbols, *self.outputs])
        return tuple(seen)

    def example(self, x: Iterable[str], offset: int = 0) -> Example:
        """Frame input ``x`` with its reference answer.

        The example's length is that of x plus any filler tokens after ``<bos>`` (copy_every_kth).
        """
        x = tuple(x)
        length = self.measure(x) if self.measure else len(x) + len(self.prefix) - 1
        if self.format is Format.SEQ2SEQ:
            answer = tuple(self.answer(x))
            head = (*self.prefix, *x, *([self.separator] if self.separator else []))
            tokens = (*head, *answer, EOS)
            checked = tuple(range(len(head) - 1, len(tokens) - 1))
            return Example(tokens, checked, (*answer, EOS), length, offset)
        if self.format is Format.NEXT_SET:
            sets = tuple(self.answer(x))
            tokens = (*self.prefix, *x)
            return Example(tokens, tuple(range(len(tokens))), sets, length, offset)
        tokens = (*self.prefix, *x, *([self.end] if self.end and self.format is Format.ACCEPT else []))
        if self.format is Format.ALIGNED:
            targets = dict(self.answer(x))
            return Example(tokens, tuple(targets), tuple(targets.values()), length, offset)
        return Example(tokens, (len(tokens) - 1,), (bool(self.answer(x)),), length, offset)

    def sample(self, length: int, rng: np.random.Generator, *, train: bool = False) -> Example:
        """A random example of length ``length``; training examples get the published offset."""
        if length < self.min_length:
            raise TaskError(f"task {self.name!r} has no inputs of length {length} (minimum {self.min_length})")
        example = self.example(self.sample_input(length, rng))
        return self._at_train_offset(example, rng) if train else example

    def draw_length(self, low: int, high: int, rng: np.random.Generator) -> int:
        """A length drawn as the published code draws one for the bin [low, high]."""
        if self.length_rule is not None:
            return self.length_rule(low, high, rng)
        return int(rng.integers(max(low, self.min_length), high + 1))

    def sample_bin(self, low: int, high: int, count: int, rng: np.random.Generator) -> list[Example]:
        """``count`` test examples (offset 0) drawn for the bin [low, high] as published."""
        return [self._draw(low, high, rng) for _ in range(count)]

    def sample_train(self, rng: np.random.Generator) -> Example:
        """One training example: drawn for the training range, at the published offset."""
        return self._at_train_offset(self._draw(*self.train_range, rng), rng)

    def sample_train_batch(self, draws):
        """One training example per entry of ``draws`` (a :class:`tasks.keyed_random.Draws`),
        drawn at once by ``sample_batch`` (a :class:`tasks.vectorised.Drawn`); a TaskError where
        the task has no vectorised sampler."""
        if self.sample_batch is None:
            raise TaskError(f"task {self.name!r} has no vectorised sampler of training batches")
        low, high = self.train_range
        return self.sample_batch(draws, max(low, self.min_length), high)

    def _at_train_offset(self, example: Example, rng: np.random.Generator) -> Example:
        return Example(example.tokens, example.checked, example.targets, example.length,
                       int(self.train_offset(example, rng)))

    def _draw(self, low: int, high: int, rng: np.random.Generator) -> Example:
        if self.sample_window is not None:
            return self.example(self.sample_window(low, high, rng))
        return self.sample(self.draw_length(low, high, rng), rng)

    def max_input_length(self) -> int:
        """The longest length the task can produce (distinct-symbol tasks run out of symbols)."""
        return self.max_length if self.max_length is not None else 10**9

    def program(self, scheme: str = "ape") -> Program | None:
        """The library program for "ape" (periodic/local allowed) or "nope" (plain C-RASP)."""
        factory = self.programs.get(scheme)
        return factory() if factory else None


def training_bin(train_range: Sequence[int], bins: Sequence[Sequence[int]]) -> int:
    """The index of the length bin that holds the longest training length: the bin a run must learn
    before its other bins say anything. It is the first bin for most tasks; Xu et al. train on D_n
    alone and test the shorter lengths apart, so theirs is [n, n].

    >>> training_bin((0, 50), ((0, 50), (51, 100))), training_bin((3, 3), ((1, 2), (3, 3), (4, 9)))
    (0, 1)
    """
    longest = train_range[1]
    for k, (low, high) in enumerate(bins):
        if low <= longest <= high:
            return k
    raise TaskError(f"no length bin among {tuple(map(tuple, bins))} holds the longest training length {longest}")
