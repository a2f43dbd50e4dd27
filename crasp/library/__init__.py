"""Programs shipped with the toolkit, as ``.cr`` files.

>>> from crasp.library import load, names
>>> "dyck1" in names()
True
>>> load("dyck1").definitions[0].name
'C_open'
"""

from __future__ import annotations

import os
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command line's fast path
if TYPE_CHECKING:
    from pathlib import Path

    from ..ast import Program

_HERE = os.path.dirname(os.path.abspath(__file__))  # the programs are files beside this module


def names() -> list[str]:
    """The names of the library's programs."""
    return sorted(name[:-3] for name in os.listdir(_HERE) if name.endswith(".cr"))


def file(name: str) -> str:
    """The file of a library program, as a string."""
    if name not in names():
        raise KeyError(f"no library program named {name!r}; available: {', '.join(names())}")
    return os.path.join(_HERE, f"{name}.cr")


def path(name: str) -> Path:
    """The file of a library program."""
    from pathlib import Path

    return Path(file(name))


def load(name: str) -> Program:
    """Parse a library program."""
    from ..parser import parse

    with open(file(name), encoding="utf-8") as stream:
        return parse(stream.read(), source=f"library/{name}.cr")
