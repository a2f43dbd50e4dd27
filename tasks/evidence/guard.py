"""The task's own code, called under guard: what it raises names the input, and a call that does
not return in time stops the prediction with an error naming the input.

A prediction calls the task's reference (``answer``), its domain test (``valid``), its sampler and
its vectorised reference thousands of times, on inputs the task may never have been tested on.
:func:`guarded` wraps each of them so that

* an exception raised by the task's code becomes a :class:`~crasp.errors.ReferenceFailure` naming
  the function and the input. Sources that probe words outside the task's known inputs (modular
  counting, the automaton learner) catch exactly that: it means "not an input of this task". Any
  other exception is a bug of ours and reaches the user as ``crasp: internal error``;
* a call that runs longer than ``seconds`` raises :class:`ReferenceTimeout`, which no source
  catches: the prediction stops with an error that names the input.

The timeout needs a signal, so it works in the main thread of a process (where ``crasp predict``
and each worker of ``crasp predict --all`` run predictions); elsewhere calls are guarded against
exceptions only.

>>> import time, tasks
>>> slow = dataclasses.replace(tasks.get("parity"), answer=lambda x: time.sleep(5) or ("e",))
>>> with watchdog():
...     guarded(slow, seconds=0.2).answer(("0", "1"))
Traceback (most recent call last):
...
tasks.evidence.guard.ReferenceTimeout: the reference of task 'parity' did not return within 0.2 s on input '0 1'
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import signal
import threading
import time
from typing import Any, Callable, TypeVar, cast

from crasp.errors import ReferenceFailure

from ..findings import TaskError
from ..types import Task

F = TypeVar("F", bound=Callable[..., Any])

TICK = 0.1
"""How often (seconds) the watchdog looks at the call under way."""


class ReferenceTimeout(TaskError):
    """A call of the task's own code did not return in time (the message names the input)."""


def show(x) -> str:
    """An input as a short quoted string."""
    try:
        text = " ".join(map(str, x))
    except TypeError:
        text = repr(x)
    return repr(text if len(text) <= 80 else text[:77] + "...")


_current: list[list] = []
"""The guarded calls under way in the main thread, innermost last: [what, task, input, deadline, seconds]."""


def _on_tick(signum, frame) -> None:
    if _current and time.monotonic() > _current[-1][3]:
        what, task, x, _, seconds = call = _current[-1]
        call[3] = float("inf")  # raise once; the caller's frames unwind from here
        where = f"at length {x}" if what == "sampler" else f"on input {show(x)}"
        raise ReferenceTimeout(f"the {what} of task {task!r} did not return within {seconds:g} s {where}")


@contextlib.contextmanager
def watchdog():
    """Enforce the guarded calls' time limits while inside (a no-op outside the main thread, and
    when a watchdog is already running)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGALRM) is _on_tick:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_tick)
    timer = signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, *timer)
        signal.signal(signal.SIGALRM, previous)


def _guard(function: F, what: str, task: str, seconds: float, passes: tuple[type[BaseException], ...] = ()) -> F:
    main = threading.main_thread().ident
    clock, ident, calls = time.monotonic, threading.get_ident, _current

    @functools.wraps(function)
    def call(*args):
        x = args[0] if args else None
        timed = ident() == main
        if timed:
            calls.append([what, task, x, clock() + seconds, seconds])
        try:
            return function(*args)
        except (ReferenceFailure, ReferenceTimeout, *passes):
            raise
        except Exception as error:  # noqa: BLE001 - the task's own code: name the input, never a deep traceback
            where = f"at length {x}" if what == "sampler" else f"on input {show(x)}"
            raise ReferenceFailure(f"the {what} of task {task!r} raised {type(error).__name__}: {error} "
                                   f"{where}") from error
        finally:
            if timed:
                calls.pop()
    call.guarded = True  # type: ignore[attr-defined]  # mypy does not model attributes set on functions
    return cast(F, call)


def guarded(task: Task, seconds: float = 10.0) -> Task:
    """``task`` with its reference, domain test, samplers and vectorised reference guarded (see the
    module docstring); a task already guarded is returned as it is."""
    if getattr(task.answer, "guarded", False):
        return task
    name = task.name
    return dataclasses.replace(
        task,
        answer=_guard(task.answer, "reference", name, seconds),
        valid=_guard(task.valid, "domain test", name, seconds),
        sample_input=_guard(task.sample_input, "sampler", name, seconds),
        batch_answer=None if task.batch_answer is None else _guard(
            task.batch_answer, "vectorised reference", name, seconds, passes=(NotImplementedError,)),
        sample_window=None if task.sample_window is None else _guard(task.sample_window, "sampler", name, seconds))


__all__ = ["guarded", "watchdog", "ReferenceTimeout", "ReferenceFailure", "show"]
