"""The proxy's transport: a pure ASGI app that forwards each request to the upstream as it came and
sends back the upstream's answer unchanged; a response of a documented operation is held (up to a
bound) to be judged first.

An upstream that cannot be reached, or whose answer's head cannot be passed on, is a 502; one slower
than the timeout, or than the deadline for an answer to be judged, a 504; each in the API's own
error body (the envelope on /v1, DigitalOcean's body on /v2) with a request id, as `evalmock serve`
sends its errors. What the proxy reads of an answer is bounded (`bounds`): an answer it cannot read
within those bounds is passed on as it came, unjudged, and said.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import suppress
from datetime import UTC, datetime
from functools import partial
from urllib.parse import quote

import aiohttp
import httpx
from multidict import CIMultiDict
from starlette.types import Receive, Scope, Send
from yarl import URL

from evalmock.harness.run.answer_limits import size_text
from evalmock.proxy.bounds import NotRead, judgeable, refused_header
from evalmock.proxy.forwarded import Forwarded, Observer
from evalmock.proxy.tls import upstream_ssl_context
from evalmock.proxy.upstream import Origin, too_late, too_slow, unreachable, unreadable
from evalmock.proxy.wire import (
    RawHeaders,
    declared_length,
    has_body,
    header_text,
    outgoing,
    read_up_to,
    request_body,
    send_whole,
    then,
)
from evalmock.server.errors import ApiError, error_body
from evalmock.server.request_id import RequestIdMiddleware, current_request_id

MAX_JUDGED_BYTES = 4 * 2**20  # a larger body, as sent or once decoded, passes through unjudged
# An answer streamed through unjudged is also kept aside, up to this size, for the secrets it may
# carry: a sign-in's answer is small, and a copy of every large body that passes would cost each one
# more than forwarding it.
KEPT_ASIDE_BYTES = 16 * 2**10
NOT_AN_OPERATION = "not a request of an audited operation (streamed through unjudged)"
CUT_SHORT = "cut short by the upstream while streaming"
STOPPED = "cut short: the proxy was stopped while streaming it"
# A request target sent as it came (the common case); any other is written as httpx writes it (dot
# segments removed, characters outside these percent-encoded), so that the upstream gets what it
# always got.
_PLAIN_TARGET = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*")
# aiohttp's own request headers, which a forwarded request carries only when the client sent them.
NOT_ADDED = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")
# Connections kept open to the upstream, and for how long an idle one is kept: httpx's defaults,
# which clients of the upstream already meet.
MAX_CONNECTIONS = 100
KEEPALIVE_EXPIRY_S = 5.0
# The head of an answer the proxy reads: lines (status line, each header) of at most this many
# bytes, and at most this many headers (aiohttp's own bounds, stated); past either, a 502.
MAX_HEADER_LINE = 8190
MAX_HEADERS = 128


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
        # answers being streamed through, and the task streaming each
        self._streaming: dict[aiohttp.ClientResponse, asyncio.Task[object] | None] = {}
        self.stopping = False

    @property
    def client(self) -> aiohttp.ClientSession:
        """aiohttp's client (its C parser costs half of what a pure-Python one does a forwarded
        request), made on first use inside the server's event loop. It sends what it is given and
        nothing of its own: no headers of its own, no cookies kept from one client for another, no
        redirect followed, no body decoded, no head longer than the bounds; the environment's
        proxies and .netrc not ours."""
        if self._client is None:
            connector = aiohttp.TCPConnector(
                limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_EXPIRY_S, ssl=self._ssl
            )
            timeout = aiohttp.ClientTimeout(
                total=None, connect=self.timeout, sock_connect=self.timeout, sock_read=self.timeout
            )
            self._client = aiohttp.ClientSession(
                connector=connector,
                timeout=timeout,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=NOT_ADDED,
                trust_env=False,
                max_line_size=MAX_HEADER_LINE,
                max_field_size=MAX_HEADER_LINE,
                max_headers=MAX_HEADERS,
            )
        return self._client

    def end_streams(self) -> None:
        """End every answer still streaming through (the server is stopping, and one that never
        ends would hold it open): each upstream connection closed, each answer counted as
        STOPPED."""
        self.stopping = True
        for response, task in list(self._streaming.items()):
            response.close()  # a stream waiting for the upstream ends
            if task is not None:
                task.cancel()  # and so does one waiting for a client that reads no more

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
        raw_path = scope.get("raw_path") or quote(scope["path"]).encode("ascii")
        query = scope.get("query_string", b"")
        target = (raw_path + (b"?" + query if query else b"")).decode("latin-1")
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

        try:
            async with timer:
                response = await self._send(
                    forwarded, target, wire, then(body, body_sent) if uploading else body
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
            forwarded.status, forwarded.reason = response.status, response.reason or ""
            forwarded.http_version = f"HTTP/{response.version.major}.{response.version.minor}"
            kept = outgoing(response.raw_headers)
            forwarded.response_headers = [
                (name.decode("latin-1"), value.decode("latin-1")) for name, value in kept
            ]
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

    async def _send(
        self,
        forwarded: Forwarded,
        target: str,
        headers: RawHeaders,
        body: AsyncIterator[bytes] | None,
    ) -> aiohttp.ClientResponse:
        """Send the request: Host first (the upstream's), the body's framing kept (aiohttp sends a
        body of unknown length chunked), Basic credentials from a user and password in --upstream in
        place of the client's Authorization."""
        # aiohttp writes header text as UTF-8: text read as UTF-8 is written back as the very bytes
        # that came.
        sent = CIMultiDict((name.decode("latin-1"), header_text(value)) for name, value in headers)
        if self._origin.authorization is not None:
            sent.popall("Authorization", None)
            sent["Authorization"] = self._origin.authorization
        target = self._origin.prefix + target
        if not _PLAIN_TARGET.fullmatch(target) or "/." in target:
            target = httpx.URL(self._origin.root + target).raw_path.decode("ascii")
        return await self.client.request(
            forwarded.method,
            URL(self._origin.root + target, encoded=True),
            headers=sent,
            data=body,
            allow_redirects=False,
        )

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
        if api is None:
            await self._stream(
                send, response, sent_back, chunks, forwarded, [], started, NOT_AN_OPERATION
            )
            return
        if declared_length(sent_back) > self.max_judged_bytes:
            await self._stream(send, response, sent_back, chunks, forwarded, [], started, too_large)
            return
        timer = asyncio.timeout_at(deadline)
        try:
            async with timer:
                held = await read_up_to(chunks, self.max_judged_bytes)
        except TimeoutError as exc:  # nothing is sent yet, so the proxy can still say so
            await self._failed(
                scope, receive, send, forwarded, 504, "gateway-timeout", self._late(timer, exc)
            )
            return
        except aiohttp.ClientError as exc:
            await self._failed(
                scope,
                receive,
                send,
                forwarded,
                502,
                "bad-gateway",
                unreachable(self._origin.shown, exc),
            )
            return
        if sum(map(len, held)) > self.max_judged_bytes:
            # `held` is emptied as it is sent: a stream that never ends holds no more than a chunk
            await self._stream(
                send, response, sent_back, chunks, forwarded, held, started, too_large
            )
            return
        raw = b"".join(held)
        del held
        forwarded.elapsed_ms, forwarded.body_size = _since(started), len(raw)
        try:
            body = judgeable(sent_back, raw, self.max_judged_bytes)
        except NotRead as exc:  # sent on as it came, and said
            self.observer.unjudged(forwarded, f"{exc} (passed through unjudged)")
            await send_whole(send, response.status, sent_back, raw, [])
            return
        forwarded.body = body
        extra = self.observer.judge(api, forwarded)
        await send_whole(send, response.status, sent_back, raw, extra)

    async def _stream(
        self,
        send: Send,
        response: aiohttp.ClientResponse,
        sent_back: RawHeaders,
        chunks: AsyncIterator[bytes],
        forwarded: Forwarded,
        held: list[bytes],
        started: float,
        why: str,
    ) -> None:
        """Send the answer on as it comes (the chunks `held` first, each let go once sent), one
        piece behind, so that it is counted before its last piece is sent (a client that has its
        whole answer finds it counted). What passes is kept aside only while it is small."""
        await send({"type": "http.response.start", "status": response.status, "headers": sent_back})
        size, pending, aside = 0, b"", []
        self._streaming[response] = asyncio.current_task()
        held.reverse()  # taken from the end, so that letting one go costs nothing
        try:
            while (chunk := held.pop() if held else await anext(chunks, None)) is not None:
                size += len(chunk)
                if size <= KEPT_ASIDE_BYTES:
                    aside.append(chunk)
                else:
                    aside.clear()
                if pending:
                    await send({"type": "http.response.body", "body": pending, "more_body": True})
                pending = chunk
        except (TimeoutError, aiohttp.ClientError) as exc:
            # The status line is gone: all that is left is to end the connection, which tells the
            # client.
            forwarded.body_size, forwarded.elapsed_ms = size, _since(started)
            cut = STOPPED if self.stopping else f"{CUT_SHORT} ({type(exc).__name__})"
            self.observer.passed(forwarded, cut)
            return
        except asyncio.CancelledError:  # the server cancels what is still open as it stops
            forwarded.body_size, forwarded.elapsed_ms = size, _since(started)
            self.observer.passed(forwarded, STOPPED)
            raise
        finally:
            self._streaming.pop(response, None)
        forwarded.body_size, forwarded.elapsed_ms = size, _since(started)
        if 0 < size <= KEPT_ASIDE_BYTES:
            # one the proxy does not read has its secrets unlearned
            with suppress(NotRead):
                forwarded.kept_aside = judgeable(sent_back, b"".join(aside), self.max_judged_bytes)
        self.observer.passed(forwarded, why)
        await send({"type": "http.response.body", "body": pending, "more_body": False})

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
        error = ApiError(status, code, message)

        async def answer(scope: Scope, receive: Receive, send: Send) -> None:
            body = error_body(error, scope["path"], current_request_id())
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode("ascii")),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        await RequestIdMiddleware(answer)(scope, receive, send)


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
