"""How long `crasp predict` takes where users wait, and how much memory it holds.

Four measurements, each a whole `crasp` process at the default budget unless said, on the machine
it runs on (two cores on the reference machine); each time the median of ``--repeats`` runs, the
peak memory the largest sum of the resident memory of the process and its workers (sampled every
20 ms):

* ``all``: `crasp predict --all --no-cache` (the suite, cold);
* ``user``: the tasks of tests/user_tasks.py without their programs (as a user first runs them),
  one `predict` each, in process: median and largest time;
* ``regex``: `crasp predict --regex-file` of 1,000 expressions over {a, b, c} (the data set's
  rows over {a, b, c}, then expressions drawn at random with a fixed seed), cold;
* ``program_out``: `crasp predict --regex E --schemes ape --program-out F` (cold) for one-letter
  expressions and the 20 largest over {a, b, c} of ``regex``: median and largest time;
* ``limits``: `crasp predict --quick` and at the default budget of a user's reverse task under an
  address-space limit (`ulimit -v`) of 2 GB and 4 GB: whether it finishes.

With ``--before REV`` the same measurements run on the tool as it was at git revision REV (checked
out into a temporary worktree and put first on PYTHONPATH), beside; ``--only`` picks some of them.

    python benchmarks/predict.py                       # prints a table, writes benchmarks/results/predict.json
    python benchmarks/predict.py --only user,limits --before b1a4a9e --no-after --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "predict.json"
USER_TASKS = ROOT / "tests" / "user_tasks.py"
GIGABYTE = 10**9

REVERSE = '''import tasks

@tasks.task("bench_reverse", symbols=("a", "b"), sampler=lambda n, rng: tuple(rng.choice(["a", "b"], size=n)))
def reverse(x):
    return tuple(reversed(x))
'''

USER = '''import json, statistics, sys, time
sys.path.insert(0, {root!r})
from tasks.predict import predict
from tests import user_tasks
found = {{}}
for name in sorted(user_tasks.TRUTH):
    started = time.perf_counter()
    prediction = predict(user_tasks.TASKS[name])
    found[name] = {{"seconds": time.perf_counter() - started,
                   **{{s: prediction.verdict(s).verdict.value for s in ("ape", "nope")}}}}
print(json.dumps(found))
'''


# ---------------------------------------------------------------- running a process


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    parent = int(file.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _resident(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(command: list[str], env: dict, address_space: int | None = None, cwd: Path | None = None) -> dict:
    """Run ``command``; its seconds, exit status, stdout and the peak summed resident memory."""
    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:  # files: a full pipe would block
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd, preexec_fn=limit, text=True)
        peak = 0
        while process.poll() is None:
            peak = max(peak, sum(_resident(pid) for pid in _descendants(process.pid)))
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return {"seconds": seconds, "status": process.returncode, "peak_gb": peak / GIGABYTE,
                "stdout": out.read(), "stderr": err.read()[-2000:]}


def environment(tool: Path, cache: Path) -> dict:
    return dict(os.environ, CRASP_CACHE_DIR=str(cache), PYTHONPATH=str(tool))


def fresh(tool: Path) -> list[str]:
    """The flags that make a run cold and quiet (a tool from before the prediction cache has neither)."""
    return ["--no-cache", "-q"] if (tool / "tasks" / "batch.py").exists() else []


def crasp(tool: Path) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tool)!r}); from crasp.cli import main; "
            "sys.exit(main())"]


# ---------------------------------------------------------------- the measurements


def bench_all(tool: Path, repeats: int) -> dict:
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            runs.append(measure([*crasp(tool), "predict", "--all", *fresh(tool)], environment(tool, Path(cache))))
    return {"seconds": statistics.median(r["seconds"] for r in runs), "peak_gb": max(r["peak_gb"] for r in runs),
            "status": [r["status"] for r in runs], "runs": [round(r["seconds"], 1) for r in runs],
            "errors": [r["stderr"] for r in runs if r["status"]]}


def bench_user(tool: Path, repeats: int) -> dict:
    found = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            run = measure([sys.executable, "-c", USER.format(root=str(tool))], environment(tool, Path(cache)))
        if run["status"]:
            return {"error": run["stderr"]}
        found.append(json.loads(run["stdout"]))
    seconds = {name: statistics.median(f[name]["seconds"] for f in found) for name in found[0]}
    return {"median_s": statistics.median(seconds.values()), "max_s": max(seconds.values()),
            "tasks": {name: {**found[0][name], "seconds": s} for name, s in seconds.items()}}


def expressions(count: int = 1000) -> list[str]:
    """The data set's expressions over {a, b, c}, then random ones (a fixed seed) up to ``count``."""
    sys.path.insert(0, str(ROOT))
    from tasks.regular import languages

    found = [row.regex for row in languages() if row.alphabet == "abc"][:count]
    rng = random.Random(0)

    def draw(depth: int = 0) -> str:
        if depth > 3 or rng.random() < 0.3:
            return rng.choice("abc")
        kind = rng.random()
        if kind < 0.35:
            return draw(depth + 1) + draw(depth + 1)
        if kind < 0.6:
            return f"({draw(depth + 1)}|{draw(depth + 1)})"
        return f"({draw(depth + 1)})" + ("*" if kind < 0.85 else "+")

    while len(found) < count:
        found.append(draw())
    return found


def bench_regex(tool: Path, repeats: int, count: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        listing = Path(folder) / "expressions.txt"
        listing.write_text("\n".join(expressions(count)) + "\n")
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache:
                runs.append(measure([*crasp(tool), "predict", "--regex-file", str(listing), "--alphabet", "abc",
                                     *fresh(tool)], environment(tool, Path(cache))))
    decided = next((line for line in runs[0]["stdout"].splitlines() if "verdicts decided" in line), "")
    return {"expressions": count, "seconds": statistics.median(r["seconds"] for r in runs),
            "peak_gb": max(r["peak_gb"] for r in runs), "status": [r["status"] for r in runs], "decided": decided}


ONE_LETTER = ("(aa)*", "(aaa)*a", "a(aaaaa)*", "(aa|aaa)*", "aaaa*")


def bench_program_out(tool: Path, repeats: int, count: int) -> dict:
    """Every exhaustive check is bounded by symbols: one letter no longer means words of 20,000."""
    largest = sorted(expressions(count), key=len, reverse=True)[:20]
    cases = [(e, "a") for e in ONE_LETTER] + [(e, "abc") for e in largest]
    seconds = {}
    with tempfile.TemporaryDirectory() as folder:
        for expression, alphabet in cases:
            runs = []
            for _ in range(repeats):
                with tempfile.TemporaryDirectory() as cache:
                    runs.append(measure([*crasp(tool), "predict", "--regex", expression, "--alphabet", alphabet,
                                         "--schemes", "ape", "--program-out", str(Path(folder) / "p.cr"),
                                         *fresh(tool)], environment(tool, Path(cache))))
            seconds[f"{expression} over {alphabet}"] = statistics.median(r["seconds"] for r in runs)
    return {"median_s": statistics.median(seconds.values()), "max_s": max(seconds.values()),
            "slowest": max(seconds, key=lambda k: seconds[k]), "expressions": seconds}


def bench_limits(tool: Path) -> dict:
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "bench_tasks.py").write_text(REVERSE)
        for label, budget, limit in (("quick, 2 GB", ["--quick"], 2 * 2**30), ("default, 4 GB", [], 4 * 2**30)):
            with tempfile.TemporaryDirectory() as cache:
                env = environment(tool, Path(cache))
                env["PYTHONPATH"] = f"{folder}{os.pathsep}{env['PYTHONPATH']}"
                run = measure([*crasp(tool), "predict", "bench_tasks:bench_reverse", *fresh(tool), *budget], env,
                              address_space=limit, cwd=Path(folder))
            found[label] = {"finished": run["status"] == 0, "seconds": run["seconds"], "peak_gb": run["peak_gb"],
                            "error": None if run["status"] == 0 else run["stderr"].strip().splitlines()[-1:]}
    return found


def run_all(tool: Path, only: set[str], repeats: int, count: int) -> dict:
    out = {}
    if "all" in only:
        out["all"] = bench_all(tool, repeats)
        print("all", {k: v for k, v in out["all"].items() if k != "errors"}, flush=True)
    if "user" in only:
        out["user"] = bench_user(tool, repeats)
        print("user", {k: v for k, v in out["user"].items() if k != "tasks"}, flush=True)
    if "regex" in only:
        out["regex"] = bench_regex(tool, repeats, count)
        print("regex", out["regex"], flush=True)
    if "program_out" in only:
        out["program_out"] = bench_program_out(tool, repeats, count)
        print("program_out", {k: v for k, v in out["program_out"].items() if k != "expressions"}, flush=True)
    if "limits" in only:
        out["limits"] = bench_limits(tool)
        print("limits", out["limits"], flush=True)
    return out


def worktree(revision: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="crasp-before-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), revision], check=True,
                   capture_output=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="all,user,regex,program_out,limits",
                        help="comma-separated: all, user, regex, program_out, limits")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--expressions", type=int, default=1000)
    parser.add_argument("--before", metavar="REV", help="also measure the tool at this git revision")
    parser.add_argument("--no-after", action="store_true", help="with --before: measure only the old tool")
    args = parser.parse_args()
    only = set(args.only.split(","))
    record = {"machine": platform.platform(), "python": platform.python_version(), "cores": os.cpu_count(),
              "repeats": args.repeats}
    if not args.no_after:
        record["after"] = run_all(ROOT, only, args.repeats, args.expressions)
    if args.before:
        before = worktree(args.before)
        try:
            record["before"] = {"revision": args.before, **run_all(before, only, 1, args.expressions)}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], capture_output=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    old = {side: old[side] for side in ("after", "before") if isinstance(old.get(side), dict)}
    merged = {**old, **{k: v for k, v in record.items() if k not in ("after", "before")}}
    for side in ("after", "before"):
        if side in record:
            merged[side] = {**old.get(side, {}), **record[side]}
    RESULTS.write_text(json.dumps(merged, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
