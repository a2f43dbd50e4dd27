"""Argument types for the command line: values are checked where they are parsed.

An out-of-range flag is a usage error (exit 2) that names the flag, reported by argparse itself,
never a ValueError from deep inside a command.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="demo", exit_on_error=False)
>>> _ = parser.add_argument("--count", type=integer(minimum=1), default=1)
>>> parser.parse_args(["--count", "3"]).count
3
>>> integer(minimum=1)("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: 0 is less than 1
"""

from __future__ import annotations

import argparse
from typing import Callable

MAX_INTEGER = 2**62
"""The largest magnitude any integer flag accepts (positions and counts are int64 inside)."""


def integer(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for integers in [minimum, maximum] (either end optional)."""
    low = -MAX_INTEGER if minimum is None else minimum
    high = MAX_INTEGER if maximum is None else maximum

    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}")
        if value > high:
            raise argparse.ArgumentTypeError(f"{value} is more than {high}")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid integer value"
    return parse


def number(minimum: float | None = None, maximum: float | None = None) -> Callable[[str], float]:
    """An argparse ``type`` for finite real numbers in [minimum, maximum]."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{text} is less than {minimum:g}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text} is more than {maximum:g}")
        return value

    parse.__name__ = "number"
    return parse


POSITIVE = integer(minimum=1)
"""At least 1: counts of things, lengths, sizes."""
NONNEGATIVE = integer(minimum=0)
"""At least 0: seeds, offsets from the start."""
SEED = integer(minimum=0, maximum=2**32 - 1)
"""A random seed (numpy and torch take 0 .. 2**32 - 1)."""
