"""``crasp synthesize``: search for a task's C-RASP program (see :mod:`tasks.synthesis`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from crasp.arguments import SEED, integer, number


FIRST_SEARCH = 5.0
"""Where a construction gives a verified program, the search gets this many seconds (at most) to
find a smaller one."""


def constructed(task, positions: str, seed: int, progress=None):
    """A program built for the task and verified as predict verifies it: the bounded window's, the
    one built from the task's (or its learned) automaton, or the positional construction's (APE
    only); plain C-RASP ones only for ``positions`` "nope". None where none passes."""
    from .evidence import Evidence, positional, regular, window
    from .evidence.programs import Checked
    from .findings import DEFAULT, scheme_named

    evidence = Evidence(task, DEFAULT, seed=seed, synthesis=False, progress=progress)
    plain = scheme_named(positions).plain_only
    tries = [window.construct, regular.construct] + ([] if plain else [positional.construct])
    for build in tries:
        if progress:
            progress(f"trying the {build.__module__.rsplit('.', 1)[-1]} construction")
        found = evidence.get(build)
        if isinstance(found, positional.Construction):  # it wraps its candidate
            found = found.checked
        if isinstance(found, Checked) and found.ok and (found.plain or not plain):
            return found
    return None


def _print_constructed(checked, args, out, err) -> int:
    from crasp.printer import format_program

    from .evidence.programs import describe
    from .synthesis import program_size

    text = format_program(checked.program)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"program written to {args.out}", file=err)
    how = (f"built by a construction ({checked.origin}): the search found nothing smaller within "
           f"{min(args.time, FIRST_SEARCH):g} s")
    if args.json:
        print(json.dumps({"program": text, "size": program_size(checked.program), "checks": describe(checked),
                          "constructed": checked.origin, "searched": how}, indent=2), file=out)
        return 0
    print(text, end="", file=out)
    print(f"\n// size {program_size(checked.program)}; {how}", file=out)
    print(describe(checked), file=out)
    return 0


def cmd_synthesize(args, out, err) -> int:
    from tasks.synthesis import SynthesisConfig, synthesize

    from . import registry
    from .evidence.guard import guarded, watchdog
    from .evidence.reference import check_reference

    task = guarded(registry.get(args.task))  # the task's own code: errors name the input
    config = SynthesisConfig(max_size=args.max_size, time_limit=args.time, positions=args.positions,
                             seed=args.seed)
    progress = None if args.quiet else (lambda line: print(line, file=err, flush=True))
    with watchdog():
        check_reference(task, seed=args.seed)  # the search trusts the reference: check it first
        built = constructed(task, args.positions, args.seed, progress)
        if built is not None:  # a verified program in hand: search briefly for a smaller one
            config = dataclasses.replace(config, time_limit=min(config.time_limit, FIRST_SEARCH))
        result = synthesize(task, config, progress=progress)
        if result.program is None and built is not None:
            return _print_constructed(built, args, out, err)
    if result.program is None:
        if args.json:
            print(json.dumps(result.to_json(), indent=2), file=out)
        print(f"crasp: no {args.positions.upper()} program found for {task.name} within the budget; "
              f"searched: {result.searched}", file=err)
        return 1
    assert result.text is not None  # a found program comes with its text
    if args.out:
        Path(args.out).write_text(result.text, encoding="utf-8")
        print(f"program written to {args.out}", file=err)
    if args.json:
        print(json.dumps(result.to_json(), indent=2), file=out)
        return 0
    print(result.text, end="", file=out)
    print(f"\n// size {result.size}; {result.candidates:,} candidates, {result.classes:,} classes, "
          f"{result.seconds:.1f} s", file=out)
    print(result.checks, file=out)
    return 0


def add_commands(commands) -> None:
    """Add ``synthesize`` to the ``crasp`` command's subparsers."""
    parser = commands.add_parser(
        "synthesize", help="search for a task's C-RASP program",
        description="Search for a C-RASP program of TASK (a registered task, or module:attribute naming a "
        "task of your own) by bottom-up enumeration with observational equivalence, closed by the verifier: "
        "a candidate that agrees with the reference on the search's inputs is verified as `crasp verify` "
        "does, and a counterexample joins the inputs. Prints the verified program and what was checked; "
        "exit status 1, with what was searched, when nothing is found within the budget. Progress goes to "
        "standard error.",
    )
    parser.add_argument("task", metavar="TASK",
                        help="a registered task (`crasp tasks` lists them) or module:attribute naming your own")
    parser.add_argument("--positions", choices=["ape", "nope"], default="ape",
                        help="ape: periodic predicates and local guards allowed (default); nope: plain C-RASP")
    parser.add_argument("--max-size", type=integer(minimum=0), default=12, metavar="N",
                        help="largest expression size (AST nodes) per output (default 12)")
    parser.add_argument("--time", type=number(minimum=0), default=30.0, metavar="S",
                        help="time budget in seconds (default 30)")
    parser.add_argument("--seed", type=SEED, default=0,
                        help="seed of the random inputs, offsets and verification samples (default 0)")
    parser.add_argument("--json", action="store_true",
                        help="print {program, size, checks, candidates, seconds, ...} as JSON")
    parser.add_argument("--out", metavar="FILE", help="write the program to FILE (.cr)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.set_defaults(handler=cmd_synthesize)


__all__ = ["add_commands", "cmd_synthesize"]
