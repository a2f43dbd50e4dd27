"""The ``crasp`` command: run, check and format C-RASP programs.

Every command ends in one place, :func:`main`: exit status 0 on success, 1 when a program, an
input, a task or a store is in error (``crasp: error: <what>``, with file:line:column for
programs), 2 for a malformed command line (the flag is named). An unexpected exception is a bug:
one line naming it and the version, exit 1. Output that could not be written (a closed standard
output) is an error, never a silent success; symbols the terminal cannot encode are escaped.
"""

from __future__ import annotations

import os
import sys

from . import cache
from .errors import CraspError, CraspSyntaxError, InputError, SourceError, UsageError, empty_input, unknown_token
from .framing import empty_reason, frame, frames, reads_bos
from .version import VERSION

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the command line's fast path
if TYPE_CHECKING:
    import argparse
    from typing import Callable, Collection, Sequence

    from .ast import Program
    from .checker import CheckedProgram
    from .trace import Trace

# ``crasp run``, ``check`` and ``fmt`` of a program seen before import neither the parser (lark),
# nor the AST, nor numpy: they read what the cache kept (crasp.cache) and run a plan in pure Python
# (crasp.plan). Everything else is imported where it is needed.

PURE_PYTHON_WORK = 3_000_000
"""``crasp run`` evaluates a plan in pure Python while instructions x tokens stays below this;
beyond it, numpy's faster evaluation pays for its import (about 60 ms; see docs/performance.md)."""


COMMANDS_GROUP = "crasp.commands"
"""The entry-point group through which packages built on crasp add subcommands: each entry names
an ``add_commands(subparsers)`` function (see pyproject.toml). crasp itself names none of them."""


class CommandError(CraspError):
    """A user error in the command's arguments (missing file, bad option value)."""


# ---------------------------------------------------------------- helpers


def program_text(spec: str) -> tuple[str, str]:
    """The text of a program file, or of a library program by name (``dyck1``), and the name
    its errors use."""
    if os.path.exists(spec):
        if os.path.isdir(spec):
            raise CommandError(f"'{spec}' is a directory, not a program file")
        with open(spec, "rb") as file:
            data = file.read()
        try:
            return data.decode("utf-8-sig"), spec  # a byte-order mark some editors write is dropped
        except UnicodeDecodeError as error:
            raise CraspSyntaxError(f"file is not UTF-8 text ({error.reason})", source=spec) from None
    from . import library

    if spec in library.names():
        with open(library.file(spec), encoding="utf-8") as file:
            return file.read(), f"library/{spec}.cr"
    raise CommandError(
        f"no program file '{spec}' (library programs: {', '.join(library.names())})"
    )


def load_program(spec: str) -> Program:
    """A program from a file path, or by name from the library (``dyck1``)."""
    return _parsed(program_text(spec))


def _parsed(source: tuple[str, str]) -> Program:
    from .parser import parse

    return parse(*source)


def _checked(source: tuple[str, str]) -> CheckedProgram:
    from .checker import check

    return check(_parsed(source))


def cached(kind: str, source: tuple[str, str], make: Callable, use_cache: bool = True, *, checked: bool = True):
    """What ``make`` gives for the program ``source`` (its text and name, from :func:`program_text`):
    given its checked program, or with ``checked`` False its parsed one; from the cache when the
    program was seen before. A program with errors is never kept: its errors are reported anew
    every time."""
    text, _ = source
    if use_cache:
        kept = cache.load(kind, text)
        if kept is not None:
            return kept
    value = make(_checked(source) if checked else _parsed(source))
    if use_cache:
        cache.store(kind, text, value)
    return value


class InputLine:
    """One input of ``crasp run``: its ``tokens``, and where they came from: ``line`` is the
    1-based line of standard input that held them (blank and comment lines counted), None for
    tokens given on the command line; ``text`` is that line as read (it places columns)."""

    __slots__ = ("tokens", "line", "text")

    def __init__(self, tokens: list[str], line: int | None = None, text: str = "") -> None:
        self.tokens = tokens
        self.line = line
        self.text = text

    def __repr__(self) -> str:
        return f"InputLine({self.tokens!r}, line={self.line!r})"

    def where(self, index: int, position: int | None = None) -> str:
        """How an error names this input (``index`` is its 0-based place among the inputs) and
        its token ``position`` (0-based, in the tokens as given).

        >>> InputLine(["a", "x"], 7, "  a  x").where(4, 1)
        'line 7, position 2 (column 6)'
        >>> InputLine(["a", "x"]).where(0, 1), InputLine([]).where(0)
        ('input 1, position 2', 'input 1')
        """
        if self.line is None:
            return f"input {index + 1}" + ("" if position is None else f", position {position + 1}")
        if position is None:
            return f"line {self.line}"
        return f"line {self.line}, position {position + 1} (column {token_column(self.text, position)})"


def token_column(text: str, position: int) -> int:
    """The 1-based column where token ``position`` (0-based) of ``text`` starts, tokens being
    what ``str.split`` makes of it.

    >>> token_column("ab  c\\td", 2)
    7
    """
    count = -1
    inside = False
    for column, char in enumerate(text, 1):
        if char.isspace():
            inside = False
        elif not inside:
            inside = True
            count += 1
            if count == position:
                return column
    raise ValueError(f"{text!r} has no token {position + 1}")


def read_inputs(tokens: Sequence[str], stdin) -> list[InputLine]:
    """One input from command-line tokens, or one per non-empty, non-comment line of stdin, each
    with its line number there."""
    if tokens:
        return [InputLine(" ".join(tokens).split())]
    if stdin is None or getattr(stdin, "closed", False):
        raise CommandError("no input: standard input is closed; give tokens after the program")
    inputs = []
    try:
        for number, line in enumerate(stdin, 1):
            stripped = line.strip()
            if stripped and not stripped.startswith("//"):
                inputs.append(InputLine(stripped.split(), number, line.rstrip("\r\n")))
    except UnicodeDecodeError as error:
        raise CommandError(f"standard input is not UTF-8 text ({error.reason})") from None
    return inputs


class Screened:
    """The inputs of ``crasp run`` sorted into those that can run and those that cannot:
    ``ready`` maps an input's index to its tokens as run (framed where the program reads
    ``<bos>``; see :mod:`crasp.framing`), ``problems`` maps it to what is wrong with it, located
    and in the command line's spelling."""

    __slots__ = ("ready", "problems")

    def __init__(self, ready: dict[int, Sequence[str]], problems: dict[int, str]) -> None:
        self.ready = ready
        self.problems = problems


def screen(inputs: Sequence[InputLine], alphabet: Collection[str], *, allow_unknown: bool, raw: bool) -> Screened:
    """Which inputs a program of ``alphabet`` can run (framed as ``crasp run`` frames them), and
    why the others cannot: an unknown token (unless ``allow_unknown``), or nothing to read.

    >>> found = screen([InputLine(["a"], 1, "a"), InputLine(["x"], 3, "x"), InputLine([], 4, "")],
    ...                {"<bos>", "a"}, allow_unknown=False, raw=False)
    >>> found.ready
    {0: ('<bos>', 'a'), 2: ('<bos>',)}
    >>> print(found.problems[1])
    line 3, position 1 (column 1): token 'x' is not in the program's alphabet ('<bos>', 'a'); allow it with --allow-unknown
    """
    from .plan import first_unknown

    framed = frames(alphabet, raw=raw)
    known = frozenset(alphabet)
    ready: dict[int, Sequence[str]] = {}
    problems: dict[int, str] = {}
    for index, item in enumerate(inputs):
        position = None if allow_unknown else first_unknown(item.tokens, known)
        if position is not None:
            problems[index] = str(unknown_token(index, item.tokens, position, sorted(known),
                                                where=item.where(index, position), allow="--allow-unknown"))
        elif framed:
            ready[index] = frame(item.tokens)
        elif not item.tokens:
            problems[index] = str(empty_input(index, empty_reason(reads_bos(alphabet), "--raw"),
                                              where=item.where(index)))
        else:
            ready[index] = item.tokens
    return Screened(ready, problems)


def error_line(error: CraspError) -> str:
    """``crasp: error: <what>``, programs' errors located as ``file:line:column`` with their source line."""
    text = error.render(kind=False) if isinstance(error, SourceError) else str(error)
    return f"crasp: error: {text}"


def describe(checked: CheckedProgram) -> dict:
    """The summary ``crasp check`` prints (``source`` first)."""
    info = checked.info
    outputs = ["accept"] if checked.accept is not None else [f'next "{t}"' for t, _ in checked.next_tokens]
    return {
        "source": checked.program.source,
        "class": info.model_class,
        "plain": info.plain,
        "definitions": info.definitions,
        "depth": info.depth,
        "periods": sorted(info.periods),
        "period": info.period,
        "offsets": sorted(info.offsets) if len(info.offsets) <= 64 else str(info.offsets),
        "alphabet": sorted(info.alphabet),
        "outputs": outputs,
    }


def verdict(result, row: int) -> str:
    """What ``crasp run`` prints for one input: accept/reject, or the next token per position."""
    if result.accept is not None:
        return "accept" if result.accept[row] else "reject"
    return " ".join(t if t is not None else "?" for t in result.next_tokens(row))


def cache_summary() -> dict:
    """What ``crasp cache info`` prints: the folder, its entries (in all and per kind), their bytes,
    the size limit and where it comes from, and whether the cache is on. Raises
    :class:`~crasp.cache.CacheError` for a malformed ``$CRASP_CACHE_SIZE``."""
    kinds: dict[str, dict[str, int]] = {}
    for _, kind, size, _ in cache.entries():
        counted = kinds.setdefault(kind, {"entries": 0, "bytes": 0})
        counted["entries"] += 1
        counted["bytes"] += size
    return {
        "folder": cache.directory(),
        "entries": sum(k["entries"] for k in kinds.values()),
        "bytes": sum(k["bytes"] for k in kinds.values()),
        "limit": cache.limit(),
        "limit_from": cache.LIMIT_VARIABLE if os.environ.get(cache.LIMIT_VARIABLE, "").strip() else "default",
        "enabled": not cache.disabled(),
        "kinds": dict(sorted(kinds.items())),
    }


# ---------------------------------------------------------------- commands


def cmd_run(args, out, err) -> int:
    source = program_text(args.program)
    plan = checked = None
    if args.trace:
        checked = _checked(source)  # the program's errors before the inputs'
        alphabet: Collection[str] = checked.info.alphabet
    else:
        from .plan import lower

        plan = cached("plan", source, lower, not getattr(args, "no_cache", False))
        alphabet = plan[0]
    inputs = read_inputs(args.tokens, sys.stdin)
    if not inputs:
        raise CommandError("no input: give tokens after the program, or lines on standard input")
    found = screen(inputs, alphabet, allow_unknown=args.allow_unknown, raw=args.raw)
    if plan is not None and len(plan[1]) * sum(map(len, found.ready.values())) <= PURE_PYTHON_WORK:
        from .plan import is_acceptance, verdict as plan_verdict

        verdicts = {index: plan_verdict(plan, tokens, args.offset) for index, tokens in found.ready.items()}
        return report_run(args, inputs, found, verdicts, is_acceptance(plan), out, err)
    return _run_vectorised(args, checked or _checked(source), inputs, found, out, err)


def report_run(args, inputs: Sequence[InputLine], found: Screened, verdicts: dict[int, str], acceptance: bool,
               out, err) -> int:
    """Print what ``crasp run`` found, in the inputs' order: a verdict line per input that ran on
    standard output, a ``crasp: error:`` line per input that could not (naming its line) on
    standard error; with ``--json``, a list of objects instead: per input that ran its tokens
    as run and its ``accept`` (a recognizer) or its ``next`` token per position (null where no
    single one holds), per input that could not its tokens, ``line`` (null for command-line
    tokens) and ``error``. Exit status 1 when some input could not run, else 0."""
    if not args.json:
        for index in range(len(inputs)):
            if index in found.problems:
                print(f"crasp: error: {found.problems[index]}", file=err)
            else:
                print(verdicts[index], file=out)
        return 1 if found.problems else 0
    import json

    rows: list[dict] = []
    for index, item in enumerate(inputs):
        if index in found.problems:
            print(f"crasp: error: {found.problems[index]}", file=err)
            rows.append({"input": item.tokens, "line": item.line, "error": found.problems[index]})
        elif acceptance:
            rows.append({"input": list(found.ready[index]), "accept": verdicts[index] == "accept"})
        else:
            rows.append({"input": list(found.ready[index]),
                         "next": [None if t == "?" else t for t in verdicts[index].split()]})
    print(json.dumps(rows, indent=2), file=out)
    return 1 if found.problems else 0


def _run_vectorised(args, checked: CheckedProgram, inputs: Sequence[InputLine], found: Screened, out, err) -> int:
    """``crasp run`` on the numpy interpreter: long or many inputs, and traces. An input the
    interpreter refuses (counts that could overflow at its length) is reported, the others run."""
    from .interpreter import run, run_in_chunks

    order = list(found.ready)
    verdicts: dict[int, str] = {}
    collected: dict[int, Trace] = {}
    options = dict(offset=args.offset, trace=bool(args.trace), allow_unknown=args.allow_unknown, raw=True)

    def keep(indices: list[int], result) -> None:
        for row, index in enumerate(indices):
            verdicts[index] = verdict(result, row)
        if args.trace:
            from .trace import traces

            collected.update(zip(indices, traces(result, checked)))

    try:
        for rows, result in run_in_chunks(checked, [found.ready[k] for k in order], **options):
            keep([order[row] for row in rows], result)
    except InputError:  # one input of a chunk cannot run: run the rest one by one, to name it
        for index in order:
            if index not in verdicts:
                try:
                    keep([index], run(checked, [found.ready[index]], **options))
                except InputError as error:
                    found.problems[index] = f"{inputs[index].where(index)}: {error}"
                    del found.ready[index]
    status = report_run(args, inputs, found, verdicts, checked.accept is not None, out, err)
    if args.trace and collected:
        from .trace import write_traces

        ordered = sorted(collected)
        written = write_traces([collected[i] for i in ordered], args.trace,
                               title=f"Trace of {checked.program.source}",
                               labels=[f"input {i + 1}" + ("" if inputs[i].line is None else f", line {inputs[i].line}")
                                       for i in ordered])
        print(f"trace written to {written}", file=err)
    return status


def cmd_check(args, out, err) -> int:
    status = 0
    for spec in args.programs:
        try:
            source = program_text(spec)
            summary = {**cached("summary", source, describe, not args.no_cache), "source": source[1]}
        except CraspError as error:
            print(error_line(error), file=err)
            status = max(status, error.exit_status)
            continue
        if args.json:
            import json

            print(json.dumps(summary), file=out)
            continue
        dash = lambda values: (values if isinstance(values, str) else ", ".join(map(str, values))) or "-"  # noqa: E731
        print(
            f"{summary['source']}: ok\n"
            f"  class:       {summary['class']}\n"
            f"  definitions: {summary['definitions']}, count depth {summary['depth']}\n"
            f"  periods:     {dash(summary['periods'])} (period {summary['period']})\n"
            f"  offsets:     {dash(summary['offsets'])}\n"
            f"  alphabet:    {dash(summary['alphabet'])}\n"
            f"  outputs:     {dash(summary['outputs'])}",
            file=out,
        )
    return status


def cmd_fmt(args, out, err) -> int:
    status = 0
    for spec in args.programs:
        source = program_text(spec)
        formatted = cached("format", source, _formatted, not args.no_cache, checked=False)
        text, _ = source
        if args.check:
            if formatted != text:
                print(f"{spec}: would reformat", file=err)
                status = 1
        elif args.in_place:
            if not os.path.isfile(spec):
                raise UsageError(
                    f"fmt -i rewrites files, and '{spec}' is a library program, not a file; "
                    f"print it with 'crasp fmt {spec}'"
                )
            with open(spec, "w", encoding="utf-8") as file:
                file.write(formatted)
        else:
            out.write(formatted)
    return status


def cmd_cache(args, out, err) -> int:
    if args.cache_command == "clear":
        removed, freed = cache.clear()
        print(f"removed {removed} {'entry' if removed == 1 else 'entries'} ({cache.format_size(freed)}) "
              f"from {cache.directory()}", file=out)
        return 0
    summary = cache_summary()
    if args.json:
        import json

        print(json.dumps(summary), file=out)
        return 0
    kinds = ", ".join(f"{kind} {counted['entries']}" for kind, counted in summary["kinds"].items())
    source = (f"from {cache.LIMIT_VARIABLE}" if summary["limit_from"] != "default"
              else f"the default; {cache.LIMIT_VARIABLE} sets it")
    print(f"folder:  {summary['folder']}\n"
          f"entries: {summary['entries']}, {cache.format_size(summary['bytes'])}" + (f" ({kinds})" if kinds else "")
          + f"\nlimit:   {cache.format_size(summary['limit'])} ({source})", file=out)
    if not summary["enabled"]:
        print("off:     CRASP_NO_CACHE is set: nothing is read or kept", file=out)
    return 0


def _formatted(program: Program) -> str:
    from .parser import parse
    from .printer import format_program

    formatted = format_program(program)
    if parse(formatted) != program:  # pragma: no cover - guarded by the round-trip tests
        raise CraspError(f"{program.source}: formatting would change the program; please report this")
    return formatted


# ---------------------------------------------------------------- parser and entry point


CORE_COMMANDS = ("run", "check", "fmt", "cache")
"""Subcommands of crasp itself; the rest come from the ``crasp.commands`` entry points."""


def build_parser(*, extensions: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; without ``extensions``, crasp's own commands alone (what
    ``crasp run``, ``check`` and ``fmt`` need, without importing the packages built on crasp)."""
    import argparse

    from .arguments import NONNEGATIVE

    parser = argparse.ArgumentParser(
        prog="crasp",
        description="Write, check, run and trace C-RASP[periodic, local] programs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="one of these ('crasp COMMAND --help' describes it):")
    no_cache_help = ("neither read nor keep the checked program in the cache "
                     "(see crasp.cache; CRASP_NO_CACHE=1 does the same)")

    run_p = commands.add_parser(
        "run", help="run a program on inputs",
        description="Run PROGRAM (a .cr file or a library name) on one input given as TOKENS, or on "
        "each line of standard input; print one verdict per input: accept/reject, or the predicted "
        "next token at every position (? where no single next(t) holds). A program that reads <bos> "
        "gets it prepended to each input that does not start with it (--raw: not). A line that "
        "cannot run is reported by its line number, the others still run; the exit status is then 1.",
    )
    run_p.add_argument("program", metavar="PROGRAM", help="a .cr file, or a library program's name (dyck1, ...)")
    run_p.add_argument("tokens", nargs="*", metavar="TOKENS", help="whitespace-separated tokens")
    run_p.add_argument("--trace", metavar="FILE", help="write a trace: FILE.html (a page) or FILE.txt")
    run_p.add_argument("--offset", type=NONNEGATIVE, default=0,
                       help="absolute position of token 1 (a prepended <bos>, where one is) is OFFSET+1")
    run_p.add_argument("--allow-unknown", action="store_true",
                       help="accept tokens the program never mentions (they match no literal)")
    run_p.add_argument("--raw", action="store_true",
                       help="run the tokens as given: no <bos> is prepended to an input of a program that "
                            "reads <bos> (by default one is, unless the input starts with it)")
    run_p.add_argument("--no-cache", action="store_true", help=no_cache_help)
    run_p.add_argument("--json", action="store_true",
                       help="print a JSON list: per input its tokens as run and accept (true/false), or next "
                            "(the predicted token per position, null where no single one holds); per input "
                            "that cannot run its tokens, line and error")
    run_p.set_defaults(handler=cmd_run)

    check_p = commands.add_parser(
        "check", help="check programs statically",
        description="Check programs: names, sorts, periodic/local predicates and outputs. Prints the "
        "program's class (plain C-RASP or periodic/local), count depth, periods and offsets.",
    )
    check_p.add_argument("programs", nargs="+", metavar="PROGRAM", help="a .cr file, or a library program's name")
    check_p.add_argument("--json", action="store_true", help="one JSON object per program")
    check_p.add_argument("--no-cache", action="store_true", help=no_cache_help)
    check_p.set_defaults(handler=cmd_check)

    fmt_p = commands.add_parser(
        "fmt", help="format programs",
        description="Print programs in canonical form (comments kept); -i rewrites the files.",
    )
    fmt_p.add_argument("programs", nargs="+", metavar="PROGRAM", help="a .cr file, or a library program's name")
    mode = fmt_p.add_mutually_exclusive_group()
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file is not formatted")
    fmt_p.add_argument("--no-cache", action="store_true", help=no_cache_help)
    fmt_p.set_defaults(handler=cmd_fmt)

    cache_p = commands.add_parser(
        "cache", help="show or empty the program cache",
        description="The per-user folder where run, check, fmt and predict keep what they learned "
        "(see crasp.cache). It keeps itself under a size limit, least recently used entries out: "
        f"{cache.format_size(cache.DEFAULT_LIMIT)} unless {cache.LIMIT_VARIABLE} sets another "
        "(bytes, or 512K, 256M, 1G).",
    )
    actions = cache_p.add_subparsers(dest="cache_command", required=True, metavar="ACTION",
                                     help="info or clear ('crasp cache ACTION --help' describes it):")
    info_p = actions.add_parser("info", help="where the cache is, its entries, their size and the limit",
                                description="Print the cache's folder, its entries (per kind), their "
                                "size and the size limit.")
    info_p.add_argument("--json", action="store_true",
                        help="one JSON object: folder, entries, bytes, limit, limit_from, enabled, kinds")
    actions.add_parser("clear", help="remove every entry", description="Remove every entry of the cache "
                       "(other files in its folder are left alone) and say how many, and how many bytes.")
    cache_p.set_defaults(handler=cmd_cache)

    if extensions:
        for entry in _extensions():
            entry.load()(commands)
    return parser


def _extensions() -> list:
    """The ``crasp.commands`` entry points, in their declared order (ordered by name)."""
    from importlib.metadata import entry_points

    return sorted(entry_points(group=COMMANDS_GROUP), key=lambda entry: entry.name)


def _version() -> str:
    return VERSION


def _needs_extensions(argv: Sequence[str]) -> bool:
    """Whether parsing ``argv`` may need the commands (and flags) of the packages built on crasp:
    any command but crasp's own, and every request for help."""
    if any(arg in ("-h", "--help") for arg in argv):
        return True
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    return command is not None and command not in CORE_COMMANDS


class _Output:
    """A stream that escapes what its encoding cannot write and notes output it could not write;
    ``after``: a stream flushed before each write to this one (standard output before standard
    error, so that where both go to one pipe, as `2>&1` makes them, they keep their order)."""

    def __init__(self, stream, after: _Output | None = None) -> None:
        self.stream = stream
        self.after = after
        self.lost = stream is None or getattr(stream, "closed", False)

    def write(self, text: str) -> int:
        if self.lost:
            return len(text)
        if self.after is not None:
            try:
                self.after.flush()
            except BrokenPipeError:  # what reads standard output went away; this stream may still be read
                pass
        try:
            return self.stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self.stream, "encoding", None) or "ascii"
            return self.stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
        except BrokenPipeError:
            raise
        except (OSError, ValueError):  # closed, or a full disk
            self.lost = True
            return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self.stream.flush()
            except BrokenPipeError:
                raise
            except (OSError, ValueError):
                self.lost = True

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` were parsed for: ``crasp predict``'s for
    ``crasp predict ...``, ``crasp cache info``'s for ``crasp cache info ...``; its usage and
    errors name that command.

    >>> parser = build_parser(extensions=False)
    >>> command_parser(parser, parser.parse_args(["cache", "info"])).prog
    'crasp cache info'
    """
    import argparse

    while True:
        chosen = next((action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                       and getattr(args, action.dest, None) in action.choices), None)
        if chosen is None:
            return parser
        parser = chosen.choices[getattr(args, chosen.dest)]


def _parse(argv: list[str], *, extensions: bool):
    """The parsed arguments; None when, without the extensions, an unknown flag was left over."""
    parser = build_parser(extensions=extensions)
    # Tokens may follow options (crasp run P --offset 1 a b): argparse leaves them as extras.
    # argparse hands a subcommand's unknown flags up to the top parser, whose usage is crasp's;
    # the error is reported by the subcommand's parser instead, with its usage.
    args, extras = parser.parse_known_args(argv)
    if extras and (args.command != "run" or any(e.startswith("--") for e in extras)):
        if not extensions:
            return None
        unknown = [e for e in extras if e.startswith("-")] if args.command == "run" else extras
        before = argv.index(args.command) if args.command in argv else len(argv)
        reporter = parser if any(e in argv[:before] for e in unknown) else command_parser(parser, args)
        reporter.error(f"unrecognized arguments: {' '.join(unknown)}")
    if extras:
        args.tokens = [*args.tokens, *extras]
    return args


def main(argv: Sequence[str] | None = None, out=None, err=None) -> int:
    """Entry point; returns the exit status (the console script passes it to the shell)."""
    out = _Output(out if out is not None else sys.stdout)
    err = _Output(err if err is not None else sys.stderr, after=out)
    status = _dispatch(argv, out, err)
    try:
        out.flush()
    except BrokenPipeError:
        return status
    if out.lost and status == 0:
        print("crasp: error: standard output is closed or unwritable: the output was lost", file=err)
        return 1
    return status


def _plain_run(argv: list[str]):
    """``crasp run PROGRAM [TOKENS...]`` without any option, read without argparse (whose import,
    terminal-size and translation lookups cost more than a warm run itself); None for any other
    command line, which argparse reads."""
    if len(argv) < 2 or argv[0] != "run" or any(arg.startswith("-") for arg in argv[1:]):
        return None
    from types import SimpleNamespace

    return SimpleNamespace(command="run", program=argv[1], tokens=argv[2:], trace=None, offset=0,
                           allow_unknown=False, raw=False, no_cache=False, json=False, compiled=False,
                           handler=cmd_run)


def _dispatch(argv: Sequence[str] | None, out: _Output, err: _Output) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _plain_run(argv)
    if args is None:
        import contextlib

        try:
            # argparse writes usage and --help itself: to the streams this call was given.
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                args = _parse(argv, extensions=_needs_extensions(argv))
                if args is None:  # a flag crasp does not know may belong to an extension of its command
                    args = _parse(argv, extensions=True)
        except SystemExit as stop:  # argparse reports usage errors itself (exit 2; --help exits 0)
            return stop.code if isinstance(stop.code, int) else 2
    handler: Callable = args.handler
    try:
        return handler(args, out, err)
    except CraspError as error:
        print(error_line(error), file=err)
        return error.exit_status
    except BrokenPipeError:  # the reader went away (`crasp tasks | head`): nothing left to report
        return 0
    except KeyboardInterrupt:
        print("crasp: interrupted", file=err)
        return 130
    except MemoryError:
        print("crasp: error: out of memory (a smaller input, length or budget may fit)", file=err)
        return 1
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(f"crasp: error: {error.strerror or error}{where}", file=err)
        return 1
    except Exception as error:  # noqa: BLE001 - the one place a bug is reported, not hidden
        print(
            f"crasp: internal error: {type(error).__name__}: {error} (crasp-lengthgen {_version()}, "
            f"command '{args.command}'); this is a bug: please report it with the command you ran",
            file=err,
        )
        return 1
