"""One exception hierarchy for every error a user can cause.

Errors located in a program's source print like a compiler's::

    dyck.cr:3:5: error: undefined name 'C_opn'
        V = C_opn < C_close
            ^~~~~
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command line's fast path
if TYPE_CHECKING:
    from .ast import Loc


class CraspError(Exception):
    """Base class of all toolkit errors caused by user input.

    ``exit_status`` is what the ``crasp`` command exits with: 1 for a failure, 2 for a usage error.
    """

    exit_status = 1


class ReferenceFailure(CraspError):
    """A task's own code (its reference, domain test or sampler) raised on an input; the message
    names the input. Searches that probe inputs a task may not cover catch exactly this."""


class UsageError(CraspError):
    """A command line that cannot work: a bad combination of arguments, an unknown choice."""

    exit_status = 2


class SourceError(CraspError):
    """An error located in a program's source text."""

    kind = "error"

    def __init__(
        self,
        message: str,
        loc: Loc | None = None,
        *,
        source: str = "<program>",
        text: str | None = None,
        expected: tuple[str, ...] = (),
    ) -> None:
        self.message = message
        self.loc = loc
        self.source = source
        self.text = text
        self.expected = expected
        super().__init__(self.render())

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def column(self) -> int | None:
        return self.loc.column if self.loc else None

    @property
    def source_line(self) -> str | None:
        if self.loc is None or self.text is None:
            return None
        lines = self.text.splitlines()
        return lines[self.loc.line - 1] if 0 < self.loc.line <= len(lines) else None

    def render(self, *, kind: bool = True) -> str:
        """``file:line:column: kind: message``, what was expected, and the source line with a caret
        (``kind=False`` leaves out a plain "error", for a line that already says it)."""
        where = self.source
        if self.loc is not None:
            where += f":{self.loc.line}:{self.loc.column}"
        label = f"{self.kind}: " if kind or self.kind != "error" else ""
        out = f"{where}: {label}{self.message}"
        if self.expected:
            out += f"\n  expected {_or_list(self.expected)}"
        line = self.source_line
        if line is not None and self.loc is not None:
            start = self.loc.column - 1
            width = self.loc.end_column - self.loc.column if self.loc.end_line == self.loc.line else 1
            line, start, width = _excerpt(line, start, max(width, 1))
            out += f"\n    {line}\n    {' ' * start}^{'~' * (width - 1)}"
        return out

    def __str__(self) -> str:
        return self.render()


class CraspSyntaxError(SourceError):
    """The text is not a C-RASP program: carries what the parser expected."""

    kind = "syntax error"


class StaticError(SourceError):
    """The program parses but is not a valid C-RASP[periodic, local] program."""


class NameResolutionError(StaticError):
    """Undefined, redefined or used-before-defined names; unknown imports."""


class SortError(StaticError):
    """A count where a Boolean is needed or vice versa; non-linear arithmetic."""


class PredicateError(StaticError):
    """A positional predicate that is not periodic, or a guard that is not local."""


class OutputError(StaticError):
    """Missing, duplicated or ill-sorted outputs."""


class InputError(CraspError):
    """An input sequence a program cannot run on (unknown token, empty input).

    ``index`` (0-based, in the batch) and ``position`` (0-based, in the input) locate the culprit
    where one is known: an unknown token has both, an empty input its index."""

    index: int | None = None
    position: int | None = None


class RegistryError(CraspError):
    """A predicate registration that does not declare a true period or offset set."""


_EXCERPT = 100
"""Longest source excerpt shown under an error (longer lines are cut around the error)."""


def _excerpt(line: str, start: int, width: int) -> tuple[str, int, int]:
    """A window of ``line`` around columns [start, start + width), with the caret's new place."""
    width = min(width, _EXCERPT // 2)
    if len(line) <= _EXCERPT:
        return line, start, width
    left = max(0, min(start - 20, len(line) - _EXCERPT))
    shown = line[left:left + _EXCERPT]
    prefix = "..." if left > 0 else ""
    suffix = "..." if left + _EXCERPT < len(line) else ""
    return prefix + shown + suffix, start - left + len(prefix), width


def _or_list(items: tuple[str, ...]) -> str:
    items = tuple(items)
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


def empty_input(index: int, reason: str = "", *, where: str | None = None) -> InputError:
    """The error for input ``index`` (0-based) when it has no token; ``reason`` says why nothing
    was prepended (see :func:`crasp.framing.empty_reason`), ``where`` replaces ``input N``.

    >>> print(empty_input(1))
    input 2 is empty: a program reads its output at the last position
    """
    where = where or f"input {index + 1}"
    error = InputError(f"{where} is empty: a program reads its output at the last position"
                       + (f"; {reason}" if reason else ""))
    error.index = index
    return error


def unknown_token(index: int, tokens, position: int, known, *, where: str | None = None,
                  allow: str = "allow_unknown=True") -> InputError:
    """The error for token ``position`` of input ``index`` (both 0-based), which is not among the
    ``known`` tokens (sorted). ``where`` replaces ``input N, position K`` (the command line names
    the line of its input), ``allow`` is the option that allows it in the interface in use.

    >>> print(unknown_token(0, ["a", "z"], 1, ["a"]))
    input 1, position 2: token 'z' is not in the program's alphabet ('a'); allow it with allow_unknown=True
    """
    listed = ", ".join(repr(t) for t in known) or "none"
    where = where or f"input {index + 1}, position {position + 1}"
    error = InputError(
        f"{where}: token {tokens[position]!r} is not in the program's alphabet ({listed}); allow it with {allow}"
    )
    error.index, error.position = index, position
    return error
