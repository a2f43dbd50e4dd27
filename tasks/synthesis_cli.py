"""``crasp synthesize``: search for a task's C-RASP program (see :mod:`tasks.synthesis`)."""

from __future__ import annotations

import json
from pathlib import Path

from crasp.arguments import SEED, integer, number


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
        result = synthesize(task, config, progress=progress)
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
