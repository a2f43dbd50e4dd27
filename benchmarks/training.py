"""Several seeds trained at once (one vmapped model) against the same seeds one at a time.

For each configuration and group size S, times ``--steps`` optimizer steps of a group of S seeds
and of one seed alone (after ``--warmup`` untimed steps), ``--repeats`` times, and quotes medians.
The speed-up is (S x seed-steps of the group per second) / (steps of one seed per second).

    python benchmarks/training.py                  # CPU, writes benchmarks/results/training-cpu.json
    python benchmarks/training.py --device cuda    # GPU, writes benchmarks/results/training-cuda.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import torch
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks import registry  # noqa: E402
from validation.config import ModelConfig, TrainConfig, Variant  # noqa: E402
from validation.train import SeedGroup  # noqa: E402

from steps import steps_per_second  # noqa: E402  (beside this script)

CONFIGS = (("bin_majority", "1l1h16d"), ("majority", "1l2h64d"), ("sort", "2l2h64d"))


def _steps_per_second(task, model, seeds, device, steps, warmup, repeats) -> float:
    config = TrainConfig(steps=10**6, eval_every=10**6, test_size=1)
    group = SeedGroup(registry.get(task), Variant.parse("ape"), ModelConfig.parse(model), config,
                      seeds=tuple(range(seeds)), device=device)
    return steps_per_second(group, steps, warmup, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--groups", default="4,8", help="group sizes to time (comma-separated)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records, rows = [], []
    for task, model in CONFIGS:
        alone = _steps_per_second(task, model, 1, args.device, args.steps, args.warmup, args.repeats)
        for size in map(int, args.groups.split(",")):
            together = _steps_per_second(task, model, size, args.device, args.steps, args.warmup, args.repeats)
            speedup = together * size / alone
            records.append({"task": task, "model": model, "seeds": size, "alone_steps_per_s": alone,
                            "group_steps_per_s": together, "speedup": speedup})
            rows.append([task, model, size, f"{alone:.1f}", f"{together:.1f}", f"{together * size:.1f}",
                         f"{speedup:.2f}x"])
            print(rows[-1], flush=True)
    print()
    print(tabulate(rows, headers=["task", "model", "seeds S", "1 seed: steps/s", "group: steps/s",
                                  "group: seed-steps/s", "speed-up"], tablefmt="github"))
    machine = {"device": args.device, "cpus": os.cpu_count(), "threads": torch.get_num_threads(),
               "python": platform.python_version(), "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None}
    out = ROOT / "benchmarks" / "results" / f"training-{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "settings": vars(args), "records": records}, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
