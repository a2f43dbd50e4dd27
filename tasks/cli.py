"""``crasp tasks``, ``crasp verify`` and ``crasp predict``: the task suite on the command line."""

from __future__ import annotations

import json
from pathlib import Path

from crasp.arguments import NONNEGATIVE, POSITIVE, SEED
from crasp.checker import check

from . import registry
from .ranges import ranges
from .registry import Task
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
    print(report.summary(), file=out)
    if report.ok:
        return 0
    bad = report.counterexample
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


class Families:
    """The families of the registered tasks, as argparse ``choices``: read when argparse first
    asks (a usage error, ``--help``), so that building the parser does not load the suite.

    >>> "formal" in Families(), "nosuch" in Families()
    (True, False)
    """

    def __iter__(self):
        return iter(dict.fromkeys(t.family for t in registry.all_tasks()))

    def __contains__(self, family: object) -> bool:
        return family in list(self)


def cmd_predict(args, out, err) -> int:
    from crasp.cli import load_program
    from tabulate import tabulate

    from .predict import explain, predict

    if args.regex is not None or args.regex_file:
        return _predict_regexes(args, out, err)
    if args.all == bool(args.task):
        raise registry.TaskError("name one TASK or give --all")
    if args.program and args.all:
        raise registry.TaskError("--program goes with one TASK, not --all")
    budget = _budget(args)
    schemes = [s.strip() for s in args.schemes.split(",")] if args.schemes else None
    selected = ([_resolve(args.task)] if args.task else
                [t for t in registry.all_tasks() if args.family in (None, t.family)])
    programs = [load_program(path) for path in args.program or []]
    progress = (lambda line: print(f"  {line}", file=err, flush=True)) if not args.all else None
    predictions = []
    for number, task in enumerate(selected, 1):
        if len(selected) > 1:
            print(f"[{number}/{len(selected)}] {task.name}", file=err, flush=True)
        predictions.append(predict(task, schemes=schemes, programs=programs, budget=budget, seed=args.seed,
                                   synthesis=not args.no_synthesis, progress=progress))
    if args.program_out:
        _save_program(predictions[0], args.program_out, err)
    if args.json:
        found = [p.to_json() for p in predictions]
        print(json.dumps(found if args.all else found[0], indent=2), file=out)
    elif not args.all:
        print(explain(predictions[0]), file=out)
    else:
        rows = [[p.task, _cell(p.ape), _cell(p.nope), f"{_label(p.labels.ape)}/{_label(p.labels.nope)}",
                 {None: "-", True: "yes", False: "NO"}[p.agrees]] for p in predictions]
        print(tabulate(rows, headers=["task", "APE", "NoPE", "paper APE/NoPE", "agrees"], tablefmt="simple"),
              file=out)
        labelled = [p for p in predictions if p.agrees is not None]
        print(f"\n{sum(p.agrees for p in labelled)} of {len(labelled)} predictions with published labels agree "
              "with them; `crasp predict TASK` shows the evidence", file=out)
    rejected = [line for p in predictions for line in p.rejected]
    if rejected:
        print("\n".join(["", "error: a given program was rejected:", *rejected]), file=err)
        return 1
    return 0


def _budget(args):
    from .findings import DEFAULT, QUICK, Budget

    base = QUICK if args.quick else DEFAULT
    return Budget.parse(args.budget, base) if args.budget else base


def _predict_regexes(args, out, err) -> int:
    """``--regex`` / ``--regex-file``: one prediction per expression, in input order; a line that
    does not parse gets an error entry of its own."""
    from tabulate import tabulate

    from .predict import explain, predict
    from .regular import RegexError, regex_task

    if args.task or args.all or args.program:
        raise registry.TaskError("--regex and --regex-file go without TASK, --all and --program")
    if not args.alphabet:
        raise registry.TaskError("--regex and --regex-file need --alphabet (e.g. --alphabet abc)")
    if args.regex is not None:
        lines = [(None, args.regex)]
    else:
        try:
            text = Path(args.regex_file).read_text()
        except OSError as error:
            raise registry.TaskError(f"cannot read {args.regex_file}: {error.strerror}") from None
        lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    entries, shown = [], []
    for index, (number, expression) in enumerate(lines, 1):
        where = f"{args.regex_file}:{number}" if number is not None else "--regex"
        if len(lines) > 1:
            print(f"[{index}/{len(lines)}] {expression}", file=err, flush=True)
        try:
            task = regex_task(expression, args.alphabet)
        except RegexError as error:
            entries.append({"regex": expression, "line": number, "error": f"{where}: {error}"})
            continue
        prediction = predict(task, budget=_budget(args), seed=args.seed, synthesis=not args.no_synthesis)
        entries.append({"regex": expression, "line": number, **prediction.to_json()})
        shown.append((expression, prediction))
    if args.json:
        print(json.dumps(entries if args.regex_file else entries[0], indent=2), file=out)
    elif args.regex is not None and shown:
        print(explain(shown[0][1]), file=out)
    else:
        rows = [[e["regex"], _cell_json(e.get("ape")), _cell_json(e.get("nope"))] if "error" not in e
                else [e["regex"], "error: " + e["error"], ""] for e in entries]
        print(tabulate(rows, headers=["regex", "APE", "NoPE"], tablefmt="simple"), file=out)
    errors = [e["error"] for e in entries if "error" in e]
    for message in errors:
        print(f"error: {message}", file=err)
    return 1 if errors else 0


def _cell_json(entry: dict) -> str:
    strength = f", {entry['strength']}" if entry["strength"] else ""
    return f"{entry['verdict']} ({entry['basis']}{strength})"


def _save_program(prediction, path: str, err) -> None:
    """Write the program behind a "generalizes" verdict (given, library, built or synthesized)."""
    from crasp.printer import format_program

    program = next((f.program for scheme in ("nope", "ape") if scheme in prediction.schemes
                    for f in prediction.verdict(scheme).findings if f.program is not None), None)
    if program is None:
        raise registry.TaskError(f"no verified program for {prediction.task}: nothing to write to {path}")
    Path(path).write_text(format_program(program))
    print(f"program written to {path}", file=err)


def _cell(verdict) -> str:
    strength = f", {verdict.strength.value}" if verdict.strength else ""
    return f"{verdict.verdict.value} ({verdict.basis}{strength})"


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
    verify_p.add_argument("task", metavar="TASK")
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
    verify_p.add_argument("--seed", type=SEED, default=0)
    verify_p.add_argument("--trace", metavar="FILE", help="write the counterexample's trace (.html or .txt)")
    verify_p.set_defaults(handler=cmd_verify)

    predict_p = commands.add_parser(
        "predict", help="predict whether a task length-generalizes, with evidence",
        description="Per positional scheme (APE and NoPE; relative and uniform positions for operand formats): "
        "'generalizes', 'does not generalize' or 'undetermined', with its strength (proof, verified with its "
        "bounds, or extrapolated) and every finding behind it: a verified program (given, from the library, "
        "built from a regular language's automaton, or synthesized), the regular-language decision, modular "
        "counting, the communication matrix's growth, Xu et al.'s truncation test, published facts, the "
        "alignment check; conflicts are shown. A given program that verification refutes makes the exit "
        "status 1. TASK is a registered task, "
        "module:attribute naming a task of your own (a Task, or a function registered with @tasks.task), or "
        "re:ALPHABET:REGEX for a regular language.",
    )
    predict_p.add_argument("task", metavar="TASK", nargs="?")
    predict_p.add_argument("--all", action="store_true", help="every registered task, as a table")
    predict_p.add_argument("--family", choices=Families(), metavar="FAMILY",
                           help="with --all: only this family (%(choices)s)")
    predict_p.add_argument("--program", metavar="FILE", action="append",
                           help="a candidate .cr program for TASK (repeatable); verified before it counts")
    predict_p.add_argument("--quick", action="store_true",
                           help="the quick budget: seconds per task (see --budget)")
    predict_p.add_argument("--budget", metavar="SPEC",
                           help="quick, default or thorough, and/or KEY=VALUE overrides, comma-separated (e.g. "
                                "'samples=1000,max_length=4000'); keys: exhaustive, samples, max_length, derived, "
                                "pairs, comm_samples, family, family_length, learn_length, synthesis_seconds, "
                                "truncation_samples")
    predict_p.add_argument("--schemes", metavar="LIST",
                           help="comma-separated positional schemes: ape, nope, relative, uniform (default: ape and "
                                "nope, and relative and uniform for operand formats)")
    predict_p.add_argument("--program-out", metavar="FILE",
                           help="write the verified program behind the verdict (yours, the library's, one built from "
                                "a regular language's automaton, or a synthesized one) to FILE")
    predict_p.add_argument("--regex", metavar="RE",
                           help="predict for the regular language RE (accept format: the answer read at the last "
                                "position); needs --alphabet")
    predict_p.add_argument("--regex-file", metavar="FILE",
                           help="one regular expression per line, all over --alphabet; a line that does not parse "
                                "gets an error entry naming it, the rest are still decided (--json: a list)")
    predict_p.add_argument("--alphabet", metavar="SYMBOLS", help="the alphabet of --regex, e.g. abc")
    predict_p.add_argument("--no-synthesis", action="store_true",
                           help="do not search for a program when none is given or verified")
    predict_p.add_argument("--json", action="store_true", help="the prediction(s) as JSON")
    predict_p.add_argument("--seed", type=SEED, default=0)
    predict_p.set_defaults(handler=cmd_predict)


__all__ = ["add_commands", "describe", "program_status"]
