"""The notebook tour (docs/notebooks/tour.ipynb): it runs top to bottom in a real Jupyter kernel and
shows what each step promises, and the copy in the repository is stripped of outputs.

The kernel is started from a kernel spec written here for this interpreter (``sys.executable``,
by ipykernel), so the notebook runs in the test's own environment whatever the machine has
installed: a ``python3`` spec in the user's Jupyter folder (found before the venv's) may start
another environment's Python, and the venv need not be activated.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import nbformat
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "docs" / "notebooks" / "tour.ipynb"
STRIP = ROOT / "docs" / "notebooks" / "strip.py"
BUDGET = 120  # seconds for the whole notebook, the CI target (it took 8-16 s on two busy cores)


def _strip_module():
    spec = importlib.util.spec_from_file_location("notebook_strip", STRIP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernel(folder: Path) -> KernelManager:
    """A kernel manager for a ``python3`` kernel that runs this very interpreter, its spec and
    connection file under ``folder`` (nothing is read from or written to the user's Jupyter dirs)."""
    write_kernel_spec(folder / "kernels" / "python3")
    argv = json.loads((folder / "kernels" / "python3" / "kernel.json").read_text())["argv"]
    assert argv[0] == sys.executable, argv
    specs = KernelSpecManager(kernel_dirs=[str(folder / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs,
                         connection_file=str(folder / "connection.json"))


def _text(cell) -> str:
    """Everything a cell showed as text: streams, and the plain, HTML and markdown of its results."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts += [output.data[kind] for kind in ("text/plain", "text/html", "text/markdown") if kind in output.data]
    return "\n".join(parts)


def _stdout(cell) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def _images(cell) -> list[str]:
    return [o.data["image/png"] for o in cell.outputs
            if o.output_type in ("execute_result", "display_data") and "image/png" in o.data]


def _execute(notebook: nbformat.NotebookNode, folder: Path) -> float:
    """Run ``notebook`` in place in a fresh kernel (cells fail on error); returns the seconds taken."""
    km = _kernel(folder)
    client = NotebookClient(notebook, km=km, timeout=BUDGET, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(TOUR.parent)}})
    started = time.perf_counter()
    try:
        client.execute()
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return time.perf_counter() - started


def test_the_tour_runs_top_to_bottom_in_a_kernel_and_shows_each_step(tmp_path):
    notebook = nbformat.read(TOUR, as_version=4)
    seconds = _execute(notebook, tmp_path)
    assert seconds < BUDGET, f"the tour took {seconds:.0f} s"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    cells = {tag: cell for cell in code for tag in cell.metadata.get("tags", [])}

    # 1. The program: plain C-RASP of count depth 1, majority at <sep> (4 zeros beat 2 ones), a trace.
    assert "C-RASP (NoPE) | count depth 1" in _stdout(cells["program"])
    assert _stdout(cells["run"]).strip() == "['1', '0', '0']"
    assert re.search(r"Zeros.*Ones", _text(cells["trace"]), re.S)
    # 2. Verification: the program passes; the off-by-one program fails on a one-symbol input.
    assert _stdout(cells["verify"]).startswith("PASS bin_majority with majority.cr")
    wrong = _stdout(cells["counterexample"])
    assert wrong.startswith("FAIL bin_majority") and "<bos> 0 <sep> 0 <eos>" in wrong and "expected '0'" in wrong
    # 3. Predictions: a counting task generalizes under both schemes (a plain program is verified);
    #    (ab|bba)* is outside C-RASP (Yang et al.'s witness) but has a positional program.
    verdicts = _stdout(cells["predict-task"])
    assert re.search(r"^\s*APE\s+GENERALIZES\s+verified", verdicts, re.M), verdicts
    assert re.search(r"^\s*NoPE\s+GENERALIZES\s+verified", verdicts, re.M), verdicts
    assert _stdout(cells["predict-regex"]).strip() == "APE: generalizes | NoPE: does not generalize"
    assert _stdout(cells["decide"]).startswith("False | ")
    # 4. The compiled model answers as the program does, is one uniform head, and its figures are PNGs.
    compiled = _stdout(cells["compile"])
    assert compiled.startswith("1 | Properties(period=1, tau=-1, layers=1, heads=1)")
    assert "compiled model equals the interpreter" in compiled
    for tag in ("attention-uniform", "attention-local", "report-plot"):
        (image,) = _images(cells[tag])
        assert image.startswith("iVBORw0KGgo")  # base64 of the PNG signature
    # 5. Training: an accuracy per length bin; the report sets the recorded prediction beside them.
    accuracy = re.findall(r"'(\d\.\d{3})'", _stdout(cells["train"]))
    assert len(accuracy) == 3 and all(0.0 <= float(a) <= 1.0 for a in accuracy)
    assert _stdout(cells["report"]).startswith("prediction: generalizes (verified); observed: ")
    assert "| bin_majority | ape | tour | 1l1h16d | 1/1 |" in _text(cells["report-markdown"])

    # The strip helper turns the executed notebook back into the committed one.
    strip = _strip_module()
    assert not strip.is_stripped(notebook)
    assert strip.stripped(notebook) == nbformat.read(TOUR, as_version=4)


def test_the_committed_tour_is_valid_and_stripped():
    notebook = nbformat.read(TOUR, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4 and notebook.metadata.kernelspec.name == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, "the tour has no code"
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert not [cell.metadata for cell in code if set(cell.metadata) - {"tags"}]
    # The five steps in order, each a markdown cell that explains, then its code.
    steps = [(k, cell.source.split("\n")[0]) for k, cell in enumerate(notebook.cells)
             if cell.cell_type == "markdown" and re.match(r"## \d\. ", cell.source)]
    assert [title[3] for _, title in steps] == list("12345"), steps
    assert all(notebook.cells[k + 1].cell_type == "code" for k, _ in steps)
