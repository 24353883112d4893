"""Upstreams for the proxy tests: `evalmock serve`'s app wrapped to keep what it sent for each
request, and a small service that breaks the pages on purpose, one defect per agent, plus a slow one
and a DigitalOcean call that answers another version than the one asked for."""

from __future__ import annotations

import asyncio
import gzip
import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.builders import RATELIMIT, correction_case, gradient_test_case, hand_case, retired_case

TEST_ID = "x-test-id"  # the request header that names one request, so that its answer can be found
SLOW_S = 5.0  # how long the slow agent takes; the proxy under test waits far less
ANSWERED_VERSION = 3  # what the DigitalOcean call always answers


@dataclass
class Sent:
    """What the upstream app received and sent for one request (ASGI level)."""

    request_headers: list[tuple[bytes, bytes]]
    raw_path: bytes = b""
    query: bytes = b""
    status: int = 0
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""


class Recording:
    """Pure ASGI wrapper keeping, per TEST_ID header, what the wrapped app received and sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sent: dict[str, Sent] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        test_id = dict(scope["headers"]).get(TEST_ID.encode(), b"").decode()
        record = self.sent[test_id] = Sent(
            list(scope["headers"]), scope.get("raw_path", b""), scope.get("query_string", b"")
        )

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status, record.headers = message["status"], list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                record.body += message.get("body", b"")
            await send(message)

        await self.app(scope, receive, keep)


def _page(request: Request, cases: list[dict[str, Any]]) -> JSONResponse:
    project = request.query_params.get("projectId", "")
    for case in cases:
        case["projectId"] = project
    return JSONResponse({"data": cases, "hasMore": False}, headers={"X-Request-Id": "rid-broken"})


async def _cases(request: Request) -> Response:
    agent = request.path_params["agent"]
    limit = int(request.query_params.get("limit", "25"))
    if agent == "slow":
        await asyncio.sleep(SLOW_S)
    if agent == "throttled":  # as a gateway in front of the service words it
        return JSONResponse(
            {"message": "API rate limit exceeded"}, status_code=429, headers={"Retry-After": "2"}
        )
    if agent == "failing":
        body = {
            "error": {"code": "internal", "message": "Boom.", "details": {}, "requestId": "rid-500"}
        }
        return JSONResponse(body, status_code=500, headers={"X-Request-Id": "rid-500"})
    if agent == "too-long":
        return _page(
            request,
            [
                hand_case(
                    id=f"case-{n}",
                    addedAt=f"2026-11-20T09:{59 - n:02d}:00Z",
                    updatedAt=f"2026-11-20T09:{59 - n:02d}:00Z",
                )
                for n in range(limit + 1)
            ],
        )
    if agent == "retired-without-include":
        return _page(request, [hand_case(), retired_case()])
    if agent == "compressed":  # the same defect, its page sent gzip-compressed
        page = _page(request, [hand_case(), retired_case()])
        return Response(
            gzip.compress(json.dumps(json.loads(page.body)).encode()),
            media_type="application/json",
            headers={"Content-Encoding": "gzip", "X-Request-Id": "rid-broken"},
        )
    if agent == "without-run-id":
        missing = correction_case()
        del missing["runId"]
        return _page(request, [hand_case(), missing])
    return _page(request, [hand_case(), correction_case()])


async def _test_case(request: Request) -> Response:
    test_case = gradient_test_case(
        test_case_uuid=request.path_params["uuid"], version=ANSWERED_VERSION
    )
    return JSONResponse({"evaluation_test_case": test_case}, headers=RATELIMIT)


def broken_upstream() -> Starlette:
    """GET /v1/agents/{agent}/test-set/cases: agent `too-long` answers limit + 1 cases,
    `retired-without-include` a retired case though include was left out, `compressed` the same
    gzip-compressed, `without-run-id` a case without its required runId, `failing` a 500,
    `throttled` a gateway's 429, `slow` after SLOW_S seconds, any other a conforming page;
    GET /v2/gen-ai/evaluation_test_cases/{uuid}: always version ANSWERED_VERSION."""
    return Starlette(
        routes=[
            Route("/v1/agents/{agent}/test-set/cases", _cases),
            Route("/v2/gen-ai/evaluation_test_cases/{uuid}", _test_case),
        ]
    )


@contextmanager
def socket_upstream(handler: type[socketserver.BaseRequestHandler]) -> Iterator[str]:
    """A service on 127.0.0.1 answering each connection with `handler`, a thread each: for answers
    no HTTP server would send, as raw bytes on a socket. Yields its base URL."""

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        # socketserver's default backlog is 5: with dozens of connections at once and the accepting
        # thread slow to get the GIL (handlers writing without pause), the kernel dropped the rest,
        # and a connection retried for over the proxy's 30 s answered 504 under load
        request_queue_size = 128

    with Server(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            thread.join(timeout=10)
