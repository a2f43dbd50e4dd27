"""``crasp run`` and the in-process interpreter against the reference C-RASP interpreter of Hahn's
group (github m-hahn/c-rasp: a Python interpreter on an ANTLR parser), same Python, same programs.

Four programs: a count comparison, Dyck-1, a nested count (a^n b^n c^n) and a local one
(contains ab, whose guard the peer evaluates in O(n^2)). Figures, each the median of ``--repeats``
interleaved runs (ours, peer, ours, peer, ...):

* end to end: one process per run, one 10^4-token input on standard input; *warm* runs a program
  ``crasp`` has seen before (its cache holds it), *cold* a new one (a fresh comment line makes
  every run's text new; Lark's own table cache stays warm, as it is after the first use);
* in process: a call per input, the program parsed and checked once, for n = 100 and n = 10^4
  (each side's timed calls follow one untimed call of its own).

    python benchmarks/interpreter_peer.py --peer PATH        # PATH: a checkout of m-hahn/c-rasp
    python benchmarks/interpreter_peer.py                    # our absolute times only

The peer needs ``antlr4-python3-runtime``. Results go to benchmarks/results/interpreter-peer.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROGRAMS = {
    # name: (our text, the peer's text, alphabet)
    "count comparison": ('A = #"a" > #"b"\n', 'A = #"a" > #"b"\n', "ab"),
    "dyck1": ('C_open = #"("\nC_close = #")"\nV = C_open < C_close\nD = #V == 0 && C_open == C_close\n',
              'C_open = # "("\nC_close = # ")"\nV = C_open < C_close\nCV = # V\nM = (CV == 0)\n'
              'B = (C_open == C_close)\nD = M && B\n', "()"),
    "nested count": ('B = #("b" && #"c" == 0) == #"b"\nA = #("a" && #("b" || "c") == 0) == #"a"\n'
                     'S = #"a" == #"b" && #"b" == #"c"\nR = B && A && S\n',
                     'B = #("b" && (#"c" == 0)) == #"b"\nA = #("a" && (#("b" || "c") == 0)) == #"a"\n'
                     'S = (#"a" == #"b") && (#"b" == #"c")\nR = B && A && S\n', "abc"),
    "local (contains ab)": ('F = #[i - j == 1] "a" >= 1\nE = "b" && F\nL = #E >= 1\n',
                            '#import pred\n\nF = #[pred] "a" >= 1\nE = "b" && F\nL = #E >= 1\n', "ab"),
}

PEER_DRIVER = """\
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/antlr"]
from parser import parse_file
program = parse_file(sys.argv[2])
for line in sys.stdin:
    tokens = line.split()
    if tokens:
        print(program.execute(tokens))
"""


def median_of(times: list[float]) -> float:
    return statistics.median(times)


def timed(command: list[str], stdin: Path, env: dict) -> float:
    with open(stdin, "rb") as source:
        start = time.perf_counter()
        subprocess.run(command, stdin=source, stdout=subprocess.DEVNULL, check=True, env=env)
        return time.perf_counter() - start


def end_to_end(work: Path, peer: Path | None, repeats: int, n: int) -> list[dict]:
    python = sys.executable
    # Bytecode is cached, as on a user's machine, for both tools (a first run writes it).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["CRASP_CACHE_DIR"] = str(work / "cache")
    driver = work / "peer_driver.py"
    driver.write_text(PEER_DRIVER)
    rows = []
    for name, (ours, theirs, alphabet) in PROGRAMS.items():
        rng = random.Random(0)
        data = work / f"{alphabet}.txt"
        data.write_text(" ".join(rng.choice(alphabet) for _ in range(n)) + "\n")
        program = work / "ours.cr"
        program.write_text(ours)
        peer_program = work / "peer.cr"
        peer_program.write_text(theirs)
        script = Path(python).with_name("crasp")  # the console script users run, beside this Python
        crasp = [str(script), "run"] if script.exists() else [python, "-m", "crasp", "run"]
        for warm_up in ([*crasp, str(program)], [python, str(driver), str(peer), str(peer_program)] if peer else None):
            if warm_up:
                subprocess.run(warm_up, stdin=open(data, "rb"), stdout=subprocess.DEVNULL, check=True, env=env)
        warm, cold, other = [], [], []
        for k in range(repeats):
            warm.append(timed([*crasp, str(program)], data, env))
            fresh = work / f"cold{k}.cr"
            fresh.write_text(ours + f"// run {k} {time.time_ns()}\n")
            cold.append(timed([*crasp, str(fresh)], data, env))
            if peer is not None and not (name.startswith("local") and n > 2000):
                other.append(timed([python, str(driver), str(peer), str(peer_program)], data, env))
        row = {"program": name, "n": n, "warm_s": median_of(warm), "cold_s": median_of(cold)}
        if other:
            row["peer_s"] = median_of(other)
            row["warm_ratio"] = row["warm_s"] / row["peer_s"]
            row["cold_ratio"] = row["cold_s"] / row["peer_s"]
        rows.append(row)
    return rows


def in_process(peer: Path | None, repeats: int, sizes: list[int]) -> list[dict]:
    from crasp.checker import check
    from crasp.interpreter import run
    from crasp.parser import parse

    peer_parse = None
    if peer is not None:
        import importlib

        sys.path[:0] = [str(peer), str(peer / "antlr")]
        peer_parse = importlib.import_module("parser").parse_file  # the checkout's module, not a distribution
    rows = []
    work = Path(tempfile.mkdtemp())
    for name, (ours, theirs, alphabet) in PROGRAMS.items():
        checked = check(parse(ours))
        peer_program = None
        if peer_parse is not None:
            (work / "peer.cr").write_text(theirs)
            peer_program = peer_parse(str(work / "peer.cr"))
        for n in sizes:
            rng = random.Random(n)
            inputs = [[rng.choice(alphabet) for _ in range(n)] for _ in range(8)]
            calls = max(1, 2000 // n)

            def ours_once():
                for tokens in inputs:
                    for _ in range(calls):
                        run(checked, [tokens])

            def peer_once():
                for tokens in inputs:
                    for _ in range(calls):
                        peer_program.execute(tokens)

            local_too_slow = name.startswith("local") and n > 2000  # the peer's guard is O(n^2)
            mine, theirs_t = [], []
            for _ in range(repeats):
                # Each side's timing follows one untimed call of its own, so that neither pays for
                # the memory the other's run left behind (the peer's lists of 10^4 Python objects).
                run(checked, [inputs[0]])
                start = time.perf_counter()
                ours_once()
                mine.append((time.perf_counter() - start) / (calls * len(inputs)))
                if peer_program is not None and not local_too_slow:
                    peer_program.execute(inputs[0])
                    start = time.perf_counter()
                    peer_once()
                    theirs_t.append((time.perf_counter() - start) / (calls * len(inputs)))
            row = {"program": name, "n": n, "ours_s": median_of(mine)}
            if theirs_t:
                row["peer_s"] = median_of(theirs_t)
                row["speedup"] = row["peer_s"] / row["ours_s"]
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, help="a checkout of github m-hahn/c-rasp")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n", type=int, default=10_000, help="tokens of the end-to-end input")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "interpreter-peer.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    bare = median_of([timed([sys.executable, "-c", "pass"], Path(os.devnull), {
        key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"})
                      for _ in range(args.repeats)])
    e2e = end_to_end(work, args.peer, args.repeats, args.n)
    inside = in_process(args.peer, args.repeats, [100, 10_000])
    ms = lambda x: f"{1000 * x:.1f}" if x is not None else "-"  # noqa: E731
    ratio = lambda x: f"{x:.2f}x" if x is not None else "-"  # noqa: E731
    print(f"bare `python -c pass`: {ms(bare)} ms")
    print(tabulate([[r["program"], ms(r["warm_s"]), ms(r["cold_s"]), ms(r.get("peer_s")),
                     ratio(r.get("warm_ratio")), ratio(r.get("cold_ratio"))] for r in e2e],
                   headers=["crasp run, 1 input of %d tokens" % args.n, "warm ms", "cold ms", "peer ms",
                            "warm / peer", "cold / peer"], tablefmt="github"))
    print()
    print(tabulate([[r["program"], r["n"], f"{1e6 * r['ours_s']:.0f}",
                     f"{1e6 * r['peer_s']:.0f}" if "peer_s" in r else "-",
                     f"{r['speedup']:.1f}x" if "speedup" in r else "-"] for r in inside],
                   headers=["in process, one input per call", "n", "ours µs", "peer µs", "peer / ours"],
                   tablefmt="github"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "bare_python_s": bare, "end_to_end": e2e, "in_process": inside}, indent=1) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
