"""CORS as `evalmock serve` answers it, around the forwarder, with the violations header exposed to browser apps."""

from __future__ import annotations

from typing import Any

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalmock.proxy.violations import HEADER
from evalmock.server.cors_options import CORS_OPTIONS


def cors_options() -> dict[str, Any]:
    return {**CORS_OPTIONS, "expose_headers": [*CORS_OPTIONS["expose_headers"], HEADER]}


class ProxyCORSMiddleware:
    """Starlette's CORSMiddleware with `evalmock serve`'s options; the Vary it adds is not repeated when the upstream
    already sent it (an upstream that is itself `evalmock serve` says `Vary: Origin` too)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = CORSMiddleware(app, **cors_options())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_vary_once(message: Message) -> None:
            if message["type"] == "http.response.start":
                _vary_once(message)
            await send(message)

        await self.app(scope, receive, send_vary_once)


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
        message["headers"] = [(name, joined) if n == first else (name, value)
                              for n, (name, value) in enumerate(headers) if n == first or name != b"vary"]
