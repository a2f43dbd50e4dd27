"""Strip notebooks of their outputs before committing them (needs only nbformat).

    python docs/notebooks/strip.py docs/notebooks/tour.ipynb           # strip in place
    python docs/notebooks/strip.py --check docs/notebooks/*.ipynb      # exit 1 if one is not stripped

A stripped notebook has no outputs and no execution counts, no per-cell execution records (the
timings Jupyter and nbclient write) and a kernel-neutral ``language_info``, so that running it
changes nothing a commit would see. Cell tags are kept: tests/test_notebook.py finds cells by them.

>>> from nbformat.v4 import new_code_cell, new_notebook, new_output
>>> ran = new_code_cell("1 + 1", execution_count=3, metadata={"tags": ["sum"], "execution": {}},
...                     outputs=[new_output("execute_result", {"text/plain": "2"}, execution_count=3)])
>>> notebook = new_notebook(cells=[ran])
>>> is_stripped(notebook), is_stripped(stripped(notebook))
(False, True)
>>> cell = stripped(notebook).cells[0]
>>> cell.outputs, cell.execution_count, dict(cell.metadata)
([], None, {'tags': ['sum']})
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat
from nbformat import NotebookNode

CELL_RECORDS = ("execution", "ExecuteTime", "collapsed", "scrolled")
"""Per-cell metadata written by running or viewing a notebook, not by its author."""


def stripped(notebook: NotebookNode) -> NotebookNode:
    """A copy of ``notebook`` without outputs, execution counts and execution records."""
    clean = copy.deepcopy(notebook)
    for cell in clean.cells:
        for key in CELL_RECORDS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    clean.metadata.pop("widgets", None)
    language = clean.metadata.get("language_info")
    if language is not None:
        clean.metadata["language_info"] = {"name": language.get("name", "python")}
    return clean


def is_stripped(notebook: NotebookNode) -> bool:
    """Whether stripping ``notebook`` would change nothing."""
    return stripped(notebook) == notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Strip Jupyter notebooks of outputs and execution counts.")
    parser.add_argument("notebooks", nargs="+", type=Path, help=".ipynb files")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook is not stripped")
    args = parser.parse_args(argv)
    dirty = []
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        if is_stripped(notebook):
            continue
        dirty.append(path)
        if not args.check:
            clean = stripped(notebook)
            nbformat.validate(clean)
            nbformat.write(clean, path)
    for path in dirty:
        print(f"{'not stripped' if args.check else 'stripped'}: {path}", file=sys.stderr)
    return 1 if args.check and dirty else 0


if __name__ == "__main__":
    sys.exit(main())
