"""API gateways in front of the independent service, as staging services have them: one answers
every n-th request itself with 429 and Retry-After, and may plant one defect in what the service
answers; one holds every n-th request a while before passing it on, as a slow service answers; one
caches pages; one answers a request without a token itself."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = dict[str, Any]
HeaderRewrite = Callable[[list[tuple[bytes, bytes]]], list[tuple[bytes, bytes]]]


class ThrottlingGateway:
    """Every `every`-th request (counted over all paths and both APIs) gets a 429 with `Retry-After:
    retry_after`, as Kong's rate-limiting plugin words it; `every=1` throttles them all; `defect`
    rewrites the service's error answers' headers. With `busy` (a Retry-After value), a throttled
    request of the test-set API gets the page's 503 database-busy instead, with that Retry-After, as
    a service whose database is busy now and then answers."""

    def __init__(
        self,
        app: Any,
        *,
        every: int = 7,
        retry_after: str = "1",
        defect: HeaderRewrite | None = None,
        busy: str | None = None,
    ) -> None:
        self.app = app
        self.every = every
        self.retry_after = retry_after
        self.defect = defect
        self.busy = busy
        self.busy_answers = 0
        self.throttled = 0
        self.throttled_capability_probes = (
            0  # Schemathesis's start-up probes, which no check judges
        )
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with self._lock:
            number = next(self._numbers)
            throttle = number % self.every == 0
            self.throttled += throttle
            probe = any(
                name.lower().startswith(b"x-schemathesis-probe") for name, _ in scope["headers"]
            )
            self.throttled_capability_probes += throttle and probe
        if throttle:
            await self._throttled(scope, send)
            return
        defect = self.defect

        async def answer(message: dict[str, Any]) -> None:
            if (
                defect is not None
                and message["type"] == "http.response.start"
                and message["status"] >= 400
            ):
                message = {**message, "headers": defect(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, answer)

    def restart(self, every: int) -> None:
        """Count requests from 1 again, throttling every `every`-th: the 2nd, 4th, ... for 2."""
        with self._lock:
            self.every, self._numbers, self.busy_answers = every, itertools.count(1), 0

    async def _throttled(self, scope: Scope, send: Any) -> None:
        status, retry_after = 429, self.retry_after
        body = b'{"message":"API rate limit exceeded"}'
        headers = [(b"content-type", b"application/json")]
        if self.busy is not None and scope["path"].startswith("/v1/"):
            status, retry_after, request_id = 503, self.busy, uuid.uuid4().hex
            self.busy_answers += 1
            error = {
                "code": "database-busy",
                "message": "The database was too busy to answer in time; try again.",
                "requestId": request_id,
            }
            body = json.dumps({"error": error}).encode()
            headers.append((b"x-request-id", request_id.encode()))
        headers += [
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", retry_after.encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class SlowGateway:
    """Every `every`-th scenario or Schemathesis request (counted over all paths and both APIs; not
    Schemathesis's start-up probes) is held `hold` seconds before the service answers it."""

    def __init__(self, app: Any, *, every: int = 25, hold: float = 1.0) -> None:
        self.app = app
        self.every = every
        self.hold = hold
        self.held = 0
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not any(
            name.lower().startswith(b"x-schemathesis-probe") for name, _ in scope["headers"]
        ):
            with self._lock:
                slow = next(self._numbers) % self.every == 0
                self.held += slow
            if slow:
                await asyncio.sleep(self.hold)
        await self.app(scope, receive, send)


def other_request_id(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A page defect: an error's X-Request-Id is not its envelope's requestId."""
    return [(k, b"not-the-request-id" if k.lower() == b"x-request-id" else v) for k, v in headers]


# nginx's own pages
GATEWAY_PAGES = {
    status: (
        f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n<center><h1>"
        f"{status} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    ).encode()
    for status, phrase in ((502, "Bad Gateway"), (504, "Gateway Time-out"))
}


class BlipGateway:
    """A gateway that answers every `every`-th request of both APIs itself, once, with nginx's HTML
    502 Bad Gateway (every other one of them a 504 Gateway Timeout): the same request sent again
    passes to the service. With `persist`, the same request keeps getting it: then it is the answer.
    Schemathesis's start-up probes pass."""

    def __init__(self, app: Any, *, every: int = 40, persist: bool = False) -> None:
        self.app = app
        self.every = every
        self.persist = persist
        self.blips: list[tuple[int, str]] = []  # (status, path and query) of each answered itself
        self._numbers = itertools.count(1)
        self._blipped: dict[bytes, int] = {}  # the requests answered so (path and query): status
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or any(
            name.lower().startswith(b"x-schemathesis-probe") for name, _ in scope["headers"]
        ):
            await self.app(scope, receive, send)
            return
        request = scope["raw_path"] + b"?" + scope["query_string"]
        with self._lock:
            again = request in self._blipped
            blip = next(self._numbers) % self.every == 0 and not again
            if blip:
                status = self._blipped[request] = 504 if len(self.blips) % 2 else 502
                self.blips.append((status, request.decode("latin-1")))
            elif again and self.persist:
                blip, status = True, self._blipped[request]
        if not blip:
            await self.app(scope, receive, send)
            return
        body = GATEWAY_PAGES[status]
        headers = [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class RequestIdGateway:
    """A gateway that gives each request an X-Request-Id of its own on the way in (the service
    echoes it, as its envelope's requestId and its header) and, on the way out, puts the caller's
    own X-Request-Id back on the answer's header, when the caller sent one: the header and the
    envelope then name two ids (a page defect, seen only by a caller that sends an id)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.swapped = 0  # answers whose header was given the caller's id

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        theirs = [v for k, v in scope["headers"] if k.lower() == b"x-request-id"]
        ours = f"gw-{uuid.uuid4().hex}".encode()
        inward = [(k, v) for k, v in scope["headers"] if k.lower() != b"x-request-id"]
        scope = {**scope, "headers": [*inward, (b"x-request-id", ours)]}

        async def answer(message: dict[str, Any]) -> None:
            if theirs and message["type"] == "http.response.start":
                headers = [
                    (k, theirs[0] if k.lower() == b"x-request-id" else v)
                    for k, v in message.get("headers", [])
                ]
                self.swapped += 1
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, answer)


class CacheHeadersGateway:
    """A CDN's headers on every answer (`Via`, `X-Cache`, `Age`) and `Connection: close`: nothing
    the pages speak of."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.answers = 0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def answer(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.answers += 1
                headers = [
                    *message.get("headers", []),
                    (b"via", b"1.1 varnish"),
                    (b"x-cache", b"MISS"),
                    (b"age", b"0"),
                    (b"connection", b"close"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, answer)


class CachingGateway:
    """A shared cache in front of both APIs, as Varnish or a CDN keeps one: a GET's 200 is kept
    under its key and served again from there (`X-Cache: HIT`), with an `ETag`, and a request whose
    `If-None-Match` names that ETag gets a 304. `key` says what the key holds besides the path and
    query: "caller" (the Authorization header, `Cache-Control: private`, as a per-caller cache
    should), "url" (nothing: one caller's page is served to another, a defect), or
    "caller_without_include" (the caller, but the query without `include`: the page of one filter
    served for the other, a defect)."""

    KEYS = ("caller", "url", "caller_without_include")

    def __init__(self, app: Any, *, key: str = "caller") -> None:
        if key not in self.KEYS:
            raise ValueError(f"unknown cache key: {key}")
        self.app = app
        self.key = key
        self.hits = 0
        self.not_modified = 0
        self._pages: dict[bytes, tuple[list[tuple[bytes, bytes]], bytes]] = {}
        self._lock = threading.Lock()

    def _key_of(self, scope: Scope) -> bytes:
        query = scope["query_string"]
        if self.key == "caller_without_include":
            kept = [(k, v) for k, v in parse_qsl(query.decode("latin-1")) if k != "include"]
            query = urlencode(kept).encode()
        caller = b"" if self.key == "url" else self._header(scope, b"authorization")
        return b"\n".join((caller, scope["raw_path"], query))

    @staticmethod
    def _header(scope: Scope, name: bytes) -> bytes:
        return next((v for k, v in scope["headers"] if k.lower() == name), b"")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        key = self._key_of(scope)
        with self._lock:
            kept = self._pages.get(key)
            self.hits += kept is not None
        if kept is not None:
            headers, body = kept
            etag = dict(headers)[b"etag"]
            if self._header(scope, b"if-none-match") == etag:
                with self._lock:
                    self.not_modified += 1
                await send(
                    {"type": "http.response.start", "status": 304, "headers": [(b"etag", etag)]}
                )
                await send({"type": "http.response.body", "body": b""})
                return
            await self._send(send, 200, [*headers, (b"x-cache", b"HIT")], body)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def collect(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, collect)
        body = b"".join(chunks)
        headers = list(start.get("headers", []))
        if start["status"] == 200:
            etag = b'"' + hashlib.sha256(body).hexdigest()[:16].encode() + b'"'
            control = b"private, max-age=300" if self.key != "url" else b"public, max-age=300"
            headers += [(b"etag", etag), (b"cache-control", control)]
            with self._lock:
                self._pages[key] = (headers, body)
        await self._send(send, start["status"], [*headers, (b"x-cache", b"MISS")], body)

    @staticmethod
    async def _send(
        send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


# Kong's key-auth plugin's own answer to a request without a key
GATEWAY_401 = b'{"message":"No API key found in request"}'


class OwnAuthGateway:
    """A gateway that answers a request without a bearer token itself, before the service sees it:
    Kong's 401 `{"message": ...}`, not the API's error envelope. Requests with a bearer token, good
    or bad, pass to the service."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        authorization = next(
            (v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b""
        )
        bearer = authorization[:7].lower() == b"bearer " and authorization[7:].strip()
        if scope["type"] != "http" or bearer:
            await self.app(scope, receive, send)
            return
        self.refused += 1
        headers = [
            (b"content-type", b"application/json; charset=utf-8"),
            (b"content-length", str(len(GATEWAY_401)).encode()),
            (b"www-authenticate", b'Key realm="kong"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": GATEWAY_401})
