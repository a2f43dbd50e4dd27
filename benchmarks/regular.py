"""The C-RASP (NoPE) decider on 1,000 regular expressions over {a, b, c}, timed.

The expressions are the data set's rows over abc (tasks/data/regular_languages.csv, in file
order), then random expressions (seeded, the shapes of the crasp_reg lists: stars of unions of
short words, concatenations, unions) up to 1,000. Each is parsed, compiled to its canonical
minimal DFA and decided (decide_nope: the balanced-potential procedure, plus the monoid search
for an algebraic obstruction on every "no"). Target: all 1,000 in at most 15 s.

    python benchmarks/regular.py     # prints the figures, writes benchmarks/results/regular.json
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tasks.regular import decide_nope, from_regex, languages  # noqa: E402

COUNT = 1_000
TARGET_SECONDS = 15.0


def random_regex(rng: random.Random, alphabet: str = "abc", depth: int = 0) -> str:
    """A random expression: a short word, a star of a union of expressions, a concatenation or a union."""
    roll = rng.random()
    if depth > 2 or roll < 0.3:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3)))
    if roll < 0.6:
        return "(" + "|".join(random_regex(rng, alphabet, depth + 1) for _ in range(rng.randint(2, 4))) + ")*"
    if roll < 0.85:
        return random_regex(rng, alphabet, depth + 1) + random_regex(rng, alphabet, depth + 1)
    return f"({random_regex(rng, alphabet, depth + 1)}|{random_regex(rng, alphabet, depth + 1)})"


def expressions(count: int = COUNT, seed: int = 0) -> list[tuple[str, str]]:
    chosen = [(row.regex, "data") for row in languages() if row.alphabet == "abc"][:count]
    rng = random.Random(seed)
    while len(chosen) < count:
        chosen.append((random_regex(rng), "random"))
    return chosen


def main() -> None:
    items = expressions()
    times, compile_times, records = [], [], []
    start_all = time.perf_counter()
    for text, origin in items:
        start = time.perf_counter()
        dfa = from_regex(text, "abc")
        compiled = time.perf_counter()
        decision = decide_nope(dfa)
        done = time.perf_counter()
        times.append(done - start)
        compile_times.append(compiled - start)
        records.append({"regex": text, "origin": origin, "states": dfa.n_states, "member": decision.member,
                        "criterion": decision.criterion, "seconds": done - start})
    total = time.perf_counter() - start_all
    by_criterion: dict[str, int] = {}
    for r in records:
        by_criterion[r["criterion"]] = by_criterion.get(r["criterion"], 0) + 1
    slowest = max(records, key=lambda r: r["seconds"])
    summary = {
        "expressions": len(items),
        "from_data": sum(origin == "data" for _, origin in items),
        "random": sum(origin == "random" for _, origin in items),
        "total_seconds": total,
        "median_seconds": statistics.median(times),
        "mean_seconds": statistics.fmean(times),
        "max_seconds": slowest["seconds"],
        "slowest": slowest["regex"],
        "compile_seconds_total": sum(compile_times),
        "decide_seconds_total": sum(times) - sum(compile_times),
        "members": sum(r["member"] for r in records),
        "max_states": max(r["states"] for r in records),
        "criteria": by_criterion,
        "target_seconds": TARGET_SECONDS,
        "target_met": total <= TARGET_SECONDS,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(f"{summary['expressions']} expressions over abc ({summary['from_data']} from the data set, "
          f"{summary['random']} random)")
    print(f"total {total:.3f} s (compile {summary['compile_seconds_total']:.3f} s, decide "
          f"{summary['decide_seconds_total']:.3f} s); median {1e3 * summary['median_seconds']:.3f} ms, "
          f"max {1e3 * summary['max_seconds']:.1f} ms ({slowest['regex']}, {slowest['states']} states)")
    print(f"members {summary['members']}; criteria {by_criterion}")
    print(f"target: 1,000 in at most {TARGET_SECONDS:.0f} s: {'met' if summary['target_met'] else 'NOT met'}")
    out = ROOT / "benchmarks" / "results" / "regular.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    slowest_ten = sorted(records, key=lambda r: -r["seconds"])[:10]
    out.write_text(json.dumps({"summary": summary, "slowest": slowest_ten}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
