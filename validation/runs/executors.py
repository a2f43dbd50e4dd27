"""Run a sweep's validations one after another, or as Ray tasks on a laptop or a cluster.

A sweep is a list of :class:`Job` (a task and a positional variant under a preset). Each job is
one call of :func:`validation.runs.sweep.validate`: it trains the seeds its preset asks for as one
group (the seeds of a run are trained together), resumes a group a killed sweep left in progress,
and skips every run the store already holds. The store is the single truth, and it is shared:
a job opens it by its path and writes through its lock (see :mod:`validation.runs.store`), so the
driver never merges anything, and running a sweep again, after a crash or a kill at any moment,
repeats nothing that was stored and loses at most the steps since a group's last evaluation.

* :class:`Sequential` runs the jobs in order in this process (the default; nothing to install).
* :class:`SideBySide` runs several jobs at once in this process, each in a thread of its own and,
  on a GPU, on a CUDA stream of its own: small models leave most of a GPU idle, and several groups
  side by side keep it busy. A captured step leaves a thread little to do between replays, so the
  threads share the interpreter well; they share torch's process-wide switches too, so the jobs
  must share a precision, and torch.compile (``--step compiled``) is refused, as it is not safe in
  threads.
* :class:`RayExecutor` submits each job as a Ray task with its resources (CPUs, a GPU or a
  fraction of one): without an address Ray starts on this machine; with one the sweep joins a
  running cluster, whose nodes must have this package installed and the store's folder at the
  same path (a shared file system). A job that starts from another job's runs (ABC calibrates
  from the ``sinusoidal`` seeds, a fine-tuning run starts from its source task) waits for it. A
  worker that dies is retried ``retries`` times, then reported; a job that raises is reported.

>>> jobs = plan_jobs([("duan_addition", "abc"), ("duan_addition", "sinusoidal")], "cpu")
>>> [(job.task, job.variant, job.after) for job in jobs]
[('duan_addition', 'abc', (1,)), ('duan_addition', 'sinusoidal', ())]
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from validation.config import ValidationError, Variant
from validation.runs.protocol import Preset
from validation.runs.protocol import preset as preset_named


@dataclass(frozen=True)
class Job:
    """One validation of a sweep; ``after`` names the jobs (by index) whose runs it starts from."""

    task: str
    variant: str
    after: tuple[int, ...] = ()


@dataclass(frozen=True)
class Settings:
    """What every job of a sweep shares."""

    store: str
    preset: str | Preset = "cpu"
    """A preset's name, or the preset itself (one made for a test; Ray sends it to the workers)."""
    seeds: int | None = None
    device: str = "cpu"
    """cpu, cuda, cuda:N, or auto: cuda on a job's machine where torch sees a GPU there, else cpu."""
    grid: bool = False
    threads: int | None = None
    """torch threads per job (None: torch's default in this process; Ray jobs use their CPUs)."""
    step: str | None = None
    """How each optimizer step is taken (:func:`validation.training.group.stepping`; None: auto)."""
    deadline: float | None = None
    """When to stop, saved, for the same sweep to resume later (a ``time.time()`` value; None: never)."""
    predictions: dict = field(default_factory=dict)
    """Per (task, variant), the :class:`~validation.runs.prediction.RecordedPrediction` its runs
    record (made once, before the sweep; a job without one makes its own)."""


@dataclass(frozen=True)
class Failure:
    job: Job
    why: str


@dataclass
class Tally:
    """The sweep's state, for progress lines: jobs done, running, failed, stopped at the time limit
    (saved, to resume), and when it began."""

    total: int
    done: int = 0
    running: int = 0
    failed: list[Failure] = field(default_factory=list)
    stopped: list[Job] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        finished = self.done + len(self.failed) + len(self.stopped)
        elapsed = time.monotonic() - self.started
        left = "" if not finished else f", about {elapsed / finished * (self.total - finished):.0f}s left"
        stopped = f", {len(self.stopped)} stopped at the time limit" if self.stopped else ""
        return (f"sweep: {self.done}/{self.total} done, {self.running} running, {len(self.failed)} failed{stopped}"
                f" ({elapsed:.0f}s{left})")


def _rules(preset: str | Preset) -> Preset:
    return preset if isinstance(preset, Preset) else preset_named(preset)


def plan_jobs(pairs: Sequence[tuple[str, str]], preset: str | Preset) -> list[Job]:
    """The jobs of (task, variant) pairs, each knowing which other jobs of the sweep it starts from."""
    from tasks import registry

    rules = _rules(preset)
    index = {(task, Variant.parse(variant).name): k for k, (task, variant) in enumerate(pairs)}
    jobs = []
    for task, variant in pairs:
        kind = Variant.parse(variant)
        plan = rules.plan(registry.get(task), kind)
        sources = []
        if kind.scheme.calibrated:
            sources.append((task, "sinusoidal"))
        if plan.train.start_from:
            sources.append((plan.train.start_from, kind.name))
        jobs.append(Job(task, kind.name, tuple(index[s] for s in sources if s in index)))
    return jobs


def run_job(job: Job, settings: Settings, progress=None):
    """Train (or find in the store) one job's runs; the :class:`~validation.runs.sweep.Validation`."""
    from validation.runs.store import Store
    from validation.runs.sweep import search, validate
    from validation.training.device import Machine, device_name

    if settings.threads:
        import torch

        torch.set_num_threads(settings.threads)
    store = Store(settings.store)
    rules = _rules(settings.preset)
    # auto: as the machine the job runs on has it
    machine = Machine(device_name(settings.device), settings.step, settings.deadline)
    plan = None
    if settings.grid:
        plan = search(job.task, job.variant, store=store, plan_of=rules.plan, device=machine, progress=progress)
    return validate(job.task, rules, job.variant, store=store, seeds=settings.seeds, device=machine,
                    progress=progress, plan=plan, prediction=settings.predictions.get((job.task, job.variant)))


class Sequential:
    """The jobs one after another in this process, each with its own progress callback."""

    name = "sequential"

    def run(self, jobs: Sequence[Job], settings: Settings, *, progress: Callable[[Job], object] = lambda job: None,
            report: Callable[[str], None] = lambda line: None) -> Tally:
        from validation.runs.sweep import Stopped

        tally = Tally(len(jobs))
        for job in jobs:
            tally.running = 1
            try:
                run_job(job, settings, progress(job))
            except Stopped:
                tally.running = 0
                tally.stopped.append(job)
                report(tally.line())
                break  # the deadline is past for every job after it too
            tally.running = 0
            tally.done += 1
            report(tally.line())
        return tally


class SideBySide:
    """Up to ``at_once`` jobs at a time in this process, each in a thread (and on a GPU a CUDA
    stream) of its own; a job that starts from another's runs waits for it. A job that raises is
    reported and the others go on."""

    name = "side-by-side"

    def __init__(self, at_once: int = 4) -> None:
        if at_once < 1:
            raise ValidationError("--side-by-side takes at least 1 job at a time")
        self.at_once = at_once

    def run(self, jobs: Sequence[Job], settings: Settings, *, progress: Callable[[Job], object] = lambda job: None,
            report: Callable[[str], None] = lambda line: None) -> Tally:
        import threading
        from concurrent.futures import Future, ThreadPoolExecutor, wait

        if settings.step == "compiled":
            raise ValidationError("--step compiled is not safe in threads: train side by side with captured or eager "
                                  "steps, or run compiled jobs one after another")
        _one_precision(jobs, settings)
        tally, lock = Tally(len(jobs)), threading.Lock()
        futures: dict[int, Future] = {}

        def one(k: int) -> None:
            for upstream in jobs[k].after:
                futures[upstream].result()  # raises where the runs it starts from failed
            with lock:
                tally.running += 1
            try:
                with _own_stream(settings.device):
                    run_job(jobs[k], settings, progress(jobs[k]))
            finally:
                with lock:
                    tally.running -= 1

        with ThreadPoolExecutor(max_workers=self.at_once, thread_name_prefix="crasp-job") as pool:
            for k in _topological(jobs):  # upstream jobs first: they are taken from the queue first
                futures[k] = pool.submit(one, k)
            pending = set(futures.values())
            by_future = {future: k for k, future in futures.items()}
            while pending:
                done, pending = wait(pending, timeout=10.0, return_when="FIRST_COMPLETED")
                for future in done:
                    self._account(tally, jobs[by_future[future]], future)
                report(tally.line())
        return tally

    @staticmethod
    def _account(tally: Tally, job: Job, future) -> None:
        from validation.runs.sweep import Stopped

        error = future.exception()
        if error is None:
            tally.done += 1
        elif isinstance(error, Stopped):
            tally.stopped.append(job)
        else:
            tally.failed.append(Failure(job, f"{type(error).__name__}: {error}"))


def _own_stream(device: str):
    """A CUDA stream of the calling thread's own on a GPU (nothing elsewhere)."""
    import contextlib

    import torch

    from validation.training.device import device_name

    name = device_name(device)
    if not name.startswith("cuda"):
        return contextlib.nullcontext()
    return torch.cuda.stream(torch.cuda.Stream(torch.device(name)))


def _one_precision(jobs: Sequence[Job], settings: Settings) -> None:
    """Jobs side by side share torch's process-wide TF32 switch: refuse jobs planned at different precisions."""
    from tasks import registry

    rules = _rules(settings.preset)
    found = {rules.plan(registry.get(job.task), Variant.parse(job.variant)).train.precision for job in jobs}
    if len(found) > 1:
        raise ValidationError(f"jobs side by side must share a precision (TF32 is a switch for the whole process); "
                              f"these are planned at {', '.join(sorted(found))}")


class RayExecutor:
    """Each job a Ray task needing ``cpus`` CPUs and ``gpus`` GPUs (a fraction shares one)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, cpus: float = 1, gpus: float = 0, retries: int = 2,
                 local_cpus: int | None = None) -> None:
        if cpus <= 0 or gpus < 0 or retries < 0:
            raise ValidationError("Ray jobs need a positive number of CPUs, and GPUs and retries of at least 0")
        self.address, self.cpus, self.gpus, self.retries, self.local_cpus = address, cpus, gpus, retries, local_cpus

    def run(self, jobs: Sequence[Job], settings: Settings, *, progress: Callable[[Job], object] = lambda job: None,
            report: Callable[[str], None] = lambda line: None) -> Tally:
        ray = require_ray()
        started_here = not ray.is_initialized()
        if started_here:
            options = {"address": self.address} if self.address else {"num_cpus": self.local_cpus}
            ray.init(**options, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            return self._run(ray, jobs, settings, report)
        finally:
            if started_here:
                ray.shutdown()

    def _run(self, ray, jobs: Sequence[Job], settings: Settings, report) -> Tally:
        threads = settings.threads or max(1, int(self.cpus))
        remote = ray.remote(_remote_job).options(num_cpus=self.cpus, num_gpus=self.gpus, max_retries=self.retries)
        job_settings = dataclasses.replace(settings, threads=threads)
        refs: dict[int, object] = {}
        for k in _topological(jobs):  # a job's upstream jobs are submitted first, and awaited as its arguments
            upstream = [refs[j] for j in jobs[k].after]
            refs[k] = remote.remote(jobs[k], job_settings, *upstream)
        by_ref = {ref: k for k, ref in refs.items()}
        tally = Tally(len(jobs))
        pending = list(refs.values())
        while pending:
            tally.running = len(pending)
            done, pending = ray.wait(pending, num_returns=1, timeout=10.0)
            for ref in done:
                job = jobs[by_ref[ref]]
                try:
                    if ray.get(ref) == STOPPED:
                        tally.stopped.append(job)
                    else:
                        tally.done += 1
                except Exception as error:  # noqa: BLE001 - reported per job; the sweep goes on
                    tally.failed.append(Failure(job, _cause(error)))
            tally.running = len(pending)
            report(tally.line())
        return tally


STOPPED = "stopped at the time limit"
"""What a Ray task returns when its job stopped at the deadline (its groups saved in the store)."""


def _remote_job(job: Job, settings: Settings, *upstream) -> str:
    """A Ray task: the job's runs, written to the shared store (the upstream jobs' results are
    only awaited: their runs are in the store)."""
    from validation.runs.sweep import Stopped

    try:
        run_job(job, settings)
    except Stopped:
        return STOPPED
    return f"{job.task} {job.variant}"


def _topological(jobs: Sequence[Job]) -> list[int]:
    order: list[int] = []
    state: dict[int, int] = {}

    def visit(k: int) -> None:
        if state.get(k) == 2:
            return
        if state.get(k) == 1:
            raise ValidationError(f"jobs depend on each other in a cycle ({jobs[k].task} {jobs[k].variant})")
        state[k] = 1
        for j in jobs[k].after:
            visit(j)
        state[k] = 2
        order.append(k)

    for k in range(len(jobs)):
        visit(k)
    return order


def _cause(error: BaseException) -> str:
    """The innermost reason Ray gives for a failed task, on one line."""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"


def require_ray():
    """The ray module, or an error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ValidationError("--executor ray needs Ray, an optional extra: pip install 'crasp-lengthgen[ray]' "
                              "(or pip install ray); without it the sequential executor runs the sweep") from None
    return ray


def executor(name: str, *, address: str | None = None, cpus: float = 1, gpus: float = 0, retries: int = 2,
             at_once: int = 4):
    """The executor a command line names."""
    if address and name != "ray":
        raise ValidationError("--address joins a Ray cluster: it needs --executor ray")
    if name == "sequential":
        return Sequential()
    if name == "side-by-side":
        return SideBySide(at_once)
    if name == "ray":
        require_ray()
        return RayExecutor(address, cpus=cpus, gpus=gpus, retries=retries)
    raise ValidationError(f"--executor {name}: expected sequential, side-by-side or ray")
