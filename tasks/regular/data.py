"""The labelled regular languages shipped with the toolkit (``tasks/data/regular_languages.csv``).

847 languages with C-RASP (NoPE) labels under end-of-sequence acceptance and, where an argument
exists, C-RASP[periodic, local] (APE) labels; sources: Yang et al. 2026 (arXiv 2608.13433)
Tables 1-2, pentagonalize/crasp_reg@71daa01, bveseli/state-tracking-crasp@903fba2 and Huang et
al. 2025 (arXiv 2410.02140). See docs/regular.md for the columns and what each label rests on.

>>> rows = languages()
>>> len(rows), rows[0].regex, rows[0].nope
(847, '(aaaa)*', False)
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class LanguageRow:
    """One row: the regex (``|`` union, ``+`` one-or-more), its alphabet, the labels, the sources and
    the note (monoid class, minimal DFA size, what the label rests on)."""

    regex: str
    alphabet: str
    nope: bool
    ape: bool | None
    source: str
    note: str

    @property
    def last_position_flip(self) -> bool:
        """Whether the note says the language becomes definable under last-position acceptance."""
        return "under last-position acceptance" in self.note


def _label(text: str) -> bool | None:
    return {"true": True, "false": False}.get(text)


def _required(text: str) -> bool:
    label = _label(text)
    if label is None:
        raise ValueError(f"a NoPE label must be true or false, got {text!r}")
    return label


@functools.lru_cache(maxsize=1)
def languages() -> tuple[LanguageRow, ...]:
    """Every row of the data file, in file order."""
    text = resources.files("tasks").joinpath("data/regular_languages.csv").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    return tuple(LanguageRow(r["regex"], r["alphabet"], _required(r["nope"]), _label(r["ape"]), r["source"], r["note"])
                 for r in csv.DictReader(io.StringIO("".join(lines))))


__all__ = ["LanguageRow", "languages"]
