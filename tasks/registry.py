"""Tasks: generators with references, formats, length bins, labels and their library programs.

A task draws an *input* x of a given length, computes the reference *answer*, and frames both as
the token sequence a model (or a program) sees, with the positions whose next step is checked.

>>> import numpy as np
>>> task = get("bin_majority")
>>> example = task.example(("1", "0", "1"))
>>> example.tokens
('<bos>', '1', '0', '1', '<sep>', '1', '<eos>')
>>> [(example.tokens[k], target) for k, target in zip(example.checked, example.targets)]
[('<sep>', '1'), ('1', '<eos>')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from . import catalogue
from .catalogue import all_tasks, balanced, names, register, task  # noqa: F401 - the public face
from .types import (  # noqa: F401 - the public face
    BOS, EOS, INVALID, SEP, Anchor, Dataset, Example, Format, Labels, Task, TaskError, training_bin,
)

if TYPE_CHECKING:
    from crasp.checker import CheckedProgram


def get(name: str) -> Task:
    """The registered task called ``name``; ``module:attribute`` names a Task in a module;
    ``re:ALPHABET:REGEX`` is the accept task of a regular expression (:func:`tasks.regular.regex_task`,
    e.g. ``re:ab:(ab|bba)*``).

    Importing ``module`` also registers any tasks it defines with :func:`task`; loading it, and
    every error on the way, is :func:`tasks.loading.load_task`.
    """
    if name.startswith("re:"):
        from .regular import regex_task

        alphabet, colon, expression = name[3:].partition(":")
        if not colon or not alphabet:
            raise TaskError(f"task {name!r}: a regular-expression task is written re:ALPHABET:REGEX, e.g. re:ab:(ab)*")
        return regex_task(expression, alphabet, name=name)
    registered = catalogue.registered()
    if ":" in name and name not in registered:
        from .loading import load_task

        return load_task(name)
    if name not in registered:
        aliased = [t for t in registered.values() if name in t.aliases]
        if aliased:
            return aliased[0]
        close = [n for n in registered if name.lower() in n.lower()]
        hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
        raise TaskError(f"no task named {name!r}{hint} (`crasp tasks` lists them)")
    return registered[name]


class Families:
    """The families of the registered tasks, as argparse ``choices``: read when argparse first
    asks (a usage error, ``--help``), so that building the parser does not load the suite.

    >>> "formal" in Families(), "nosuch" in Families()
    (True, False)
    """

    def __iter__(self):
        return iter(dict.fromkeys(t.family for t in all_tasks()))

    def __contains__(self, family: object) -> bool:
        return family in list(self)


def written_programs() -> Iterator[tuple[str, str, CheckedProgram]]:
    """``(group, name, checked)`` for every program written by hand: the library's (group
    ``library``) and every registered task's (group ``suite``: each of its programs once, an APE
    program that serves NoPE too counted once). The compiler's depth figures are taken over these.

    >>> next(written_programs())[:2]
    ('library', 'library/aa_star')
    """
    from crasp import check, library

    for name in library.names():
        yield "library", f"library/{name}", check(library.load(name))
    for each in all_tasks():
        written: list = []
        for scheme, program in each.programs.items():
            if program is not None and not any(program is other for other in written):
                written.append(program)
                yield "suite", f"task/{each.name}/{scheme}", check(each.program(scheme))
