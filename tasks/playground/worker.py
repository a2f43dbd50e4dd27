"""Every job in a fresh worker process, killed when its time is up.

A job (:data:`tasks.playground.jobs.JOBS`) runs in a process of its own, forked from a server
process that imported the toolkit (multiprocessing's ``forkserver``; ``spawn`` where there is
none), so a job starts in milliseconds, shares nothing with the next, and can be killed at any
point: a pathological program or input costs at most the time limit. The worker's address space
is capped too (:data:`MEMORY`), so a job that would exhaust memory fails with an error instead.
As multiprocessing does, a worker imports the main script anew (as ``__mp_main__``): a script
that serves the playground keeps its own imports inside its ``main()``.

>>> call("chek", {}, seconds=10)
Traceback (most recent call last):
tasks.playground.worker.JobFailed: no job 'chek' (check, run, predict, compile)
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from dataclasses import dataclass

from crasp.errors import CraspError

PRELOAD = ["tasks.playground.jobs", "tasks.playground.preload", "crasp.parser", "crasp.checker", "crasp.interpreter", "crasp.trace", "crasp.cli",
           "tasks.registry", "tasks.predict", "limit_transformer.compiler", "limit_transformer.plot",
           "limit_transformer.properties", "tasks.playground.heatmaps", "matplotlib.figure",
           "matplotlib.backends.backend_agg"]
"""What the worker's parent process imports once, so that no job pays for it (torch and matplotlib
included; a module that is not installed is left out)."""

MEMORY = 4 << 30
"""The bytes of address space a job may add to what its process starts with."""


class JobFailed(CraspError):
    """A job that did not answer: out of time, out of memory, or a worker that died. ``status``
    is the HTTP status the page gets."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


class JobError(CraspError):
    """A job that answered with a user's error: ``payload`` is its JSON ``{"error": ...}`` (with
    line and column for a program's error)."""

    def __init__(self, payload: dict) -> None:
        super().__init__(payload["error"])
        self.payload = payload


@dataclass(frozen=True)
class Outcome:
    """What a worker sent back: ``ok`` and the job's result, or not and an error's JSON."""

    ok: bool
    value: dict


_context = None


def context():
    """The multiprocessing context jobs start in: a forkserver that preloaded :data:`PRELOAD`
    (the first call starts it), or spawn where there is no forkserver."""
    global _context
    if _context is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            _context = multiprocessing.get_context("forkserver")
            _context.set_forkserver_preload(PRELOAD)
        else:  # pragma: no cover - Windows
            _context = multiprocessing.get_context("spawn")
    return _context


def _cap_memory(extra: int) -> None:
    """Cap this process's address space at what it uses now plus ``extra`` bytes (Linux; elsewhere nothing)."""
    try:
        import resource

        with open("/proc/self/statm") as file:
            used = int(file.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = used + extra
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):  # pragma: no cover - not Linux
        pass


def _work(connection, kind: str, payload: dict, memory: int) -> None:
    """The worker process: run the job, send back an :class:`Outcome`."""
    from .jobs import JOBS, error_json

    if memory:
        _cap_memory(memory)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    try:
        outcome = Outcome(True, JOBS[kind](payload))
    except CraspError as error:
        outcome = Outcome(False, error_json(error))
    except MemoryError:
        outcome = Outcome(False, {"error": "out of memory: the job needed more than the playground allows "
                                           "(a smaller program or a shorter input may fit)"})
    except RecursionError:
        outcome = Outcome(False, {"error": "the program is nested too deeply to handle here"})
    except Exception as error:  # noqa: BLE001 - reported to the page, not hidden
        outcome = Outcome(False, {"error": f"internal error: {type(error).__name__}: {error} (a bug: please "
                                           "report it with the program)", "internal": True})
    try:
        connection.send(outcome)
    finally:
        connection.close()


def call(kind: str, payload: dict, *, seconds: float, memory: int = MEMORY, limit: float | None = None) -> dict:
    """The result of job ``kind`` on ``payload``, from a fresh worker killed after ``seconds``
    (what is left of the request's time ``limit``, which its error names; default ``seconds``).

    Raises :class:`JobError` for a user's error (its JSON names line and column where it has
    them), :class:`JobFailed` for a job out of time (status 504) or a worker that died."""
    from .jobs import JOBS

    if kind not in JOBS:
        raise JobFailed(f"no job {kind!r} ({', '.join(JOBS)})", 404)
    ctx = context()
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_work, args=(sender, kind, payload, memory), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(max(seconds, 0.0)):
            raise JobFailed(f"{kind}: no answer within the time limit of {limit or seconds:g} s; the work was stopped "
                            "(a shorter input or a smaller program may fit)", 504)
        try:
            outcome: Outcome = receiver.recv()
        except EOFError:  # the worker ended without a word: killed, or crashed
            process.join(1.0)
            raise JobFailed(f"{kind}: the worker stopped without an answer (exit code {process.exitcode}); "
                            "it may have run out of memory") from None
    finally:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join(1.0)
    if not outcome.ok:
        raise JobError(outcome.value)
    return outcome.value


def warm() -> None:
    """Start the worker's parent process (its imports take a few seconds) and run one job."""
    call("check", {"program": 'A = #"a" > 0'}, seconds=120)
