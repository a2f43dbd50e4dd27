"""The two test lanes: `make test` runs everything, `make test-fast` runs `-m "not slow"`.

The root conftest.py marks `slow` the items that tests/slow_tests.txt lists. These tests keep that
list honest without collecting the suite: every entry must name a file or directory that exists,
and a test function, class or doctest defined in it (checked on the source with `ast`), so a
renamed or deleted test cannot silently drop its mark.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLOW_LIST = ROOT / "tests" / "slow_tests.txt"


def _root_conftest():
    spec = importlib.util.spec_from_file_location("_lanes_root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _root_conftest()


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _defined(body: list[ast.stmt], name: str) -> ast.AST | None:
    """The function, class or assignment that defines `name` in a block of statements."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
        if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == name for target in node.targets):
            return node
        if isinstance(node, (ast.If, ast.Try)):  # definitions under `if`/`try` at module level
            found = _defined(node.body + node.orelse, name)
            if found is not None:
                return found
    return None


def _resolves(path: Path, qualname: list[str]) -> bool:
    """Whether `qualname` (e.g. ["TestX", "test_y"]) is defined in the Python file `path`."""
    body: list[ast.stmt] = _tree(path).body
    for i, name in enumerate(qualname):
        node = _defined(body, name)
        if node is None:
            return False
        if i < len(qualname) - 1:
            if not isinstance(node, ast.ClassDef):
                return False
            body = node.body
    return True


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def problem(entry: str) -> str | None:
    """Why a slow-list entry names no test, or None when it names one."""
    path_part, _, rest = entry.partition("::")
    path = ROOT / path_part
    if path_part.endswith("/"):
        return None if path.is_dir() else f"no directory {path_part}"
    if not path.is_file():
        return f"no file {path_part}"
    if not rest:
        return None
    parts = rest.split("::")
    parts[-1] = re.sub(r"\[.*\]$", "", parts[-1])
    if path.suffix == ".md":  # a Markdown file is one doctest item, named after the file
        return None if parts == [path.name] else f"{path_part} has one item, {path.name}"
    if path.suffix != ".py":
        return f"{path_part} is neither Python nor Markdown"
    module = _module_name(path)
    if len(parts) == 1 and (parts[0] == module or parts[0].startswith(module + ".")):
        # a doctest: its item is named by the module's dotted name and the object's qualified name
        if parts[0] == module:
            return None
        qualname = parts[0][len(module) + 1:].split(".")
        return None if _resolves(path, qualname) else f"{path_part} defines no {'.'.join(qualname)}"
    return None if _resolves(path, parts) else f"{path_part} defines no {'::'.join(parts)}"


def test_slow_list_exists_and_has_a_header():
    text = SLOW_LIST.read_text(encoding="utf-8")
    assert text.startswith("#"), "the slow list starts with a comment saying how it was produced"
    assert conftest.read_slow_list(SLOW_LIST), "the slow list is empty"


def test_every_slow_entry_names_a_test():
    entries = conftest.read_slow_list(SLOW_LIST)
    problems = [f"{entry}: {why}" for entry in entries if (why := problem(entry)) is not None]
    assert not problems, "tests/slow_tests.txt lists tests that do not exist:\n" + "\n".join(problems)


def test_slow_list_has_no_duplicates():
    entries = conftest.read_slow_list(SLOW_LIST)
    assert len(entries) == len(set(entries))


def test_training_harness_is_slow():
    entries = conftest.read_slow_list(SLOW_LIST)
    for path in ["tests/test_validation.py", "tests/test_validation_variants.py", "tests/test_duan.py",
                 "tests/test_arithmetic_experiments.py", "tests/test_gpu.py",
                 "docs/validation.md", "docs/arithmetic.md"]:
        assert any(conftest.entry_matches(entry, f"{path}::x") for entry in entries), path


def test_slow_marker_is_registered_and_strict():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"][
        "ini_options"]
    assert any(marker.split(":")[0].strip() == "slow" for marker in options["markers"])
    assert "--strict-markers" in options["addopts"].split()


def test_slow_marker_is_registered_in_this_run(pytestconfig):
    names = [line.split(":")[0].strip() for line in pytestconfig.getini("markers")]
    assert "slow" in names


@pytest.mark.parametrize("entry, nodeid, matches", [
    ("tests/test_x.py", "tests/test_x.py::test_a", True),
    ("tests/test_x.py", "tests/test_x.py::TestA::test_b[1-2]", True),
    ("tests/test_x.py", "tests/test_x.pyc::test_a", False),
    ("tests/test_x.py::test_a", "tests/test_x.py::test_a[p]", True),
    ("tests/test_x.py::test_a", "tests/test_x.py::test_ab", False),
    ("tests/test_x.py::test_a[p]", "tests/test_x.py::test_a[p]", True),
    ("tests/test_x.py::test_a[p]", "tests/test_x.py::test_a[q]", False),
    ("tests/fuzz/", "tests/fuzz/test_fuzz.py::test_a", True),
    ("docs/validation.md", "docs/validation.md::validation.md", True),
    ("crasp/x.py::crasp.x.f", "crasp/x.py::crasp.x.f", True),
    ("crasp/x.py::crasp.x.f", "crasp/x.py::crasp.x.fg", False),
])
def test_entry_matches(entry, nodeid, matches):
    assert conftest.entry_matches(entry, nodeid) is matches


def test_items_listed_as_slow_carry_the_mark(request):
    """In whatever this run collected, the items the list names carry `slow`."""
    entries = conftest.read_slow_list(SLOW_LIST)
    for item in request.session.items:
        if any(conftest.entry_matches(entry, item.nodeid) for entry in entries):
            assert item.get_closest_marker("slow") is not None, item.nodeid


def test_every_slow_entry_matches_a_collected_item(request):
    """The parameters in an entry, which `ast` cannot see: when this run collected all of a listed
    file (no `-m`, `-k` or deselection, as in `make test`), the entry names at least one item."""
    options = request.config.option
    if options.markexpr or options.keyword or options.deselect:
        pytest.skip("this run deselects items; `make test` checks the entries' parameters")
    collected = [item.nodeid for item in request.session.items]
    files = {nodeid.split("::")[0] for nodeid in collected}
    unmatched = [entry for entry in conftest.read_slow_list(SLOW_LIST)
                 if entry.split("::")[0] in files
                 and not any(conftest.entry_matches(entry, nodeid) for nodeid in collected)]
    assert not unmatched, "tests/slow_tests.txt lists items that are not collected:\n" + "\n".join(unmatched)


def test_the_problem_finder_finds_problems():
    assert problem("tests/no_such_file.py") is not None
    assert problem("tests/test_lanes.py::no_such_test") is not None
    assert problem("tests/test_lanes.py::test_entry_matches[x]") is None
    assert problem("conftest.py::conftest.entry_matches") is None
    assert problem("conftest.py::conftest.no_such_function") is not None
    assert problem("tests/") is None
