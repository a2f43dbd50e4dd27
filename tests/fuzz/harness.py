"""Run one program text through the whole pipeline and classify what happened.

:func:`exercise` parses, round-trips through the formatter, checks, interprets on a few short
inputs at offset 0 and at a large offset, compiles to a Limit Transformer, runs the model and
compares it with the interpreter. The :class:`Outcome` is one of

* ``ok``: every stage passed and the model equals the interpreter;
* ``error``: a :class:`crasp.errors.CraspError` (the clean refusal of a bad program);
* ``crash``: any other exception (type, message, innermost project frame, short traceback);
* ``mismatch``: ``parse(format(p)) != p``, or the model and the interpreter differ;
* ``hang``: the time limit passed.

:class:`Pool` runs many texts in worker processes with an address-space limit, so that a hang
or a memory blow-up is recorded and the worker replaced. :func:`minimize` shrinks a failing text
while it keeps failing the same way.

>>> exercise('A = #"a" == 1').kind
'ok'
>>> exercise('A = #"a" ==').kind
'error'
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import random
import resource
import signal
import threading
import time
import traceback
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Callable, Iterable, Iterator

DEFAULT_TIMEOUT = 10.0
DEFAULT_MEMORY = 4 << 30
LARGE_OFFSET = 123_456_789_012
INPUT_LENGTHS = (1, 2, 3, 5, 8, 12)
FAILURES = ("crash", "mismatch", "hang")
_PROJECT = Path(__file__).resolve().parents[2]
_PACKAGES = tuple(str(_PROJECT / name) + os.sep for name in ("crasp", "limit_transformer"))


@dataclasses.dataclass
class Outcome:
    """What one text did: ``kind`` (ok, error, crash, mismatch, hang) and where it stopped."""

    kind: str
    stage: str = ""
    error_type: str = ""
    message: str = ""
    where: str = ""
    """The innermost frame in crasp/ or limit_transformer/, as ``path:line``."""
    traceback: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    def signature(self) -> tuple[str, ...]:
        """What makes two failures the same bug."""
        if self.kind == "hang":
            return (self.kind, self.stage)
        if self.kind == "mismatch":
            return (self.kind, self.stage, self.error_type)
        return (self.kind, self.stage, self.error_type, self.where)

    def describe(self) -> str:
        where = f" at {self.where}" if self.where else ""
        return f"{self.kind} in {self.stage}: {self.error_type}{where}: {self.message}"


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` swallows it."""


@contextlib.contextmanager
def _deadline(seconds: float | None):
    usable = seconds and hasattr(signal, "setitimer") and _main_thread()
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _where(tb) -> str:
    """``path:line`` of the innermost traceback entry in the project's packages."""
    found = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(_PACKAGES):
            found = f"{Path(filename).relative_to(_PROJECT).as_posix()}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _trace(frames: list[traceback.FrameSummary], keep: int = 6) -> str:
    lines = []
    for frame in frames[-keep:]:
        name = frame.filename
        if name.startswith(str(_PROJECT)):
            name = Path(name).relative_to(_PROJECT).as_posix()
        elif "site-packages" in name:
            name = name.split("site-packages", 1)[1].lstrip("/\\")
        else:
            name = Path(name).name
        lines.append(f"{name}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()[:120]}")
    return "\n".join(lines)


def _failure(kind: str, stage: str, error: BaseException) -> Outcome:
    frames = traceback.extract_tb(error.__traceback__, limit=-8)  # the innermost entries only
    message = "time limit" if isinstance(error, _Timeout) else _short(_safe_str(error))
    name = "Timeout" if isinstance(error, _Timeout) else type(error).__name__
    return Outcome(kind, stage, name, message, _where(error.__traceback__), _trace(frames))


def _safe_str(error: BaseException) -> str:
    try:
        return str(error)
    except Exception as inner:  # noqa: BLE001 - str() of an odd exception may fail itself
        return f"<str() failed: {type(inner).__name__}>"


def same_tree(a, b) -> bool:
    """Structural equality of two ASTs without recursion (deep trees stay comparable)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if dataclasses.is_dataclass(x):
            for field in dataclasses.fields(x):
                if field.compare:
                    stack.append((getattr(x, field.name), getattr(y, field.name)))
        elif isinstance(x, tuple):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


def sample_inputs(alphabet: Iterable[str]) -> tuple[list[list[str]], list[int]]:
    """Inputs of lengths 1..12 over ``alphabet`` (``x`` if empty), each at offset 0 and a large one."""
    symbols = sorted(alphabet) or ["x"]
    rng = random.Random(0)
    inputs = [[rng.choice(symbols) for _ in range(n)] for n in INPUT_LENGTHS]
    return inputs + inputs, [0] * len(inputs) + [LARGE_OFFSET] * len(inputs)


def _outputs(result) -> dict:
    if result.accept_values is not None:
        return {"accept": result.accept_values}
    return dict(result.next or {})


def _difference(expected, got, inputs, offsets) -> str:
    want, have = _outputs(expected), _outputs(got)
    if sorted(want) != sorted(have):
        return f"outputs differ: interpreter {sorted(want)}, model {sorted(have)}"
    for row, tokens in enumerate(inputs):
        n = len(tokens)
        for name in sorted(want):
            for k in range(n):
                if bool(want[name][row, k]) != bool(have[name][row, k]):
                    return (f"{name} at position {k + 1} of {' '.join(tokens)!r} (offset {offsets[row]}): "
                            f"interpreter {bool(want[name][row, k])}, model {bool(have[name][row, k])}")
    return ""


def _pipeline(text: str, stage: list[str]) -> Outcome:
    from crasp.checker import check
    from crasp.errors import CraspError
    from crasp.interpreter import run as interpret
    from crasp.parser import parse
    from crasp.printer import format_program
    from limit_transformer.compiler import compile_program
    from limit_transformer.runner import run as run_compiled

    stage[0] = "parse"
    program = parse(text, source="<mutant>")
    stage[0] = "format"
    formatted = format_program(program)
    stage[0] = "roundtrip"
    try:
        again = parse(formatted, source="<formatted>")
    except CraspError as error:
        return Outcome("mismatch", "roundtrip", type(error).__name__,
                       _short(f"the formatted program does not parse: {error}"))
    if not same_tree(again.statements, program.statements):
        return Outcome("mismatch", "roundtrip", "", "parse(format_program(p)) != p")
    stage[0] = "check"
    checked = check(program)
    inputs, offsets = sample_inputs(checked.info.alphabet)
    stage[0] = "interpret"
    expected = interpret(checked, inputs, offset=offsets, trace=True, allow_unknown=True)
    stage[0] = "compile"
    model = compile_program(checked)
    stage[0] = "run"
    got = run_compiled(model, inputs, offset=offsets, allow_unknown=True)
    stage[0] = "compare"
    difference = _difference(expected, got, inputs, offsets)
    if difference:
        return Outcome("mismatch", "compare", "", _short(difference))
    return Outcome("ok", "done")


def exercise(text: str, timeout: float | None = DEFAULT_TIMEOUT) -> Outcome:
    """Run ``text`` through the pipeline in this process; a hang is caught by an alarm (main
    thread only, and not inside long C calls: use :class:`Pool` for those)."""
    from crasp.errors import CraspError

    stage = ["parse"]
    start = time.perf_counter()
    try:
        with _deadline(timeout):
            outcome = _pipeline(text, stage)
    except _Timeout as error:
        outcome = _failure("hang", stage[0], error)
    except CraspError as error:
        outcome = Outcome("error", stage[0], type(error).__name__, _short(_safe_str(error), 200))
    except Exception as error:  # noqa: BLE001 - every other exception is a crash to record
        outcome = _failure("crash", stage[0], error)
    outcome.seconds = round(time.perf_counter() - start, 4)
    return outcome


# ---------------------------------------------------------------- worker processes


def _limit_memory(limit: int | None) -> None:
    if limit:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _worker(conn, timeout: float | None, memory: int | None) -> None:
    """Worker loop: import everything once, then exercise texts until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _limit_memory(memory)
    import torch

    torch.set_num_threads(1)
    exercise('A = #"a" == 1', timeout=None)  # warm the imports and caches
    conn.send("ready")
    while True:
        try:
            text = conn.recv()
        except EOFError:
            return
        if text is None:
            return
        conn.send(dataclasses.asdict(exercise(text, timeout)))


class _Process:
    def __init__(self, context, timeout, memory) -> None:
        self.conn, child = context.Pipe()
        self.proc = context.Process(target=_worker, args=(child, timeout, memory), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.started = time.monotonic()
        self.task: tuple[object, str, float] | None = None

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self.proc.is_alive() and self.task is None:
                self.conn.send(None)
                self.proc.join(2)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class Pool:
    """``jobs`` worker processes, each limited to ``memory`` bytes of address space.

    A text that runs past ``timeout`` seconds is a hang: the worker's alarm reports where it
    was, and a worker still busy ``grace`` seconds later is killed and replaced. A worker that
    dies (a segfault, the kernel's OOM killer) is a crash of type ``WorkerDied``.
    """

    def __init__(self, jobs: int = 2, timeout: float = DEFAULT_TIMEOUT,
                 memory: int | None = DEFAULT_MEMORY, grace: float = 5.0) -> None:
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.memory = memory
        self.grace = grace
        self.context = get_context("spawn")
        self.workers: list[_Process] = []

    def __enter__(self) -> "Pool":
        self.workers = [self._start() for _ in range(self.jobs)]
        return self

    def __exit__(self, *exc) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def _start(self) -> _Process:
        return _Process(self.context, self.timeout, self.memory)

    def _replace(self, worker: _Process) -> None:
        worker.stop()  # a worker with a task is killed at once
        worker.task = None
        self.workers[self.workers.index(worker)] = self._start()

    def imap(self, items: Iterable[tuple[object, str]]) -> Iterator[tuple[object, str, Outcome]]:
        """``(key, text, outcome)`` for each ``(key, text)``, in the order they finish."""
        if not self.workers:
            self.__enter__()
        pending = iter(items)
        exhausted = False
        while True:
            for worker in self.workers:
                if worker.ready and worker.task is None and not exhausted:
                    item = next(pending, None)
                    if item is None:
                        exhausted = True
                        break
                    worker.task = (item[0], item[1], time.monotonic())
                    worker.conn.send(item[1])
            busy = [w for w in self.workers if w.task is not None]
            if exhausted and not busy:
                return
            now = time.monotonic()
            deadlines = [w.task[2] + self.timeout + self.grace for w in busy]
            deadlines += [w.started + 300 for w in self.workers if not w.ready]
            wait = max(0.0, min(deadlines) - now) if deadlines else 1.0
            readable = connection.wait([w.conn for w in self.workers], timeout=wait)
            for worker in list(self.workers):
                if worker.conn in readable:
                    try:
                        message = worker.conn.recv()
                    except (EOFError, OSError):
                        yield from self._died(worker)
                        continue
                    if message == "ready":
                        worker.ready = True
                        continue
                    key, text, _ = worker.task
                    worker.task = None
                    yield key, text, Outcome(**message)
            now = time.monotonic()
            for worker in list(self.workers):
                if worker.task is not None and now > worker.task[2] + self.timeout + self.grace:
                    key, text, started = worker.task
                    self._replace(worker)
                    yield key, text, Outcome("hang", "unknown", "Timeout",
                                             f"killed after {now - started:.1f} s", seconds=now - started)
                elif not worker.ready and now > worker.started + 300:
                    raise RuntimeError("a fuzz worker did not start within 300 s")

    def _died(self, worker: _Process) -> Iterator[tuple[object, str, Outcome]]:
        task = worker.task
        worker.proc.join(5)
        code = worker.proc.exitcode
        if task is None:
            if not worker.ready:
                raise RuntimeError(f"a fuzz worker failed to start (exit code {code})")
            self._replace(worker)
            return
        key, text, started = task
        self._replace(worker)
        yield key, text, Outcome("crash", "unknown", "WorkerDied", f"worker exit code {code}",
                                 seconds=time.monotonic() - started)

    def map(self, texts: list[str]) -> list[Outcome]:
        """The outcome of every text, in order."""
        results: list[Outcome | None] = [None] * len(texts)
        for key, _, outcome in self.imap(enumerate(texts)):
            results[key] = outcome
        return results  # type: ignore[return-value]


# ---------------------------------------------------------------- minimisation


def minimize(text: str, reproduces: Callable[[list[str]], list[bool]], *, budget: int = 2000,
             seconds: float | None = None) -> str:
    """A shorter text that still ``reproduces`` (given candidate texts, which of them do).

    Rounds of: delta debugging on lines, shrinking runs of one token (a ``(`` run together with
    a later ``)`` run) and long integer literals, and delta debugging on tokens; until a round
    changes nothing, ``budget`` candidates were tried or ``seconds`` passed. Tokens are joined
    compactly.
    """
    from .mutants import join_compact, tokenize

    state = {"tokens": tokenize(text), "tried": 0}
    stop = time.monotonic() + seconds if seconds is not None else math.inf

    def first(candidates: list[list[str]]) -> list[str] | None:
        candidates = [c for c in candidates if c != state["tokens"]]
        candidates = candidates[: max(budget - state["tried"], 0)]
        if not candidates or time.monotonic() > stop:
            return None
        state["tried"] += len(candidates)
        for candidate, ok in zip(candidates, reproduces([join_compact(c) for c in candidates])):
            if ok:
                state["tokens"] = candidate
                return candidate
        return None

    def flat(candidates: list[list[list[str]]]) -> list[str] | None:
        return first([[token for part in candidate for token in part] for candidate in candidates])

    def lines(tokens: list[str]) -> list[list[str]]:
        out: list[list[str]] = [[]]
        for token in tokens:
            out[-1].append(token)
            if token == "\n":
                out.append([])
        return [line for line in out if line]

    while state["tried"] < budget and time.monotonic() < stop:
        before = list(state["tokens"])
        _ddmin(lines(state["tokens"]), flat)
        while _shrink_runs(state["tokens"], first) is not None:
            pass
        _ddmin([[token] for token in state["tokens"]], flat)
        if state["tokens"] == before:
            break
    return join_compact(state["tokens"])


def _ddmin(parts: list[list[str]], first) -> list[list[str]] | None:
    """Delta debugging: drop chunks of ``parts`` while ``first`` finds a reproducing candidate."""
    chunks, changed = 2, None
    while len(parts) >= 2:
        size = math.ceil(len(parts) / chunks)
        candidates = [parts[:k] + parts[k + size:] for k in range(0, len(parts), size)]
        found = first(candidates)
        if found is not None:
            parts = next(c for c in candidates if [t for part in c for t in part] == found)
            chunks, changed = max(chunks - 1, 2), parts
        elif size == 1:
            break
        else:
            chunks = min(chunks * 2, len(parts))
    return changed


def _runs(tokens: list[str]) -> list[tuple[int, int]]:
    runs, start = [], 0
    for k in range(1, len(tokens) + 1):
        if k == len(tokens) or tokens[k] != tokens[start]:
            if k - start >= 2:
                runs.append((start, k - start))
            start = k
    return runs


def _shrink_runs(tokens: list[str], first) -> list[str] | None:
    """Cut part of a run of one token, or digits of a long integer, if the failure stays."""
    for start, length in sorted(_runs(tokens), key=lambda r: -r[1]):
        closer = None
        if tokens[start] == "(":
            closer = next(((s, n) for s, n in _runs(tokens) if s > start and tokens[s] == ")"), None)
        for cut in sorted({length // 2, length // 4, length // 16, 1} - {0}, reverse=True):
            if closer:
                cut = min(cut, closer[1])
            candidate = tokens[:start] + tokens[start + cut:]
            if closer:
                at = closer[0] - cut
                candidate = candidate[:at] + candidate[at + cut:]
            found = first([candidate])
            if found is not None:
                return found
    for index, token in enumerate(tokens):
        digits = token.lstrip("-")
        if digits.isdigit() and len(digits) > 2:
            sign = token[: len(token) - len(digits)]
            for size in sorted({len(digits) // 2, len(digits) - len(digits) // 8, len(digits) - 1} - {0}):
                found = first([tokens[:index] + [sign + "1" + "0" * (size - 1)] + tokens[index + 1:]])
                if found is not None:
                    return found
    return None


def same_failure(target: Outcome) -> Callable[[list[Outcome]], list[bool]]:
    """A test for :func:`minimize`'s outcomes: the same :meth:`Outcome.signature` as ``target``."""
    signature = target.signature()
    return lambda outcomes: [o.signature() == signature for o in outcomes]


__all__ = ["Outcome", "exercise", "Pool", "minimize", "same_failure", "same_tree", "sample_inputs",
           "DEFAULT_TIMEOUT", "DEFAULT_MEMORY", "FAILURES"]
