"""Where a request's time goes, without sockets: the ASGI app called directly, in process.

    # microseconds per request, each request kind
    .venv/bin/python bench/inprocess.py
    # and cProfile's top functions for one kind
    .venv/bin/python bench/inprocess.py --cprofile page
    # one kind, e.g. under py-spy
    .venv/bin/python bench/inprocess.py --only page --requests 20000

Each kind is sent `--requests` times after a warm-up (so the case cache is warm, as under wrk), and
timed by process CPU time, which other work on a shared machine disturbs less than wall time. Run
with the interpreter that runs evalmock. Figures from here explain the wrk figures of run.py; they
do not replace them.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import time
from typing import Any

import orjson

from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings

EXAMPLE_QUERY = b"projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25"
CASES_PATH = "/v1/agents/example/test-set/cases"
USER = (b"authorization", b"Bearer demo-user")
KINDS: dict[str, tuple[str, bytes, list[tuple[bytes, bytes]]]] = {
    # The reference request: 25 generated cases.
    "page": (CASES_PATH, EXAMPLE_QUERY, [USER]),
    # The same request answered with the document's example (Prism's body).
    "example": (CASES_PATH, EXAMPLE_QUERY, [USER, (b"prefer", b"example=page")]),
    # The second page of the reference request, following its nextCursor (filled in at start).
    "cursor": (CASES_PATH, b"", [USER]),
    # One DigitalOcean test case.
    "gradient": (
        "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000",
        b"",
        [USER],
    ),
    # A bad request: 400 bad-input, rendered in the envelope.
    "bad-input": (CASES_PATH, b"projectId=nope", [USER]),
    # A token the server did not issue: 401 with its challenge.
    "unauthorized": (CASES_PATH, EXAMPLE_QUERY, [(b"authorization", b"Bearer not-issued")]),
    # An agent that does not exist: 404 agent-not-found from the handler.
    "not-found": ("/v1/agents/nobody/test-set/cases", EXAMPLE_QUERY, [USER]),
    # A path no operation has: 404 from Connexion's router.
    "no-route": ("/v1/nothing", b"", [USER]),
}


def scope_for(path: str, query: bytes, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }


async def call(
    app: Any, path: str, query: bytes, headers: list[tuple[bytes, bytes]]
) -> list[dict[str, Any]]:
    """The messages the app sends for one request."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope_for(path, query, headers), receive, send)
    return sent


async def next_page_query(app: Any) -> bytes:
    """The reference request's query with the cursor its first page hands out."""
    sent = await call(app, *KINDS["page"])
    cursor = orjson.loads(b"".join(message.get("body", b"") for message in sent[1:]))["nextCursor"]
    return EXAMPLE_QUERY + b"&cursor=" + cursor.encode()


async def start(app: Any) -> asyncio.Task[None]:
    """Run the lifespan's start-up, as uvicorn does before the first request; the task runs the
    lifespan."""
    messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await messages.put({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, messages.get, send)
    )
    await asyncio.wait_for(started.wait(), timeout=30)
    return lifespan


async def measure(
    app: Any, kind: str, requests: int, profiler: cProfile.Profile | None
) -> tuple[float, int, int]:
    """(CPU microseconds per request, status, body bytes) of `requests` requests of one kind."""
    path, query, headers = KINDS[kind]
    sent: list[dict[str, Any]] = []

    async def one() -> None:
        sent[:] = await call(app, path, query, headers)

    for _ in range(min(requests, 200)):
        await one()
    if profiler:
        profiler.enable()
    started = time.process_time()
    for _ in range(requests):
        await one()
    elapsed = time.process_time() - started
    if profiler:
        profiler.disable()
    body = b"".join(message.get("body", b"") for message in sent[1:])
    return elapsed / requests * 1e6, sent[0]["status"], len(body)


async def main(args: argparse.Namespace) -> None:
    app = create_app(ServerSettings())
    lifespan = await start(app)
    path, _, headers = KINDS["cursor"]
    KINDS["cursor"] = (path, await next_page_query(app), headers)
    for kind in args.only.split(",") if args.only else KINDS:
        profiler = cProfile.Profile() if kind == args.cprofile else None
        micros, status, size = await measure(app, kind, args.requests, profiler)
        print(f"{kind:10} {micros:8.1f} µs CPU per request   {status}  {size:6} bytes")
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())
    lifespan.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--only", help=f"comma-separated kinds: {', '.join(KINDS)}")
    parser.add_argument("--cprofile", choices=list(KINDS), help="profile this kind with cProfile")
    parser.add_argument("--top", type=int, default=40, help="functions shown by --cprofile")
    asyncio.run(main(parser.parse_args()))
