"""Program synthesis on every suite task that has a library program, beside a naive enumerator.

For each task and variant (APE: C-RASP[periodic, local]; NoPE: plain C-RASP) with a library
program: the library program's size (AST nodes, as tasks.synthesis.program_size counts them),
whether `synthesize` found a verified program within the budget, its size, the candidates it
examined and its time (the whole search, verification included); then the same search without
observational equivalence (every candidate kept: same grammar, same order, no class merging) under
the same budget, and the ratios naive / equivalence of candidates examined and of enumeration
seconds (without building the batch and verifying; ">" where the naive search ran out of budget
first, so the ratio is a lower bound).

    python benchmarks/synthesis.py                  # 20 s per search; writes benchmarks/results/synthesis.json
    python benchmarks/synthesis.py --time 5 tomita_1 aa_star
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tasks  # noqa: E402
from tasks.synthesis import SynthesisConfig, program_size, synthesize  # noqa: E402


def run_one(task, variant: str, seconds: float) -> dict:
    library = task.program(variant)
    record = {"task": task.name, "variant": variant, "library_size": program_size(library)}
    for label, equivalence in (("equivalence", True), ("naive", False)):
        config = SynthesisConfig(time_limit=seconds, positions=variant, equivalence=equivalence)
        start = time.perf_counter()
        result = synthesize(task, config)
        record[label] = {
            "found": result.program is not None, "size": result.size, "program": result.text,
            "candidates": result.candidates, "classes": result.classes,
            "seconds": round(time.perf_counter() - start, 3), "search_seconds": round(result.seconds, 3),
            "enumeration_seconds": round(result.enumeration_seconds, 3),
            "max_size_reached": result.max_size_reached, "counterexamples": result.counterexamples,
            "searched": result.searched,
        }
    smart, naive = record["equivalence"], record["naive"]
    record["candidate_ratio"] = naive["candidates"] / max(smart["candidates"], 1)
    record["time_ratio"] = naive["enumeration_seconds"] / max(smart["enumeration_seconds"], 1e-9)
    return record


def row(record: dict) -> list:
    smart, naive = record["equivalence"], record["naive"]
    bound = ">" if smart["found"] and not naive["found"] else ""
    comparable = smart["found"]
    return [
        record["task"], record["variant"], record["library_size"],
        f"yes ({smart['size']})" if smart["found"] else f"no (<= {smart['max_size_reached']})",
        f"{smart['candidates']:,}", f"{smart['search_seconds']:.1f}",
        f"yes ({naive['size']})" if naive["found"] else f"no (<= {naive['max_size_reached']})",
        f"{naive['candidates']:,}",
        f"{bound}{record['candidate_ratio']:.1f}" if comparable else "-",
        f"{bound}{record['time_ratio']:.1f}" if comparable else "-",
    ]


HEADERS = ["task", "variant", "library size", "found (size)", "candidates", "seconds",
           "naive found", "naive candidates", "candidates naive/OE", "time naive/OE"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="task names (default: every task with a library program)")
    parser.add_argument("--time", type=float, default=20.0, help="seconds per search (default 20)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "synthesis.json"))
    args = parser.parse_args(argv)
    names = args.tasks or tasks.names()
    records = []
    for name in names:
        task = tasks.get(name)
        for variant in ("ape", "nope"):
            if task.program(variant) is None:
                continue
            record = run_one(task, variant, args.time)
            records.append(record)
            print(" | ".join(map(str, row(record))), flush=True)
    print()
    print(tabulate([row(r) for r in records], headers=HEADERS, tablefmt="github"))
    found = [r for r in records if r["equivalence"]["found"]]
    both = [r for r in found if r["naive"]["found"]]
    print(f"\nfound {len(found)} of {len(records)} (task, variant) pairs within {args.time:g} s; "
          f"the naive enumerator found {sum(r['naive']['found'] for r in records)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {"time_limit": args.time, "machine": platform.platform(), "python": platform.python_version(),
               "found": len(found), "pairs": len(records),
               "naive_found": sum(r["naive"]["found"] for r in records), "both_found": len(both)}
    out.write_text(json.dumps({"summary": summary, "records": records}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
