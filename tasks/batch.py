"""Predictions for many tasks: in parallel processes, each one kept in the per-user cache.

``crasp predict --all`` and ``--regex-file`` run here. Tasks are named as ``crasp`` names them (a
registered name, ``module:attribute``, ``re:ALPHABET:REGEX``); each worker process resolves the
name itself and runs :func:`tasks.predict.predict`. A finished prediction is kept in the cache of
``crasp run`` (:mod:`crasp.cache`) under a key made of the task's *content* (its fields, and the
source files of its reference, sampler and domain test), the budget, the seed, the schemes, and
the tool itself (its version and the stamps of every source file of the packages), so an edited
task or another version of the tool never reads a stale prediction. ``CRASP_NO_CACHE=1`` or
``cache=False`` bypasses it.

A task whose prediction stops with an error (a bad reference, a bad expression) gets its
:class:`~tasks.findings.TaskError` in place of a prediction; any other exception is a bug and is
raised.

>>> import os, tempfile
>>> os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp()
>>> from tasks.findings import QUICK
>>> first, = predict_named(["parity"], budget=QUICK, processes=1)
>>> again, = predict_named(["parity"], budget=QUICK, processes=1)
>>> first.ape.verdict.value, again.cached
('does not generalize', True)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import multiprocessing
import os
import pickle
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

from crasp import cache
from crasp.version import VERSION

from .findings import Budget, TaskError
from .predict import Prediction, predict
from .types import Task

PACKAGES = ("crasp", "tasks", "limit_transformer")
"""The packages whose source files decide what a prediction holds."""


@functools.lru_cache(maxsize=1)
def tool_stamp() -> str:
    """The tool's version and the stamp (size, modification time) of every file of :data:`PACKAGES`."""
    root = Path(__file__).resolve().parent.parent
    stamps = [VERSION]
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".lark", ".csv", ".cr"):
                status = path.stat()
                stamps.append(f"{path.relative_to(root)}:{status.st_mtime_ns}:{status.st_size}")
    return "\n".join(stamps)


def _file_digest(path: str) -> str:
    try:
        status = os.stat(path)
    except OSError:
        return "?"
    return _digest_of(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=256)
def _digest_of(path: str, modified: int, size: int) -> str:
    try:
        return cache.digest(Path(path).read_bytes())
    except OSError:
        return "?"


def _stable(value, depth: int = 0) -> str:
    """A description of ``value`` that is the same in every process (no memory addresses):
    functions by their module, name and source file's contents and their closure's values."""
    if depth > 6:
        return "..."
    if isinstance(value, functools.partial):
        return f"partial({_stable(value.func, depth + 1)}, {_stable(value.args, depth + 1)}, " \
               f"{_stable(value.keywords, depth + 1)})"
    if inspect.ismethod(value):
        return f"method({_stable(value.__func__, depth + 1)}, {_stable(value.__self__, depth + 1)})"
    if inspect.isfunction(value):
        wrapped = inspect.unwrap(value)
        try:
            source = _file_digest(inspect.getsourcefile(wrapped) or "")
        except TypeError:
            source = "?"
        cells = tuple(c.cell_contents for c in (wrapped.__closure__ or ()) if _filled(c))
        return f"{wrapped.__module__}.{wrapped.__qualname__}@{source}{_stable(cells, depth + 1)}"
    if isinstance(value, (str, int, float, bool, type(None), bytes)):
        return repr(value)
    if isinstance(value, (tuple, list, frozenset, set)):
        items = sorted(map(lambda v: _stable(v, depth + 1), value)) if isinstance(value, (set, frozenset)) else \
            [_stable(v, depth + 1) for v in value]
        return f"{type(value).__name__}({', '.join(items)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_stable(k, depth + 1)}: {_stable(v, depth + 1)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"{type(value).__name__}(" + ", ".join(
            f"{f.name}={_stable(getattr(value, f.name), depth + 1)}" for f in dataclasses.fields(value)) + ")"
    if callable(value):
        call = getattr(type(value), "__call__", None)
        state = vars(value) if hasattr(value, "__dict__") else ()
        return f"{type(value).__qualname__}[{_stable(call, depth + 1)}]({_stable(state, depth + 1)})"
    text = repr(value)
    return type(value).__qualname__ if " at 0x" in text else text


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def fingerprint(task: Task) -> str:
    """The task's content, the same in every process for the same task (see the module docstring)."""
    return cache.digest(_stable(task).encode("utf-8", "surrogatepass"))


@dataclasses.dataclass(frozen=True)
class Request:
    """One prediction to make: the task's name, and the settings of :func:`tasks.predict.predict`."""

    name: str
    budget: Budget
    seed: int = 0
    synthesis: bool = True
    schemes: tuple[str, ...] | None = None
    decide_only: bool = False
    programs: tuple[str, ...] = ()
    """The texts of the user's candidate programs (part of the key only: :func:`predict_requests`
    runs requests without programs)."""

    def key(self, task: Task) -> str:
        return "\n".join([tool_stamp(), fingerprint(task), repr(self.budget), str(self.seed), str(self.synthesis),
                          repr(self.schemes), str(self.decide_only), *self.programs])


def _resolve(name: str) -> Task:
    from .registry import get

    return get(name)


def _run(item: tuple[int, Request], lines: Callable[[str], None] | None = None
         ) -> tuple[int, Prediction | TaskError]:
    index, request = item
    try:
        task = _resolve(request.name)
        return index, predict(task, schemes=request.schemes, budget=request.budget, seed=request.seed,
                              synthesis=request.synthesis, decide_only=request.decide_only, progress=lines)
    except TaskError as error:
        return index, error


def cached(request: Request, task: Task) -> Prediction | None:
    """The prediction kept for ``request`` on ``task``, or None."""
    found = cache.load("prediction", request.key(task))
    if not isinstance(found, bytes):
        return None
    try:
        prediction = pickle.loads(found)
    except Exception:  # noqa: BLE001 - a damaged or foreign entry whose checksum matched: recompute
        return None
    return dataclasses.replace(prediction, cached=True) if isinstance(prediction, Prediction) else None


def keep(request: Request, task: Task, prediction: Prediction) -> None:
    """Keep ``prediction`` for ``request`` on ``task`` (never fails)."""
    try:
        payload = pickle.dumps(prediction, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):  # a user's program object pickle cannot hold
        return
    cache.store("prediction", request.key(task), payload)


def processes_default() -> int:
    """One worker per core the process may use (at least one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def predict_requests(requests: Sequence[Request], *, processes: int | None = None, use_cache: bool = True,
                     progress: Callable[[int, int, str], None] | None = None,
                     lines: Callable[[str], None] | None = None) -> list[Prediction | TaskError]:
    """The predictions of ``requests``, in their order: from the cache where kept, the others in
    ``processes`` worker processes (default: one per core). ``progress(done, total, name)`` is
    called as each one finishes; ``lines`` receives the engine's progress lines of a prediction
    run in this process (one left to compute, or one process)."""
    results: list[Prediction | TaskError | None] = [None] * len(requests)
    tasks: dict[int, Task] = {}
    todo = []
    for index, request in enumerate(requests):
        try:
            task = _resolve(request.name)
        except TaskError as error:
            results[index] = error
            continue
        tasks[index] = task
        found = cached(request, task) if use_cache else None
        if found is not None:
            results[index] = found
        else:
            todo.append((index, request))
    done = len(requests) - len(todo)
    if progress:
        progress(done, len(requests), "")
    processes = min(processes or processes_default(), len(todo)) if todo else 1
    todo.sort(key=lambda item: -_expected_seconds(tasks[item[0]], item[1]))  # the longest first: no late straggler
    for index, result in _map(todo, processes, lines):
        results[index] = result
        if use_cache and isinstance(result, Prediction):
            keep(requests[index], tasks[index], result)
        done += 1
        if progress:
            progress(done, len(requests), requests[index].name)
    return results  # type: ignore[return-value]  # every slot is filled above


def _expected_seconds(task: Task, request: Request) -> float:
    """A guess at how long a prediction takes, to start the longest first: the searches' seconds
    where a scheme has no library program (they run when nothing cheaper settles it), and a share
    for the size of the alphabet (large alphabets come with large programs)."""
    from .types import Format

    searched = request.budget.seconds if (task.format is not Format.ALIGNED and task.fixed_width is None and
                                          not all(task.programs.get(s) for s in ("ape", "nope"))) else 0.0
    return searched + len(task.symbols) / 100


def _map(todo: list[tuple[int, Request]], processes: int, lines: Callable[[str], None] | None = None
         ) -> Iterable[tuple[int, Prediction | TaskError]]:
    if processes <= 1 or len(todo) <= 1:
        yield from (_run(item, lines) for item in todo)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
    # A fresh worker every few tasks: memory a task's search held is given back to the system.
    with multiprocessing.get_context(method).Pool(processes, maxtasksperchild=8) as pool:
        yield from pool.imap_unordered(_run, todo, chunksize=1)


def predicted(task: Task, *, programs: Sequence = (), budget: Budget | None = None, seed: int = 0,
              synthesis: bool = True, schemes: Sequence[str] | None = None, use_cache: bool = True,
              progress: Callable[[str], None] | None = None) -> Prediction:
    """The prediction ``crasp predict TASK`` makes for ``task`` (its default budget, synthesis on,
    every scheme, the user's candidate ``programs``), read from the cache where kept and kept there
    when computed. ``crasp validate`` records this prediction with its runs, so a report and
    ``crasp predict`` give one verdict.

    >>> import os, tempfile
    >>> os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp()
    >>> from tasks import registry
    >>> from tasks.findings import QUICK
    >>> predicted(registry.get("parity"), budget=QUICK).ape.verdict.value
    'does not generalize'
    """
    from crasp.printer import format_program

    from .findings import DEFAULT

    request = Request(task.name, budget or DEFAULT, seed, synthesis, tuple(schemes) if schemes else None,
                      programs=tuple(format_program(p) for p in programs))
    found = cached(request, task) if use_cache else None
    if found is not None:
        return found
    prediction = predict(task, schemes=request.schemes, programs=list(programs), budget=request.budget, seed=seed,
                         synthesis=synthesis, progress=progress)
    if use_cache:
        keep(request, task, prediction)
    return prediction


def predict_named(names: Iterable[str], *, budget: Budget, seed: int = 0, synthesis: bool = True,
                  schemes: Sequence[str] | None = None, processes: int | None = None, use_cache: bool = True,
                  progress: Callable[[int, int, str], None] | None = None) -> list[Prediction | TaskError]:
    """:func:`predict_requests` for tasks named as ``crasp`` names them, all with the same settings."""
    requests = [Request(name, budget, seed, synthesis, tuple(schemes) if schemes else None) for name in names]
    return predict_requests(requests, processes=processes, use_cache=use_cache, progress=progress)


__all__ = ["Request", "predict_requests", "predict_named", "predicted", "cached", "keep", "fingerprint", "tool_stamp",
           "processes_default"]
