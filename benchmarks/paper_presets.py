"""How long the paper presets take: optimizer steps per second of each distinct paper plan, eager
(before) and captured (after) side by side, and the hours a whole run of each needs.

``algorithmic``: for each algorithmic task with a published configuration (Huang et al.), APE and
NoPE, times the plan's model alone and as a group of the protocol's counted seeds (5, trained
together as ``crasp validate --preset paper`` trains them). The protocol trains seeds until 5 reach
exactness on the training bin, at most 3 groups (models deeper than 4 layers count whatever they
reach: one group); the projection gives both ends. ``--side-by-side N`` also times the groups of
the small models (up to 4 layers) N at a time in threads, as ``--executor side-by-side`` trains
them, and projects the protocol with them packed so.

``xu``, ``sabbaghi``, ``duan``: for every run of ``crasp arithmetic NAME --preset paper``, one seed
(as ``--seeds 1`` trains it). The projection multiplies by the plan's step count (epochs x batches
per epoch, or its steps; Duan et al.'s ABC trains twice: a sinusoidal stage, then the calibrated
one).

Each rate is the median of ``--repeats`` timings of ``--steps`` steps after ``--warmup`` untimed
ones (which, for the captured step, include its capture), the data drawn as the preset draws it
(on the device where it can); evaluation is not timed. ``--steppings`` chooses the ways of
stepping compared (default eager,captured; on a CPU the captured step runs without a graph),
``--precision`` the arithmetic (default: the preset's).

    python benchmarks/paper_presets.py --device cuda --experiments algorithmic --side-by-side 4
    # writes benchmarks/results/paper-presets-algorithmic-cuda.json
    python benchmarks/paper_presets.py --device cuda --experiments xu,sabbaghi,duan
    # writes benchmarks/results/paper-presets-cuda.json
"""

from __future__ import annotations

import argparse
import dataclasses
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
from validation.config import ModelConfig, Variant  # noqa: E402
from validation.runs.protocol import LARGE_LAYERS, PRESETS  # noqa: E402

from steps import steps_per_second, streamed_group, timing_arguments  # noqa: E402  (beside this script)


def _steps_per_second(plan, variant: Variant, args, stepping: str, seeds: int = 1) -> float:
    group = streamed_group(plan, variant, args.device, seeds, step=stepping)
    return steps_per_second(group, args.steps, args.warmup, args.repeats)


def _planned(task, variant: Variant, args):
    plan = PRESETS["paper"].plan(task, variant)
    if args.precision:
        plan = dataclasses.replace(plan, train=dataclasses.replace(plan.train, precision=args.precision))
    return plan


def _published(task) -> bool:
    return any(anchor.config for anchor in task.anchors)


def algorithmic(args) -> tuple[list[dict], dict]:
    """One record per algorithmic task with a published configuration and per APE / NoPE, each way
    of stepping timed; and, with ``--side-by-side``, the small models' groups timed together."""
    preset, records = PRESETS["paper"], list[dict[str, Any]]()
    steppings = args.steppings.split(",")
    for task in (t for t in registry.all_tasks() if t.family == "algorithmic" and _published(t)
                 and (not args.tasks or t.name in args.tasks.split(","))):
        for variant in ("ape", "nope"):
            kind = Variant.parse(variant)
            plan = _planned(task, kind, args)
            seeds = preset.seeds_for(task)
            steps = plan.train.total_steps()
            groups = 1 if plan.model.n_layer > LARGE_LAYERS else preset.max_attempts
            record: dict[str, Any] = {"task": task.name, "variant": variant, "model": plan.model.label,
                                      "steps": steps, "seeds_per_group": seeds, "groups_max": groups,
                                      "precision": plan.train.precision, "sampler": plan.train.sampler}
            for stepping in steppings:
                alone = _steps_per_second(plan, kind, args, stepping)
                grouped = _steps_per_second(plan, kind, args, stepping, seeds=seeds)
                hours = steps / grouped / 3600
                record[stepping] = {"steps_per_s_alone": alone, "steps_per_s_group": grouped, "hours_min": hours,
                                    "hours_max": groups * hours}
            records.append(record)
            print(json.dumps(record), flush=True)
    headers = ["task", "variant", "model", "steps"]
    rows = [[r["task"], r["variant"], r["model"], r["steps"]] for r in records]
    for stepping in steppings:
        headers += [f"{stepping}: steps/s (1 seed)", "(5 seeds)", "hours"]
        for row, r in zip(rows, records):
            timing = r[stepping]
            row += [f"{timing['steps_per_s_alone']:.1f}", f"{timing['steps_per_s_group']:.1f}",
                    f"{timing['hours_min']:.2f}-{timing['hours_max']:.2f}"]
    print()
    print(tabulate(rows, headers=headers, tablefmt="github"))
    totals = {}
    for stepping in steppings:
        low = sum(r[stepping]["hours_min"] for r in records)
        high = sum(r[stepping]["hours_max"] for r in records)
        totals[stepping] = {"total_hours_min": low, "total_hours_max": high}
        print(f"the whole protocol, APE and NoPE, {stepping}: {low:.1f} to {high:.1f} hours")
    if args.side_by_side > 1:
        totals["side_by_side"] = side_by_side(args, records, steppings[-1])
    return records, totals


def side_by_side(args, records: list[dict], stepping: str) -> dict:
    """The small models' groups (up to :data:`LARGE_LAYERS` layers) trained ``args.side_by_side`` at a
    time in threads, each on a CUDA stream of its own: the steps all of them take per second of wall
    time together, and the protocol's hours with them packed so (the large models train alone)."""
    import threading
    import time

    from validation.runs.executors import _own_stream

    preset = PRESETS["paper"]
    small = [r for r in records if ModelConfig.parse(r["model"]).n_layer <= LARGE_LAYERS]
    made = []
    for r in small:
        kind = Variant.parse(r["variant"])
        plan = _planned(registry.get(r["task"]), kind, args)
        made.append(streamed_group(plan, kind, args.device, preset.seeds, step=stepping))
    for group in made:
        for _ in range(args.warmup):
            group.train_step()
    barrier: threading.Barrier  # one per batch of groups started together, set below
    done: dict[int, float] = {}

    def work(k: int) -> None:
        with _own_stream(args.device):
            barrier.wait()
            start = time.perf_counter()
            for _ in range(args.steps):
                made[k].train_step()
            if made[k].device.type == "cuda":
                torch.cuda.synchronize(made[k].device)
            done[k] = time.perf_counter() - start

    started = time.perf_counter()
    for first in range(0, len(made), args.side_by_side):
        batch = [threading.Thread(target=work, args=(k,)) for k in range(first, min(first + args.side_by_side,
                                                                                      len(made)))]
        barrier = threading.Barrier(len(batch))
        for thread in batch:
            thread.start()
        for thread in batch:
            thread.join()
    wall = time.perf_counter() - started
    alone = sum(args.steps / r[stepping]["steps_per_s_group"] for r in small)
    speedup = alone / wall
    small_hours = sum(r[stepping]["hours_min"] for r in small) / speedup
    large_hours = sum(r[stepping]["hours_min"] for r in records if r not in small)
    result = {"at_once": args.side_by_side, "groups": len(made), "wall_seconds": wall,
              "one_after_another_seconds": alone, "speedup": speedup,
              "protocol_hours_min": small_hours + large_hours,
              "protocol_hours_max": sum(r[stepping]["hours_max"] for r in small) / speedup + large_hours}
    print(f"side by side, {args.side_by_side} groups at a time ({stepping}): {speedup:.2f}x the groups one after "
          f"another; the whole protocol {result['protocol_hours_min']:.1f} to {result['protocol_hours_max']:.1f} "
          f"hours", flush=True)
    return result


def arithmetic(args, names: list[str]) -> tuple[list[dict], dict]:
    """One record per run of the arithmetic experiments ``names``, one seed each, each way of
    stepping timed."""
    rows, records, rates = [], list[dict[str, Any]](), {}
    steppings = args.steppings.split(",")
    for name in names:
        for run in EXPERIMENTS[name].runs("paper"):
            calibrated = run.variant.startswith("abc")
            timed = Variant.parse("sinusoidal" if calibrated else run.variant)  # ABC's stages cost as much
            plan = _planned(registry.get(run.task), timed, args)
            same_steps = "sabbaghi_addition" if plan.task.name.startswith("sabbaghi_addition") else plan.task.name
            steps = plan.train.total_steps() * (2 if calibrated else 1)
            record: dict[str, Any] = {"experiment": name, "task": run.task, "variant": run.variant,
                                      "model": plan.model.label, "steps": steps, "precision": plan.train.precision,
                                      "sampler": plan.train.sampler}
            row = [name, run.task, run.variant, plan.model.label, steps]
            for stepping in steppings:
                shape = (same_steps, timed.name, plan.model.label, stepping)  # training distributions cost the same
                if shape not in rates:
                    rates[shape] = _steps_per_second(plan, timed, args, stepping)
                record[stepping] = {"steps_per_s": rates[shape], "hours": steps / rates[shape] / 3600}
                row += [f"{rates[shape]:.1f}", f"{record[stepping]['hours']:.2f}"]
            records.append(record)
            rows.append(row)
            print(json.dumps(record), flush=True)
    print()
    headers = ["experiment", "task", "variant", "model", "steps"]
    for stepping in steppings:
        headers += [f"{stepping}: steps/s", "hours (1 seed)"]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    totals = {stepping: {"total_hours": sum(r[stepping]["hours"] for r in records)} for stepping in steppings}
    for stepping, total in totals.items():
        print(f"all runs, one seed each, {stepping}: {total['total_hours']:.1f} hours")
    return records, totals


def _write(args, name: str, records: list[dict], total: dict) -> None:
    machine = {"device": args.device, "cpus": os.cpu_count(), "python": platform.python_version(),
               "torch": torch.__version__, "processor": platform.processor() or platform.machine(),
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
    parser.add_argument("--steppings", default="eager,captured",
                        help="comma-separated ways of stepping to time side by side: eager, captured, compiled")
    parser.add_argument("--precision", choices=["tf32", "fp32", "bf16"], help="instead of the preset's precision")
    parser.add_argument("--side-by-side", type=int, default=0, metavar="N",
                        help="also time the small models' groups N at a time (algorithmic)")
    parser.add_argument("--tasks", help="algorithmic: only these tasks (comma-separated)")
    parser.add_argument("--out", help="the results file's name (default: from the experiments and the device)")
    args = parser.parse_args()
    names = args.experiments.split(",")
    unknown = [n for n in names if n != "algorithmic" and n not in EXPERIMENTS]
    if unknown:
        parser.error(f"--experiments: unknown {', '.join(unknown)} (expected algorithmic, {', '.join(EXPERIMENTS)})")
    if "algorithmic" in names:
        records, totals = algorithmic(args)
        _write(args, args.out or "paper-presets-algorithmic", records, totals)
    papers = [n for n in names if n != "algorithmic"]
    if papers:
        records, totals = arithmetic(args, papers)
        _write(args, args.out or "paper-presets", records, totals)


if __name__ == "__main__":
    main()
