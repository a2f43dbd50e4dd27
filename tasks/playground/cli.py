"""``crasp serve``: the playground page on this machine (the ``serve`` extra: Starlette and uvicorn).

Neither is imported until the command runs, so ``crasp --help`` works without the extra; without
it, ``crasp serve`` says which package is missing and how to install it.
"""

from __future__ import annotations

from crasp.arguments import POSITIVE, integer, number

INSTALL = "pip install 'crasp-lengthgen[serve]'"


def serve_modules():
    """The application's module and the server's, or a :class:`~crasp.cli.CommandError` naming
    the missing package and :data:`INSTALL`."""
    from crasp.cli import CommandError

    try:
        import uvicorn  # noqa: F401 - the server's own import, checked before anything starts

        from . import app, server
    except ImportError as missing:
        raise CommandError(f"crasp serve needs the 'serve' extra ({missing.name or 'starlette/uvicorn'} is not "
                           f"installed): {INSTALL}") from None
    return app, server


def cmd_serve(args, out, err) -> int:
    app, server = serve_modules()
    limits = app.Limits(seconds=args.time_limit, body_bytes=args.max_body, jobs=args.jobs)
    sock = server.bind(args.host, args.port)
    if args.host not in server.LOCAL:
        print(f"warning: listening on {args.host}: anyone who can reach this machine can use the playground",
              file=err)
    print(f"crasp playground: {server.url(sock)} (time limit {limits.seconds:g} s, requests up to "
          f"{limits.body_bytes:,} bytes; Ctrl-C stops it)", file=out, flush=True)
    with sock:
        server.server(app.create_app(limits), args.log_level).run(sockets=[sock])
    return 0


def add_commands(commands) -> None:
    """Add ``serve`` to the ``crasp`` command's subparsers."""
    serve_p = commands.add_parser(
        "serve", help="a local playground page: edit, check, run, predict and compile in a browser",
        description="Serve the playground page: an editor whose diagnostics appear as you type, runs with "
        "traces, predictions for regular expressions and suite tasks, and compiled models' attention "
        "heatmaps. Local only by default (127.0.0.1); it runs C-RASP program text, regular expressions and "
        "the suite's task names, never Python. Every request gets a fresh worker process, stopped when "
        f"its time is up. Needs the 'serve' extra: {INSTALL}.",
    )
    serve_p.add_argument("--host", default="127.0.0.1",
                         help="the address to listen on (default 127.0.0.1: this machine only)")
    serve_p.add_argument("--port", type=integer(minimum=0, maximum=65535), default=8000, metavar="N",
                         help="the port (default 8000; 0: a free one, printed with the address)")
    serve_p.add_argument("--time-limit", type=number(minimum=0.05, maximum=3600), default=10.0, metavar="S",
                         help="seconds a request's work may take before it is stopped (default 10)")
    serve_p.add_argument("--max-body", type=integer(minimum=1024, maximum=1 << 26), default=64 * 1024, metavar="B",
                         help="the largest request body, in bytes (default 65536); larger ones get 413")
    serve_p.add_argument("--jobs", type=POSITIVE, default=4, metavar="N",
                         help="requests worked on at once (default 4); others wait within their time limit")
    serve_p.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"], default="warning",
                         help="uvicorn's log level (default warning)")
    serve_p.set_defaults(handler=cmd_serve)
