"""Repository-wide pytest hooks: the two test lanes, and a cache folder of the session's own.

`make test` runs everything. `make test-fast` runs `pytest -m "not slow"`, the edit loop's lane.
Which tests are slow is kept in one data file, tests/slow_tests.txt (one node id or node-id
prefix a line), rather than in marks scattered over the test files; this hook marks the
collected items it lists with the registered `slow` marker.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The command line keeps checked programs in a per-user cache (crasp.cache); tests and their
# subprocesses use a fresh folder instead, so a run neither reads nor leaves the user's entries.
os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp(prefix="crasp-test-cache-")
atexit.register(shutil.rmtree, os.environ["CRASP_CACHE_DIR"], ignore_errors=True)

SLOW_LIST = Path(__file__).resolve().parent / "tests" / "slow_tests.txt"


def read_slow_list(path: Path = SLOW_LIST) -> list[str]:
    """The entries of the slow list: its lines, less blank ones and `#` comment lines.

    A comment takes a whole line (a test's parameters may hold a `#`)."""
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def entry_matches(entry: str, nodeid: str) -> bool:
    """Whether a slow-list entry names this node id.

    An entry names an item when it is the item's node id, or a prefix of it that ends at a
    node boundary: a directory (`tests/fuzz/`), a file (`tests/test_gpu.py`), a class
    (`tests/test_x.py::TestY`), a test with all its parameters (`tests/test_x.py::test_y`).
    """
    if nodeid == entry:
        return True
    if entry.endswith("/"):
        return nodeid.startswith(entry)
    return nodeid.startswith(entry + "::") or nodeid.startswith(entry + "[")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    entries = read_slow_list()
    if not entries:
        return
    slow = pytest.mark.slow
    for item in items:
        if any(entry_matches(entry, item.nodeid) for entry in entries):
            item.add_marker(slow)
