"""The communication checker, timed: exact R(N) for binary tasks up to N = 14 per side.

At N = 14 the matrix has 2^14 x 2^14 = 268 million entries (each Bob's whole output vector).
Every size is counted three times (medians quoted); N = 14 once per task unless --repeats says more.

    python benchmarks/communication.py            # N = 10..14, writes benchmarks/results/communication.json
    python benchmarks/communication.py --quick    # N = 8..11
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tasks  # noqa: E402
from tasks.communication import count_rows  # noqa: E402

TASKS = ("parity", "bin_majority", "repeat_copy", "tomita_3", "d_4")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per size below the largest")
    args = parser.parse_args()
    sizes = range(8, 12) if args.quick else range(10, 15)
    records, rows = [], []
    for name in TASKS:
        task = tasks.get(name)
        for n in sizes:
            repeats = 1 if n == sizes[-1] else args.repeats
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                count, total = count_rows(task, n)
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            pairs = 4 ** n
            records.append({"task": name, "n": n, "rows": count, "total": total, "pairs": pairs,
                            "seconds": median, "repeats": repeats})
            rows.append([name, n, count, f"{pairs:.3g}", f"{median:.2f}", f"{pairs / median / 1e6:.1f}"])
            print(rows[-1], flush=True)
    print()
    print(tabulate(rows, headers=["task", "N", "R(N)", "entries", "seconds (median)", "M entries/s"],
                   tablefmt="github"))
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine()}
    out = ROOT / "benchmarks" / "results" / ("communication-quick.json" if args.quick else "communication.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "records": records}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
