"""``crasp compile`` and ``crasp run --compiled``: compiled models on the command line.

torch is imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import sys

from crasp.arguments import NONNEGATIVE, POSITIVE, SEED

from .config import CompileConfig


def cmd_compile(args, out, err) -> int:
    from crasp.checker import check
    from crasp.cli import load_program

    from .compiler import compile_program
    from .config import CompileConfig, ConfigError
    from .properties import check_properties
    from .agreement import verify

    if args.export and not args.output:
        from crasp.errors import UsageError

        raise UsageError("--export tl needs -o FILE, the file to write the HookedTransformer to")
    config = CompileConfig(max_length=args.verify_length, dtype=args.dtype, device=args.device,
                           max_period=args.max_period, max_local_offsets=args.max_local_offsets,
                           max_window=args.max_window)
    if config.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError("--device cuda: no CUDA device is available on this machine")
    checked = check(load_program(args.program))
    model = compile_program(checked, config)
    properties = check_properties(model)
    if not args.json:
        print(model.describe(), file=out)
        print(f"  PERIODIC: period {properties.period}; LOCAL: tau {properties.tau}", file=out)
    report = verify(model, checked, max_length=args.verify_length, count=args.count, seed=args.seed)
    if not args.json:
        print(f"verification: {report.summary()}", file=out)
    files = []
    if args.export == "tl":
        from .lens import export_lens

        export = export_lens(model, n_ctx=args.verify_length + 1)
        path = export.save(args.output)
        files.append(path)
        print(f"wrote {path} (TransformerLens HookedTransformer, n_ctx {export.n_ctx}; load it with "
              "limit_transformer.lens.load_transformer_lens)", file=err)
    elif args.output:
        from .export import save

        for path in save(model, args.output):
            files.append(path)
            print(f"wrote {path}", file=err)
    if args.json:
        import dataclasses
        import json

        print(json.dumps({"ok": report.ok, "program": args.program, "model": model.summary(),
                          "properties": dataclasses.asdict(properties), "verification": report.to_json(),
                          "files": [str(f) for f in files]}, indent=2), file=out)
    return 0 if report.ok else 1


def cmd_run(args, out, err) -> int:
    """``crasp run``, through a compiled model when --compiled is given: inputs are read, framed,
    screened and reported as the interpreter's ``crasp run`` does (see :func:`crasp.cli.report_run`)."""
    from crasp.cli import CommandError, cmd_run as interpret, load_program, read_inputs, report_run, screen, verdict

    if not args.compiled:
        return interpret(args, out, err)
    if args.trace:
        raise CommandError("--trace shows the interpreter's values; drop --compiled to trace")
    from crasp.checker import check

    checked = check(load_program(args.program))
    inputs = read_inputs(args.tokens, sys.stdin)
    if not inputs:
        raise CommandError("no input: give tokens after the program, or lines on standard input")
    found = screen(inputs, checked.info.alphabet, allow_unknown=args.allow_unknown, raw=args.raw)
    verdicts: dict[int, str] = {}
    if found.ready:
        from .compiler import compile_program
        from .config import CompileConfig
        from .runner import run

        order = list(found.ready)
        batch = [found.ready[index] for index in order]
        model = compile_program(checked, CompileConfig(max_length=max(len(tokens) for tokens in batch)))
        result = run(model, batch, offset=args.offset, allow_unknown=args.allow_unknown, raw=True)
        verdicts = {index: verdict(result, row) for row, index in enumerate(order)}
    return report_run(args, inputs, found, verdicts, checked.accept is not None, out, err)


def add_commands(commands) -> None:
    compile_p = commands.add_parser(
        "compile", help="compile a program to a Limit Transformer and verify it",
        description="Compile PROGRAM to a Limit Transformer, print its layers, heads and residual "
        "labels, check PERIODIC and LOCAL on its weights, and compare it with the interpreter on "
        "random inputs up to --verify-length tokens at random offsets. Exit status 0 only if "
        "every output agreed.",
    )
    compile_p.add_argument("program", metavar="PROGRAM", help="a .cr file, or a library program's name")
    compile_p.add_argument("--verify-length", type=POSITIVE, default=512, metavar="N",
                           help="longest input to guarantee and to verify (default 512)")
    compile_p.add_argument("--count", type=NONNEGATIVE, default=100, metavar="N",
                           help="random inputs to verify on (default 100)")
    compile_p.add_argument("--seed", type=SEED, default=0, metavar="S",
                           help="the seed of the random inputs and offsets verified on (default 0)")
    compile_p.add_argument("--max-period", type=POSITIVE, default=CompileConfig.max_period, metavar="N",
                           help=f"largest positional table, in rows (default {CompileConfig.max_period})")
    compile_p.add_argument("--max-local-offsets", type=NONNEGATIVE, default=CompileConfig.max_local_offsets,
                           metavar="N", help=f"most local heads (default {CompileConfig.max_local_offsets})")
    compile_p.add_argument("--max-window", type=POSITIVE, default=CompileConfig.max_window, metavar="N",
                           help=f"farthest local offset + 1 (default {CompileConfig.max_window})")
    compile_p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    compile_p.add_argument("--dtype", default="float64", choices=["float32", "float64"],
                           help="the weights' floating-point type (default float64); a program whose "
                                "comparisons float32 cannot decide up to --verify-length is refused")
    compile_p.add_argument("-o", "--output", metavar="FILE",
                           help="save the model: as FILE.safetensors and FILE.json, or with --export tl "
                                "as the torch file FILE")
    compile_p.add_argument("--out", dest="output", metavar="FILE", help=argparse.SUPPRESS)  # its older name
    compile_p.add_argument("--export", choices=["tl"],
                           help="save the model as a TransformerLens HookedTransformer (tl) for inputs up to "
                                "--verify-length tokens, to the -o FILE (pip install '.[interp]' to load it)")
    compile_p.add_argument("--json", action="store_true",
                           help="print one JSON document instead: ok, the program, the model (layers, width, "
                                "heads, residual, outputs), PERIODIC and LOCAL, the verification and the files written")
    compile_p.set_defaults(handler=cmd_compile)

    run_p = commands.choices["run"]
    run_p.add_argument("--compiled", action="store_true",
                       help="run the compiled Limit Transformer instead of the interpreter")
    run_p.set_defaults(handler=cmd_run)
