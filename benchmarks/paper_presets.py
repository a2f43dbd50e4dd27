"""How long the paper presets take: optimizer steps per second of each distinct paper plan, and
the hours a whole run of each needs.

``algorithmic``: for each algorithmic task with a published configuration (Huang et al.), APE and
NoPE, times the plan's model alone and as a group of the protocol's counted seeds (5, trained
together as ``crasp validate --preset paper`` trains them). The protocol trains seeds until 5 reach
exactness on the training bin, at most 3 groups (models deeper than 4 layers count whatever they
reach: one group); the projection gives both ends.

``xu``, ``sabbaghi``, ``duan``: for every run of ``crasp arithmetic NAME --preset paper``, one seed
(as ``--seeds 1`` trains it). The projection multiplies by the plan's step count (epochs x batches
per epoch, or its steps; Duan et al.'s ABC trains twice: a sinusoidal stage, then the calibrated
one).

Each rate is the median of ``--repeats`` timings of ``--steps`` steps after ``--warmup`` untimed
ones, the data streamed; evaluation is not timed. On a GPU, float32 products use TF32, as the
commands do.

    python benchmarks/paper_presets.py --device cuda --experiments algorithmic
    # writes benchmarks/results/paper-presets-algorithmic-cuda.json
    python benchmarks/paper_presets.py --device cuda --experiments xu,sabbaghi,duan
    # writes benchmarks/results/paper-presets-cuda.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

import torch
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks import registry  # noqa: E402
from validation.experiments.arithmetic import EXPERIMENTS  # noqa: E402
from validation.training.device import use_tensor_cores  # noqa: E402
from validation.config import Variant  # noqa: E402
from validation.runs.protocol import LARGE_LAYERS, PRESETS  # noqa: E402

from steps import steps_per_second, streamed_group, timing_arguments  # noqa: E402  (beside this script)


def _steps_per_second(plan, variant: Variant, device: str, steps: int, warmup: int, repeats: int,
                      seeds: int = 1) -> float:
    return steps_per_second(streamed_group(plan, variant, device, seeds), steps, warmup, repeats)


def _published(task) -> bool:
    return any(anchor.config for anchor in task.anchors)


def algorithmic(args) -> list[dict]:
    """One record per algorithmic task with a published configuration and per APE / NoPE."""
    preset, records = PRESETS["paper"], list[dict[str, Any]]()
    timing = (args.device, args.steps, args.warmup, args.repeats)
    for task in (t for t in registry.all_tasks() if t.family == "algorithmic" and _published(t)):
        for variant in ("ape", "nope"):
            kind = Variant.parse(variant)
            plan = preset.plan(task, kind)
            seeds = preset.seeds_for(task)
            alone = _steps_per_second(plan, kind, *timing)
            grouped = _steps_per_second(plan, kind, *timing, seeds=seeds)
            steps = plan.train.total_steps()
            groups = 1 if plan.model.n_layer > LARGE_LAYERS else preset.max_attempts
            hours = steps / grouped / 3600
            records.append({"task": task.name, "variant": variant, "model": plan.model.label, "steps": steps,
                            "seeds_per_group": seeds, "steps_per_s_alone": alone, "steps_per_s_group": grouped,
                            "hours_min": hours, "hours_max": groups * hours,
                            "hours_seeds_alone": seeds * steps / alone / 3600})
            print(records[-1], flush=True)
    rows = [[r["task"], r["variant"], r["model"], r["steps"], f"{r['steps_per_s_alone']:.1f}",
             f"{r['steps_per_s_group']:.1f}", f"{r['hours_min']:.2f}-{r['hours_max']:.2f}"] for r in records]
    print()
    group, most = preset.seeds, preset.seeds * preset.max_attempts
    print(tabulate(rows, headers=["task", "variant", "model", "steps", "steps/s (1 seed)", f"steps/s ({group} seeds)",
                                  f"hours ({group}-{most} seeds)"], tablefmt="github"))
    low, high = sum(r["hours_min"] for r in records), sum(r["hours_max"] for r in records)
    print(f"\nthe whole protocol, APE and NoPE: {low:.1f} to {high:.1f} hours")
    return records


def arithmetic(args, names: list[str]) -> list[dict]:
    """One record per run of the arithmetic experiments ``names``, one seed each."""
    rows, records, rates = [], list[dict[str, Any]](), {}
    for name in names:
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
    print(f"\nall runs, one seed each: {sum(r['hours'] for r in records):.1f} hours")
    return records


def _write(args, name: str, records: list[dict], total: dict) -> None:
    machine = {"device": args.device, "cpus": os.cpu_count(), "python": platform.python_version(),
               "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None}
    out = ROOT / "benchmarks" / "results" / f"{name}-{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "settings": vars(args), "records": records, **total},
                              indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    timing_arguments(parser, steps=30, warmup=5)
    parser.add_argument("--experiments", default="algorithmic,xu,sabbaghi,duan",
                        help="comma-separated: algorithmic and any of " + ", ".join(EXPERIMENTS))
    args = parser.parse_args()
    names = args.experiments.split(",")
    unknown = [n for n in names if n != "algorithmic" and n not in EXPERIMENTS]
    if unknown:
        parser.error(f"--experiments: unknown {', '.join(unknown)} (expected algorithmic, {', '.join(EXPERIMENTS)})")
    use_tensor_cores(args.device)
    if "algorithmic" in names:
        records = algorithmic(args)
        _write(args, "paper-presets-algorithmic", records,
               {"total_hours_min": sum(r["hours_min"] for r in records),
                "total_hours_max": sum(r["hours_max"] for r in records)})
    papers = [n for n in names if n != "algorithmic"]
    if papers:
        records = arithmetic(args, papers)
        _write(args, "paper-presets", records, {"total_hours": sum(r["hours"] for r in records)})


if __name__ == "__main__":
    main()
