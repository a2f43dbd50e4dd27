"""Published results shipped with the package (``tasks/data/*.csv``; each file cites its source).

>>> rows = read("huang2025_algorithmic.csv")
>>> rows[0]["task"], rows[0]["variant"], rows[0]["bin3"]
('bin_majority', 'ape', '0.9996')
"""

from __future__ import annotations

import csv
import functools
import io
from importlib import resources

from .types import Anchor


@functools.cache
def read(name: str) -> tuple[dict[str, str], ...]:
    """Rows of a shipped anchor file; lines starting with ``#`` are its citation header."""
    text = resources.files("tasks").joinpath("data", name).read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    header, *rows = list(csv.reader(io.StringIO(body)))
    return tuple(dict(zip(header, _rejoin_first(row, len(header)))) for row in rows if row)


def _rejoin_first(row: list[str], width: int) -> list[str]:
    """The published files leave commas unquoted in the first column ("{a,b}*d{b,c}*"): rejoin them."""
    extra = len(row) - width
    return [",".join(row[:extra + 1]), *row[extra + 1:]] if extra > 0 else row


def citation(name: str) -> str:
    """The citation header of an anchor file."""
    text = resources.files("tasks").joinpath("data", name).read_text(encoding="utf-8")
    return " ".join(line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#"))


def _number(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def algorithmic(task: str) -> tuple[Anchor, ...]:
    """Huang et al.'s accuracy per bin for an algorithmic task, one anchor per variant."""
    return tuple(
        Anchor(row["variant"], tuple(_number(row[b]) for b in ("bin1", "bin2", "bin3")),
               f"{row['config']} lr {row['lr']}", "huang2025")
        for row in read("huang2025_algorithmic.csv") if row["task"] == task
    )


def copy_every_kth(k: int, span: str) -> tuple[Anchor, ...]:
    """Huang et al.'s appendix results for copy_every_kth (``span`` is "short" or "long")."""
    return tuple(
        Anchor(row["variant"], tuple(_number(row[b]) for b in ("bin1", "bin2", "bin3")), "", "huang2025")
        for row in read("huang2025_copy_every_kth.csv") if int(row["k"]) == k and row["range"] == span
    )


def paper_labels(task: str) -> tuple[bool, bool] | None:
    """(APE, NoPE) expressibility labels in Huang et al.: an algorithmic task or a formal language."""
    labels = {row["variant"]: row["expressible"] == "yes"
              for row in read("huang2025_algorithmic.csv") if row["task"] == task}
    if labels:
        return labels["ape"], labels["nope"]
    for row in read("huang2025_formal_languages.csv"):
        if row["language"] == task:
            return row["expressible_ape"] == "yes", row["expressible_nope"] == "yes"
    return None


DEPTH = "yang2025_depth.csv"


def depth_hierarchy() -> dict[tuple[str, int], float]:
    """Yang, Cadilhac & Chiang's accuracy (percent) of NoPE transformers on L_k by depth:
    {(language, depth): accuracy}, for the rows of their Figure 2 that could be read.

    >>> depth_hierarchy()[("L4", 1)], depth_hierarchy()[("L5", 2)]
    (21.7, 50.64)
    """
    return {(row["language"], int(key[len("depth"):])): float(value)
            for row in read(DEPTH) for key, value in row.items() if key.startswith("depth")}


FORMAL = "huang2025_formal_languages.csv"


def formal_language(language: str) -> tuple[Anchor, ...]:
    """Huang et al.'s accuracy per bin (in percent) for a formal language, APE then NoPE."""
    for row in read(FORMAL):
        if row["language"] == language:
            return tuple(
                Anchor(variant, tuple(_number(row[f"{variant}_bin{b}"]) for b in (1, 2, 3)), "", "huang2025")
                for variant in ("ape", "nope"))
    return ()
