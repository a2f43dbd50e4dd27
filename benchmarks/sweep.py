"""Wall time of a sweep of 8 small runs (4 tasks x 2 seeds, one seed group per task) with the
sequential executor and with a local Ray, on this machine. Each executor starts from an empty
store; the Ray figure includes starting Ray (printed apart).

    python benchmarks/sweep.py               # writes benchmarks/results/sweep.json
    python benchmarks/sweep.py --cpus 4      # a Ray of 4 CPUs (default: every core)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validation.runs import protocol  # noqa: E402
from validation.config import ModelConfig, TrainConfig  # noqa: E402
from validation.runs.executors import RayExecutor, Sequential, Settings, plan_jobs, require_ray  # noqa: E402

TASKS = ["bin_majority", "parity", "majority", "unique_copy"]


def preset(steps: int) -> protocol.Preset:
    return protocol.Preset("bench", "benchmark", lambda task, variant: protocol.Plan(
        task, ModelConfig(2, 2, 32), TrainConfig(steps=steps, batch_size=32, eval_every=steps, test_size=64)),
        seeds=2, count_threshold=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "sweep.json")
    args = parser.parse_args()
    rules = preset(args.steps)
    jobs = plan_jobs([(task, "ape") for task in TASKS], rules)
    work = Path(tempfile.mkdtemp())

    start = time.perf_counter()
    Sequential().run(jobs, Settings(str(work / "sequential"), rules, threads=1))
    sequential = time.perf_counter() - start

    ray = require_ray()
    start = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    started = time.perf_counter() - start
    start = time.perf_counter()
    RayExecutor().run(jobs, Settings(str(work / "ray"), rules, threads=1))
    spread = time.perf_counter() - start
    ray.shutdown()

    rows = [["sequential (1 thread)", f"{sequential:.1f}", "-"],
            [f"Ray, {args.cpus} CPUs, 1 per task", f"{spread:.1f}", f"{started:.1f}"]]
    print(f"{len(TASKS)} tasks x 2 seeds, 2l2h32d, {args.steps} steps each, {os.cpu_count()} cores")
    print(tabulate(rows, headers=["executor", "sweep s", "starting Ray s"], tablefmt="github"))
    print(f"speed-up without Ray's start: {sequential / spread:.2f}x; with it: {sequential / (spread + started):.2f}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "runs": 2 * len(TASKS), "steps": args.steps, "sequential_s": sequential, "ray_s": spread,
        "ray_start_s": started, "ray_cpus": args.cpus}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
