"""Load a user's task from ``MODULE:TASK``: the one place a task module is imported.

``MODULE`` is a module importable from the current directory or the installed packages;
``TASK`` names a :class:`~tasks.registry.Task` in it, a function it decorated with
:func:`tasks.task`, or a task name it registered. Every way this can go wrong is a
:class:`~tasks.registry.TaskError` naming the spec: a malformed spec, a module that cannot be
imported (with the module's own exception, and its file:line), a missing task (listing the tasks
the module has), or an attribute that is not a task (saying what it is).

>>> load_task("tasks:parity").name  # not an attribute of tasks: a registered task name
'parity'
>>> load_task(".my_tasks:first")
Traceback (most recent call last):
...
tasks.findings.TaskError: task '.my_tasks:first': relative module names are not supported; write the module as imported from the current directory (e.g. my_tasks:first)
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
import types

from . import catalogue
from .types import Task, TaskError

_MISSING = object()
FORM = "write MODULE:TASK, e.g. my_tasks:first_symbol"


def split_spec(spec: str) -> tuple[str, str]:
    """``(module, task)`` of a ``MODULE:TASK`` spec, or a :class:`TaskError` saying what is malformed.

    >>> split_spec("my_tasks:first_symbol")
    ('my_tasks', 'first_symbol')
    """
    module, colon, name = spec.partition(":")
    if not colon:
        raise TaskError(f"task {spec!r} is not MODULE:TASK; {FORM}")
    if not module.strip() and not name.strip():
        raise TaskError(f"task {spec!r} names neither a module nor a task; {FORM}")
    if not module.strip():
        raise TaskError(f"task {spec!r} has no module name before ':'; {FORM}")
    if not name.strip():
        raise TaskError(f"task {spec!r} has no task name after ':'; {FORM}")
    if module.startswith("."):
        raise TaskError(f"task {spec!r}: relative module names are not supported; write the module as imported "
                        f"from the current directory (e.g. {module.lstrip('.') or 'my_tasks'}:{name})")
    if not all(part.isidentifier() for part in module.split(".")):
        hint = " (dotted Python identifiers, e.g. my_tasks or package.tasks; not a file path)"
        raise TaskError(f"task {spec!r}: {module!r} is not a module name{hint}")
    if name != name.strip() or ":" in name:
        raise TaskError(f"task {spec!r}: {name!r} is not a task name; {FORM}")
    return module, name


def _where(filename: str | None, line: int | None) -> str:
    if not filename:
        return ""
    path = os.path.relpath(filename) if os.path.abspath(filename).startswith(os.getcwd() + os.sep) else filename
    return f" ({path}:{line})" if line else f" ({path})"


def _summary(error: BaseException) -> str:
    """The exception a module raised on import, in one line: type, message, file:line."""
    if isinstance(error, SyntaxError):
        return f"{type(error).__name__}: {error.msg}{_where(error.filename, error.lineno)}"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<")]
    own = [f for f in frames if os.path.abspath(f.filename).startswith(os.getcwd() + os.sep)] or frames
    where = _where(own[-1].filename, own[-1].lineno) if own else ""
    return f"{type(error).__name__}: {error}{where}"


def _import(module_name: str, spec: str):
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # the current directory is importable, as for `python -m`
    importlib.invalidate_caches()  # a module written since the last import is seen
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing == module_name or module_name.startswith(missing + "."):
            hint = (f" (name the module without .py: {module_name[:-3]}:{spec.partition(':')[2]})"
                    if module_name.endswith(".py") else "")
            raise TaskError(f"cannot import module {module_name!r} for task {spec!r}: no module named {missing!r} "
                            f"in the current directory or the installed packages{hint}") from None
        raise TaskError(f"cannot import module {module_name!r} for task {spec!r}: {_summary(error)}") from None
    except (Exception, SystemExit) as error:  # noqa: BLE001 - a user's module: summarise what it raised
        raise TaskError(f"cannot import module {module_name!r} for task {spec!r}: {_summary(error)}") from None


def _registered_by(value) -> Task | None:
    """The registered task whose reference is the function ``value`` (decorated with @tasks.task)."""
    if not callable(value):
        return None
    reference = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    return next((t for t in catalogue.registered().values() if t.reference == reference), None)


def tasks_in(module) -> list[str]:
    """The names ``module:NAME`` can take: its Task objects and its functions registered as tasks.

    >>> import types, tasks
    >>> module = types.ModuleType("demo")
    >>> module.first, module.helper = tasks.get("parity"), len
    >>> tasks_in(module)
    ['first']
    """
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and (isinstance(value, Task) or _registered_by(value) is not None)]


def _kind(value) -> str:
    kind = type(value).__name__
    if callable(value) and not isinstance(value, type):
        return "a function" if kind == "function" else f"a callable {kind}"
    if isinstance(value, type):
        return f"the class {value.__name__}"
    if isinstance(value, types.ModuleType):
        return f"the module {value.__name__}"
    text = repr(value)
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} ({text if len(text) <= 40 else text[:37] + '...'})"


def load_task(spec: str) -> Task:
    """The task named by ``MODULE:TASK``, importing the module from the current directory or the
    installed packages (which also registers the tasks it defines with :func:`tasks.task`).

    >>> load_task("tasks:nope_such_task")
    Traceback (most recent call last):
    ...
    tasks.findings.TaskError: task 'tasks:nope_such_task': no such task 'nope_such_task' in module 'tasks'; it defines no Task (a tasks.registry.Task, or a function decorated with @tasks.task)
    """
    module_name, name = split_spec(spec)
    catalogue.registered()  # the suite first, so a module's own tasks cannot shadow it unnoticed
    module = _import(module_name, spec)
    value = getattr(module, name, _MISSING)
    if isinstance(value, Task):
        return value
    found = _registered_by(value)
    if found is not None:
        return found
    if value is _MISSING and name in catalogue.registered():
        return catalogue.registered()[name]  # a task name the module registered (or a suite task)
    if value is not _MISSING:
        hint = ("; decorate it with @tasks.task(NAME, symbols=..., sampler=...) to make it a task"
                if callable(value) and not isinstance(value, type) else "")
        raise TaskError(f"task {spec!r}: {module_name}.{name} is {_kind(value)}, not a tasks.registry.Task{hint}")
    has = tasks_in(module)
    listing = (f"it has {', '.join(has)}" if has
               else "it defines no Task (a tasks.registry.Task, or a function decorated with @tasks.task)")
    raise TaskError(f"task {spec!r}: no such task {name!r} in module {module_name!r}; {listing}")


__all__ = ["load_task", "split_spec", "tasks_in"]
