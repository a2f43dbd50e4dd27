"""Compiled Limit Transformers: compile time, size, longest exact length, throughput.

For each program: compile time; layers, heads, residual width, parameters (dense count and
nonzero); the longest length L in 10^3, 10^4, 10^5, 10^6 at which the compiled model agrees with
the interpreter at every position of a random input of L tokens (random offset), in float64 and
in float32 (the model is compiled for max_length = L; a refusal by the precision analysis is
reported as such); throughput in tokens/s of the compiled forward pass at 10^4 tokens (median of
3 runs), on CPU and, when CUDA is available, on GPU. Lengths whose residual stream would not fit
in the memory budget are skipped and marked.

    python benchmarks/compiler.py           # the library programs
    python benchmarks/compiler.py --tasks   # and a selection of task programs
    python benchmarks/compiler.py --all     # and every task program
    python benchmarks/compiler.py --quick   # lengths up to 10^4, for a smoke run
    python benchmarks/compiler.py --rpos    # only R_pos of the APE translations, N = 64 ... 4096
    python benchmarks/compiler.py --depth   # only layers against count depth, library and suite

``--depth`` compiles every library program and every task program (APE, and NoPE where it is a
different program) and lists its count depth, its compiled layers (of which attention layers) and
its compile time, with the totals for the library and the suite beside those of the previous
lowering (one layer per MLP step, :data:`OLD_LAYERS`); it writes ``results/compiled_depth.json``.

R_pos is the positional regularizer of Huang et al. (2025) of ``to_ape(model, N)``
for each library program, computed from the translated model's weights.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crasp import check, library  # noqa: E402
from limit_transformer import CompileConfig, CompileError, compile  # noqa: E402
from limit_transformer.ape import positional_regularizer, to_ape  # noqa: E402
from limit_transformer.runner import prepare  # noqa: E402
from limit_transformer.agreement import compare, random_inputs  # noqa: E402
from limit_transformer.depth import model_depth  # noqa: E402
from tasks import registry  # noqa: E402

SELECTED_TASKS = ("majority", "sort", "bin_majority_interleave", "tomita_4", "d_2", "aa_star",
                  "xu_addition", "xu_mod100_addition", "unique_copy")
OLD_LAYERS = {"library": 26, "suite": 1283}
"""Total layers under the previous lowering (commit 074ef97), measured with model_depth."""
MEMORY_BUDGET = 4 << 30  # bytes for one residual stream copy of the longest input


def programs(selected_tasks: bool, all_tasks: bool):
    for name in library.names():
        yield f"library/{name}", check(library.load(name))
    for task in registry.all_tasks():
        if all_tasks or (selected_tasks and task.name in SELECTED_TASKS):
            program = task.program("ape")
            if program is not None:
                yield f"task/{task.name}", check(program)


def longest_exact(checked, dtype: str, lengths: list[int], width: int) -> tuple[str, float]:
    best, seconds = "-", 0.0
    rng = np.random.default_rng(11)
    for length in lengths:
        if length * width * 8 * 2 > MEMORY_BUDGET:
            return (f"{best} (memory)" if best != "-" else "memory"), seconds
        try:
            model = compile(checked, CompileConfig(max_length=length, dtype=dtype))
        except CompileError:
            return f"{best} (refused at {length:.0e})", seconds
        inputs, offsets = random_inputs(checked, 1, length, rng)
        start = time.perf_counter()
        report = compare(model, checked, inputs, offsets)
        seconds += time.perf_counter() - start
        if not report.ok:
            return f"{best} (differs at {length:.0e})", seconds
        best = f"{length:.0e}"
    return best, seconds


def throughput(model, checked, device: str, length: int = 10_000, repeats: int = 3) -> float:
    model = model.to(device)
    inputs, offsets = random_inputs(checked, 1, length, np.random.default_rng(0))
    tokens, positions, _ = prepare(model, inputs, np.asarray(offsets))
    times = []
    with torch.no_grad():
        for _ in range(repeats + 1):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            model(tokens, positions)
            if device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
    return length / statistics.median(times[1:])


def depth_table() -> tuple[list[dict], dict]:
    """Count depth against compiled layers for every program, and the totals per group."""
    rows = []
    totals = {group: {"programs": 0, "count_depth": 0, "layers": 0, "old_layers": old}
              for group, old in OLD_LAYERS.items()}
    for group, name, checked in registry.written_programs():
        start = time.perf_counter()
        depth = model_depth(checked)
        row = {"program": name, "count_depth": checked.info.depth, "layers": depth.layers,
               "attention_layers": depth.attention_layers, "compile_s": round(time.perf_counter() - start, 3)}
        rows.append(row)
        total = totals[group]
        total["programs"] += 1
        total["count_depth"] += row["count_depth"]
        total["layers"] += row["layers"]
    return rows, totals


RPOS_LENGTHS = (64, 256, 1024, 4096)


def regularizer_table() -> list[dict]:
    """R_pos of the APE translation of every library program, per context length N."""
    rows = []
    for name in library.names():
        model = compile(library.load(name))
        row = {"program": f"library/{name}"}
        for n in RPOS_LENGTHS:
            row[f"N={n}"] = round(positional_regularizer(to_ape(model, n)), 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rpos", action="store_true")
    parser.add_argument("--depth", action="store_true")
    args = parser.parse_args()
    if args.depth:
        rows, totals = depth_table()
        print(tabulate(rows, headers="keys", tablefmt="github"))
        for group, total in totals.items():
            print(f"{group}: {total['programs']} programs, {total['layers']} layers in total "
                  f"(previous lowering {total['old_layers']}), count depth {total['count_depth']} in total")
        out = ROOT / "benchmarks" / "results" / "compiled_depth.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"totals": totals, "rows": rows}, indent=1))
        print(f"wrote {out}")
        return
    if args.rpos:
        rows = regularizer_table()
        print(tabulate(rows, headers="keys", tablefmt="github"))
        out = ROOT / "benchmarks" / "results" / "regularizer.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"lengths": list(RPOS_LENGTHS), "rows": rows}, indent=1))
        print(f"wrote {out}")
        return
    lengths = [10**3, 10**4] if args.quick else [10**3, 10**4, 10**5, 10**6]
    rows = []
    for name, checked in programs(args.tasks, args.all):
        start = time.perf_counter()
        model = compile(checked)
        compile_s = time.perf_counter() - start
        heads = sum(len(h) for h in model.spec.heads)
        f64, t64 = longest_exact(checked, "float64", lengths, model.spec.d_model)
        f32, t32 = longest_exact(checked, "float32", lengths, model.spec.d_model)
        cpu = throughput(model, checked, "cpu")
        gpu = throughput(model, checked, "cuda") if torch.cuda.is_available() else None
        row = {
            "program": name, "compile_s": round(compile_s, 3), "layers": model.spec.n_layers,
            "heads": heads, "width": model.spec.d_model, "parameters": model.parameter_count(),
            "nonzero": model.nonzero_count(), "exact_float64": f64, "exact_float32": f32,
            "cpu_tokens_per_s": round(cpu), "gpu_tokens_per_s": None if gpu is None else round(gpu),
            "check_seconds": round(t64 + t32, 1),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(tabulate(rows, headers="keys", tablefmt="github"))
    out = ROOT / "benchmarks" / "results" / "compiler.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({
        "machine": {"platform": platform.platform(), "cpus": torch.get_num_threads(),
                    "torch": torch.__version__, "cuda": torch.cuda.is_available()},
        "lengths": lengths, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
