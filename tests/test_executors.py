"""Sweeps on the sequential executor and on a local Ray: the same runs, the same numbers; a driver
killed mid-sweep resumes to the store an uninterrupted sweep leaves; failures are reported."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from validation.runs import protocol
from validation.config import ModelConfig, TrainConfig, ValidationError
from validation.runs.executors import Job, RayExecutor, Sequential, Settings, executor, plan_jobs
from validation.runs.store import Store

ROOT = Path(__file__).resolve().parent.parent
PAIRS = [("bin_majority", "ape"), ("parity", "ape")]


def tiny(steps: int = 40) -> protocol.Preset:
    """Two seeds of a one-layer model, a few steps: every seed counts."""
    return protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(steps=steps, batch_size=8, eval_every=20, test_size=8)),
        seeds=2, count_threshold=0.0)


WORKER_NICENESS = 0
"""The niceness of the test clusters' Ray workers. Ray's default, 15, lets a busy machine starve
them: under `pytest -n 2` on 2 cores, with the other pytest worker training, a Ray worker took a
minute to import torch and start its task (each attempt of a dying job starts a new worker). The
sweeps do the same work at either niceness."""


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of 2 CPUs for this module's sweeps in this process, started as
    :meth:`RayExecutor.run` starts its own (but with workers at :data:`WORKER_NICENESS`): an
    executor that finds Ray running uses it and leaves it running, so each sweep saves a start and a
    stop (seconds each) and finds workers that have already imported torch. The sweeps run in
    subprocesses start their own."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'crasp-lengthgen[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _system_config={"worker_niceness": WORKER_NICENESS})
    yield ray
    ray.shutdown()


def stored(root: Path) -> list[tuple]:
    return sorted((r.spec.task, r.spec.variant, r.spec.seed, r.accuracy, r.steps, r.history)
                  for r in Store(root).runs())


def test_jobs_wait_for_the_runs_they_start_from():
    jobs = plan_jobs([("duan_successor", "abc"), ("xu_mod100_addition", "ape"), ("xu_addition", "ape"),
                      ("duan_successor", "sinusoidal")], "cpu")
    assert [job.after for job in jobs] == [(3,), (2,), (), ()]
    assert plan_jobs([("duan_successor", "abc")], "cpu")[0].after == ()  # trains its first stage itself


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ValidationError, match=r"pip install 'crasp-lengthgen\[ray\]'"):
        executor("ray")
    assert isinstance(executor("sequential"), Sequential)
    with pytest.raises(ValidationError, match="needs --executor ray"):
        executor("sequential", address="auto")
    with pytest.raises(ValidationError):
        RayExecutor(cpus=0)


def test_ray_and_sequential_sweeps_store_the_same_runs(tmp_path, local_ray):
    jobs = plan_jobs(PAIRS, tiny())
    alone = Sequential().run(jobs, Settings(str(tmp_path / "sequential"), tiny(), threads=1))
    lines: list[str] = []
    spread = RayExecutor(local_cpus=2).run(jobs, Settings(str(tmp_path / "ray"), tiny()), report=lines.append)
    assert alone.done == spread.done == 2 and not spread.failed
    assert lines[-1].startswith("sweep: 2/2 done, 0 running, 0 failed")
    runs = stored(tmp_path / "ray")
    assert len(runs) == 4 and runs == stored(tmp_path / "sequential")
    again = RayExecutor(local_cpus=2).run(jobs, Settings(str(tmp_path / "ray"), tiny()))  # nothing to train
    assert again.done == 2 and stored(tmp_path / "ray") == runs


def test_a_failing_job_is_reported_and_the_others_finish(tmp_path, local_ray):
    jobs = [Job("bin_majority", "ape"), Job("no_such_task", "ape")]
    tally = RayExecutor(local_cpus=2, retries=0).run(jobs, Settings(str(tmp_path / "runs"), tiny()))
    assert tally.done == 1 and [f.job.task for f in tally.failed] == ["no_such_task"]
    assert "no_such_task" in tally.failed[0].why
    assert {r[0] for r in stored(tmp_path / "runs")} == {"bin_majority"}


SWEEP = textwrap.dedent("""
    import sys
    from validation.runs import protocol
    from validation.config import ModelConfig, TrainConfig
    from validation.runs.executors import RayExecutor, Sequential, Settings, plan_jobs
    preset = protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(steps=600, batch_size=8, eval_every=20, test_size=8)),
        seeds=2, count_threshold=0.0)
    jobs = plan_jobs([("bin_majority", "ape"), ("parity", "ape")], preset)
    chosen = RayExecutor(local_cpus=2) if sys.argv[2] == "ray" else Sequential()
    tally = chosen.run(jobs, Settings(sys.argv[1], preset, threads=1))
    assert not tally.failed, tally.failed
""")


def _sweep(store: Path, how: str) -> subprocess.Popen:
    environment = {**os.environ, "RAY_worker_niceness": str(WORKER_NICENESS)}  # read by the Ray it starts
    return subprocess.Popen([sys.executable, "-c", SWEEP, str(store), how], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment)


def test_a_sweep_killed_mid_way_resumes_to_the_uninterrupted_store(tmp_path):
    pytest.importorskip("ray", reason="Ray is an optional extra")
    whole = _sweep(tmp_path / "whole", "sequential")
    killed = _sweep(tmp_path / "killed", "ray")
    deadline = time.monotonic() + 240
    partial = tmp_path / "killed" / "partial"
    while time.monotonic() < deadline and not (partial.is_dir() and any(partial.iterdir())):
        time.sleep(0.2)
    assert partial.is_dir() and any(partial.iterdir()), "the sweep saved no group in progress"
    os.killpg(killed.pid, signal.SIGKILL)  # the driver and everything it started
    killed.wait(30)
    assert len(Store(tmp_path / "killed").runs()) < 4
    report = [sys.executable, "-m", "crasp", "report", "--store", str(tmp_path / "killed")]
    left = subprocess.run([*report, "--out", str(tmp_path / "left")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert left.returncode == 0 and "in progress" in left.stdout, left.stderr  # what the killed sweep left
    resumed = _sweep(tmp_path / "killed", "ray")
    during = subprocess.run([*report, "--out", str(tmp_path / "during")], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert during.returncode == 0, during.stderr  # the store is read while the resumed sweep writes it
    assert resumed.wait(300) == 0, resumed.stderr.read()
    assert whole.wait(300) == 0, whole.stderr.read()
    assert stored(tmp_path / "killed") == stored(tmp_path / "whole") and len(stored(tmp_path / "whole")) == 4


def test_the_command_line_names_the_executor(tmp_path, monkeypatch):
    import io

    from crasp.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)
    err = io.StringIO()
    status = main(["validate", "bin_majority", "--executor", "ray", "--store", str(tmp_path / "runs")],
                  io.StringIO(), err)
    assert status == 1 and "pip install 'crasp-lengthgen[ray]'" in err.getvalue()
    err = io.StringIO()
    assert main(["arithmetic", "xu", "--address", "auto", "--store", str(tmp_path / "runs")], io.StringIO(), err) == 1
    assert "needs --executor ray" in err.getvalue()
    err = io.StringIO()
    assert main(["validate", "bin_majority", "--executor", "dask"], io.StringIO(), err) == 2
    assert main(["validate", "bin_majority", "--cpus-per-run", "0"], io.StringIO(), io.StringIO()) == 2


def test_a_worker_that_dies_is_retried_then_reported(tmp_path, local_ray):
    driver = os.getpid()
    fine = tiny()
    attempts = tmp_path / "attempts"

    def plan(task, variant):
        if os.getpid() != driver and task.name == "parity":
            with open(attempts, "a") as file:
                file.write("attempt\n")
            os._exit(3)  # the worker process dies, as on a lost node or the kernel's OOM killer
        return fine.plan(task, variant)

    dying = protocol.Preset("tiny", "tests", plan, seeds=2, count_threshold=0.0)
    lines: list[str] = []
    tally = RayExecutor(local_cpus=2, retries=1).run(plan_jobs(PAIRS, dying), Settings(str(tmp_path / "runs"), dying),
                                                     report=lines.append)
    assert tally.done == 1 and [f.job.task for f in tally.failed] == ["parity"]
    assert "died" in tally.failed[0].why.lower() or "crash" in tally.failed[0].why.lower(), tally.failed[0].why
    assert {r[0] for r in stored(tmp_path / "runs")} == {"bin_majority"}
    assert attempts.read_text().count("attempt") == 2  # the first try and one retry
    assert lines[-1].startswith("sweep: 1/2 done, 0 running, 1 failed")
