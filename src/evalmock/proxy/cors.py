"""CORS through the proxy: the upstream's own CORS answer where it gives one (a staging service that
lets its app send cookies keeps doing so), with the violations header added to the exposed ones;
`evalmock serve`'s CORS where it gives none (an app that was on the service's own origin, now
calling the proxy's)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalmock.proxy.violations import HEADER
from evalmock.server.cors_options import CORS_OPTIONS

ALLOW_ORIGIN = b"access-control-allow-origin"
EXPOSE = b"access-control-expose-headers"


def cors_options() -> dict[str, Any]:
    return {**CORS_OPTIONS, "expose_headers": [*CORS_OPTIONS["expose_headers"], HEADER]}


class ProxyCORSMiddleware:
    """A browser's request goes to the upstream first, its preflight too. An answer that carries
    Access-Control-Allow-Origin is the upstream's CORS and is sent as it came (its origin,
    credentials, methods; the violations header added to what it exposes); any other gets
    Starlette's CORSMiddleware with `evalmock serve`'s options. The Vary it adds is not repeated
    when the upstream already sent it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.cors = CORSMiddleware(app, **cors_options())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_headers = Headers(scope=scope)
        if (
            "origin" in request_headers
            and scope["method"] == "OPTIONS"
            and "access-control-request-method" in request_headers
        ):
            await self._preflight(scope, receive, send, request_headers)
            return

        async def send_cors(message: Message) -> None:
            if message["type"] != "http.response.start":
                await send(message)
            elif _carries_cors(message):
                _expose_violations(message)
                await send(message)
            else:
                await self.cors.send(message, send_vary_once, request_headers)

        async def send_vary_once(message: Message) -> None:
            _vary_once(message)
            await send(message)

        await self.app(scope, receive, send_cors)

    async def _preflight(
        self, scope: Scope, receive: Receive, send: Send, request_headers: Headers
    ) -> None:
        """The upstream's preflight answer when it is a CORS answer; otherwise the proxy's own."""
        theirs: list[Message] = []

        async def held(message: Message) -> None:
            if message["type"] == "http.response.start" and _carries_cors(message):
                theirs.append(message)
            if theirs:
                await send(message)

        await self.app(scope, receive, held)
        if not theirs:
            await self.cors.preflight_response(request_headers)(scope, receive, send)


def _carries_cors(message: Message) -> bool:
    return any(name.lower() == ALLOW_ORIGIN for name, _ in message.get("headers", []))


def _expose_violations(message: Message) -> None:
    """Add the violations header to the exposed ones (a `*` exposes nothing by name to a request
    with credentials, so the name is added beside it too)."""
    headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
    exposed = [n for n, (name, _) in enumerate(headers) if name.lower() == EXPOSE]
    if not exposed:
        headers.append((EXPOSE, HEADER.encode("ascii")))
    else:
        first = exposed[0]
        name, value = headers[first]
        names = {token.strip().lower() for n in exposed for token in headers[n][1].split(b",")}
        if HEADER.encode("ascii") not in names:
            headers[first] = (
                name,
                value + b", " + HEADER.encode("ascii") if value.strip() else HEADER.encode(),
            )
    message["headers"] = headers


def _vary_once(message: Message) -> None:
    """Each Vary token once, in the first Vary header (ASGI's header names are in lower case)."""
    headers: list[tuple[bytes, bytes]] = message["headers"]
    values = [value for name, value in headers if name == b"vary"]
    tokens = [token.strip() for value in values for token in value.split(b",")]
    unique: list[bytes] = []
    for token in tokens:
        if token and token.lower() not in (seen.lower() for seen in unique):
            unique.append(token)
    if len(unique) < len(tokens):
        first = next(n for n, (name, _) in enumerate(headers) if name == b"vary")
        joined = b", ".join(unique)
        message["headers"] = [
            (name, joined) if n == first else (name, value)
            for n, (name, value) in enumerate(headers)
            if n == first or name != b"vary"
        ]
