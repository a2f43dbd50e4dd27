"""Tasks a user writes whose answer depends on positions: the last few symbols, a position's residue,
a factor, read at the last symbol, at every prefix (next-character sets) or as one answer token
after ``<sep>``. None is from the suite. Each has its ground truth argued in a comment;
``TRUTH[name] = (ape, nope)``, True generalizes.

The arguments: an APE "generalizes" rests on a C-RASP[periodic, local] program described in the
comment (Huang et al. 2025, Theorem 7); a NoPE "does not generalize" on the published decision of
plain C-RASP for regular languages (Yang et al. 2026, Thm 15, and the reductions of
docs/regular.md for the language read at the last position), which the comment names; an APE
"does not generalize" on counting modulo 2 (Huang et al. 2025: PARITY is not in
C-RASP[periodic, local]).
"""

from __future__ import annotations

import tasks

from . import user_tasks
from .user_tasks import _strings

TRUTH: dict[str, tuple[bool, bool]] = {}
TASKS: dict[str, tasks.Task] = {}


def task(name, **options):
    """``@tasks.task``, keeping the task here instead of in the registry."""
    return user_tasks.kept(TASKS, name, **options)


def next_sets(legal_after):
    """A next-character-set reference from ``legal_after(prefix) -> set of tokens``: one set per
    prefix, the empty one first."""
    return lambda x: tuple(frozenset(legal_after(tuple(x[:k]))) for k in range(len(x) + 1))


# 1. The second symbol from the end is b. APE: a local guard reads position i - 1 at the last
#    symbol (#[i - j == 1] "b" >= 1). NoPE: read at the last position, the right quotient by a is
#    (a|b)*b, which fails R^omega under the end-of-sequence convention (Yang et al. 2026, Thm 13/14).
@task("pos_second_last_b", symbols=("a", "b"), format="accept", sampler=_strings("ab"), min_length=2,
      valid=lambda x: len(x) >= 2)
def second_last_b(x):
    return x[-2] == "b"


TRUTH["pos_second_last_b"] = (True, False)


# 2. Every symbol at an odd position (the 1st, 3rd, ...) is a. APE: "i mod 2" with the position of
#    <bos> gives the parity, and a count of b's at odd positions compared with 0 decides. NoPE: the
#    word "a" permutes the two live states of the minimal automaton (a non-trivial group), so the
#    language is not aperiodic and outside C-RASP.
@task("pos_odd_positions_a", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def odd_positions_a(x):
    return all(s == "a" for s in x[0::2])


TRUTH["pos_odd_positions_a"] = (True, False)


# 3. The length is a multiple of 3. APE: the last position's residue mod 3, relative to <bos>. NoPE:
#    any symbol permutes three states cyclically: a group, outside C-RASP.
@task("pos_length_div3", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def length_div3(x):
    return len(x) % 3 == 0


TRUTH["pos_length_div3"] = (True, False)


# 4. The word ends in "c a". APE: local guards at offsets 0 and 1 of the last symbol. NoPE: the
#    right quotient by a, "the word ends in c", fails R^omega under the end-of-sequence convention.
@task("pos_ends_ca", symbols=("a", "b", "c"), format="accept", sampler=_strings("abc"))
def ends_ca(x):
    return tuple(x[-2:]) == ("c", "a")


TRUTH["pos_ends_ca"] = (True, False)


# 5. No two equal symbols next to each other. APE: a count of positions that equal their
#    predecessor (local guard at offset 1), compared with 0. NoPE: the right quotient by a (words
#    without equal neighbours that do not end in a) fails R^omega under the end-of-sequence
#    convention.
@task("pos_no_repeat", symbols=("a", "b", "c"), format="accept", sampler=_strings("abc"))
def no_repeat(x):
    return all(x[k] != x[k + 1] for k in range(len(x) - 1))


TRUTH["pos_no_repeat"] = (True, False)


# 6. The number of b's is odd: counting modulo 2, outside C-RASP[periodic, local] (the PARITY
#    argument), so neither scheme.
@task("pos_odd_b", symbols=("a", "b"), format="accept", sampler=_strings("ab"))
def odd_b(x):
    return x.count("b") % 2 == 1


TRUTH["pos_odd_b"] = (False, False)


# 7. Next-character sets of "no factor aa" over {a, b}: b and <eos> are always legal after a word
#    of the language, a only when the word does not end in a; nothing after a word that contains
#    aa. APE: the legal sets follow from "aa occurred" (a count of a's preceded by a, local) and the
#    last symbol (offset 0). NoPE: the words after which b is legal are the words without aa, read
#    at the last position; its right quotient by b is the same language, (b|ab)*(a|()), which fails
#    R^omega under the end-of-sequence convention.
def _no_aa(prefix):
    word = "".join(prefix)
    if "aa" in word:
        return set()
    return {"b", "<eos>"} | ({"a"} if not word.endswith("a") else set())


@task("pos_next_no_aa", symbols=("a", "b"), format="next-set", sampler=_strings("ab"), min_length=0)
def next_no_aa(x):
    return next_sets(_no_aa)(x)


TRUTH["pos_next_no_aa"] = (True, False)


# 8. Next-character sets of (ab)* over {a, b} (a control without positions): after a word of (ab)*,
#    a and <eos>; after such a word followed by a, b; otherwise nothing. The three languages, (ab)*
#    for a and <eos> and (ab)*a for b, are in plain C-RASP by the decision procedure (Yang et al.
#    2026, Thm 15), so NoPE generalizes (Huang et al. 2025, Theorem 9) and APE with it.
def _ab_star(prefix):
    word = "".join(prefix)
    if word == "ab" * (len(word) // 2):
        return {"a", "<eos>"}
    if word == "ab" * (len(word) // 2) + "a":
        return {"b"}
    return set()


@task("pos_next_ab_star", symbols=("a", "b"), format="next-set", sampler=_strings("ab"), min_length=0)
def next_ab_star(x):
    return next_sets(_ab_star)(x)


TRUTH["pos_next_ab_star"] = (True, True)


# 9. Is the length even? One answer token after <sep>: "e" or "o". APE: the residue of <sep>'s
#    position mod 2, relative to <bos>. NoPE: the inputs answered "e" are the words of even length:
#    a group (any symbol swaps two states), outside C-RASP.
@task("pos_length_parity", symbols=("a", "b"), outputs=("e", "o"), sampler=_strings("ab"))
def length_parity(x):
    return ("e" if len(x) % 2 == 0 else "o",)


TRUTH["pos_length_parity"] = (True, False)


# 10. Does the last symbol equal the first? One answer token, y or n. APE: the first symbol is read
#     with a count ("the position after <bos>"), the last with a local guard at <sep>. NoPE: the
#     inputs answered y, a(a|b)*a|b(a|b)*b|a|b read after the input, fail R^omega.
@task("pos_first_is_last", symbols=("a", "b"), outputs=("y", "n"), sampler=_strings("ab"))
def first_is_last(x):
    return ("y" if x and x[0] == x[-1] else "n",)


TRUTH["pos_first_is_last"] = (True, False)
