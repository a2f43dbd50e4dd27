"""The long fuzz run for a release: many mutants in worker processes, a JSON report.

    python -m tests.fuzz.run --mutants 10000 --seed 0 --jobs 2 --timeout 10 --out fuzz-report.json

Mutant ``k`` of the run is :func:`tests.fuzz.mutants.mutant` of ``seed + k``. The report holds
the count of each outcome, one entry per distinct failure (type and innermost project line, with
the shortest text that showed it and, with ``--minimize``, a delta-debugged one) and every
failure's seed, text, type and message. The exit status is 1 if anything crashed, mismatched or
hung.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from .harness import DEFAULT_TIMEOUT, FAILURES, Outcome, Pool, minimize, same_failure
from .mutants import mutant

KINDS = ("ok", "error", "crash", "mismatch", "hang")
MAX_TEXT = 100_000


def _progress(done: int, total: int, counts: Counter, start: float, final: bool = False) -> None:
    elapsed = time.monotonic() - start
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else 0.0
    shown = " ".join(f"{kind} {counts[kind]}" for kind in KINDS)
    line = f"{done}/{total}  {shown}  {rate:.1f}/s  eta {eta / 60:.1f} min"
    if sys.stderr.isatty():
        print("\r" + line.ljust(100), end="\n" if final else "", file=sys.stderr, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def classes(failures: list[dict]) -> list[dict]:
    """One entry per failure signature: how often, and the shortest text that showed it."""
    found: dict[tuple, dict] = {}
    for failure in failures:
        outcome = Outcome(**failure["outcome"])
        key = outcome.signature()
        entry = found.setdefault(key, {"signature": list(key), "count": 0, "outcome": failure["outcome"],
                                       "seed": failure["seed"], "text": failure["text"]})
        entry["count"] += 1
        if len(failure["text"]) < len(entry["text"]):
            entry.update(seed=failure["seed"], text=failure["text"], outcome=failure["outcome"])
    return sorted(found.values(), key=lambda entry: -entry["count"])


def fuzz(count: int, seed: int, jobs: int, timeout: float, memory: int | None,
         progress: bool = True) -> tuple[Counter, list[dict], float]:
    """Run mutants ``seed .. seed + count - 1``; the outcome counts and the failures."""
    counts: Counter = Counter()
    failures: list[dict] = []
    start = last = time.monotonic()
    done = 0
    with Pool(jobs=jobs, timeout=timeout, memory=memory) as pool:
        for key, text, outcome in pool.imap((s, mutant(s)) for s in range(seed, seed + count)):
            done += 1
            counts[outcome.kind] += 1
            if outcome.failed:
                failures.append({"seed": key, "text": text, "outcome": outcome.__dict__})
            now = time.monotonic()
            if progress and (now - last > 1.0 if sys.stderr.isatty() else done % 500 == 0):
                _progress(done, count, counts, start)
                last = now
    if progress:
        _progress(done, count, counts, start, final=True)
    return counts, failures, time.monotonic() - start


def minimize_classes(entries: list[dict], jobs: int, timeout: float, memory: int | None,
                     budget: int) -> None:
    """Add ``minimized`` (a delta-debugged text that fails the same way) to every class entry."""
    with Pool(jobs=jobs, timeout=timeout, memory=memory) as pool:
        for entry in entries:
            same = same_failure(Outcome(**entry["outcome"]))
            entry["minimized"] = minimize(entry["text"], lambda texts: same(pool.map(texts)), budget=budget)
            print(f"minimized {entry['signature']}: {len(entry['text'])} -> {len(entry['minimized'])} chars",
                  file=sys.stderr, flush=True)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n// ... clipped, {len(text)} chars"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=10_000, help="how many mutants (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="number of the first mutant (default 0)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before a hang (default 10)")
    parser.add_argument("--memory", type=float, default=4.0, help="GiB of address space per worker (0: no limit)")
    parser.add_argument("--minimize", action="store_true", help="delta-debug one text per failure class")
    parser.add_argument("--budget", type=int, default=600, help="candidates tried per minimization")
    parser.add_argument("--out", default="fuzz-report.json", help="JSON report (default fuzz-report.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    memory = int(args.memory * (1 << 30)) or None

    counts, failures, seconds = fuzz(args.mutants, args.seed, args.jobs, args.timeout, memory,
                                     progress=not args.quiet)
    entries = classes(failures)
    if args.minimize and entries:
        minimize_classes(entries, args.jobs, args.timeout, memory, args.budget)
    report = {
        "mutants": args.mutants, "seed": args.seed, "jobs": args.jobs, "timeout": args.timeout,
        "seconds": round(seconds, 1),
        "counts": {kind: counts[kind] for kind in KINDS},
        "classes": [{**e, "text": _clip(e["text"])} for e in entries],
        "failures": [{"seed": f["seed"], "kind": f["outcome"]["kind"], "stage": f["outcome"]["stage"],
                      "type": f["outcome"]["error_type"], "where": f["outcome"]["where"],
                      "message": f["outcome"]["message"], "text": _clip(f["text"])} for f in failures],
    }
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.mutants} mutants in {seconds:.0f} s: "
          + ", ".join(f"{counts[kind]} {kind}" for kind in KINDS) + f"; report in {args.out}")
    for entry in entries:
        outcome = Outcome(**entry["outcome"])
        print(f"  {entry['count']:5d} x {outcome.describe()[:160]}  (shortest: seed {entry['seed']})")
    return 1 if any(counts[kind] for kind in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
