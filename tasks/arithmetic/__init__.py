"""The arithmetic tasks of the seed papers: Xu et al., Duan et al., Sabbaghi et al. (formats in docs/arithmetic.md),
one module per paper (:mod:`.xu`, :mod:`.duan`, :mod:`.sabbaghi`) and :mod:`.common` for what
they share.

A task's *length* is a number of digits (``task.measure``): the longest operand's for Xu et al.
and Duan et al., the padded width class for Sabbaghi et al.

* **Xu et al. (arXiv 2407.17963)**: ``<bos> a + b = c ; <eos>`` with a, b zero-padded to 20
  digits (most significant first) and c the result zero-padded to 21 digits and reversed. Every
  sequence has the same length. Inputs of length n (the set D_n): one operand has exactly n
  digits, the other is uniform in [0, 10^n). Addition, multiplication, and both modulo p for
  p in {50, 51, 100, 101, 150, 200, 201}.
* **Duan et al. (arXiv 2310.11984)**: successor, addition, parity with a scratchpad and N x 1,
  operands zero-padded to n digits (most significant first), the output reversed.
* **Sabbaghi et al. (arXiv 2406.01895)**: encoder-only, outputs in parallel. Operands left-padded
  with ``<pad>`` to the same width, least significant digits aligned; the output sits under the
  last positions (format ALIGNED).

>>> import tasks
>>> task = tasks.get("xu_mod100_addition")
>>> example = task.example(operands_x(123, 4095, "+"))
>>> "".join(example.targets[:4]), example.length
('8100', 4)
"""

from __future__ import annotations

from ..types import Task
from .common import DIGITS, PAD
from .duan import DUAN, duan_tasks
from .sabbaghi import (SABBAGHI, TRAINING_DISTRIBUTIONS, aligned_x, cascade_pair, cascade_x, distribution_of,
                       longest_cascade, sabbaghi_tasks)
from .xu import (MODULI, OUT_WIDTH, WIDTH, XU, operands_x, set_digit, truncate_operands, xu_bins, xu_task,
                 xu_tasks)


def builtin_tasks() -> list[Task]:
    """Xu et al.'s 16 tasks, Duan et al.'s 4 and Sabbaghi et al.'s 4: addition (also with the
    complexity-balanced training distribution) and multiplication by a 3-digit and by a 1-digit
    multiplier (``sabbaghi_multiplication_1``)."""
    return [*xu_tasks(), *duan_tasks(), *sabbaghi_tasks(), sabbaghi_tasks(distribution="balanced")[0],
            sabbaghi_tasks(distribution="mixed")[0], sabbaghi_tasks(multiplier=1)[1]]


__all__ = ["builtin_tasks", "xu_task", "xu_tasks", "duan_tasks", "sabbaghi_tasks", "operands_x", "MODULI",
           "longest_cascade", "cascade_pair", "cascade_x", "aligned_x", "distribution_of", "truncate_operands",
           "set_digit", "xu_bins", "TRAINING_DISTRIBUTIONS", "DIGITS", "PAD", "WIDTH", "OUT_WIDTH", "XU", "DUAN",
           "SABBAGHI"]
