"""AdamW's fused kernel against its default (multi-tensor) one, on the paper presets' models.

For one run of each model size of ``crasp arithmetic xu|sabbaghi|duan --preset paper`` (one seed,
its data streamed), times ``--steps`` optimizer steps after ``--warmup`` untimed ones, ``--repeats``
times, with each AdamW implementation, alternating the two, and quotes the medians and their ratio.
Training uses the fused kernel on a GPU only: on a CPU it would change the last bits of every step,
and the documented results would no longer be reproduced exactly by their commands.

    python benchmarks/optimizer.py --device cuda   # writes benchmarks/results/optimizer-cuda.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import torch
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks import registry  # noqa: E402
from validation.training.device import use_tensor_cores  # noqa: E402
from validation.config import Variant  # noqa: E402
from validation.runs.protocol import PRESETS  # noqa: E402

from steps import steps_per_second, streamed_group, timing_arguments  # noqa: E402  (beside this script)

RUNS = (("xu_addition", "ape"), ("sabbaghi_addition", "rpe"), ("duan_addition", "sinusoidal"))
"""One run per model size of the paper presets: 6l6h384d decoder, 6l8h768d encoder, 6l8h128d
encoder-decoder."""


def adamw(group, fused: bool) -> torch.optim.AdamW:
    """The group's optimizer rebuilt with the same parameter groups, fused or not."""
    groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in group.optimizer.param_groups]
    return torch.optim.AdamW(groups, lr=group.config.lr, fused=fused)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    timing_arguments(parser, steps=20, warmup=5)
    args = parser.parse_args()
    use_tensor_cores(args.device)
    records, rows = [], []
    for task, variant in RUNS:
        kind = Variant.parse(variant)
        plan = PRESETS["paper"].plan(registry.get(task), kind)
        group = streamed_group(plan, kind, args.device)
        rates = {False: [], True: []}
        for _ in range(args.repeats):  # alternated, so that drift in the machine hits both alike
            for fused in (False, True):
                group.optimizer = adamw(group, fused)
                rates[fused].append(steps_per_second(group, args.steps, args.warmup, 1))
        default, fused = statistics.median(rates[False]), statistics.median(rates[True])
        records.append({"task": task, "variant": variant, "model": plan.model.label,
                        "default_steps_per_s": default, "fused_steps_per_s": fused,
                        "time_saved": 1 - default / fused})
        rows.append([task, variant, plan.model.label, f"{1000 / default:.1f}", f"{1000 / fused:.1f}",
                     f"{100 * (1 - default / fused):.0f}%"])
        print(rows[-1], flush=True)
    print()
    print(tabulate(rows, headers=["task", "variant", "model", "ms/step (default)", "ms/step (fused)",
                                  "time saved"], tablefmt="github"))
    machine = {"device": args.device, "cpus": os.cpu_count(), "threads": torch.get_num_threads(),
               "python": platform.python_version(), "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None}
    out = ROOT / "benchmarks" / "results" / f"optimizer-{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "settings": vars(args), "records": records}, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
