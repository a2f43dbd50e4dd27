"""Tasks written the way a user writes them (none is from the suite), each with its ground truth
argued in a comment, and, where a user would have one, a candidate program.

``TASKS[name]`` is the task (defined with ``@tasks.task`` as a user would, then taken out of the
registry so that tests iterating over the suite do not see it); ``TRUTH[name] = (ape, nope)``:
True generalizes, False does not; ``PROGRAMS[name]`` a program a user would pass with ``--program``.
"""

from __future__ import annotations

import numpy as np

import tasks
from tasks import catalogue


def _strings(symbols):
    return lambda n, rng: tuple(rng.choice(list(symbols), size=n))


TRUTH: dict[str, tuple[bool, bool]] = {}
PROGRAMS: dict[str, str] = {}
TASKS: dict[str, tasks.Task] = {}


def kept(store: dict, name, **options):
    """``@tasks.task``, keeping the task in ``store`` instead of in the registry (so that tests
    iterating over the suite do not see it)."""
    def define(reference):
        tasks.task(name, replace=True, **options)(reference)
        store[name] = catalogue._REGISTRY.pop(name)
        return reference
    return define


def task(name, **options):
    """``@tasks.task``, keeping the task here instead of in the registry."""
    return kept(TASKS, name, **options)


# 1. The number of a's is divisible by 3. On {a, b}^n the answer is #a mod 3 == 0: counting modulo
#    3, outside C-RASP[periodic, local] (the PARITY argument), so neither APE nor NoPE.
@task("user_a_count_div3", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def a_count_div3(x):
    return x.count("a") % 3 == 0


TRUTH["user_a_count_div3"] = (False, False)


# 2. Copy the first 8 symbols (all of them when shorter). Position k <= 8 is "#true == k + 1", a
#    count compared with a constant, so a plain C-RASP program copies them: both generalize
#    (Theorems 7 and 9), though R(N) = 2^N for N <= 8.
@task("user_copy_first8", symbols=("a", "b"), sampler=_strings("ab"))
def copy_first8(x):
    return tuple(x[:8])


TRUTH["user_copy_first8"] = (True, True)
PROGRAMS["user_copy_first8"] = "\n".join([
    'alphabet {"<bos>", "<sep>", "<eos>"}',
    'X = ("a" || "b") && #"<sep>" == 0',  # an input symbol
    'N = #X',  # the input's length, once <sep> is passed
    'T = #(#"<sep>" >= 1)',  # 1 at <sep>, t + 1 at the t-th output token
    *[f'A{k} = #("a" && #true == {k + 1}) >= 1' for k in range(1, 9)],  # x_k is at position k + 1
    'Copying = T >= 1 && T <= 8 && T <= N',
    'next "a" = Copying && (' + " || ".join(f"(T == {k} && A{k})" for k in range(1, 9)) + ")",
    'next "b" = Copying && !(' + " || ".join(f"(T == {k} && A{k})" for k in range(1, 9)) + ")",
    'next "<eos>" = T >= 1 && !Copying',
])


# 3. Contains the factor aba. An APE program checks i-2, i-1, i with a local guard. Plain C-RASP
#    does not express it: the regular-language decision (Yang et al. 2026) rejects its minimal
#    automaton; a NoPE transformer cannot tell adjacent symbols from distant ones.
@task("user_contains_aba", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def contains_aba(x):
    return "aba" in "".join(x)


TRUTH["user_contains_aba"] = (True, False)
PROGRAMS["user_contains_aba"] = ('Here = "a" && #[i - j == 1] "b" >= 1 && #[i - j == 2] "a" >= 1\n'
                                 'L = #Here >= 1')


# 4. The majority of the last three symbols is a (inputs of length >= 3). APE: local guards read
#    i, i-1, i-2. NoPE: the language's minimal automaton is outside plain C-RASP (the decider).
@task("user_majority_last3", symbols=("a", "b"), format="accept", sampler=_strings("ab"), min_length=4,
            valid=lambda x: len(x) >= 3)
def majority_last3(x):
    return x[-3:].count("a") >= 2


TRUTH["user_majority_last3"] = (True, False)
PROGRAMS["user_majority_last3"] = 'L = #[i - j in {0, 1, 2}] "a" >= 2'


# 5. More a's than b's, as one answer token: a plain count comparison, both generalize.
@task("user_more_a", symbols=("a", "b"), outputs=("y", "n"), sampler=_strings("ab"))
def more_a(x):
    return ("y" if x.count("a") > x.count("b") else "n",)


TRUTH["user_more_a"] = (True, True)
PROGRAMS["user_more_a"] = ('alphabet {"<bos>", "<sep>", "<eos>"}\nM = #"a" > #"b"\n'
                           'next "y" = "<sep>" && M\nnext "n" = "<sep>" && !M\nnext "<eos>" = !"<sep>"')


# 6. Reverse the input: Bob must write Alice's half reversed, R(N) = 2^N; no program exists
#    (Theorem 12), so neither generalizes.
@task("user_reverse", symbols=("a", "b"), sampler=_strings("ab"))
def reverse(x):
    return tuple(reversed(x))


TRUTH["user_reverse"] = (False, False)


# 7. An odd number of b's among {a, b, c}: parity of one symbol, neither.
@task("user_odd_b", symbols=("a", "b", "c"), format="accept", sampler=_strings("abc"))
def odd_b(x):
    return x.count("b") % 2 == 1


TRUTH["user_odd_b"] = (False, False)


# 8. The number of 1s is 1 mod 4, as a seq2seq answer: counting modulo 4, neither.
@task("user_ones_mod4", symbols=("0", "1"), outputs=("T", "F"), sampler=_strings("01"))
def ones_mod4(x):
    return ("T" if x.count("1") % 4 == 1 else "F",)


TRUTH["user_ones_mod4"] = (False, False)


# 9. Balanced brackets (Dyck-1): no prefix closes more than it opened and the counts are equal: a
#    plain C-RASP program (the paper's Dyck-1), both generalize.
@task("user_balanced", symbols=("(", ")"), format="accept", sampler=_strings("()"))
def balanced(x):
    depth = 0
    for t in x:
        depth += 1 if t == "(" else -1
        if depth < 0:
            return False
    return depth == 0


TRUTH["user_balanced"] = (True, True)
PROGRAMS["user_balanced"] = 'O = #"("\nC = #")"\nBad = #(C > O) >= 1\nL = !Bad && O == C'


# 10. The last symbol is b: read at the last position, "b" itself is the program (plain), both.
@task("user_ends_b", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def ends_b(x):
    return x[-1] == "b"


TRUTH["user_ends_b"] = (True, True)
PROGRAMS["user_ends_b"] = 'L = "b"'


# 11. At least 5 a's: one threshold, plain, both generalize.
@task("user_five_a", symbols=("a", "b", "c"), format="accept", sampler=_strings("abc"))
def five_a(x):
    return x.count("a") >= 5


TRUTH["user_five_a"] = (True, True)
PROGRAMS["user_five_a"] = 'L = #"a" >= 5'


# 12. Copy the input: R(N) = 2^N, neither (Theorem 12).
@task("user_copy", symbols=("x", "y", "z"), sampler=_strings("xyz"))
def copy(x):
    return tuple(x)


TRUTH["user_copy"] = (False, False)


# 13. The first symbol equals the last. Position 2 (after <bos>) is "#true == 2", so the first
#     symbol is a count; the last is read where the answer is: plain C-RASP, both generalize.
@task("user_first_is_last", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def first_is_last(x):
    return x[0] == x[-1]


TRUTH["user_first_is_last"] = (True, True)
PROGRAMS["user_first_is_last"] = 'First_a = #("a" && #true == 2) >= 1\nL = (First_a && "a") || (!First_a && "b")'


# 14. #a - #b is divisible by 3 (Tomita-6's rule on letters): a function of (#a mod 3, length mod 3)
#     that depends on #a mod 3: counting modulo 3, neither.
@task("user_diff_mod3", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def diff_mod3(x):
    return (x.count("a") - x.count("b")) % 3 == 0


TRUTH["user_diff_mod3"] = (False, False)


def rng_for_tests() -> np.random.Generator:
    return np.random.default_rng(0)
