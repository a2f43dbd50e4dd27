"""Evidence for relative and uniform positions: whether the format hands relative positions the
task's translation symmetry (:mod:`tasks.alignment`; Sabbaghi et al. 2024, Xu et al. 2024).

It applies to operand formats (digits padded to a fixed width); "generalizes" is ``verified`` on
the sampled inputs the symmetry was checked on, up to carry cascades longer than training's.
"""

from __future__ import annotations

from ..alignment import leading_operand_width, relative_alignment
from ..findings import Finding, Reason, Strength, Verdict, open_question, scheme_named, silent
from ..types import Task, TaskError
from .context import Evidence
from .source import Source, cheap

NAME = "alignment"


def applies(task: Task) -> bool:
    """Whether relative and uniform positions are predicted for the task: an arithmetic format."""
    return task.family == "arithmetic"


def assess(evidence: Evidence, scheme: str) -> Finding:
    task = evidence.task
    if not applies(task):
        return silent(NAME, "outside the theory: relative and uniform positions are predicted for operand formats only",
                      Reason.OUTSIDE_THEORY)
    uniform = 0
    if scheme_named(scheme).uniform:
        try:
            uniform = leading_operand_width(task)
        except TaskError as error:
            return silent(NAME, str(error))
    found = relative_alignment(task, uniform, seed=evidence.seed)
    if found.aligned:
        return Finding(NAME, Verdict.GENERALIZES, Strength.VERIFIED, found.evidence, Reason.RELATIVE_ALIGNMENT,
                       references=("Sabbaghi et al. 2024, Appendix E (relative positions and carry cascades)",))
    return open_question(NAME, f"no relative alignment: {found.evidence}")


SOURCE = Source(NAME, frozenset({"relative", "uniform"}), frozenset({Verdict.GENERALIZES}), cheap, assess)

__all__ = ["SOURCE", "NAME", "applies"]
