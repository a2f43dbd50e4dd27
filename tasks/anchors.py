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

from .registry import Anchor


@functools.cache
def read(name: str) -> tuple[dict[str, str], ...]:
    """Rows of a shipped anchor file; lines starting with ``#`` are its citation header."""
    text = resources.files("tasks").joinpath("data", name).read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return tuple(csv.DictReader(io.StringIO(body)))


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
    """(APE, NoPE) expressibility labels of an algorithmic task in Huang et al."""
    labels = {row["variant"]: row["expressible"] == "yes"
              for row in read("huang2025_algorithmic.csv") if row["task"] == task}
    return (labels["ape"], labels["nope"]) if labels else None
