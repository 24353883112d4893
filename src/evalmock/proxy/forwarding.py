"""The proxy's transport: a pure ASGI app that forwards each request to the upstream as it came and sends back the
upstream's answer unchanged; a response of a documented operation is held (up to a bound) to be judged first.

An upstream that cannot be reached is a 502, one slower than the timeout a 504, each in the API's own error body
(the envelope on /v1, DigitalOcean's body on /v2) with a request id, as `evalmock serve` sends its errors.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import quote

import httpx
from starlette.types import Message, Receive, Scope, Send

from evalmock.server.errors import ApiError, error_body
from evalmock.server.request_id import RequestIdMiddleware, current_request_id

MAX_JUDGED_BYTES = 4 * 2**20  # a larger body streams through unjudged
NOT_AN_OPERATION = "not a request of an audited operation (streamed through unjudged)"
CUT_SHORT = "cut short by the upstream while streaming"
# Headers of one connection, never forwarded (RFC 9110, 7.6.1); Host is the upstream's own.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host",
})

Headers = list[tuple[str, str]]


@dataclass
class Forwarded:
    """One request as forwarded and the upstream's answer; `body` is the decoded body when the proxy held it."""

    started: datetime
    method: str
    url: str  # the upstream's URL
    path: str  # the path the client asked for
    request_headers: Headers
    status: int = 0
    reason: str = ""
    http_version: str = "HTTP/1.1"
    response_headers: Headers = field(default_factory=list)
    body: bytes | None = None
    body_size: int = 0  # bytes the upstream sent (before any decoding)
    elapsed_ms: float = 0.0


class Observer(Protocol):
    """What the proxy tells about its traffic, and the headers a judged response gets."""

    def api_of(self, method: str, path: str) -> str | None: ...

    def judge(self, api: str, forwarded: Forwarded) -> Headers: ...

    def passed(self, forwarded: Forwarded, why: str) -> None: ...

    def failed(self, forwarded: Forwarded, status: int, why: str) -> None: ...


class ProxyApp:
    """Forwards every HTTP request to `upstream` (a base URL; the request's path and query are appended)."""

    def __init__(self, upstream: str, observer: Observer, *, timeout: float,
                 max_judged_bytes: int = MAX_JUDGED_BYTES) -> None:
        self.upstream = upstream.rstrip("/")
        self.observer = observer
        self.timeout = timeout
        self.max_judged_bytes = max_judged_bytes
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        # Made on first use, inside the server's event loop; the environment's proxies and .netrc are not ours.
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, trust_env=False, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._forward(scope, receive, send)
        else:  # a websocket: neither API has one
            await send({"type": "websocket.close", "code": 1003})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw_path = scope.get("raw_path") or quote(scope["path"]).encode("ascii")
        query = scope.get("query_string", b"")
        url = self.upstream + raw_path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        received = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]]
        forwarded = Forwarded(datetime.now(UTC), scope["method"], url, scope["path"], outgoing(received))
        has_body = any(name.lower() in ("content-length", "transfer-encoding") for name, _ in received)
        started = time.perf_counter()
        try:
            request = httpx.Request(forwarded.method, url, headers=forwarded.request_headers,
                                    content=_request_body(receive) if has_body else None)
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            await self._failed(scope, receive, send, forwarded, 504, "gateway-timeout", _slow(self.timeout, exc))
            return
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            await self._failed(scope, receive, send, forwarded, 502, "bad-gateway", _unreachable(self.upstream, exc))
            return
        forwarded.status, forwarded.reason = response.status_code, response.reason_phrase
        forwarded.http_version = response.http_version
        forwarded.response_headers = incoming(response.headers.raw)
        try:
            await self._answer(scope, receive, send, response, forwarded, started)
        finally:
            await response.aclose()

    async def _answer(self, scope: Scope, receive: Receive, send: Send, response: httpx.Response,
                      forwarded: Forwarded, started: float) -> None:
        """Hold, judge and send the answer of an audited operation; stream any other through."""
        chunks = response.aiter_raw()  # one iterator: what is held first, then the rest, if any
        api = self.observer.api_of(forwarded.method, forwarded.path)
        too_large = f"larger than {_amount(self.max_judged_bytes)} (streamed through unjudged)"
        if api is None:
            await self._stream(send, response, chunks, forwarded, b"", started, NOT_AN_OPERATION)
            return
        if _declared_length(response) > self.max_judged_bytes:
            await self._stream(send, response, chunks, forwarded, b"", started, too_large)
            return
        try:
            raw = await _read_up_to(chunks, self.max_judged_bytes)
        except httpx.TimeoutException as exc:  # nothing is sent yet, so the proxy can still say so
            await self._failed(scope, receive, send, forwarded, 504, "gateway-timeout", _slow(self.timeout, exc))
            return
        except httpx.HTTPError as exc:
            await self._failed(scope, receive, send, forwarded, 502, "bad-gateway", _unreachable(self.upstream, exc))
            return
        if len(raw) > self.max_judged_bytes:
            await self._stream(send, response, chunks, forwarded, raw, started, too_large)
            return
        forwarded.elapsed_ms = _since(started)
        forwarded.body_size, forwarded.body = len(raw), decoded(response, raw)
        extra = self.observer.judge(api, forwarded)
        await _send_whole(send, response, raw, extra)

    async def _stream(self, send: Send, response: httpx.Response, chunks: AsyncIterator[bytes],
                      forwarded: Forwarded, first: bytes, started: float, why: str) -> None:
        """Send the answer on as it comes, one piece behind, so that it is counted before its last piece is sent (a
        client that has its whole answer finds it counted)."""
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": _encode(incoming(response.headers.raw))})
        size, pending = len(first), first
        try:
            async for chunk in chunks:
                size += len(chunk)
                if pending:
                    await send({"type": "http.response.body", "body": pending, "more_body": True})
                pending = chunk
        except httpx.HTTPError as exc:
            # The status line is gone: all that is left is to end the connection, which tells the client.
            forwarded.body_size, forwarded.elapsed_ms = size, _since(started)
            self.observer.passed(forwarded, f"{CUT_SHORT} ({type(exc).__name__})")
            return
        forwarded.body_size, forwarded.elapsed_ms = size, _since(started)
        self.observer.passed(forwarded, why)
        await send({"type": "http.response.body", "body": pending, "more_body": False})

    async def _failed(self, scope: Scope, receive: Receive, send: Send, forwarded: Forwarded, status: int,
                      code: str, message: str) -> None:
        """The proxy's own answer when the upstream gives none: the API's error body, with a request id."""
        self.observer.failed(forwarded, status, message)
        error = ApiError(status, code, message)

        async def answer(scope: Scope, receive: Receive, send: Send) -> None:
            body = error_body(error, scope["path"], current_request_id())
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]})
            await send({"type": "http.response.body", "body": body})

        await RequestIdMiddleware(answer)(scope, receive, send)


def outgoing(headers: Sequence[tuple[str, str]]) -> Headers:
    """The request headers to forward: all but the hop-by-hop ones (and those the Connection header names)."""
    named = {token.strip().lower() for name, value in headers if name.lower() == "connection"
             for token in value.split(",")}
    return [(name, value) for name, value in headers if name.lower() not in HOP_BY_HOP and name.lower() not in named]


def incoming(raw: Sequence[tuple[bytes, bytes]]) -> Headers:
    """The upstream's response headers to send back: all but the hop-by-hop ones."""
    return outgoing([(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw])


def decoded(response: httpx.Response, raw: bytes) -> bytes:
    """The body as the upstream meant it (its Content-Encoding undone); the raw bytes when they do not decode."""
    if response.headers.get("content-encoding", "identity").strip().lower() in ("", "identity"):
        return raw
    try:
        return httpx.Response(response.status_code, headers=response.headers, content=raw).content
    except httpx.DecodingError:
        return raw


async def _request_body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def _read_up_to(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """The whole raw body, or, when it is longer than `limit`, its first chunks past it (the rest stays unread)."""
    held: list[bytes] = []
    size = 0
    async for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return b"".join(held)


def _declared_length(response: httpx.Response) -> int:
    try:
        return int(response.headers.get("content-length", "0"))
    except ValueError:
        return 0


async def _send_whole(send: Send, response: httpx.Response, raw: bytes, extra: Headers) -> None:
    headers = incoming(response.headers.raw)
    if extra:
        names = {name.lower() for name, _ in extra}
        headers = [(name, value) for name, value in headers if name.lower() not in names] + list(extra)
    message: Message = {"type": "http.response.start", "status": response.status_code, "headers": _encode(headers)}
    await send(message)
    await send({"type": "http.response.body", "body": raw})


def _encode(headers: Headers) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]


def _amount(size: int) -> str:
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size} bytes"


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _slow(timeout: float, exc: Exception) -> str:
    return f"evalmock proxy: the upstream did not answer within {timeout:g} s ({type(exc).__name__})."


def _unreachable(upstream: str, exc: Exception) -> str:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"evalmock proxy: the upstream {upstream} could not be reached ({detail})."

