"""The shape of the code: imports against the layers, import cycles, and dispatch on name strings.

The layers, lowest first: ``crasp`` (the language) -> ``limit_transformer`` (the compiler) ->
``tasks`` (the suite and the prediction, which reads compiled depths) -> ``validation`` (training,
the demo), and within ``validation`` the stages of one run (:data:`STAGES`: positions -> config -> data ->
models -> training -> runs -> reports -> experiments -> cli). A module may import its own
package and the layers below; an *upward* import (or a module-name string of a higher package,
as in ``import_module("tasks.cli")``) makes a lower package depend on a higher one. Every import
counts, including those inside functions.

Run ``python benchmarks/structure.py`` for the report (also written to
``benchmarks/results/structure.json``); ``tests/test_structure.py`` holds the counts to what is
recorded there, so the structure can only get better.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"crasp": 0, "limit_transformer": 1, "tasks": 2, "validation": 3}
STAGES = {"validation": ("positions", "config", "data", "models", "training", "runs", "reports", "experiments", "cli")}
"""Within a package, its sub-packages and modules in the order one run flows through them: a stage
imports only itself and the stages before it (an import of a later stage is an upward import)."""
DISPATCH = re.compile(
    r"""\btask\.name\s*(==|!=|\bin\s*[(\[{]|\.startswith\(|\.endswith\()"""
    r"""|\b(positions|variant|scheme)\s*(==|!=)\s*["']"""
)
"""Comparisons of a task's name, or of a positional scheme/variant given as a string, with a literal."""


@dataclass(frozen=True)
class Finding:
    module: str
    line: int
    what: str


def modules() -> dict[str, Path]:
    found = {}
    for package in LAYER:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """Every module ``module`` imports (inside functions too; not those only for type checkers), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            found.append((target, node.lineno))
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _runtime_nodes(tree: ast.AST):
    """Every node, except the bodies of ``if TYPE_CHECKING:`` (imports that never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            test = getattr(child, "test", None)
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def stage(module: str) -> int | None:
    """The place of ``module`` among its package's :data:`STAGES` (None: the package has none, or
    the module is the package itself)."""
    top, _, rest = module.partition(".")
    order = STAGES.get(top)
    if not order or not rest:
        return None
    return order.index(rest.split(".")[0]) if rest.split(".")[0] in order else None


def upward(table: dict[str, Path]) -> list[Finding]:
    out = []
    for module, path in table.items():
        own = module.split(".")[0]
        for target, line in imports(module, path):
            top = target.split(".")[0]
            if top in LAYER and top != own and LAYER[top] >= LAYER[own]:
                out.append(Finding(module, line, f"imports {target}"))
            here, there = stage(module), stage(target)
            if top == own and here is not None and there is not None and there > here:
                out.append(Finding(module, line, f"imports {target}, a later stage of {own}"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                top = node.value.split(".")[0]
                if (re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", node.value) and top in LAYER and top != own
                        and LAYER[top] >= LAYER[own]):
                    out.append(Finding(module, node.lineno, f"names module {node.value!r}"))
    return sorted(set(out), key=lambda f: (f.module, f.line, f.what))


def cycles(table: dict[str, Path]) -> list[list[str]]:
    """Groups of modules that import each other (strongly connected, more than one module)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(table)
    for module, path in table.items():
        for target, _ in imports(module, path):
            while target and target not in table:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                graph.add_edge(module, target)
    return sorted(sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1)


def dispatch(table: dict[str, Path]) -> list[Finding]:
    out = []
    for module, path in table.items():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = text.split("#")[0]
            if DISPATCH.search(code) and ">>>" not in text:
                out.append(Finding(module, number, text.strip()[:100]))
    return out


def measure() -> dict:
    table = modules()
    return {
        "upward_imports": [asdict(f) for f in upward(table)],
        "cycles": cycles(table),
        "name_dispatch": [asdict(f) for f in dispatch(table)],
    }


def main() -> int:
    result = measure()
    print(f"upward imports or module names: {len(result['upward_imports'])}")
    for f in result["upward_imports"]:
        print(f"  {f['module']}:{f['line']}: {f['what']}")
    print(f"import cycles: {len(result['cycles'])}")
    for group in result["cycles"]:
        print(f"  {' <-> '.join(group)}")
    print(f"dispatch on name strings: {len(result['name_dispatch'])}")
    for f in result["name_dispatch"]:
        print(f"  {f['module']}:{f['line']}: {f['what']}")
    out = ROOT / "benchmarks" / "results" / "structure.json"
    out.parent.mkdir(exist_ok=True)
    counts = {key: len(value) for key, value in result.items()}
    out.write_text(json.dumps({"counts": counts, **result}, indent=1) + "\n")
    print(f"written to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
