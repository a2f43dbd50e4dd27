"""Small sequence tasks written the way a user writes them, for benchmarks/synthesis.py.

Copies, sorts, counts and selections over alphabets of one to three symbols, each a seq2seq task
(``<bos> x <sep> y <eos>``) with a C-RASP program: its outputs are decided by counts of the input's
symbols, of the output's so far and of the steps taken, compared with each other. Then one-token
answers of three classes chosen by comparing counts (the most frequent of three letters; "x", "y"
or "z" as #a >, == or < #b), and counter languages as acceptance tasks (a^n b^n, a^n b^n c^n,
a^n b^m c^(n+m)), whose samplers give members and near misses equally often. ``KNOWN[name]``
is such a program, written by hand (the benchmark verifies it), so that "not found" is the
search's failure, never the task's.

``TASKS`` maps each name to its task (kept out of the registry).
"""

from __future__ import annotations

import numpy as np

import tasks
from tasks import catalogue

TASKS: dict[str, tasks.Task] = {}
KNOWN: dict[str, str] = {}


def _strings(symbols: str):
    return lambda n, rng: tuple(rng.choice(list(symbols), size=n))


def _task(name: str, symbols: str, known: list[str], **options):
    """Define the task and its hand-written program: ``known`` holds the outputs, over Seen (the
    separator has been seen), S (1 at the separator, t + 1 after t outputs), In_x and Out_x (the
    count of x before and after the separator)."""
    header = ['Seen = #"<sep>" >= 1', "S = #Seen"]
    header += [f'In_{x} = #("{x}" && !Seen)' for x in symbols]
    header += [f'Out_{x} = #("{x}" && Seen)' for x in options.get("outputs", symbols)]
    options.setdefault("sampler", _strings(symbols))

    def define(reference):
        tasks.task(name, replace=True, symbols=tuple(symbols), **options)(reference)
        TASKS[name] = catalogue._REGISTRY.pop(name)
        KNOWN[name] = "\n".join(['alphabet {"<bos>", "<sep>", "<eos>"}', *header, *known]) + "\n"
        return reference
    return define


def _language(name: str, symbols: str, known: list[str], member, counts):
    """An acceptance task of the language of ``member`` (a function of the input, True for its
    words) and its hand-written program (``known``: definitions and accept, over N_x = #"x"). Its
    sampler gives members and near misses equally often: ``counts(n, rng)`` draws the block sizes
    of a member of length n (None where there is none), a near miss is a word of blocks in order,
    one with two neighbours swapped, or a uniform word."""
    header = [f'N_{x} = #"{x}"' for x in symbols]

    def sample(n, rng):
        sizes = counts(n, rng) if rng.random() < 0.5 else None
        if sizes is None and rng.random() < 0.5:
            cuts = np.sort(rng.integers(0, n + 1, size=len(symbols) - 1))
            word = list(_blocks(symbols, np.diff([0, *cuts, n])))
            if n > 1 and rng.random() < 0.5:
                k = int(rng.integers(n - 1))
                word[k], word[k + 1] = word[k + 1], word[k]
            return tuple(word)
        return _strings(symbols)(n, rng) if sizes is None else _blocks(symbols, sizes)

    tasks.task(name, replace=True, symbols=tuple(symbols), format="accept", min_length=0, sampler=sample)(member)
    TASKS[name] = catalogue._REGISTRY.pop(name)
    KNOWN[name] = "\n".join(['alphabet {"<bos>"}', *header, *known]) + "\n"


def _blocks(symbols: str, sizes) -> tuple[str, ...]:
    return tuple(x for x, k in zip(symbols, sizes) for _ in range(int(k)))


@_task("sort_ab", "ab", ['next "a" = S <= In_a', 'next "b" = S > In_a && S <= In_a + In_b',
                         'next "<eos>" = S > In_a + In_b'])
def sort_ab(x):
    return tuple(sorted(x))


@_task("sort_abc", "abc", ['next "a" = S <= In_a', 'next "b" = S > In_a && S <= In_a + In_b',
                           'next "c" = S > In_a + In_b && S <= In_a + In_b + In_c',
                           'next "<eos>" = S > In_a + In_b + In_c'])
def sort_abc(x):
    return tuple(sorted(x))


@_task("sort_descending_ab", "ab", ['next "b" = S <= In_b', 'next "a" = S > In_b && S <= In_a + In_b',
                                    'next "<eos>" = S > In_a + In_b'])
def sort_descending_ab(x):
    return tuple(sorted(x, reverse=True))


@_task("keep_a", "ab", ['next "a" = Out_a < In_a', 'next "b" = false', 'next "<eos>" = Out_a >= In_a'])
def keep_a(x):
    return tuple(t for t in x if t == "a")


@_task("keep_b_of_three", "abc", ['next "b" = Out_b < In_b', 'next "a" = false', 'next "c" = false',
                                  'next "<eos>" = Out_b >= In_b'])
def keep_b_of_three(x):
    return tuple(t for t in x if t == "b")


@_task("count_a_unary", "ab", ['next "1" = S <= In_a', 'next "<eos>" = S > In_a'], outputs=("1",))
def count_a_unary(x):
    return ("1",) * x.count("a")


@_task("length_unary", "abc", ['L = #(!"<bos>" && !Seen)', 'next "1" = S <= L', 'next "<eos>" = S > L'],
       outputs=("1",))
def length_unary(x):
    return ("1",) * len(x)


@_task("surplus_a_unary", "ab", ['next "1" = S + In_b <= In_a', 'next "<eos>" = S + In_b > In_a'],
       outputs=("1",))
def surplus_a_unary(x):
    return ("1",) * max(x.count("a") - x.count("b"), 0)


@_task("copy_unary", "a", ['next "a" = S <= In_a', 'next "<eos>" = S > In_a'])
def copy_unary(x):
    return tuple(x)


@_task("majority_ab", "ab", ['next "a" = S == 1 && In_a > In_b', 'next "b" = S == 1 && In_a <= In_b',
                             'next "<eos>" = S > 1'])
def majority_ab(x):
    return ("a",) if x.count("a") > x.count("b") else ("b",)


@_task("present_symbols", "abc", ["A = In_a >= 1 && Out_a == 0", "B = !A && In_b >= 1 && Out_b == 0",
                                  "C = !A && !B && In_c >= 1 && Out_c == 0",
                                  'next "a" = A', 'next "b" = B', 'next "c" = C', 'next "<eos>" = !A && !B && !C'])
def present_symbols(x):
    return tuple(t for t in "abc" if t in x)


@_task("first_symbol_twice", "ab", ['F = #("a" && #true == 2) >= 1', 'next "a" = F && S <= 2',
                                    'next "b" = !F && S <= 2', 'next "<eos>" = S > 2'])
def first_symbol_twice(x):
    return (x[0], x[0])


def _unique_maximum(x) -> bool:
    counts = sorted((x.count(s) for s in "abc"), reverse=True)
    return counts[0] > counts[1]


def _with_unique_maximum(n, rng):
    while True:
        x = _strings("abc")(n, rng)
        if _unique_maximum(x):
            return x


@_task("most_frequent_abc", "abc", ['next "a" = S == 1 && In_a > In_b && In_a > In_c',
                                    'next "b" = S == 1 && In_b > In_a && In_b > In_c',
                                    'next "c" = S == 1 && In_c > In_a && In_c > In_b', 'next "<eos>" = S > 1'],
       sampler=_with_unique_maximum, valid=_unique_maximum)
def most_frequent_abc(x):
    return (max("abc", key=x.count),)


@_task("compare_ab_three_way", "abc", ['next "x" = S == 1 && In_a > In_b', 'next "y" = S == 1 && In_a == In_b',
                                       'next "z" = S == 1 && In_a < In_b', 'next "<eos>" = S > 1'],
       outputs=("x", "y", "z"))
def compare_ab_three_way(x):
    a, b = x.count("a"), x.count("b")
    return ("x",) if a > b else ("y",) if a == b else ("z",)


_IN_ORDER = ['Late = #("a" && N_b + N_c >= 1) + #("b" && N_c >= 1)']  # symbols after a later block's


def _counts_in_order(x, counts) -> bool:
    """x is a^i b^j c^k with (i, j, k) = counts(i, j, k)."""
    i, j, k = (x.count(s) for s in "abc")
    return tuple(x) == _blocks("abc", (i, j, k)) and counts(i, j, k)


_language("a_n_b_n", "ab", ['accept N_a == N_b && #("a" && N_b >= 1) == 0'],
          lambda x: x == _blocks("ab", (len(x) // 2,) * 2) and len(x) % 2 == 0,
          lambda n, rng: None if n % 2 else (n // 2,) * 2)
_language("a_n_b_n_c_n", "abc", [*_IN_ORDER, "accept N_a == N_b && N_b == N_c && Late == 0"],
          lambda x: _counts_in_order(x, lambda i, j, k: i == j == k),
          lambda n, rng: None if n % 3 else (n // 3,) * 3)


def _sum_sizes(n, rng):
    """The block sizes (i, j, i + j) of a random word of a^n b^m c^(n+m) of length n."""
    if n % 2:
        return None
    i = int(rng.integers(n // 2 + 1))
    return i, n // 2 - i, n // 2


_language("a_n_b_m_c_n_plus_m", "abc", [*_IN_ORDER, "accept N_a + N_b == N_c && Late == 0"],
          lambda x: _counts_in_order(x, lambda i, j, k: k == i + j), _sum_sizes)
