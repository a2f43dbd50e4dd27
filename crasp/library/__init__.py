"""Programs shipped with the toolkit, as ``.cr`` files.

>>> from crasp.library import load, names
>>> "dyck1" in names()
True
>>> load("dyck1").definitions[0].name
'C_open'
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..ast import Program
from ..parser import parse


def names() -> list[str]:
    """The names of the library's programs."""
    return sorted(p.name[:-3] for p in resources.files(__name__).iterdir() if p.name.endswith(".cr"))


def path(name: str) -> Path:
    """The file of a library program."""
    if name not in names():
        raise KeyError(f"no library program named {name!r}; available: {', '.join(names())}")
    return Path(str(resources.files(__name__).joinpath(f"{name}.cr")))


def load(name: str) -> Program:
    """Parse a library program."""
    file = path(name)
    return parse(file.read_text(encoding="utf-8"), source=f"library/{name}.cr")
