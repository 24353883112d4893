"""The proxy's transport: a pure ASGI app that forwards each request to the upstream as it came and
sends back the upstream's answer unchanged; a response of a documented operation is held (up to a
bound) to be judged first.

An upstream that cannot be reached, or whose answer's head cannot be passed on, is a 502; one slower
than the timeout, or than the deadline for an answer to be judged, a 504; each in the API's own
error body (the envelope on /v1, DigitalOcean's body on /v2) with a request id, as `evalmock serve`
sends its errors. What the proxy reads of an answer is bounded (`bounds`): an answer it cannot read
within those bounds is passed on as it came, unjudged, and said. The client of the upstream is
`upstream_client`; an answer streamed through unjudged, `streaming`; the proxy's own error answer,
`own_errors`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import suppress
from datetime import UTC, datetime
from functools import partial
from urllib.parse import quote

import aiohttp
from starlette.types import Receive, Scope, Send

from evalmock.harness.run.answer_limits import size_text
from evalmock.proxy.bounds import NotRead, judgeable, refused_header
from evalmock.proxy.forwarded import Forwarded, Observer
from evalmock.proxy.own_errors import send_error
from evalmock.proxy.streaming import Streams, elapsed_ms
from evalmock.proxy.tls import upstream_ssl_context
from evalmock.proxy.upstream import Origin, too_late, too_slow, unreachable, unreadable
from evalmock.proxy.upstream_client import send_upstream, upstream_session
from evalmock.proxy.wire import (
    RawHeaders,
    declared_length,
    has_body,
    outgoing,
    read_up_to,
    request_body,
    send_whole,
    then,
)

MAX_JUDGED_BYTES = 4 * 2**20  # a larger body, as sent or once decoded, passes through unjudged
NOT_AN_OPERATION = "not a request of an audited operation (streamed through unjudged)"


class ProxyApp:
    """Forwards every HTTP request to `upstream` (a base URL; the request's path and query are
    appended). `timeout` bounds each wait (to connect, for each piece); `deadline` the whole of an
    answer to be judged, from the request sent to its last byte held, so that a service dripping a
    byte a second under the timeout is cut."""

    def __init__(
        self,
        upstream: str,
        observer: Observer,
        *,
        timeout: float,
        deadline: float,
        max_judged_bytes: int = MAX_JUDGED_BYTES,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.observer = observer
        self.timeout = timeout
        self.deadline = deadline
        self.max_judged_bytes = max_judged_bytes
        self._origin = Origin.of(self.upstream)
        self._ssl = upstream_ssl_context()
        self._client: aiohttp.ClientSession | None = None
        self.streams = Streams(observer)  # the answers streaming through

    @property
    def client(self) -> aiohttp.ClientSession:
        """The upstream's client (upstream_client.upstream_session), made on first use inside the
        server's event loop."""
        if self._client is None:
            self._client = upstream_session(self._ssl, self.timeout)
        return self._client

    def end_streams(self) -> None:
        """End every answer still streaming through: the server is stopping."""
        self.streams.end()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            try:
                await self._forward(scope, receive, send)
            except asyncio.CancelledError:
                # The server stops (Ctrl-C) and cancels what is still open, an endless stream among
                # them: the connection is closed, which is all there is left to tell its client.
                return
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
        target = _request_target(scope)
        url = self.upstream + target
        wire = outgoing(scope["headers"])
        request_headers = [
            (name.decode("latin-1"), value.decode("latin-1")) for name, value in wire
        ]
        forwarded = Forwarded(
            datetime.now(UTC), scope["method"], url, scope["path"], request_headers
        )
        started = time.perf_counter()
        fail = partial(self._failed, scope, receive, send, forwarded)
        api = self.observer.api_of(forwarded.method, forwarded.path)
        loop = asyncio.get_running_loop()
        # An answer to be judged is held whole before it is sent: the deadline bounds it all, from
        # the request. Any other streams through as it comes, but its head is bounded too, counted
        # from the request's last byte: an upload takes the time it takes.
        deadline = loop.time() + self.deadline
        body = request_body(receive, forwarded, self.max_judged_bytes) if has_body(scope) else None
        uploading = api is None and body is not None
        timer = asyncio.timeout_at(None if uploading else deadline)

        def body_sent() -> None:
            with suppress(RuntimeError):  # the answer came before the body was all sent
                timer.reschedule(loop.time() + self.deadline)

        sent_body = then(body, body_sent) if uploading else body
        try:
            async with timer:
                response = await send_upstream(
                    self.client, self._origin, forwarded.method, target, wire, sent_body
                )
        except TimeoutError as exc:  # aiohttp's connect and read timeouts are TimeoutErrors
            await fail(504, "gateway-timeout", self._late(timer, exc, whole=api is not None))
            return
        except aiohttp.ClientResponseError as exc:  # a head aiohttp will not read (or too long)
            await fail(502, "bad-gateway", unreadable(self._origin.shown, exc.message))
            return
        except (aiohttp.ClientError, ValueError) as exc:  # ValueError: what aiohttp will not send
            await fail(502, "bad-gateway", unreachable(self._origin.shown, exc))
            return
        try:
            kept = _record_head(forwarded, response)
            refused = refused_header(kept)
            if refused is not None:  # no client may be sent it, and the server would refuse to
                await fail(502, "bad-gateway", unreadable(self._origin.shown, refused))
                return
            # ASGI's names are in lower case
            sent_back = [(name.lower(), value) for name, value in kept]
            await self._answer(
                scope, receive, send, response, sent_back, forwarded, started, api, deadline
            )
        finally:
            response.release()

    def _late(self, timer: asyncio.Timeout, exc: Exception, *, whole: bool = True) -> str:
        """The 504's message: the deadline passed (for the `whole` answer, or its head), or the
        timeout did."""
        if not timer.expired():
            return too_slow(self.timeout, exc)
        return too_late(self.deadline, "its whole answer" if whole else "its answer's head")

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        response: aiohttp.ClientResponse,
        sent_back: RawHeaders,
        forwarded: Forwarded,
        started: float,
        api: str | None,
        deadline: float | None,
    ) -> None:
        """Hold, judge and send the answer of an audited operation (`api`), by the `deadline`;
        stream any other through."""
        chunks = aiter(response.content.iter_any())  # one iterator: held first, then the rest
        too_large = f"larger than {size_text(self.max_judged_bytes)} (streamed through unjudged)"
        stream = partial(self.streams.send_through, send, response, sent_back, chunks, forwarded)
        if api is None:
            await stream([], started, NOT_AN_OPERATION, self.max_judged_bytes)
            return
        if declared_length(sent_back) > self.max_judged_bytes:
            await stream([], started, too_large, self.max_judged_bytes)
            return
        held = await self._hold(scope, receive, send, forwarded, chunks, deadline)
        if held is None:  # answered by the proxy itself
            return
        if sum(map(len, held)) > self.max_judged_bytes:
            # `held` is emptied as it is sent: a stream that never ends holds no more than a chunk
            await stream(held, started, too_large, self.max_judged_bytes)
            return
        await self._judge(send, response.status, sent_back, forwarded, held, started, api)

    async def _hold(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        forwarded: Forwarded,
        chunks: AsyncIterator[bytes],
        deadline: float | None,
    ) -> list[bytes] | None:
        """The answer's chunks read by the `deadline`, up to one past the bound; None when it could
        not be read, and the proxy has answered with a 504 or a 502 itself."""
        timer = asyncio.timeout_at(deadline)
        try:
            async with timer:
                return await read_up_to(chunks, self.max_judged_bytes)
        except TimeoutError as exc:  # nothing is sent yet, so the proxy can still say so
            message = self._late(timer, exc)
            await self._failed(scope, receive, send, forwarded, 504, "gateway-timeout", message)
        except aiohttp.ClientError as exc:
            message = unreachable(self._origin.shown, exc)
            await self._failed(scope, receive, send, forwarded, 502, "bad-gateway", message)
        return None

    async def _judge(
        self,
        send: Send,
        status: int,
        sent_back: RawHeaders,
        forwarded: Forwarded,
        held: list[bytes],
        started: float,
        api: str,
    ) -> None:
        """Judge the whole answer held, then send it on with the violations header; one the proxy
        cannot read is sent on as it came, and said."""
        raw = b"".join(held)
        held.clear()  # the chunks let go once joined
        forwarded.elapsed_ms, forwarded.body_size = elapsed_ms(started), len(raw)
        try:
            body = judgeable(sent_back, raw, self.max_judged_bytes)
        except NotRead as exc:  # sent on as it came, and said
            self.observer.unjudged(forwarded, f"{exc} (passed through unjudged)")
            await send_whole(send, status, sent_back, raw, [])
            return
        forwarded.body = body
        extra = self.observer.judge(api, forwarded)
        await send_whole(send, status, sent_back, raw, extra)

    async def _failed(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        forwarded: Forwarded,
        status: int,
        code: str,
        message: str,
    ) -> None:
        """The proxy's own answer when the upstream gives none: the API's error body, with a request
        id."""
        self.observer.failed(forwarded, status, message)
        await send_error(scope, receive, send, status, code, message)


def _request_target(scope: Scope) -> str:
    """The request's target as it came: its raw path (else its path, quoted) and query."""
    raw_path = scope.get("raw_path") or quote(scope["path"]).encode("ascii")
    query = scope.get("query_string", b"")
    return (raw_path + (b"?" + query if query else b"")).decode("latin-1")


def _record_head(forwarded: Forwarded, response: aiohttp.ClientResponse) -> RawHeaders:
    """The answer's head written into `forwarded`; its headers that are passed on."""
    forwarded.status, forwarded.reason = response.status, response.reason or ""
    forwarded.http_version = f"HTTP/{response.version.major}.{response.version.minor}"
    kept = outgoing(response.raw_headers)
    forwarded.response_headers = [
        (name.decode("latin-1"), value.decode("latin-1")) for name, value in kept
    ]
    return kept
