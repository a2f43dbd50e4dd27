"""The languages L_k of Yang, Cadilhac & Chiang's depth hierarchy, as next-character-set tasks.

L_k is the set of words over {a, b} made of exactly k non-empty alternating blocks, the first of
a's: L_1 = a+, L_2 = a+b+, L_3 = a+b+a+, ... (Yang, Cadilhac & Chiang, "Knee-Deep in C-RASP",
NeurIPS 2025, arXiv 2506.16055; their generator, github pentagonalize/CRASP_depth). Their
experiment is a *prediction* task: a word of L_k is read after a beginning-of-sequence token, and
at every position the model says whether the prefix read so far is in L_k; a word counts as right
when every position is.

Here each L_k is a task of the suite's next-character-set format (:mod:`tasks.languages`), which
carries the same information: on a prefix p of a word of L_k that ends in the letter c, the legal
next symbols are c itself, the other letter exactly when p is not in L_k (it has fewer than k
blocks), and ``<eos>`` exactly when p is in L_k; after ``<bos>`` only ``a``. So the target at each
position and the paper's label determine each other given the current symbol, and a program for
one is a program for the other at the same depth (:func:`membership_label`, tested).

Inputs are drawn as the authors' generator draws them: a length n uniform in the window, then the
k - 1 block boundaries uniform among the n - 1 gaps, the first block of a's: uniform over the words
of L_k of length n. The domain is the set of prefixes of words of L_k.

The programs (:func:`alternating_blocks`) have count depth k - 2 for k >= 2: "the prefix has at
least m blocks" is T_1 = true and T_{m+1} = #[letter of block m+1 and T_m] >= 1 (depth m - 1), and on
the domain the prefix is in L_k exactly when the current letter is the letter of block k and
T_{k-1} holds (a prefix with k - 1 blocks ends in the other letter).

>>> import numpy as np
>>> task = depth_language(4)
>>> x = task.sample_window(4, 12, np.random.default_rng(1))
>>> len([i for i in range(1, len(x)) if x[i] != x[i - 1]]) + 1, x[0]
(4, 'a')
>>> [membership_label(s) for s in task.example(("a", "b", "a", "b")).targets]
[False, False, False, False, True]
"""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

from crasp import builder as b
from crasp.ast import Program

from . import automata
from .regular.blocks import LETTERS, YANG_CADILHAC_CHIANG, alternation, at_least_blocks, block_letter, block_table
from .types import BOS, EOS, INVALID, Dataset, Format, Labels, Task, TaskError

REFERENCE = f"{YANG_CADILHAC_CHIANG}; code github pentagonalize/CRASP_depth"
KS = tuple(range(3, 13))
"""The languages of the paper's experiment, L_3 to L_12."""
TRAIN = 50
"""The longest training length: the suite trains on the authors' shortest data bin (lengths k to 50)."""
BINS = ((TRAIN + 1, 100), (101, 150))
"""The test bins beyond training (the authors' data bins of 50 lengths)."""


def blocks(word) -> int:
    """The number of maximal blocks of equal letters in ``word`` (0 for the empty word)."""
    return sum(1 for i in range(len(word)) if i == 0 or word[i] != word[i - 1])


def in_language(word, k: int) -> bool:
    """Whether ``word`` is in L_k: exactly k alternating non-empty blocks, the first of a's."""
    return len(word) > 0 and word[0] == "a" and set(word) <= set(LETTERS) and blocks(word) == k


def is_prefix(word, k: int) -> bool:
    """Whether ``word`` is a prefix of some word of L_k (the task's domain)."""
    return (len(word) == 0 or word[0] == "a") and set(word) <= set(LETTERS) and blocks(word) <= k


def automaton(k: int) -> automata.Dfa:
    """The partial DFA of L_k (its next-character sets): state j is "j blocks read"."""
    return automata.from_table(LETTERS, 0, {k}, block_table(k))


def membership_label(target: frozenset) -> bool:
    """The paper's label (is the prefix in L_k?) read off a next-character set: ``<eos>`` legal."""
    return EOS in target


def word(n: int, k: int, rng: np.random.Generator) -> tuple[str, ...]:
    """A uniform word of L_k of length n: the k - 1 block boundaries uniform among the n - 1 gaps."""
    if n < k:
        raise TaskError(f"L_{k} has no word of length {n} (its words have at least {k} letters)")
    switches = set((rng.choice(n - 1, size=k - 1, replace=False) + 1).tolist()) if k > 1 else set()
    out, letter = [], 0
    for i in range(n):
        if i in switches:
            letter = 1 - letter
        out.append(LETTERS[letter])
    return tuple(out)


def batch_answer(k: int, dfa: automata.Dfa):
    """The vectorised reference: next-set codes, and :data:`INVALID` rows for inputs outside the
    domain (shorter than k, starting with b, or of more than k blocks)."""
    def answer(ids: np.ndarray) -> np.ndarray:
        codes = np.asarray(dfa.batch_next_sets(ids), dtype=np.int64)
        if ids.shape[1] < k:
            return np.full_like(codes, INVALID)
        changes = (np.diff(ids, axis=1) != 0).sum(axis=1) if ids.shape[1] > 1 else np.zeros(len(ids), dtype=int)
        outside = (ids[:, 0] != 0) | (changes + 1 > k)
        codes[outside] = INVALID
        return codes
    return answer


def window(k: int):
    def draw(low: int, high: int, rng: np.random.Generator) -> tuple[str, ...]:
        low = max(low, k)
        if low > high:
            raise TaskError(f"L_{k} has no word with length in [{low}, {high}]")
        return word(int(rng.integers(low, high + 1)), k, rng)
    return draw


def prefixes(k: int, max_length: int) -> Iterator[tuple[str, ...]]:
    """Every prefix of a word of L_k of length at most ``max_length``, shortest first."""
    for n in range(max_length + 1):
        if n == 0:
            yield ()
            continue
        for count in range(1, min(k, n) + 1):
            for cuts in itertools.combinations(range(1, n), count - 1):
                edges = (0, *cuts, n)
                yield tuple(itertools.chain.from_iterable((block_letter(m + 1),) * (edges[m + 1] - edges[m])
                                                          for m in range(count)))


def alternating_blocks(k: int) -> Program:
    """The next-character sets of L_k on prefixes of its words, in plain C-RASP of count depth
    max(k - 2, 0) (the module docstring says why it is right).

    >>> from crasp.checker import check
    >>> check(alternating_blocks(5)).info.depth
    3
    """
    if k < 1:
        raise TaskError(f"L_k needs k >= 1, not {k}")
    pb = b.ProgramBuilder(source=f"<L_{k}: {k} alternating blocks>")
    pb.alphabet([BOS])
    at_least = at_least_blocks(pb, k - 1)  # every prefix of the domain starts with a
    member = pb.let("Member", b.tok(block_letter(k)) & at_least[k - 1] if k > 1 else b.tok("a"))
    pb.next("a", b.tok(BOS) | b.tok("a") | (b.tok("b") & ~member))
    pb.next("b", b.tok("b") | (b.tok("a") & ~member))
    pb.next(EOS, member)
    return pb.build()


def depth_language(k: int) -> Task:
    """The task L_k (NoPE is the scheme of the paper's experiment; the program is plain C-RASP)."""
    dfa = automaton(k)
    longest = BINS[-1][1]
    program = lambda: alternating_blocks(k)  # noqa: E731
    return Task(
        name=f"L{k}",
        family="depth",
        format=Format.NEXT_SET,
        symbols=LETTERS,
        outputs=LETTERS,
        sample_input=lambda n, rng: word(n, k, rng),
        answer=dfa.next_sets,
        batch_answer=batch_answer(k, dfa),
        valid=lambda x: is_prefix(x, k),
        enumerate_inputs=lambda n: prefixes(k, n),
        train_range=(k, TRAIN),
        bins=((k, TRAIN), *BINS),
        min_length=k,
        separator=None,
        n_positions=2 * (longest + 2),
        labels=Labels(None, None),
        programs={"ape": program, "nope": program},
        description=f"L_{k}: {k} alternating non-empty blocks a+b+a+..., the label of every prefix "
                    "(next-character sets)",
        reference=REFERENCE,
        sample_window=window(k),
        dataset=Dataset(1_600, 2_000, unique=False, epochs=10),
        aliases=(f"L_{k}", f"l{k}"),
        automaton=alternation(k),
    )


def builtin_tasks() -> list[Task]:
    """L_3 to L_12."""
    return [depth_language(k) for k in KS]


__all__ = ["depth_language", "alternating_blocks", "automaton", "builtin_tasks", "in_language", "is_prefix",
           "membership_label", "blocks", "prefixes", "word", "KS", "REFERENCE"]
