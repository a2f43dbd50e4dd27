"""The structure can only get better: upward imports, import cycles and name-string dispatch are
held to the counts recorded in benchmarks/results/structure.json (``python benchmarks/structure.py``
rewrites it after an improvement)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _structure():
    spec = importlib.util.spec_from_file_location("structure", ROOT / "benchmarks" / "structure.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["structure"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_no_new_upward_imports_cycles_or_name_dispatch():
    measured = _structure().measure()
    recorded = json.loads((ROOT / "benchmarks" / "results" / "structure.json").read_text())
    known = {(f["module"], f["what"]) for f in recorded["upward_imports"]}
    new = [f for f in measured["upward_imports"] if (f["module"], f["what"]) not in known]
    assert not new, f"new upward imports (a lower package naming a higher one): {new}"
    assert len(measured["cycles"]) <= recorded["counts"]["cycles"], measured["cycles"]
    for group in measured["cycles"]:
        assert any(set(group) <= set(old) for old in recorded["cycles"]), f"a new import cycle: {group}"
    assert len(measured["name_dispatch"]) <= recorded["counts"]["name_dispatch"], (
        "new dispatch on a task name or a positional scheme string: ask the task's fields or the scheme object")


def test_the_layers_hold():
    """No lower package imports or names a higher one, no import cycle, at most 3 name dispatches."""
    measured = _structure().measure()
    assert measured["upward_imports"] == [] and measured["cycles"] == []
    assert len(measured["name_dispatch"]) <= 3, measured["name_dispatch"]


def test_the_measure_sees_an_upward_import(tmp_path, monkeypatch):
    structure = _structure()
    (tmp_path / "crasp").mkdir()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "crasp" / "__init__.py").write_text("def f():\n    from tasks import registry\n")
    (tmp_path / "tasks" / "__init__.py").write_text("import importlib\nimportlib.import_module('validation.cli')\n")
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "__init__.py").write_text("")
    (tmp_path / "limit_transformer").mkdir()
    (tmp_path / "limit_transformer" / "__init__.py").write_text("import tasks\n")
    monkeypatch.setattr(structure, "ROOT", tmp_path)
    found = {(f.module, f.what) for f in structure.upward(structure.modules())}
    assert ("crasp", "imports tasks") in found and ("tasks", "names module 'validation.cli'") in found
    assert ("limit_transformer", "imports tasks") in found  # siblings do not import each other


def test_the_measure_sees_an_import_of_a_later_stage(tmp_path, monkeypatch):
    """Within validation, a stage of one run (data) importing a later one (runs) is an upward import."""
    structure = _structure()
    for package in ("crasp", "limit_transformer", "tasks"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for folder in ("validation", "validation/data", "validation/runs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "validation" / "data" / "streams.py").write_text("from validation.runs.store import Store\n")
    (tmp_path / "validation" / "runs" / "store.py").write_text("from validation.data import streams\n")
    monkeypatch.setattr(structure, "ROOT", tmp_path)
    found = {(f.module, f.what) for f in structure.upward(structure.modules())}
    assert found == {("validation.data.streams", "imports validation.runs.store, a later stage of validation"),
                     ("validation.data.streams", "imports validation.runs.store.Store, a later stage of validation")}
