"""``crasp predict``: will a task length-generalize? One task, the suite, or regular expressions.

* one task: one screen (per scheme the verdict, its strength and a one-line reason);
  ``--explain`` prints every finding, ``--json`` everything;
* ``--all``: the suite in parallel processes (:mod:`tasks.batch`), a table with the published
  label beside each verdict, and the counts of agreement, disagreement and undetermined;
* ``--regex`` / ``--regex-file``: regular languages. A file is decided first, every expression
  with the searches off; then the expressions left open share one search budget
  (``--batch-seconds``).

Every prediction is kept in the per-user cache (``--no-cache`` recomputes).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from crasp.arguments import POSITIVE, SEED

from . import registry
from .registry import Families
from .findings import DEFAULT, QUICK, Budget, TaskError, Verdict

SHOW = {None: "-", True: "yes", False: "no"}
SEARCH_SHARE = 1.0
"""The least search time an open expression of a batch gets: the batch's seconds go to the first
open expressions, this much each (the rest stay undetermined, their searches not run)."""


def _budget(args) -> Budget:
    base = QUICK if args.quick else DEFAULT
    return Budget.parse(args.budget, base) if args.budget else base


def _bar(args, err, total: int, unit: str):
    """A progress callback for ``total`` items on stderr (tqdm), or None when quiet or not a terminal."""
    if args.quiet or total <= 1 or not getattr(err, "isatty", lambda: False)():
        return None, lambda: None
    from tqdm import tqdm

    bar = tqdm(total=total, file=err, unit=unit, leave=False, dynamic_ncols=True)

    def progress(done: int, total: int, name: str) -> None:
        bar.n = done
        bar.set_postfix_str(name, refresh=False)
        bar.refresh()
    return progress, bar.close


def cmd_predict(args, out, err) -> int:
    if args.regex is not None or args.regex_file:
        return _predict_regexes(args, out, err)
    if args.all == bool(args.task):
        raise TaskError("name one TASK or give --all")
    if args.program and args.all:
        raise TaskError("--program goes with one TASK, not --all")
    if args.all:
        return _predict_suite(args, out, err)
    return _predict_one(args, out, err)


def _width(out) -> int | None:
    """The terminal's width where ``out`` is one (lines are cut to it), else None (lines whole)."""
    if not getattr(out, "isatty", lambda: False)():
        return None
    import shutil

    return max(80, shutil.get_terminal_size((100, 24)).columns)


def _schemes(args) -> tuple[str, ...] | None:
    return tuple(s.strip() for s in args.schemes.split(",")) if args.schemes else None


def _predict_one(args, out, err) -> int:
    from crasp.cli import load_program

    from .batch import predicted
    from .predict import explain, summary

    task = registry.get(args.task)
    programs = [load_program(path) for path in args.program or []]
    progress = None if args.quiet else (lambda line: print(f"  {line}", file=err, flush=True))
    prediction = predicted(task, programs=programs, budget=_budget(args), seed=args.seed,
                           synthesis=not args.no_synthesis, schemes=_schemes(args), use_cache=not args.no_cache,
                           progress=progress)
    if args.program_out:
        _save_program(prediction, args.program_out, err)
    if args.json:
        print(json.dumps(prediction.to_json(), indent=2), file=out)
    else:
        print(explain(prediction) if args.explain else summary(prediction, _width(out)), file=out)
    if prediction.rejected:
        print("\n".join(["", "error: a given program was rejected:", *prediction.rejected]), file=err)
        return 1
    return 0


def _cell(verdict) -> str:
    if verdict is None:  # a scheme left out with --schemes
        return "-"
    strength = f", {verdict.strength.value}" if verdict.strength else ""
    return f"{verdict.verdict.value} ({verdict.basis}{strength})"


def _predict_suite(args, out, err) -> int:
    from tabulate import tabulate

    from .batch import predict_named

    names = [t.name for t in registry.all_tasks() if args.family in (None, t.family)]
    progress, close = _bar(args, err, len(names), "task")
    try:
        found = predict_named(names, budget=_budget(args), seed=args.seed, synthesis=not args.no_synthesis,
                              schemes=_schemes(args), processes=args.jobs, use_cache=not args.no_cache,
                              progress=progress)
    finally:
        close()
    errors = [(name, result) for name, result in zip(names, found) if isinstance(result, TaskError)]
    predictions = [p for p in found if not isinstance(p, TaskError)]
    if args.json:
        print(json.dumps([p.to_json() for p in predictions], indent=2), file=out)
    else:
        rows = []
        for p in predictions:
            compared = p.comparison()
            rows.append([p.task, _cell(p.schemes.get("ape")), _cell(p.schemes.get("nope")),
                         f"{SHOW[p.labels.ape]}/{SHOW[p.labels.nope]}",
                         ", ".join(f"{v}" for v in compared.values()) if compared else "-"])
        print(tabulate(rows, headers=["task", "APE", "NoPE", "paper APE/NoPE", "vs paper"], tablefmt="simple"),
              file=out)
        print("\n" + agreement(predictions), file=out)
    for name, error in errors:
        print(f"error: {name}: {error}", file=err)
    return 1 if errors else 0


def agreement(predictions) -> str:
    """How the verdicts compare with the published labels: counts of schemes that agree, disagree
    and are undetermined (every verdict rests on evidence made here; the labels are never evidence),
    with the undetermined and disagreeing ones named."""
    counts: dict[str, list[str]] = {"agrees": [], "disagrees": [], "undetermined": []}
    for p in predictions:
        for scheme, outcome in p.comparison().items():
            counts[outcome].append(f"{p.task} ({scheme})")
    total = sum(map(len, counts.values()))
    lines = [f"against the {total} published labels: {len(counts['agrees'])} agree, {len(counts['disagrees'])} "
             f"disagree, {len(counts['undetermined'])} undetermined (from evidence made here; `crasp predict TASK "
             "--explain` shows it)"]
    if counts["disagrees"]:
        lines.append("disagree: " + ", ".join(counts["disagrees"]))
    if counts["undetermined"]:
        lines.append("undetermined: " + ", ".join(counts["undetermined"]))
    return "\n".join(lines)


def _predict_regexes(args, out, err) -> int:
    """``--regex`` / ``--regex-file``: one prediction per expression, in input order; a line that
    does not parse gets an error entry of its own."""
    from tabulate import tabulate

    from .predict import explain, summary
    from .regular import RegexError, regex_task

    if args.task or args.all or args.program:
        raise TaskError("--regex and --regex-file go without TASK, --all and --program")
    if not args.alphabet:
        raise TaskError("--regex and --regex-file need --alphabet (e.g. --alphabet abc)")
    if args.program_out and args.regex is None:
        raise TaskError("--program-out goes with --regex (one expression), not with --regex-file")
    lines: list[tuple[int | None, str]]
    if args.regex is not None:
        lines = [(None, args.regex)]
    else:
        try:
            text = Path(args.regex_file).read_text()
        except OSError as error:
            raise TaskError(f"cannot read {args.regex_file}: {error.strerror}") from None
        lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    budget = _budget(args)
    entries: list[dict] = [{} for _ in lines]
    names: dict[int, str] = {}
    for index, (number, expression) in enumerate(lines):
        where = f"{args.regex_file}:{number}" if number is not None else "--regex"
        try:
            regex_task(expression, args.alphabet)
        except RegexError as error:
            entries[index] = {"regex": expression, "line": number, "error": f"{where}: {error}"}
            continue
        names[index] = f"re:{args.alphabet}:{expression}"
    predictions = _decide_then_search(args, err, names, budget)
    for index, prediction in predictions.items():
        number, expression = lines[index]
        entries[index] = {"regex": expression, "line": number, **prediction.to_json()}
    if args.program_out and predictions:
        _save_regex_program(predictions[0], args.regex, args.alphabet, args.program_out, err)
    if args.json:
        print(json.dumps(entries if args.regex_file else entries[0], indent=2), file=out)
    elif args.regex is not None and predictions:
        prediction = predictions[0]
        print(explain(prediction) if args.explain else summary(prediction, _width(out)), file=out)
    else:
        rows = [[e["regex"], _cell_json(e.get("ape")), _cell_json(e.get("nope"))] if "error" not in e
                else [e["regex"], "error: " + e["error"], ""] for e in entries]
        print(tabulate(rows, headers=["regex", "APE", "NoPE"], tablefmt="simple"), file=out)
        verdicts = [e[s]["verdict"] for e in entries if "error" not in e for s in ("ape", "nope") if s in e]
        decided = sum(v != "undetermined" for v in verdicts)
        print(f"\n{decided} of {len(verdicts)} verdicts decided", file=out)
    errors = [e["error"] for e in entries if "error" in e]
    for message in errors:
        print(f"error: {message}", file=err)
    return 1 if errors else 0


def _decide_then_search(args, err, names: dict[int, str], budget: Budget) -> dict:
    """Every expression decided first (the verdicts alone, the searches off); then those with an
    open scheme predicted in full, sharing ``--batch-seconds`` of search: each gets an equal share
    (at least :data:`SEARCH_SHARE`, at most the budget's own seconds), in the file's order, while
    the batch's seconds last."""
    from .batch import Request, predict_requests

    schemes = _schemes(args)
    synthesis = not args.no_synthesis
    use_cache = not args.no_cache
    single = args.regex is not None  # one expression on the command line: predicted in full
    first_budget = budget if single else dataclasses.replace(budget, seconds=0.0)
    requests = {i: Request(name, first_budget, args.seed, synthesis, schemes, decide_only=not single)
                for i, name in names.items()}
    progress, close = _bar(args, err, len(requests), "expression")
    lines = None if args.quiet or not single else (lambda line: print(f"  {line}", file=err, flush=True))
    try:
        found = dict(zip(requests, predict_requests(list(requests.values()), processes=args.jobs,
                                                    use_cache=use_cache, progress=progress, lines=lines)))
    finally:
        close()
    if single or budget.seconds <= 0:
        return _checked(found)
    open_ = [i for i, p in found.items() if not isinstance(p, TaskError)
             and any(v.verdict is Verdict.UNDETERMINED for v in p.schemes.values())]
    each = min(budget.seconds, max(SEARCH_SHARE, args.batch_seconds / max(1, len(open_))))
    open_ = open_[:int(args.batch_seconds / each)] if each > 0 else []
    if open_:
        share = dataclasses.replace(budget, seconds=each)
        again = [Request(names[i], share, args.seed, synthesis, schemes) for i in open_]
        progress, close = _bar(args, err, len(again), "search")
        try:
            for i, result in zip(open_, predict_requests(again, processes=args.jobs, use_cache=use_cache,
                                                         progress=progress)):
                found[i] = result
        finally:
            close()
    return _checked(found)


def _checked(found: dict) -> dict:
    for result in found.values():
        if isinstance(result, TaskError):
            raise result
    return found


def _cell_json(entry: dict | None) -> str:
    if entry is None:  # a scheme left out with --schemes
        return "-"
    strength = f", {entry['strength']}" if entry["strength"] else ""
    return f"{entry['verdict']} ({entry['basis']}{strength})"


def _save_program(prediction, path: str, err) -> None:
    """Write the program behind a "generalizes" verdict (given, library, built or synthesized)."""
    from crasp.printer import format_program

    program = next((prediction.verdict(s).program for s in ("nope", "ape") if s in prediction.schemes
                    and prediction.verdict(s).program is not None), None)
    if program is None:
        raise TaskError(f"no verified program for {prediction.task}: nothing to write to {path}")
    Path(path).write_text(format_program(program))
    print(f"program written to {path}", file=err)


def _save_regex_program(prediction, regex: str, alphabet: str, path: str, err) -> None:
    """Write a program for the bare words of ``regex`` (no ``<bos>``, no end token: ``crasp run
    FILE`` on one word per line, symbols separated by spaces), accepting at the last symbol: the
    construction behind a NoPE (plain) or APE "generalizes", rebuilt for bare words and checked
    against the automaton; where the verdict rests on another program, that program (it reads
    ``<bos> w <eos>``) with a note."""
    from crasp.printer import format_program

    from .regular import from_regex
    from .regular.positional import Limits, bare_program

    order = [s for s in ("nope", "ape") if s in prediction.schemes
             and prediction.verdict(s).verdict is Verdict.GENERALIZES]
    if not order:
        raise TaskError(f"no verified program for {prediction.task}: nothing to write to {path}")
    dfa = from_regex(regex, alphabet)
    plain = order[0] == "nope"
    program = bare_program(dfa, Limits(window=0, modulus=1) if plain else Limits())
    if program is None:
        _save_program(prediction, path, err)
        print("note: that program reads <bos> w <eos> (the task's framing); no construction for bare words was found",
              file=err)
        return
    Path(path).write_text(format_program(program))
    print(f"program written to {path} ({'plain C-RASP' if plain else 'C-RASP[periodic, local]'}, for bare words: "
          f"`crasp run {path}` reads one word per line, symbols separated by spaces)", file=err)


def add_predict(commands) -> None:
    """Add ``predict`` to the ``crasp`` command's subparsers."""
    predict_p = commands.add_parser(
        "predict", help="predict whether a task length-generalizes, with evidence",
        description="Per positional scheme (APE and NoPE; relative and uniform positions for operand formats): "
        "'generalizes', 'does not generalize' or 'undetermined', with its strength (proof, verified with its "
        "bounds, or extrapolated) and a one-line reason; --explain prints every finding behind it. The sources "
        "run cheapest first and stop once a scheme is settled: the given and library programs, the regular-"
        "language decision and the program built from it, modular counting, Xu et al.'s truncation test, the "
        "alignment check; then, for what is still open, learning the task's automaton and the searches (the "
        "communication matrix's growth, program synthesis) within the budget's seconds. Published labels are "
        "shown beside the verdicts, never used as evidence. A given program that verification refutes makes "
        "the exit status 1. TASK is a registered task, module:attribute naming a task of your own (a Task, or "
        "a function registered with @tasks.task), or re:ALPHABET:REGEX for a regular language.",
    )
    predict_p.add_argument("task", metavar="TASK", nargs="?",
                           help="a registered task, module:attribute, or re:ALPHABET:REGEX (or give --all, --regex "
                                "or --regex-file)")
    predict_p.add_argument("--all", action="store_true",
                           help="every registered task, in parallel processes, as a table beside the paper's labels")
    predict_p.add_argument("--family", choices=Families(), metavar="FAMILY",
                           help="with --all: only this family (%(choices)s)")
    predict_p.add_argument("--program", metavar="FILE", action="append",
                           help="a candidate .cr program for TASK (repeatable); verified before it counts")
    predict_p.add_argument("--quick", action="store_true",
                           help="the quick budget: a second or two per task (see --budget)")
    predict_p.add_argument("--budget", metavar="SPEC",
                           help="quick, default or thorough, and/or KEY=VALUE overrides, comma-separated (e.g. "
                                "'samples=1000,seconds=30'); keys: exhaustive, samples, max_length, derived, pairs, "
                                "comm_samples, family, family_length, learn_length, seconds (the searches' time), "
                                "truncation_samples, reference_seconds (the longest one call of the reference may "
                                "take), work (a verification's definitions x positions), rivals (the exact "
                                "training-length search's choices)")
    predict_p.add_argument("--schemes", metavar="LIST",
                           help="comma-separated positional schemes: ape, nope, relative, uniform (default: ape and "
                                "nope, and relative and uniform for operand formats)")
    predict_p.add_argument("--explain", action="store_true", help="every finding in full, not one screen")
    predict_p.add_argument("--program-out", metavar="FILE",
                           help="write the verified program behind the verdict (yours, the library's, one built from "
                                "a regular language's automaton, or a synthesized one) to FILE")
    predict_p.add_argument("--regex", metavar="RE",
                           help="predict for the regular language RE (accept format: the answer read after the "
                                "input); needs --alphabet")
    predict_p.add_argument("--regex-file", metavar="FILE",
                           help="one regular expression per line, all over --alphabet: all are decided first, then "
                                "the open ones share --batch-seconds of search; a line that does not parse gets an "
                                "error entry naming it (--json: a list)")
    predict_p.add_argument("--alphabet", metavar="SYMBOLS", help="the alphabet of --regex, e.g. abc")
    predict_p.add_argument("--batch-seconds", type=float, default=4.0, metavar="S",
                           help="with --regex-file: the search time the expressions left open share (default 4)")
    predict_p.add_argument("--no-synthesis", action="store_true",
                           help="do not search for a program when none is given or verified")
    predict_p.add_argument("--jobs", type=POSITIVE, metavar="N",
                           help="worker processes for --all and --regex-file (default: one per core)")
    predict_p.add_argument("--no-cache", action="store_true",
                           help="recompute predictions kept from earlier runs (the cache of `crasp run`)")
    predict_p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    predict_p.add_argument("--json", action="store_true", help="the prediction(s) as JSON")
    predict_p.add_argument("--seed", type=SEED, default=0, metavar="S",
                           help="the seed of every sampled input and search (default 0)")
    predict_p.set_defaults(handler=cmd_predict)


__all__ = ["add_predict", "cmd_predict", "agreement"]
