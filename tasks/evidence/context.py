"""What the sources of one prediction share: the user's programs, the seed, progress, and the
results that several schemes read (a program's verification, the communication matrix)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable, TypeVar

from crasp.ast import Program

T = TypeVar("T")


@dataclass
class Context:
    """``programs``: the user's candidate programs; ``progress``: called with a line on long work;
    ``synthesis``: whether a task without a verified program gets a synthesized one."""

    programs: tuple[Program, ...] = ()
    seed: int = 0
    progress: Callable[[str], None] | None = None
    synthesis: bool = True
    notes: dict = field(default_factory=dict, repr=False)
    """Why a search found nothing, per scheme (shown with the verdict)."""
    _memo: dict = field(default_factory=dict, repr=False)

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked for, the stored value after."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def stored(self, key: Hashable, default=None):
        """What ``once`` computed for ``key`` (``default`` if nothing yet)."""
        return self._memo.get(key, default)

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)
