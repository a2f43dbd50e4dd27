"""Several seeds trained at once (one vmapped model) against the same seeds one at a time.

For each configuration and group size S, times ``--steps`` optimizer steps of a group of S seeds
and of one seed alone (after ``--warmup`` untimed steps), ``--repeats`` times, and quotes medians.
The speed-up is (S x seed-steps of the group per second) / (steps of one seed per second).

    python benchmarks/training.py                  # CPU, writes benchmarks/results/training-cpu.json
    python benchmarks/training.py --device cuda    # GPU, writes benchmarks/results/training-cuda.json

``--compare`` times instead the host-side work of a step before and after it was made faster
(fused per-seed clipping, numpy collation; ``--compile``: also the compiled step, ``--step
compiled``) for ``--models`` x ``--seeds`` on ``--task``. "Before" runs the same group with the
reference paths kept beside the fast ones (:func:`validation.training.step.clip_per_seed_reference`,
:meth:`validation.data.encoding.Encoding._collate_reference`), and the timings of the variants alternate
within each repeat, so a busy machine slows them alike; it prints the table of
docs/performance.md and writes ``benchmarks/results/training-compare-<device>.json``.

    python benchmarks/training.py --compare --models 6l6h384d,12l12h768d --seeds 1,5 --steps 5

``--host`` times the host's part of a step instead, before and after: drawing the batch, collating
it (or drawing and framing it on the device, ``--sampler device``), and the host floor, a step of a
model with the same layers and heads, 2 wide per head, on one single-token example per seed (the
operators of the full model, with negligible arithmetic), eager before and after and compiled
(``--step compiled``); it writes ``benchmarks/results/training-host-<device>.json``.

    python benchmarks/training.py --host --models 6l6h384d,12l12h768d --seeds 1,5 --steps 20 --repeats 5
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks import registry  # noqa: E402
from validation.config import ModelConfig, TrainConfig, Variant  # noqa: E402
from validation.data.encoding import Encoding  # noqa: E402
from validation.data.feed import Feed  # noqa: E402
from validation.training.group import SeedGroup  # noqa: E402
from validation.training.step import clip_per_seed_reference  # noqa: E402

from steps import steps_per_second, time_steps, timing_arguments  # noqa: E402  (beside this script)
from timing import median_time  # noqa: E402

CONFIGS = (("bin_majority", "1l1h16d"), ("majority", "1l2h64d"), ("sort", "2l2h64d"))


def _steps_per_second(task, model, seeds, device, steps, warmup, repeats) -> float:
    config = TrainConfig(steps=10**6, eval_every=10**6, test_size=1)
    group = SeedGroup(registry.get(task), Variant.parse("ape"), ModelConfig.parse(model), config,
                      seeds=tuple(range(seeds)), device=device)
    return steps_per_second(group, steps, warmup, repeats)


@contextlib.contextmanager
def reference_paths(group):
    """Steps as they ran before the host-side work was made faster: per-tensor clipping and
    per-example collation (the same numbers, bit for bit, on the CPU)."""
    import validation.training.step as step

    saved = step.clip_per_seed, Encoding.collate
    step.clip_per_seed = lambda grads, max_norm: clip_per_seed_reference(grads, max_norm)
    Encoding.collate = Encoding._collate_reference
    try:
        yield
    finally:
        step.clip_per_seed, Encoding.collate = saved


def _group(task, model: ModelConfig, seeds: int, args, step: str):
    config = TrainConfig(steps=10**6, eval_every=10**6, test_size=1, batch_size=args.batch_size)
    return SeedGroup(task, Variant.parse("ape"), model, config, seeds=tuple(range(seeds)), device=args.device,
                     step=step)


def compare(args) -> None:
    """Steps per second before and after (and compiled), alternating within each repeat."""
    records, rows = [], []
    task = registry.get(args.task)
    for model in args.models.split(","):
        for seeds in map(int, args.seeds.split(",")):
            groups = {"before": (reference_paths, _group(task, ModelConfig.parse(model), seeds, args, "eager"),
                                 args.warmup),
                      "after": (contextlib.nullcontext, _group(task, ModelConfig.parse(model), seeds, args, "eager"),
                                args.warmup)}
            if args.compile:
                groups["compiled"] = (contextlib.nullcontext,
                                      _group(task, ModelConfig.parse(model), seeds, args, "compiled"),
                                      args.compile_warmup)
            times: dict[str, list[float]] = {name: [] for name in groups}
            for name, (paths, group, warmup) in groups.items():
                with paths(group):
                    time_steps(group, warmup)
            for _ in range(args.repeats):
                for name, (paths, group, _) in groups.items():
                    with paths(group):
                        times[name].append(time_steps(group, args.steps))
            rate = {name: args.steps / statistics.median(t) for name, t in times.items()}
            record = {"task": args.task, "model": model, "seeds": seeds, "steps_per_s": rate,
                      "seconds": times}
            records.append(record)
            row = [model, seeds, _rate(rate["before"]), _rate(rate["after"]),
                   f"{rate['after'] / rate['before']:.2f}x"]
            if args.compile:
                row += [_rate(rate["compiled"]), f"{rate['compiled'] / rate['before']:.2f}x"]
            rows.append(row)
            print(row, flush=True)
            del groups
    headers = ["model", "seeds", "before: steps/s", "after: steps/s", "after/before"]
    if args.compile:
        headers += ["compiled: steps/s", "compiled/before"]
    print()
    print(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
    _write(args, f"training-compare-{args.device.split(':')[0]}.json", records, merge=True)


def host(args) -> None:
    """Host time per optimizer step, before and after: drawing the batch, collating it, and the
    host floor of the step (the time to issue its operators, measured on a model of the same
    layers and heads, 2 wide per head, on one single-token example per seed, where the arithmetic
    is negligible: the operators, and so their dispatch, are those of the full-width model)."""
    task = registry.get(args.task)
    records, rows = [], []
    for model in args.models.split(","):
        full = ModelConfig.parse(model)
        thin = ModelConfig(full.n_layer, full.n_head, 2 * full.n_head)
        for seeds in map(int, args.seeds.split(",")):
            probe = _group(task, thin, seeds, args, "eager")
            streams = probe.feed.streams
            draw = _median_ms(lambda: [stream.next(args.batch_size) for stream in streams], args.repeats * 5)
            examples = [e for stream in streams for e in stream.next(args.batch_size)]
            collate = {"before": _median_ms(lambda: probe.encoding._collate_reference(examples), args.repeats * 5),
                       "after": _median_ms(lambda: probe.encoding.collate(examples), args.repeats * 5)}
            drawn = None
            if task.sample_batch is not None:  # drawn and framed on the device, a chunk of steps at a time
                device_feed = Feed(task, probe.encoding, list(range(seeds)),
                                   TrainConfig(batch_size=args.batch_size, sampler="device"), args.device)
                drawn = _median_ms(device_feed.next, args.repeats * 50)
            one = probe.encoding.collate([task.example(task.sample_input(task.min_length or 1,
                                                                         np.random.default_rng(0)))] * seeds)
            batch = one.map(lambda t: t.reshape(seeds, 1, *t.shape[1:]).to(probe.device))
            groups = {"before": (reference_paths, _group(task, thin, seeds, args, "eager")),
                      "after": (contextlib.nullcontext, _group(task, thin, seeds, args, "eager")),
                      "compiled": (contextlib.nullcontext, _group(task, thin, seeds, args, "compiled"))}
            for _, group in groups.values():
                group.feed.next = lambda: batch
            floor: dict[str, list[float]] = {name: [] for name in groups}
            for name, (paths, group) in groups.items():
                with paths(group):
                    time_steps(group, args.compile_warmup if name == "compiled" else args.warmup)
            for _ in range(args.repeats):
                for name, (paths, group) in groups.items():
                    with paths(group):
                        floor[name].append(1e3 * time_steps(group, args.steps) / args.steps)
            floor_ms = {name: statistics.median(t) for name, t in floor.items()}
            total = {name: draw + collate["before" if name == "before" else "after"] + floor_ms[name]
                     for name in groups}
            if drawn is not None:
                total["compiled, device"] = drawn + floor_ms["compiled"]
            record = {"task": args.task, "model": model, "floor_model": thin.label, "seeds": seeds,
                      "draw_ms": draw, "collate_ms": collate, "device_batch_ms": drawn, "floor_ms": floor_ms,
                      "floor_timings_ms": floor, "host_ms": total,
                      "ratio": {name: value / total["before"] for name, value in total.items()}}
            records.append(record)
            rows.append([model, seeds, f"{draw:.2f} / {collate['before']:.2f} / {collate['after']:.2f}",
                         "-" if drawn is None else f"{drawn:.2f}",
                         " / ".join(f"{floor_ms[n]:.2f}" for n in groups),
                         " / ".join(f"{value:.1f}" for value in total.values()),
                         " / ".join(f"{value / total['before']:.2f}x" for name, value in total.items()
                                    if name != "before")])
            print(rows[-1], flush=True)
            del groups
    print()
    print(tabulate(rows, headers=["model", "seeds", "draw / collate before / after, ms", "device batch, ms",
                                  "floor ms: before / after / compiled",
                                  "host ms: before / after / compiled / compiled, device",
                                  "ratio to before: after / compiled / compiled, device"],
                   tablefmt="github", disable_numparse=True))
    _write(args, f"training-host-{args.device.split(':')[0]}.json", records, merge=True)


def _median_ms(run, repeats: int) -> float:
    return 1e3 * median_time(run, repeats)


def _rate(value: float) -> str:
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _write(args, name: str, records: list, merge: bool = False) -> None:
    """Write the records with the machine and settings; ``merge``: keep the records of an earlier
    file for configurations this run did not time (each record then carries its settings)."""
    machine = {"device": args.device, "cpus": os.cpu_count(), "threads": torch.get_num_threads(),
               "python": platform.python_version(), "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None}
    out = ROOT / "benchmarks" / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    if merge:
        records = [{**r, "settings": vars(args)} for r in records]
        key = lambda r: (r["task"], r["model"], r["seeds"])  # noqa: E731
        timed = {key(r) for r in records}
        if out.exists():
            earlier = json.loads(out.read_text())["records"]
            records = [r for r in earlier if key(r) not in timed] + records
    out.write_text(json.dumps({"machine": machine, "settings": vars(args), "records": records}, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    timing_arguments(parser, steps=20, warmup=3)
    parser.add_argument("--groups", default="4,8", help="group sizes to time (comma-separated)")
    parser.add_argument("--compare", action="store_true",
                        help="time steps before and after the host-side speed-ups instead")
    parser.add_argument("--task", default="bin_majority", help="--compare: the task")
    parser.add_argument("--models", default="6l6h384d,12l12h768d", help="--compare: model labels (comma-separated)")
    parser.add_argument("--seeds", default="1,5", help="--compare: group sizes (comma-separated)")
    parser.add_argument("--batch-size", type=int, default=64, help="--compare: examples per seed and step")
    parser.add_argument("--compile", action="store_true", help="--compare: also time the compiled step")
    parser.add_argument("--host", action="store_true",
                        help="time the host's part of a step (draw, collate, operator dispatch) before and after")
    parser.add_argument("--compile-warmup", type=int, default=8,
                        help="--compare: untimed compiled steps (one graph per batch width is built)")
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    if args.host:
        host(args)
        return
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
    _write(args, f"training-{args.device.split(':')[0]}.json", records)


if __name__ == "__main__":
    main()
