"""Every report in docs/ that has its runs' records beside it is regenerated from them by the
command that wrote it, and compared with the committed text: such a report cannot drift from its
data. A report without records is listed with the reason, so that no new one goes without."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from crasp.cli import main
from validation.runs.records import import_records
from validation.runs.store import Store

DOCS = Path(__file__).resolve().parent.parent / "docs"


@dataclass(frozen=True)
class Report:
    """A report in docs/: its folder, the records file beside it, the command that writes it
    (``{out}`` and ``{store}`` stand for the folder and store it writes to and reads from) and the
    markdown files it writes."""

    folder: str
    records: str
    command: tuple[str, ...]
    files: tuple[str, ...]


REPORTS = (
    Report("depth-report", "depth.records",
           ("validate", "--experiment", "depth", "--store", "{store}", "--report", "{out}", "--device", "cpu"),
           ("depth.md",)),
    Report("depth-report", "training-length.records",
           ("validate", "--experiment", "training-length", "--store", "{store}", "--report", "{out}", "--device",
            "cpu"),
           ("training-length.md",)),
)

WITHOUT_RECORDS = {
    "validation-report/report.md": "trained before stores kept records; being trained again for them",
    "arithmetic-report/xu.md": "its probes read the trained weights, which a records file carries only "
                               "with --weights (megabytes per report): not committed",
    "arithmetic-report/sabbaghi.md": "as xu.md",
    "arithmetic-report/duan.md": "as xu.md",
}
"""Reports in docs/ whose runs' records are not beside them, and why."""


def test_every_report_has_its_records_or_says_why_not():
    written = {f"{r.folder}/{name}" for r in REPORTS for name in r.files}
    found = {str(path.relative_to(DOCS)) for folder in DOCS.glob("*-report") for path in folder.glob("*.md")}
    assert found == written | set(WITHOUT_RECORDS), "a report in docs/ neither regenerated nor listed without records"
    assert not written & set(WITHOUT_RECORDS)
    for report in REPORTS:
        assert (DOCS / report.folder / report.records).is_file(), f"{report.folder}/{report.records} is missing"


@pytest.mark.parametrize("report", REPORTS, ids=[r.records for r in REPORTS])
def test_a_report_regenerated_from_its_records_is_the_committed_one(report, tmp_path, capsys):
    store = tmp_path / "store"
    imported = import_records(Store(store), DOCS / report.folder / report.records)
    assert imported.added > 0
    out = tmp_path / "out"
    command = [part.format(out=out, store=store) for part in report.command]
    if command[0] == "validate":  # a run the records lack would be trained: stop at once instead
        command += ["--time-limit", "0.01"]
    assert main(command) == 0
    assert "stopped at the time limit" not in capsys.readouterr().err, "the records lack runs the report reads"
    for name in report.files:
        assert (out / name).read_text(encoding="utf-8") == (DOCS / report.folder / name).read_text(encoding="utf-8")
