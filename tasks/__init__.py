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
    balanced,
    get,
    names,
    register,
    task,
)

__all__ = ["BOS", "EOS", "SEP", "Anchor", "Example", "Format", "Labels", "Task", "TaskError",
           "all_tasks", "balanced", "get", "names", "register", "task"]
