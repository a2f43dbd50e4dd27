"""Sequence-to-sequence tasks written the way a user writes them (none is from the suite or the
synthesis benchmark), each with its ground truth argued in a comment.

``TASKS[name]`` is the task (``@tasks.task``, kept out of the registry); ``TRUTH[name] = (ape,
nope)``: True generalizes, False does not. Below, S is the number of positions from ``<sep>`` on
(1 at ``<sep>``, t + 1 once t output tokens are written) and In_x, Out_x count x before and after
``<sep>``: each is a count of a Boolean, so a program made of comparisons of them is plain C-RASP,
and both APE and NoPE transformers length-generalize on it (Huang et al., Theorems 7 and 9).
"""

from __future__ import annotations

import tasks

from tests.user_tasks import _strings, kept

TRUTH: dict[str, tuple[bool, bool]] = {}
TASKS: dict[str, tasks.Task] = {}


def task(name, **options):
    return kept(TASKS, name, **options)


# 1. The y's, then the x's. Write y while S <= In_y, then x while S <= In_x + In_y, then <eos>.
@task("user_ys_then_xs", symbols=("x", "y"), sampler=_strings("xy"))
def ys_then_xs(x):
    return ("y",) * x.count("y") + ("x",) * x.count("x")


TRUTH["user_ys_then_xs"] = (True, True)


# 2. One "1" per b or c. Write 1 while S <= In_b + In_c.
@task("user_tally_b_and_c", symbols=("a", "b", "c"), outputs=("1",), sampler=_strings("abc"))
def tally_b_and_c(x):
    return ("1",) * (x.count("b") + x.count("c"))


TRUTH["user_tally_b_and_c"] = (True, True)


# 3. Keep the zeros. Write 0 while Out_0 < In_0.
@task("user_keep_zeros", symbols=("0", "1"), sampler=_strings("01"))
def keep_zeros(x):
    return tuple(t for t in x if t == "0")


TRUTH["user_keep_zeros"] = (True, True)


# 4. "yes" if there are more ones than zeros, else "no", then <eos>: S == 1 && In_1 > In_0.
@task("user_more_ones", symbols=("0", "1"), outputs=("yes", "no"), sampler=_strings("01"))
def more_ones(x):
    return ("yes",) if x.count("1") > x.count("0") else ("no",)


TRUTH["user_more_ones"] = (True, True)


# 5. Sort over three symbols: p while S <= In_p, q while S <= In_p + In_q, r while S <= In_p + In_q + In_r.
@task("user_sort_pqr", symbols=("p", "q", "r"), sampler=_strings("pqr"))
def sort_pqr(x):
    return tuple(sorted(x))


TRUTH["user_sort_pqr"] = (True, True)


# 6. One "1" for every two a's (rounded down): after t ones the next is 1 iff t < floor(In_a / 2),
#    that is 2 * (t + 1) <= In_a, or 2 * S <= In_a.
@task("user_half_the_as", symbols=("a", "b"), outputs=("1",), sampler=_strings("ab"))
def half_the_as(x):
    return ("1",) * (x.count("a") // 2)


TRUTH["user_half_the_as"] = (True, True)


# 7. Copy a binary string. Not C-RASP for either: at the t-th output the model must name x_t, and
#    an input of n bits has 2^n continuations to tell apart, so the communication complexity grows
#    with n (Huang et al.'s argument for copying with repeated symbols); neither generalizes.
@task("user_echo_bits", symbols=("0", "1"), sampler=_strings("01"))
def echo_bits(x):
    return tuple(x)


TRUTH["user_echo_bits"] = (False, False)


# 8. Reverse a string over {a, b}: the same argument as the copy (the output determines the input).
@task("user_mirror_ab", symbols=("a", "b"), sampler=_strings("ab"))
def mirror_ab(x):
    return tuple(reversed(x))


TRUTH["user_mirror_ab"] = (False, False)
