"""What the arithmetic tasks of the three papers share: the digits, the padding token, exact
samplers of operands and the padded renderings of numbers."""

from __future__ import annotations

import numpy as np

DIGITS = tuple("0123456789")
PAD = "<pad>"


def digits_exactly(n: int, rng: np.random.Generator) -> int:
    """Uniform among the numbers with exactly n digits (0-9 for n = 1); exact for any n."""
    if n == 1:
        return int(rng.integers(0, 10))
    return int("".join([str(int(rng.integers(1, 10))), *(str(int(d)) for d in rng.integers(0, 10, size=n - 1))]))


def below_power(n: int, rng: np.random.Generator) -> int:
    """Uniform in [0, 10^n); exact for any n."""
    return int("".join(str(int(d)) for d in rng.integers(0, 10, size=n)) or "0")


def d_n_pair(n: int, rng: np.random.Generator) -> tuple[int, int]:
    """Xu et al.'s D_n: one operand (either, with equal chance) has exactly n digits, the other < 10^n."""
    exact, other = digits_exactly(n, rng), below_power(n, rng)
    return (exact, other) if rng.integers(0, 2) == 0 else (other, exact)


def digit_count(value: int) -> int:
    """The number of digits of ``value``."""
    return len(str(value))


def all_digits(x) -> bool:
    """Whether ``x`` is a nonempty string of digits."""
    return len(x) > 0 and all(t in DIGITS for t in x)


def reversed_padded(value: int, width: int) -> tuple[str, ...]:
    """``value`` zero-padded to ``width`` digits, least significant first."""
    return tuple(str(value).zfill(width)[::-1])


def left_padded(value: int, width: int) -> tuple[str, ...]:
    """``value`` left-padded with :data:`PAD` to ``width`` tokens."""
    digits = str(value)
    return (*[PAD] * (width - len(digits)), *digits)
