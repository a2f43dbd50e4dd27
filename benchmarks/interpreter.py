"""Interpreter throughput against the naive reference evaluator, and the CLI on 10^6 tokens.

Throughput is positions x definitions per second (a batch of B inputs of length n counts B*n
positions), including token encoding. Each figure is the median of several runs in this one
process. Programs: Dyck-1 (global counts) and contains-ab (a local guard).

    python benchmarks/interpreter.py            # prints a table, writes benchmarks/results/interpreter.json
    python benchmarks/interpreter.py --quick    # smaller sizes, for a smoke run
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import crasp  # noqa: E402
from crasp.interpreter import run_in_chunks  # noqa: E402
from tests.reference import NaiveEvaluator  # noqa: E402

from timing import median_time  # noqa: E402  (beside this script)

PROGRAMS = {"global-count (dyck1)": "dyck1", "local-guard (contains_ab)": "contains_ab"}
MAX_TOKENS = 10**9  # per measurement: 1000 inputs of 10^6 tokens take about two minutes
NAIVE_MAX_WORK = 10**8  # naive evaluation is quadratic: n^2 * batch beyond this is estimated only


def make_inputs(alphabet: list[str], length: int, batch: int, rng) -> list[list[str]]:
    distinct = [rng.choice(alphabet, size=length).tolist() for _ in range(min(batch, 8))]
    return [distinct[k % len(distinct)] for k in range(batch)]


def interpreter_time(checked, inputs, alphabet) -> float:
    tokens = len(inputs) * len(inputs[0])
    repeats = 5 if tokens <= 10**6 else 3 if tokens <= 10**7 else 1

    def once():
        for _ in run_in_chunks(checked, inputs, alphabet=alphabet):
            pass

    return median_time(once, repeats)


def naive_time(program, inputs) -> float:
    def once():
        for tokens in inputs:
            NaiveEvaluator(program, tokens)

    return median_time(once, 3 if len(inputs[0]) <= 1000 else 1)


def cli_time(length: int, rng) -> float:
    line = " ".join(rng.choice(["(", ")"], size=length).tolist()) + "\n"
    command = [sys.executable, "-m", "crasp", "run", "dyck1"]

    def once():
        done = subprocess.run(command, input=line, capture_output=True, text=True, check=True)
        assert done.stdout.strip() in ("accept", "reject")

    return median_time(once, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="lengths up to 10^4 only")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "interpreter.json"))
    args = parser.parse_args()
    lengths = [10**k for k in range(2, 5 if args.quick else 7)]
    rng = np.random.default_rng(0)
    rows, records = [], []
    for label, name in PROGRAMS.items():
        program = crasp.library.load(name)
        checked = crasp.check(program)
        alphabet = sorted(checked.info.alphabet)
        definitions = len(checked.definitions)
        for batch in (1, 1000):
            for length in lengths:
                tokens = batch * length
                record = {"program": label, "length": length, "batch": batch, "definitions": definitions}
                if tokens > MAX_TOKENS:
                    record["skipped"] = f"{tokens:.0e} tokens is over the benchmark's {MAX_TOKENS:.0e} budget"
                    records.append(record)
                    rows.append([label, length, batch, "skipped", "", "", ""])
                    continue
                inputs = make_inputs(alphabet, length, batch, rng)
                seconds = interpreter_time(checked, inputs, alphabet)
                record["seconds"] = seconds
                record["throughput"] = tokens * definitions / seconds
                if length * length * batch <= NAIVE_MAX_WORK:
                    naive = naive_time(program, inputs)
                    record["naive_seconds"] = naive
                    record["naive_throughput"] = tokens * definitions / naive
                    record["speedup"] = naive / seconds
                records.append(record)
                rows.append([
                    label, length, batch, f"{seconds * 1e3:.2f}", f"{record['throughput']:.3g}",
                    f"{record['naive_throughput']:.3g}" if "naive_throughput" in record else "-",
                    f"{record['speedup']:.0f}x" if "speedup" in record else "-",
                ])
                print(rows[-1], flush=True)

    scaling = {}
    for label in PROGRAMS:
        points = [(r["length"], r["seconds"]) for r in records
                  if r["program"] == label and r["batch"] == 1 and "seconds" in r and r["length"] >= 10**4]
        if len(points) >= 2:
            x, y = np.log10([p[0] for p in points]), np.log10([p[1] for p in points])
            scaling[label] = float(np.polyfit(x, y, 1)[0])
    cli_length = 10**4 if args.quick else 10**6
    cli_seconds = cli_time(cli_length, rng)

    headers = ["program", "length", "batch", "ms (median)", "pos*defs/s", "naive pos*defs/s", "speedup"]
    print()
    print(tabulate(rows, headers=headers, tablefmt="github"))
    print()
    for label, slope in scaling.items():
        print(f"scaling exponent of time in length (batch 1, n >= 10^4), {label}: {slope:.2f}")
    print(f"CLI: `crasp run dyck1` on one stdin line of {cli_length:,} tokens: {cli_seconds:.2f} s "
          "(median of 3, process start included)")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": {"python": platform.python_version(), "processor": platform.processor(),
                    "numpy": np.__version__},
        "measurements": records,
        "scaling_exponent": scaling,
        "cli": {"length": cli_length, "seconds": cli_seconds},
    }, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
