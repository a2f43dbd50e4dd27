"""The algorithmic tasks of Huang et al. (2025) and their appendix task copy_every_kth.

Formats and distributions follow the authors' public code (see docs/tasks.md): lengths uniform in
the bin, rejection of ties, distinct symbols where the task asks for them, and the random
training offsets of each task. Every sampler takes a numpy Generator.

>>> import numpy as np
>>> task = [t for t in builtin_tasks() if t.name == "sort"][0]
>>> task.example(("12", "3", "7")).tokens[-5:]
('<sep>', '3', '7', '12', '<eos>')
"""

from __future__ import annotations

import functools
import string
from collections import Counter
from typing import Sequence

import numpy as np

from . import anchors, programs, vectorised
from .types import BOS, INVALID, Format, Labels, Task, UniformOffset
from .split import Split

TRAIN_RANGE = (0, 50)
BINS = ((0, 50), (51, 100), (101, 150))
MAX_TEST_LENGTH = 150
HUANG = "Huang et al. 2025, A Formal Framework for Understanding Length Generalization in Transformers (arXiv 2410.02140)"
PLAIN_CONTAINED = "not expressible (plain C-RASP is contained in C-RASP[periodic, local]; see APE)"
"""Why a task without an APE program has no NoPE one either."""

THEOREM_12_STATEMENT = (
    "Theorem 12 of Huang et al. (2025): a Limit Transformer with PERIODIC and LOCAL (so every "
    "C-RASP[periodic, local] program) lets Alice, holding the first half of the input, send O(log N) "
    "bits from which Bob computes every output on the second half."
)


def offset_up_to(room) -> UniformOffset:
    """Training offset uniform in [0, room(length, tokens)] as in the published code."""
    return UniformOffset(room)


# ---------------------------------------------------------------- samplers and references


def _untied_bits(length: int, rng: np.random.Generator) -> list[str]:
    while True:
        zeros = int(rng.integers(0, length + 1))
        if zeros != length - zeros:
            break
    bits = ["0"] * zeros + ["1"] * (length - zeros)
    rng.shuffle(bits)
    return bits


def _majority_bit(bits: Sequence[str]) -> str:
    return "0" if bits.count("0") > bits.count("1") else "1"


def _sample_majority(letters: Sequence[str]):
    def sample(length, rng):
        while True:
            x = [letters[k] for k in rng.integers(0, len(letters), size=length)]
            top = Counter(x).most_common(2)
            if len(top) < 2 or top[0][1] > top[1][1]:
                return tuple(x)
    return sample


def _unique_most_common(x) -> bool:
    top = Counter(x).most_common(2)
    return len(x) > 0 and (len(top) < 2 or top[0][1] > top[1][1])


def _interleave_length(low: int, high: int, rng, period: int = 3) -> int:
    # The published code draws a total length from [max(3, low), high], rounds it to a multiple
    # of the period and nudges it back into the bin.
    low = max(period, low)
    m = round(int(rng.integers(low, high + 1)) / period)
    if m * period > high:
        m -= 1
    if m * period < low:
        m += 1
    return m * period


def _sample_interleave(length: int, rng, period: int = 3) -> tuple[str, ...]:
    streams = [_untied_bits(length // period, rng) for _ in range(period)]
    return tuple(bit for group in zip(*streams) for bit in group)


def _interleave_answer(x, period: int = 3) -> tuple[str, ...]:
    return tuple(_majority_bit(x[k::period]) for k in range(period))


def _interleave_valid(x, period: int = 3) -> bool:
    return (len(x) % period == 0 and len(x) > 0
            and all(x[k::period].count("0") * 2 != len(x) // period for k in range(period)))


def _distinct(symbols: Sequence[str]):
    def sample(length, rng):
        return tuple(symbols[k] for k in rng.choice(len(symbols), size=length, replace=False))
    return sample


def _iid(symbols: Sequence[str]):
    def sample(length, rng):
        return tuple(symbols[k] for k in rng.integers(0, len(symbols), size=length))
    return sample


def _sample_parity(length: int, rng) -> tuple[str, ...]:
    ones = int(rng.integers(0, length + 1))
    bits = ["1"] * ones + ["0"] * (length - ones)
    rng.shuffle(bits)
    return tuple(bits)


def _sample_addition(length: int, rng) -> tuple[str, ...]:
    first = int(rng.integers(1, length - 3 + 1))
    second = length - 2 - first

    def operand(size):
        if size > 1:
            return ["1", *("01"[int(v)] for v in rng.integers(0, 2, size=size - 1))]
        return ["01"[int(rng.integers(0, 2))]]

    return (*operand(first), "+", *operand(second), "=")


def _addition_operands(x) -> tuple[str, str]:
    text = "".join(x)
    left, right = text[:-1].split("+")
    return left, right


def _addition_answer(x) -> tuple[str, ...]:
    left, right = _addition_operands(x)
    return tuple(bin(int(left, 2) + int(right, 2))[2:])


def _addition_valid(x) -> bool:
    text = "".join(x)
    if not text.endswith("=") or text.count("+") != 1 or "=" in text[:-1]:
        return False
    left, right = text[:-1].split("+")
    well = lambda s: s != "" and set(s) <= {"0", "1"} and (s == "0" or s == "1" or s[0] == "1")  # noqa: E731
    return well(left) and well(right)


# ---------------------------------------------------------------- vectorised references
# Each maps symbol ids (rows of a batch, ids index the task's symbols) to one int64 row per input
# numbering its answer, INVALID outside the domain (see Task.batch_answer).


def _where_valid(valid: np.ndarray, codes: np.ndarray) -> np.ndarray:
    codes = codes.reshape(len(valid), -1).astype(np.int64)
    return np.where(valid[:, None], codes, INVALID)


def _batch_majority(ids: np.ndarray, symbols: int) -> np.ndarray:
    counts = np.stack([(ids == s).sum(axis=1, dtype=np.int32) for s in range(symbols)], axis=1)
    top = counts.max(axis=1)
    unique = (counts == top[:, None]).sum(axis=1) == 1
    return _where_valid(unique & (ids.shape[1] > 0), counts.argmax(axis=1))


def _batch_copy(ids: np.ndarray) -> np.ndarray:
    return ids if ids.shape[1] else np.full((len(ids), 1), INVALID, dtype=np.int64)


def _batch_parity(ids: np.ndarray) -> np.ndarray:
    return (ids.sum(axis=1, dtype=np.int32) % 2)[:, None].astype(np.int64)


def _batch_interleave(ids: np.ndarray, period: int = 3) -> np.ndarray:
    length = ids.shape[1]
    if length == 0 or length % period:
        return np.full((ids.shape[0], 1), INVALID, dtype=np.int64)
    ones = np.stack([ids[:, k::period].sum(axis=1) for k in range(period)], axis=1)
    untied = (2 * ones != length // period).all(axis=1)
    majority = (2 * ones > length // period).astype(np.int64)
    return _where_valid(untied, majority @ (2 ** np.arange(period)))


def _batch_addition(ids: np.ndarray) -> np.ndarray:
    """Binary ``op1 + op2 =`` (symbols 0, 1, +, =): the sum numbers the answer."""
    rows, length = ids.shape
    if length < 4:
        return np.full((rows, 1), INVALID, dtype=np.int64)
    if length > 64:  # operands of up to 61 bits keep the sum in int64; longer ones use the Python reference
        raise NotImplementedError("binary operands beyond 61 bits")
    plus = ids == 2
    at = plus.argmax(axis=1)
    column = np.arange(length)[None, :]
    in_first = column < at[:, None]
    in_second = (column > at[:, None]) & (column < length - 1)
    ok = (plus.sum(axis=1) == 1) & (ids[:, -1] == 3) & ((ids[:, :-1] < 2) | plus[:, :-1]).all(axis=1)
    first_size, second_size = at, length - 2 - at
    ok &= (first_size >= 1) & (second_size >= 1)
    ok &= (first_size == 1) | (ids[:, 0] == 1)
    ok &= (second_size == 1) | (ids[np.arange(rows), np.minimum(at + 1, length - 1)] == 1)
    bit = np.where(ids < 2, ids, 0).astype(np.int64)
    first = (bit * in_first) << np.where(in_first, at[:, None] - 1 - column, 0)
    second = (bit * in_second) << np.where(in_second, length - 2 - column, 0)
    return _where_valid(ok, first.sum(axis=1) + second.sum(axis=1))


# ---------------------------------------------------------------- copy_every_kth


def _copy_kth_length(k: int):
    def draw(low: int, high: int, rng) -> int:
        # The published code draws a length from [low', high] with
        # low' = max(k, low) // k * k + (k - 1), then rounds it to one below a multiple of k.
        first = max(k, low) // k * k + (k - 1)
        drawn = int(rng.integers(first, high + 1))
        return (drawn + 1) // k * k - 1
    return draw


def copy_every_kth(k: int, vocabulary: int, bins: tuple[tuple[int, int], ...], name: str) -> Task:
    """Copy every k-th of distinct symbols (Huang et al. 2025, appendix); see docs/tasks.md."""
    symbols = tuple(str(v) for v in range(vocabulary))
    max_length = bins[-1][1]
    adjusted_max = (max_length + 1) // k * k - 1
    n_positions = 3 + adjusted_max + len(range(0, adjusted_max - (k - 1), k))

    def sample(length, rng):
        return _distinct(symbols)(length - (k - 1), rng)

    span = "short" if vocabulary == 150 else "long"
    no_program = {"nope": "no plain C-RASP program: the output after each token is the input "
                          f"symbol exactly {k} positions further on, which needs the local guard "
                          f"i - j = {k}; Huang et al. report NoPE failing (appendix)"}
    return Task(
        name=name,
        family="algorithmic",
        format=Format.SEQ2SEQ,
        symbols=symbols,
        outputs=symbols,
        sample_input=sample,
        answer=lambda x: tuple(x[::k]),
        valid=lambda x: len(set(x)) == len(x) and len(x) % k == 0 and len(x) > 0,
        train_range=bins[0],
        bins=bins,
        min_length=2 * k - 1,
        max_length=(vocabulary + k - 1 + 1) // k * k - 1,
        length_rule=_copy_kth_length(k),
        train_offset=offset_up_to(lambda length, tokens: n_positions - tokens),
        n_positions=n_positions,
        prefix=(BOS, *(["#"] * (k - 1))),
        labels=Labels(True, None),
        programs={"ape": functools.partial(programs.copy_with_stride, symbols, k)},
        no_program=no_program,
        anchors=anchors.copy_every_kth(k, span),
        description=f"copy every {k}-th of L - {k - 1} distinct symbols (vocabulary {vocabulary}); "
                    f"the input follows {k - 1} filler tokens '#'",
        reference=HUANG + ", appendix (copy every k-th token)",
    )


# ---------------------------------------------------------------- the suite


def builtin_tasks() -> list[Task]:
    """The algorithmic tasks of Huang et al. (2025), in the paper's order, then copy_every_kth."""
    letters = tuple(string.ascii_lowercase)
    numbers = tuple(str(v) for v in range(MAX_TEST_LENGTH))
    majority_offset = offset_up_to(lambda length, tokens: MAX_TEST_LENGTH - length)
    copy_offset = offset_up_to(lambda length, tokens: (MAX_TEST_LENGTH - length) * 2)

    def labelled(name):
        ape, nope = anchors.paper_labels(name)
        return Labels(ape, nope)

    tasks = [
        Task(
            name="bin_majority", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=vectorised.untied_bits,
            symbols=("0", "1"), outputs=("0", "1"),
            sample_input=lambda n, rng: tuple(_untied_bits(n, rng)),
            answer=lambda x: (_majority_bit(x),),
            valid=lambda x: len(x) > 0 and x.count("0") * 2 != len(x),
            n_positions=MAX_TEST_LENGTH + 4, train_range=TRAIN_RANGE, bins=BINS, train_offset=majority_offset,
            labels=labelled("bin_majority"),
            programs={"ape": lambda: programs.majority(["0", "1"]),
                      "nope": lambda: programs.majority(["0", "1"])},
            anchors=anchors.algorithmic("bin_majority"),
            description="the majority bit of L bits with #0 != #1", reference=HUANG,
            batch_answer=functools.partial(_batch_majority, symbols=2),
        ),
        Task(
            name="majority", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=functools.partial(vectorised.unique_majority, symbols=len(letters)),
            symbols=letters, outputs=letters,
            sample_input=_sample_majority(letters), answer=lambda x: (Counter(x).most_common(1)[0][0],),
            valid=_unique_most_common,
            n_positions=MAX_TEST_LENGTH + 4, train_range=TRAIN_RANGE, bins=BINS, train_offset=majority_offset,
            labels=labelled("majority"),
            programs={"ape": lambda: programs.majority(letters), "nope": lambda: programs.majority(letters)},
            anchors=anchors.algorithmic("majority"),
            description="the unique most frequent of L letters", reference=HUANG,
            batch_answer=functools.partial(_batch_majority, symbols=len(letters)),
        ),
        Task(
            name="bin_majority_interleave", family="algorithmic", format=Format.SEQ2SEQ,
            split=Split(block=3, description="Alice holds the first 3N bits (N of each stream), Bob the next 3N"),
            symbols=("0", "1"), outputs=("0", "1"),
            sample_input=_sample_interleave, answer=_interleave_answer, valid=_interleave_valid,
            sample_batch=vectorised.interleaved_majorities,
            n_positions=MAX_TEST_LENGTH + 6, train_range=TRAIN_RANGE, bins=BINS, min_length=3, length_rule=_interleave_length,
            train_offset=majority_offset, labels=labelled("bin_majority_interleave"),
            programs={"ape": programs.interleaved_majority},
            no_program={"nope": "no plain C-RASP program: the streams are defined by position mod 3, "
                                "which a NoPE model cannot see (plain C-RASP is invariant under the "
                                "position offset); the paper labels it not expressible for NoPE"},
            anchors=anchors.algorithmic("bin_majority_interleave"),
            description="3 untied bit streams of length L/3 interleaved; the 3 majority bits",
            reference=HUANG, batch_answer=_batch_interleave,
        ),
        Task(
            name="unique_copy", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=functools.partial(vectorised.distinct_symbols, symbols=len(numbers)),
            symbols=numbers, outputs=numbers,
            sample_input=_distinct(numbers), answer=lambda x: tuple(x),
            valid=lambda x: len(x) > 0 and len(set(x)) == len(x),
            n_positions=2 * MAX_TEST_LENGTH + 3, train_range=TRAIN_RANGE, bins=BINS, train_offset=copy_offset, max_length=len(numbers),
            labels=labelled("unique_copy"),
            programs={"ape": functools.partial(programs.copy_with_stride, numbers, 1)},
            no_program={"nope": "no plain C-RASP program: finding the successor of a symbol needs "
                                "the local guard i - j = 1; the paper labels it not expressible for NoPE"},
            anchors=anchors.algorithmic("unique_copy"),
            description="copy L distinct symbols out of 150", reference=HUANG,
        ),
        Task(
            name="repeat_copy", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=functools.partial(vectorised.independent_copy, symbols=2),
            symbols=("a", "b"), outputs=("a", "b"),
            sample_input=_iid(("a", "b")), answer=lambda x: tuple(x),
            valid=lambda x: len(x) > 0,
            n_positions=2 * MAX_TEST_LENGTH + 3, train_range=TRAIN_RANGE, bins=BINS, train_offset=copy_offset,
            labels=labelled("repeat_copy"),
            no_program={
                "ape": "not expressible: copying a string over {a, b} takes N bits of one-way "
                       "communication when Alice holds the first half, but " + THEOREM_12_STATEMENT,
                "nope": PLAIN_CONTAINED,
            },
            anchors=anchors.algorithmic("repeat_copy"),
            description="copy L symbols over {a, b}", reference=HUANG,
            batch_answer=_batch_copy,
        ),
        Task(
            name="sort", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=functools.partial(vectorised.distinct_symbols, symbols=len(numbers),
                                           sort=True),
            symbols=numbers, outputs=numbers,
            sample_input=_distinct(numbers), answer=lambda x: tuple(sorted(x, key=int)),
            valid=lambda x: len(x) > 0 and len(set(x)) == len(x),
            n_positions=2 * MAX_TEST_LENGTH + 3, train_range=TRAIN_RANGE, bins=BINS, train_offset=copy_offset, max_length=len(numbers),
            labels=labelled("sort"),
            programs={"ape": lambda: programs.sort_ascending(numbers),
                      "nope": lambda: programs.sort_ascending(numbers)},
            anchors=anchors.algorithmic("sort"),
            description="L distinct symbols out of 150, sorted by symbol id", reference=HUANG,
        ),
        Task(
            name="parity", family="algorithmic", format=Format.SEQ2SEQ,
            sample_batch=vectorised.parity_bits,
            symbols=("0", "1"), outputs=("e", "o"),
            sample_input=_sample_parity, answer=lambda x: ("e" if x.count("1") % 2 == 0 else "o",),
            valid=lambda x: True,
            n_positions=MAX_TEST_LENGTH + 4, train_range=TRAIN_RANGE, bins=BINS, min_length=0, train_offset=majority_offset,
            labels=labelled("parity"),
            no_program={
                "ape": "not expressible: PARITY is outside C-RASP[periodic, local] (the paper's label, "
                       "from its non-expressibility results); communication complexity cannot show "
                       "this, since one bit of communication suffices for parity",
                "nope": PLAIN_CONTAINED,
            },
            anchors=anchors.algorithmic("parity"),
            description="'e' if L bits hold an even number of 1s, else 'o' (L may be 0)", reference=HUANG,
            batch_answer=_batch_parity,
        ),
        Task(
            name="addition", family="algorithmic", format=Format.SEQ2SEQ,
            split=Split(("0", "1"), middle=("+",), after=("=",),
                        description="Alice holds the first operand, Bob the second (N bits each, MSB first)"),
            symbols=("0", "1", "+", "="), outputs=("0", "1"),
            sample_input=_sample_addition, answer=_addition_answer, valid=_addition_valid,
            sample_batch=vectorised.binary_sums,
            n_positions=2 * MAX_TEST_LENGTH, train_range=TRAIN_RANGE, bins=BINS, min_length=4, separator=None,
            train_offset=offset_up_to(lambda length, tokens: 2 * MAX_TEST_LENGTH - tokens),
            labels=labelled("addition"),
            no_program={
                "ape": "not expressible: with the sum written most significant bit first, Bob (holding "
                       "the second operand) needs about N bits about the first operand to write the "
                       "sum, but " + THEOREM_12_STATEMENT,
                "nope": PLAIN_CONTAINED,
            },
            anchors=anchors.algorithmic("addition"),
            description="op1 + op2 = in binary, MSB first, no leading zeros; L counts '+' and '='; "
                        "the sum follows '=' (no <sep>)",
            reference=HUANG, batch_answer=_batch_addition,
        ),
    ]
    for k in (1, 2, 3):
        tasks.append(copy_every_kth(k, 150, BINS, f"copy_every_kth_k{k}"))
        tasks.append(copy_every_kth(k, 384, ((0, 128), (129, 256), (257, 384)), f"copy_every_kth_k{k}_long"))
    return tasks
