"""Small sequence tasks written the way a user writes them, for benchmarks/synthesis.py.

Copies, sorts, counts and selections over alphabets of one to three symbols, each a seq2seq task
(``<bos> x <sep> y <eos>``) with a C-RASP program: its outputs are decided by counts of the input's
symbols, of the output's so far and of the steps taken, compared with each other. ``KNOWN[name]``
is such a program, written by hand (the benchmark verifies it), so that "not found" is the
search's failure, never the task's.

``TASKS`` maps each name to its task (kept out of the registry).
"""

from __future__ import annotations

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

    def define(reference):
        tasks.task(name, replace=True, symbols=tuple(symbols), sampler=_strings(symbols), **options)(reference)
        TASKS[name] = catalogue._REGISTRY.pop(name)
        KNOWN[name] = "\n".join(['alphabet {"<bos>", "<sep>", "<eos>"}', *header, *known]) + "\n"
        return reference
    return define


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
