"""The task suite: generators, references, formats, bins, published anchors and programs.

>>> import tasks
>>> task = tasks.get("majority")
>>> task.format.value, task.bins[1], task.labels
('seq2seq', (51, 100), Labels(ape=True, nope=True))
"""

from .registry import (
    BOS,
    EOS,
    SEP,
    Anchor,
    Example,
    Format,
    Labels,
    Task,
    TaskError,
    all_tasks,
    get,
    names,
    register,
    task,
)

from crasp import synthesis as _synthesis

from .verify import exhaustive_inputs as _exhaustive_inputs
from .verify import verify as _verify

_synthesis.register_task_checks(_verify, _exhaustive_inputs)  # crasp.synthesis verifies with the suite's checks

__all__ = ["BOS", "EOS", "SEP", "Anchor", "Example", "Format", "Labels", "Task", "TaskError",
           "all_tasks", "get", "names", "register", "task"]
