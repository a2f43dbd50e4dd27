"""How long the arithmetic experiments' ``paper`` presets take: optimizer steps per second of each
distinct paper plan (one seed, as ``--seeds 1`` trains it), and the hours a whole run of each needs.

For every run of ``crasp arithmetic xu|sabbaghi|duan --preset paper``, builds the plan's model and
data, times ``--steps`` optimizer steps after ``--warmup`` untimed ones, ``--repeats`` times, and
quotes the median. The projection multiplies by the plan's step count (epochs x batches per epoch,
or its steps; Duan et al.'s ABC trains twice: a sinusoidal stage, then the calibrated one). On a
GPU, float32 products use TF32, as the commands do.

    python benchmarks/paper_presets.py --device cuda   # writes benchmarks/results/paper-presets-cuda.json
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
from validation.arithmetic import EXPERIMENTS  # noqa: E402
from validation.cli import use_tensor_cores  # noqa: E402
from validation.config import Variant  # noqa: E402
from validation.protocol import PRESETS  # noqa: E402

from steps import steps_per_second, streamed_group  # noqa: E402  (beside this script)


def _steps_per_second(plan, variant: Variant, device: str, steps: int, warmup: int, repeats: int) -> float:
    return steps_per_second(streamed_group(plan, variant, device), steps, warmup, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--experiments", default="xu,sabbaghi,duan")
    args = parser.parse_args()
    use_tensor_cores(args.device)
    rows, records, rates = [], [], {}
    for name in args.experiments.split(","):
        for run in EXPERIMENTS[name].runs("paper"):
            calibrated = run.variant.startswith("abc")
            timed = Variant.parse("sinusoidal" if calibrated else run.variant)  # ABC's stages cost as much
            plan = PRESETS["paper"].plan(registry.get(run.task), timed)
            same_steps = "sabbaghi_addition" if plan.task.name.startswith("sabbaghi_addition") else plan.task.name
            shape = (same_steps, timed.name, plan.model.label)  # training distributions cost the same
            if shape not in rates:
                rates[shape] = _steps_per_second(plan, timed, args.device, args.steps, args.warmup, args.repeats)
            steps = plan.train.total_steps() * (2 if calibrated else 1)
            hours = steps / rates[shape] / 3600
            records.append({"experiment": name, "task": run.task, "variant": run.variant, "model": plan.model.label,
                            "steps": steps, "steps_per_s": rates[shape], "hours": hours})
            rows.append([name, run.task, run.variant, plan.model.label, steps, f"{rates[shape]:.1f}", f"{hours:.2f}"])
            print(rows[-1], flush=True)
    print()
    print(tabulate(rows, headers=["experiment", "task", "variant", "model", "steps", "steps/s", "hours (1 seed)"],
                   tablefmt="github"))
    total = sum(r["hours"] for r in records)
    print(f"\nall runs, one seed each: {total:.1f} hours")
    machine = {"device": args.device, "cpus": os.cpu_count(), "python": platform.python_version(),
               "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None}
    out = ROOT / "benchmarks" / "results" / f"paper-presets-{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "settings": vars(args), "records": records,
                               "total_hours": total}, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
