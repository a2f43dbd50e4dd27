"""Framing: the beginning-of-sequence token ``<bos>`` that programs written for tasks read.

Every task presents its inputs framed, ``<bos> x ...`` (see docs/tasks.md), and its programs
read the ``<bos>``: a local guard finds the first symbol after it, a count of it tells the first
position from the others. Such a program gives another answer on the bare ``x``.

The entry points a user runs a program through (``crasp run``, :func:`crasp.run`,
:func:`limit_transformer.run`) therefore *frame* an input when the program reads ``<bos>`` (its
alphabet, as ``crasp check`` prints it, holds the token: declared, or written in an expression):
they prepend one ``<bos>``, unless the input already starts with it. The empty word becomes
``<bos>`` alone, and runs. ``raw`` (``--raw`` on the command line) runs inputs as given. A
program that does not read ``<bos>`` is never framed.

>>> frame(["a", "b"])
('<bos>', 'a', 'b')
>>> frame(["<bos>", "a"]), frame([])
(('<bos>', 'a'), ('<bos>',))
>>> frames({"<bos>", "a"}, raw=False), frames({"<bos>", "a"}, raw=True), frames({"a"}, raw=False)
(True, False, False)

This module is pure Python, without numpy: the command line's fast path imports it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command line's fast path
if TYPE_CHECKING:
    from typing import Collection, Sequence

BOS = "<bos>"
"""The beginning-of-sequence token of the tasks' inputs (``tasks.registry.BOS``)."""


def reads_bos(alphabet: Collection[str]) -> bool:
    """Whether a program of this alphabet (its declared and mentioned tokens) reads ``<bos>``."""
    return BOS in alphabet


def frames(alphabet: Collection[str], *, raw: bool) -> bool:
    """Whether inputs of a program of this alphabet are framed: it reads ``<bos>`` and ``raw`` is off."""
    return not raw and BOS in alphabet


def frame(tokens: Sequence[str]) -> tuple[str, ...]:
    """``tokens`` with ``<bos>`` first: prepended, unless the first token already is ``<bos>``."""
    if len(tokens) and tokens[0] == BOS:
        return tuple(tokens)
    return (BOS, *tokens)


def empty_reason(reads: bool, raw_option: str) -> str:
    """Why an empty input cannot run, in the spelling of the interface in use (``raw_option`` is
    ``raw=True`` in Python, ``--raw`` on the command line): an empty input is framed unless the
    program does not read ``<bos>`` or ``raw_option`` is on."""
    if reads:
        return f"with {raw_option} nothing is prepended: give '{BOS}' itself, or run without {raw_option}"
    return f"the program does not read '{BOS}', so none is prepended"
