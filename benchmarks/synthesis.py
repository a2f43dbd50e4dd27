"""Program synthesis: on small sequence tasks a user would write, and on the suite.

``--set sequences`` (the default): each task of benchmarks/sequence_tasks.py (copies, sorts,
counts, selections, three-way decisions by count comparisons, counter languages; each has a
hand-written program, verified here first), for APE and NoPE, searched with the format's atoms,
the relation atoms and output by output (the default search) and without them (the search before
they existed), under the same budget: found or not, the size, the seconds and the candidates
examined. Writes benchmarks/results/synthesis_sequences.json.

``--set suite``: for each task and variant (APE: C-RASP[periodic, local]; NoPE: plain C-RASP) with a library
program: the library program's size (AST nodes, as tasks.synthesis.program_size counts them),
whether `synthesize` found a verified program within the budget, its size, the candidates it
examined and its time (the whole search, verification included); then the same search without
observational equivalence (every candidate kept: same grammar, same order, no class merging) under
the same budget, and the ratios naive / equivalence of candidates examined and of enumeration
seconds (without building the batch and verifying; ">" where the naive search ran out of budget
first, so the ratio is a lower bound).

    python benchmarks/synthesis.py                                # the sequence tasks, 10 s per search
    python benchmarks/synthesis.py --set suite                    # 20 s per search; writes synthesis.json
    python benchmarks/synthesis.py --set suite --time 5 tomita_1 aa_star
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
from crasp.parser import parse  # noqa: E402
from tasks.synthesis import SynthesisConfig, program_size, synthesize  # noqa: E402
from tasks.verify import verify  # noqa: E402

from sequence_tasks import KNOWN, TASKS as SEQUENCE_TASKS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


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


SEARCHES = {"atoms": {}, "plain leaves": {"format_atoms": False, "output_by_output": False, "relation_atoms": False}}
"""The searches compared on the sequence tasks: the default, and the search without the format's
atoms, the relation atoms and output-by-output search (as it was before any of them)."""


def run_sequence_task(name: str, variant: str, seconds: float) -> dict:
    task = SEQUENCE_TASKS[name]
    known = parse(KNOWN[name])
    if not verify(task, known).ok:
        raise SystemExit(f"the hand-written program of {name} fails its task: fix benchmarks/sequence_tasks.py")
    record = {"task": name, "variant": variant, "known_size": program_size(known)}
    for label, options in SEARCHES.items():
        config = SynthesisConfig(time_limit=seconds, positions=variant, **options)
        result = synthesize(task, config)
        record[label] = {"found": result.found, "size": result.size, "program": result.text,
                         "seconds": round(result.seconds, 3), "candidates": result.candidates,
                         "counterexamples": result.counterexamples, "searched": result.searched}
    return record


def sequence_row(record: dict) -> list:
    cells = [record["task"], record["variant"], record["known_size"]]
    for label in SEARCHES:
        got = record[label]
        cells += [f"yes ({got['size']})" if got["found"] else "no", f"{got['seconds']:.1f}", f"{got['candidates']:,}"]
    return cells


SEQUENCE_HEADERS = ["task", "variant", "hand-written size", "found (size)", "seconds", "candidates",
                    "plain leaves: found", "seconds", "candidates"]


def sequences(seconds: float, out: Path) -> None:
    records = []
    for name in SEQUENCE_TASKS:
        for variant in ("ape", "nope"):
            record = run_sequence_task(name, variant, seconds)
            records.append(record)
            print(" | ".join(map(str, sequence_row(record))), flush=True)
    print()
    print(tabulate([sequence_row(r) for r in records], headers=SEQUENCE_HEADERS, tablefmt="github"))
    summary = {"time_limit": seconds, "machine": platform.platform(), "python": platform.python_version(),
               "pairs": len(records)}
    for label in SEARCHES:
        times = sorted(r[label]["seconds"] for r in records if r[label]["found"])
        summary[label] = {"found": len(times), "median_seconds_found": times[len(times) // 2] if times else None}
        print(f"{label}: found {len(times)} of {len(records)} (task, variant) pairs within {seconds:g} s"
              + (f", median {summary[label]['median_seconds_found']:.1f} s where found" if times else ""))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "records": records}, indent=2) + "\n")
    print(f"wrote {out}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="suite task names (default: every task with a library program)")
    parser.add_argument("--set", choices=("sequences", "suite"), default="sequences", dest="task_set",
                        help="the user-style sequence tasks (default) or the suite's tasks with library programs")
    parser.add_argument("--time", type=float, default=None,
                        help="seconds per search (default 10 for sequences, 20 for the suite)")
    parser.add_argument("--out", default=None, help="the JSON file written (default under benchmarks/results/)")
    args = parser.parse_args(argv)
    if args.task_set == "sequences":
        sequences(args.time or 10.0, Path(args.out or RESULTS / "synthesis_sequences.json"))
        return
    args.time = args.time or 20.0
    args.out = args.out or str(RESULTS / "synthesis.json")
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
