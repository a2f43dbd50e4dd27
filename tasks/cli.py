"""``crasp tasks`` and ``crasp verify`` (and ``crasp predict``, :mod:`tasks.predict_cli`): the task suite on
the command line."""

from __future__ import annotations

import json
from pathlib import Path

from crasp.arguments import NONNEGATIVE, POSITIVE, SEED
from crasp.checker import check

from . import registry
from .ranges import ranges
from .registry import Families, Task
from .verify import verify


def program_status(task: Task, scheme: str) -> dict:
    """Size, depth and positional needs of a task's library program, or why there is none."""
    from crasp.cli import describe as describe_program

    program = task.program(scheme)
    if program is None:
        return {"program": None, "reason": task.no_program.get(scheme, "")}
    return {"program": program.source, **describe_program(check(program))}


def describe(task: Task) -> dict:
    return {
        "name": task.name,
        "aliases": list(task.aliases),
        "family": task.family,
        "format": task.format.value,
        "symbols": len(task.symbols),
        "train_range": list(task.train_range),
        "bins": [list(b) for b in task.bins],
        "paper_labels": {"ape": task.labels.ape, "nope": task.labels.nope},
        "ape": program_status(task, "ape"),
        "nope": program_status(task, "nope"),
        "anchors": [{"variant": a.variant, "bins": list(a.bins), "config": a.config} for a in task.anchors],
        "description": task.description,
        "reference": task.reference,
    }


def _label(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _status(entry: dict) -> str:
    if entry["program"] is None:
        return "none"
    needs = []
    if entry["periods"]:
        needs.append("mod " + ",".join(map(str, entry["periods"])))
    if entry["offsets"]:
        needs.append("i-j " + ranges(entry["offsets"]))
    return f"{entry['definitions']} defs, depth {entry['depth']}" + (f", {'; '.join(needs)}" if needs else "")


def cmd_tasks(args, out, err) -> int:
    from tabulate import tabulate

    selected = [t for t in registry.all_tasks() if args.family in (None, t.family)]
    rows = [describe(t) for t in selected]
    if args.json:
        print(json.dumps(rows, indent=2), file=out)
        return 0
    table = [
        [r["name"] + (f" ({r['aliases'][0]})" if r["aliases"] and r["aliases"][0] != r["name"] else ""),
         r["format"], " ".join(f"[{a},{b}]" for a, b in r["bins"]),
         f"{_label(r['paper_labels']['ape'])}/{_label(r['paper_labels']['nope'])}",
         _status(r["ape"]), _status(r["nope"])]
        for r in rows
    ]
    headers = ["task", "format", "bins", "paper APE/NoPE", "APE program", "NoPE program"]
    print(tabulate(table, headers=headers, tablefmt="simple"), file=out)
    return 0


def cmd_verify(args, out, err) -> int:
    from crasp.cli import load_program
    from crasp.trace import write_traces

    task = _resolve(args.task)
    program = load_program(args.program) if args.program else None
    report = verify(
        task, program, scheme=args.positions, exhaustive_length=args.exhaustive_length,
        samples=args.samples, max_length=args.max_length, seed=args.seed,
    )
    bad = report.counterexample
    if args.json:
        written = None
        if args.trace and bad is not None:
            assert bad.trace is not None  # verify() traces the counterexample it reports
            written = write_traces([bad.trace], Path(args.trace),
                                   title=f"Counterexample for {task.name}")
            print(f"trace written to {written}", file=err)
        print(json.dumps({**report.to_json(), "trace": str(written) if written else None}, indent=2), file=out)
        return 0 if report.ok else 1
    print(report.summary(), file=out)
    if bad is None:
        return 0
    assert bad.trace is not None  # verify() traces the counterexample it reports
    print("\nfirst counterexample:\n" + bad.describe(), file=out)
    rows = len(bad.trace.rows)
    if rows <= 60:
        print("\n" + bad.trace.to_text(max_positions=80), file=out)
    else:
        print(f"\n(the trace has {rows} rows; write it with --trace FILE.html)", file=out)
    if args.trace:
        written = write_traces([bad.trace], Path(args.trace), title=f"Counterexample for {task.name}")
        print(f"trace written to {written}", file=err)
    return 1


def _resolve(name: str) -> Task:
    """A registered task, ``re:ALPHABET:REGEX``, or ``module:task`` importable from the working
    directory (:func:`tasks.loading.load_task`)."""
    return registry.get(name)


def add_commands(commands) -> None:
    """Add ``tasks`` and ``verify`` to the ``crasp`` command's subparsers."""
    tasks_p = commands.add_parser(
        "tasks", help="list the task suite",
        description="Every registered task with its format, length bins, the paper's expressibility "
        "labels and the status of its library programs (size, depth, periodic/local needs).",
    )
    tasks_p.add_argument("--json", action="store_true", help="everything, as JSON")
    tasks_p.add_argument("--family", choices=Families(), metavar="FAMILY",
                         help="only this family: %(choices)s")
    tasks_p.set_defaults(handler=cmd_tasks)

    verify_p = commands.add_parser(
        "verify", help="check a program against a task's reference",
        description="Check PROGRAM (default: the task's library program) against the task's reference: "
        "exhaustively for all inputs up to a small length, and on random inputs up to --max-length, at "
        "every position offset modulo the program's period plus random offsets. Prints the first "
        "counterexample with its trace; exit status 0 only if every check passed.",
    )
    verify_p.add_argument("task", metavar="TASK",
                          help="a registered task (see `crasp tasks`), module:attribute, or re:ALPHABET:REGEX")
    verify_p.add_argument("--program", metavar="FILE", help="a .cr file (default: the library program)")
    verify_p.add_argument("--positions", "--variant", dest="positions", choices=["ape", "nope"], default="ape",
                          help="which library program: ape (periodic/local allowed) or nope (plain); "
                               "--variant is its older name")
    verify_p.add_argument("--exhaustive-length", type=NONNEGATIVE, metavar="N",
                          help="longest exhaustively checked input")
    verify_p.add_argument("--samples", type=NONNEGATIVE, default=200, metavar="N",
                          help="random inputs (default 200)")
    verify_p.add_argument("--max-length", type=POSITIVE, default=500, metavar="N",
                          help="longest random input (default 500)")
    verify_p.add_argument("--seed", type=SEED, default=0, metavar="S",
                          help="the seed of the random inputs and offsets (default 0)")
    verify_p.add_argument("--trace", metavar="FILE", help="write the counterexample's trace (.html or .txt)")
    verify_p.add_argument("--json", action="store_true",
                          help="print one JSON document: ok, status, the counts checked, each comparison's exercise, "
                               "the counterexample (or null) and the trace written (or null)")
    verify_p.set_defaults(handler=cmd_verify)

    from .predict_cli import add_predict

    add_predict(commands)


__all__ = ["add_commands", "describe", "program_status"]
