"""Every package the code, the tests and the benchmarks import is declared in pyproject.toml.

The imports are read from the source (every ``import``, at module level or inside a function), so
an undeclared dependency fails here rather than on a user's first install.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("crasp", "limit_transformer", "tasks", "validation")
LOCAL = {*PACKAGES, "tests", "benchmarks"}
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "xdist": "pytest-xdist"}
"""Import names whose distribution is named differently."""


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {name: _requirement_names(reqs) for name, reqs in project.get("optional-dependencies", {}).items()}
    return _requirement_names(project["dependencies"]), extras


def _imports(folder: Path) -> dict[str, set[str]]:
    """Third-party distributions imported under ``folder``, each with a file that imports it."""
    local_modules = {path.stem for path in folder.rglob("*.py")}
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in LOCAL or top in local_modules:
                    continue
                found.setdefault(DISTRIBUTION.get(top, top).lower().replace("_", "-"), set()).add(
                    str(path.relative_to(ROOT)))
    return found


def test_the_packages_import_only_declared_distributions():
    core, extras = _declared()
    optional = set().union(*extras.values())
    for package in PACKAGES:
        undeclared = {name: files for name, files in _imports(ROOT / package).items()
                      if name not in core | optional}
        assert not undeclared, f"{package} imports undeclared distributions: {undeclared}"


def test_the_tests_and_benchmarks_import_only_core_or_dev_distributions():
    core, extras = _declared()
    allowed = core | extras.get("dev", set())
    for folder in ("tests", "benchmarks", "docs"):
        undeclared = {name: files for name, files in _imports(ROOT / folder).items() if name not in allowed}
        assert not undeclared, f"{folder} imports distributions outside the core and dev extra: {undeclared}"


def test_every_core_dependency_is_used():
    core, _ = _declared()
    used = set()
    for folder in (*PACKAGES, "tests"):
        used |= set(_imports(ROOT / folder))
    assert core - used == set(), f"declared but never imported: {sorted(core - used)}"


def test_ci_runs_the_readme_command_in_a_fresh_virtual_environment():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "python3 -m venv --clear" in ci and "--system-site-packages" not in ci
    assert ci.rstrip().splitlines()[-1] == "make test" and "make test" in readme


def test_make_test_lints_and_type_checks_the_packages_first():
    makefile = (ROOT / "Makefile").read_text()
    prerequisites = re.search(r"^test:(.*)$", makefile, re.MULTILINE).group(1).split()
    assert {"lint", "typecheck"} <= set(prerequisites)
    assert re.search(r"^typecheck:.*\n\t\$\(PYTHON\) -m mypy$", makefile, re.MULTILINE)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert sorted(pyproject["tool"]["mypy"]["files"]) == sorted(PACKAGES)
    assert any(r.startswith("mypy") for r in pyproject["project"]["optional-dependencies"]["dev"])


def test_the_package_metadata_says_what_users_expect():
    """A licence file and an SPDX licence, classifiers, keywords, and a py.typed marker in every
    package (the type hints are meant to be read by type checkers), shipped as package data."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Typing :: Typed" in project["classifiers"] and project["keywords"]
    assert all(url.startswith("https://") for url in project["urls"].values())
    for package in ("crasp", "limit_transformer", "tasks", "validation"):
        assert (ROOT / package / "py.typed").is_file(), package
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["*"]
