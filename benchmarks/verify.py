"""The full verification of every library program of the task suite, timed.

Defaults of `crasp verify`: exhaustive up to the length that keeps the candidates within 20,000
(over at most 5 symbols), 200 random inputs up to length 500 (capped where a task runs out of
distinct symbols), every offset residue plus 2 random offsets.

    python benchmarks/verify.py     # prints a table, writes benchmarks/results/verify.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tasks  # noqa: E402
from crasp import check  # noqa: E402
from tasks.verify import verify  # noqa: E402


def main() -> None:
    rows, records = [], []
    for name in tasks.names():
        task = tasks.get(name)
        for variant in ("ape", "nope"):
            program = task.program(variant)
            if program is None:
                continue
            start = time.perf_counter()
            report = verify(task, program, scheme=variant)
            seconds = time.perf_counter() - start
            info = check(program).info
            record = {
                "task": name, "variant": variant, "ok": report.ok, "seconds": seconds,
                "definitions": info.definitions, "exhaustive_inputs": report.exhaustive_inputs,
                "exhaustive_length": report.exhaustive_length, "sampled_inputs": report.sampled_inputs,
                "max_sampled_length": report.max_sampled_length, "offsets": list(report.offsets),
                "checks": report.checks,
            }
            records.append(record)
            rows.append([name, variant, "PASS" if report.ok else "FAIL", info.definitions,
                         f"{report.exhaustive_inputs} (<= {report.exhaustive_length})",
                         f"{report.sampled_inputs} (<= {report.max_sampled_length})",
                         len(report.offsets), report.checks, f"{seconds:.1f}"])
            print(rows[-1], flush=True)
    print()
    print(tabulate(rows, headers=["task", "variant", "result", "defs", "exhaustive (len)",
                                  "sampled (len)", "offsets", "checks", "seconds"], tablefmt="github"))
    out = ROOT / "benchmarks" / "results" / "verify.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(records, indent=2) + "\n")
    print(f"wrote {out}")
    if not all(r["ok"] for r in records):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
