"""The playground's HTTP server: uvicorn on a socket bound here, in the foreground (``crasp
serve``) or in a thread of this process (the browser tests, the benchmark, a notebook).

>>> running = start(warm=False)
>>> running.url.startswith("http://127.0.0.1:")
True
>>> running.stop()
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from crasp.errors import CraspError

LOCAL = ("127.0.0.1", "localhost", "::1")
"""Addresses only this machine reaches."""


class ServeError(CraspError):
    """The server could not start: the address is taken or not this machine's."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port the system picks): connections
    wait in its queue while the server starts.

    >>> sock = bind("127.0.0.1", 0)
    >>> url(sock).startswith("http://127.0.0.1:"), sock.close()
    (True, None)
    """
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except (OSError, OverflowError) as failed:
        raise ServeError(f"cannot listen on {host}:{port}: {getattr(failed, 'strerror', None) or failed}") from None
    return sock


def url(sock: socket.socket) -> str:
    """The address a browser opens for ``sock``."""
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}/"


def server(app, log_level: str = "warning"):
    """A uvicorn server of ``app`` (not started)."""
    import uvicorn

    return uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False))


@dataclass
class Running:
    """A server running in a thread of this process: its ``url``; :meth:`stop` ends it."""

    url: str
    server: object
    thread: threading.Thread

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True  # type: ignore[attr-defined]
        self.thread.join(timeout)


def start(limits=None, *, host: str = "127.0.0.1", port: int = 0, warm: bool = True,
          timeout: float = 120.0) -> Running:
    """Serve the playground under ``limits`` in a thread; returns once it answers (after the
    workers' warm-up where ``warm``)."""
    from .app import create_app

    sock = bind(host, port)
    running = server(create_app(limits, warm=warm))
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True, name="crasp-serve")
    thread.start()
    deadline = time.monotonic() + timeout
    while not running.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            running.should_exit = True
            sock.close()
            raise ServeError(f"the playground did not start within {timeout:g} s")
        time.sleep(0.02)
    return Running(url(sock), running, thread)
