"""The playground's web application (Starlette): the page, its assets and the JSON API.

Routes: ``GET /`` the page; ``/static/...`` its script and style (package data, nothing from the
network); ``POST /api/check``, ``/api/run``, ``/api/predict``, ``/api/compile`` take a JSON object
and answer one, each job in a worker process of its own (:mod:`tasks.playground.worker`);
``GET /api/examples`` the library's programs; ``GET /api/limits`` the limits below.

Limits (:class:`Limits`): a request body over ``body_bytes`` is refused with 413 before any work;
a job that has not answered after ``seconds`` is killed and answered with 504; at most ``jobs``
run at once (a request waits for a turn within its own time limit). Every error is JSON
``{"error": message}``, with ``line`` and ``column`` where it is a program's error.

>>> from starlette.testclient import TestClient
>>> with TestClient(create_app(Limits(body_bytes=100), warm=False)) as client:
...     answer = client.post("/api/check", json={"program": "A = " + "B" * 200})
>>> answer.status_code, answer.json()
(413, {'error': "the request is larger than the playground's limit of 100 bytes"})
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import worker
from .jobs import JOBS

STATIC = Path(__file__).resolve().parent / "static"
"""The page, its script and its style sheet."""


@dataclass(frozen=True)
class Limits:
    """What one request may use: its body's bytes, its job's seconds (the wait for a turn
    included), the address space its worker may add (bytes), and how many jobs run at once."""

    seconds: float = 10.0
    body_bytes: int = 64 * 1024
    memory_bytes: int = worker.MEMORY
    jobs: int = 4

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"the time limit must be positive, not {self.seconds}")
        if self.body_bytes < 1 or self.jobs < 1 or self.memory_bytes < 0:
            raise ValueError("body_bytes and jobs must be at least 1, memory_bytes at least 0")


def error(message: str, status: int, **extra) -> JSONResponse:
    """The one shape of every API error: ``{"error": message, ...}``."""
    return JSONResponse({"error": message, **extra}, status_code=status)


class BodyLimit:
    """ASGI middleware: reads a request's body before the application does, and answers 413
    (JSON) once it exceeds ``limit`` bytes, whether a Content-Length announced it or not."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = error(f"the request is larger than the playground's limit of {self.limit:,} bytes", 413)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class Turns:
    """At most ``jobs`` jobs at once; a request waits for a turn until its deadline."""

    def __init__(self, jobs: int) -> None:
        self._slots = threading.BoundedSemaphore(jobs)

    def call(self, kind: str, payload: dict, limits: Limits) -> dict:
        started = time.monotonic()
        if not self._slots.acquire(timeout=limits.seconds):
            raise worker.JobFailed(f"{kind}: the playground was busy for the whole time limit of "
                                   f"{limits.seconds:g} s; try again", 503)
        try:
            left = limits.seconds - (time.monotonic() - started)
            return worker.call(kind, payload, seconds=left, memory=limits.memory_bytes, limit=limits.seconds)
        finally:
            self._slots.release()


def create_app(limits: Limits | None = None, *, warm: bool = True) -> Starlette:
    """The playground's application under ``limits``; with ``warm``, its startup waits until the
    worker's parent process has imported the toolkit (a few seconds), so that the first request
    is answered as fast as the next."""
    limits = limits or Limits()
    turns = Turns(limits.jobs)

    async def page(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def api(request: Request) -> JSONResponse:
        kind = request.path_params["kind"]
        if kind not in JOBS:
            return error(f"no API endpoint /api/{kind} (there are {', '.join(f'/api/{k}' for k in JOBS)})", 404)
        try:
            payload = json.loads(await request.body() or b"null")
        except (ValueError, RecursionError) as bad:  # not JSON, not UTF-8, nested too deep, a number too long
            return error(f"the request is not JSON that can be read: {bad}", 400)
        if not isinstance(payload, dict):
            return error("the request must be a JSON object", 400)
        try:
            return JSONResponse(await run_in_threadpool(turns.call, kind, payload, limits))
        except worker.JobError as failed:
            return JSONResponse(failed.payload, status_code=400)
        except worker.JobFailed as failed:
            return error(str(failed), failed.status)

    async def examples(request: Request) -> JSONResponse:
        from crasp import library

        return JSONResponse({name: Path(library.file(name)).read_text(encoding="utf-8") for name in library.names()})

    async def limits_route(request: Request) -> JSONResponse:
        return JSONResponse(asdict(limits))

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return error(f"nothing at {request.url.path}", 404)

    async def not_allowed(request: Request, exc: Exception) -> JSONResponse:
        return error(f"{request.method} is not allowed at {request.url.path}", 405)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm:
            await run_in_threadpool(worker.warm)
        yield

    routes = [
        Route("/", page),
        Route("/api/examples", examples),
        Route("/api/limits", limits_route),
        Route("/api/{kind}", api, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed},
                    lifespan=lifespan)
    app.add_middleware(BodyLimit, limit=limits.body_bytes)
    return app
