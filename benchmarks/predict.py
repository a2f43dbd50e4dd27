"""How long `predict` takes on new tasks, and what it decides: the user-style tasks of
tests/user_tasks.py, without their programs (as a user first runs it), under the quick and the
default budget; the median of three runs under the quick budget, one run under the default (whose
time is mostly synthesis running to its limit).

    python benchmarks/predict.py     # prints a table, writes benchmarks/results/predict.json
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks.findings import DEFAULT, QUICK  # noqa: E402
from tasks.predict import predict  # noqa: E402
from tests import user_tasks  # noqa: E402

RUNS = {"quick": 3, "default": 1}


def _time(task, budget, runs: int) -> tuple[float, object]:
    seconds, prediction = [], None
    for _ in range(runs):
        start = time.perf_counter()
        prediction = predict(task, budget=budget)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), prediction


def main() -> None:
    rows, records = [], []
    for name in sorted(user_tasks.TRUTH):
        task = user_tasks.TASKS[name]
        record = {"task": name, "truth": dict(zip(("ape", "nope"), user_tasks.TRUTH[name]))}
        for label, budget in (("quick", QUICK), ("default", DEFAULT)):
            seconds, prediction = _time(task, budget, RUNS[label])
            record[label] = {"seconds": seconds, **{s: {"verdict": prediction.verdict(s).verdict.value,
                                                        "basis": prediction.verdict(s).basis} for s in ("ape", "nope")}}
        records.append(record)
        rows.append([name, f"{record['quick']['seconds']:.1f}", f"{record['default']['seconds']:.1f}",
                     record["default"]["ape"]["verdict"], record["default"]["nope"]["verdict"]])
        print(rows[-1], flush=True)
    print(tabulate(rows, headers=["task", "quick s", "default s", "APE (default)", "NoPE (default)"]))
    quick = [r["quick"]["seconds"] for r in records]
    default = [r["default"]["seconds"] for r in records]
    summary = {"median_quick_s": statistics.median(quick), "max_quick_s": max(quick),
               "median_default_s": statistics.median(default), "max_default_s": max(default),
               "machine": platform.platform(), "python": platform.python_version(), "runs": RUNS}
    print(summary)
    out = ROOT / "benchmarks" / "results" / "predict.json"
    out.write_text(json.dumps({"summary": summary, "records": records}, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
