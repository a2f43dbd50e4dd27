"""Evidence for relative and uniform positions: whether the format hands relative positions the
task's translation symmetry (:mod:`tasks.alignment`; Sabbaghi et al. 2024, Xu et al. 2024).

It applies to operand formats (digits padded to a fixed width); "generalizes" is ``verified`` on
the sampled inputs the symmetry was checked on, up to carry cascades longer than training's.
"""

from __future__ import annotations

from ..alignment import leading_operand_width, relative_alignment
from ..findings import Budget, Finding, Strength, Verdict, scheme_named, silent
from ..types import Task, TaskError
from .context import Context

SOURCE = "alignment"


def applies(task: Task) -> bool:
    """Whether relative and uniform positions are predicted for the task: an arithmetic format."""
    return task.family == "arithmetic"


def assess(task: Task, scheme: str, budget: Budget, context: Context | None = None) -> Finding:
    if scheme not in ("relative", "uniform"):
        return silent(SOURCE, "the alignment check is about relative and uniform positions")
    if not applies(task):
        return silent(SOURCE, "outside the theory: relative and uniform positions are predicted for operand "
                              "formats only")
    uniform = 0
    if scheme_named(scheme).uniform:
        try:
            uniform = leading_operand_width(task)
        except TaskError as error:
            return silent(SOURCE, str(error))
    found = relative_alignment(task, uniform, seed=context.seed if context else 0)
    if found.aligned:
        return Finding(SOURCE, Verdict.GENERALIZES, Strength.VERIFIED, found.evidence,
                       references=("Sabbaghi et al. 2024, Appendix E (relative positions and carry cascades)",))
    return Finding(SOURCE, Verdict.UNDETERMINED, None, f"no relative alignment: {found.evidence}")


__all__ = ["assess", "applies"]
