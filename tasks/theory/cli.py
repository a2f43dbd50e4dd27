"""``crasp theory``: run the theory's statements as properties (see :mod:`tasks.theory.statements`).

Each statement prints ``PASS name (N examples, S s)`` or ``FAIL name (...)`` followed by what was
violated and its shrunk counterexample; the exit status is 1 when any statement fails. Progress
goes to standard error.
"""

from __future__ import annotations

import json

from crasp.arguments import SEED, number


def cmd_theory(args, out, err) -> int:
    from .run import profile_named, run_catalogue, select

    statements = select(args.only)
    if args.list:
        if args.json:
            print(json.dumps([s.to_json() for s in statements], indent=2), file=out)
        else:
            print("\n".join(s.describe() for s in statements), file=out)
        return 0
    profile = profile_named(args.profile)
    progress = None if args.quiet else (lambda line: print(line, file=err, flush=True))
    if progress:
        budget = args.seconds if args.seconds is not None else profile.seconds
        spread = f", {budget:g} s in all" if budget is not None else ""
        count = f"{len(statements)} statement{'s' * (len(statements) != 1)}"
        progress(f"crasp theory: {count}, profile {profile.name}, seed {args.seed}{spread}")
    done = None if args.json else (lambda outcome: print(outcome.report(), file=out, flush=True))
    outcomes = run_catalogue(profile, only=args.only, seed=args.seed, seconds=args.seconds, progress=progress,
                             done=done)
    failed = [o for o in outcomes if not o.passed]
    cited = {s.name: s.citation for s in statements}
    if args.json:
        print(json.dumps({"profile": profile.name, "seed": args.seed, "passed": not failed,
                          "outcomes": [{**o.to_json(), "citation": cited[o.name]} for o in outcomes]}, indent=2),
              file=out)
    else:
        examples = sum(o.examples for o in outcomes)
        seconds = sum(o.seconds for o in outcomes)
        print(f"{len(outcomes) - len(failed)} of {len(outcomes)} statements held on every example tried "
              f"({examples} examples, {seconds:.1f} s); a pass is evidence, not a proof", file=out)
    return 1 if failed else 0


class _Names:
    """The statements' names, as argparse ``choices``: read when argparse first asks (a usage
    error, ``--help``, an ``--only`` given), so that building ``crasp``'s parser does not load the
    catalogue (Hypothesis, the strategies) for every other command.

    >>> "theorem12-protocol" in _Names(), "nosuch" in _Names()
    (True, False)
    """

    def __iter__(self):
        from .statements import NAMES

        return iter(NAMES)

    def __contains__(self, name: object) -> bool:
        return name in list(self)


def add_commands(commands) -> None:
    """Add ``theory`` to the ``crasp`` command's subparsers."""
    parser = commands.add_parser(
        "theory", help="check the theory's statements on random examples (property-based)",
        description="Run the catalogue of the theory's statements (Huang et al. 2025's Theorems 9 and 12, the APE "
        "translation, the regular-language decision of Yang et al. 2026, the depth hierarchy of Yang, Cadilhac & "
        "Chiang 2025, containment) as Hypothesis properties on random programs, inputs, automata and findings. "
        "Each statement prints PASS with the examples tried, or FAIL with its shrunk counterexample; exit status 1 "
        "when any fails. A pass is evidence on the examples tried, not a proof. Progress goes to standard error.",
    )
    parser.add_argument("--profile", choices=["quick", "thorough"], default="quick",
                        help="quick: each statement once, under 90 s in all (default); thorough: larger objects, "
                        "repeated with fresh seeds until the time budget is spent (10 minutes unless --seconds)")
    parser.add_argument("--seconds", type=number(minimum=0), default=None, metavar="S",
                        help="total time budget, shared equally by the statements run (default: the profile's)")
    parser.add_argument("--only", nargs="+", action="extend", choices=_Names(), metavar="NAME",
                        help="run only these statements (%(choices)s)")
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the first Hypothesis run (default 0)")
    parser.add_argument("--json", action="store_true",
                        help="print {profile, seed, passed, outcomes: [{name, passed, examples, seconds, "
                        "counterexample, message}]} as JSON (with --list: the statements)")
    parser.add_argument("--list", action="store_true",
                        help="list the statements with their citations, hypotheses and checks; run nothing")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.set_defaults(handler=cmd_theory)


__all__ = ["add_commands", "cmd_theory"]
