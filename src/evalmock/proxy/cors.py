"""CORS as `evalmock serve` answers it, around the forwarder, with the violations header exposed to browser apps."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import MutableHeaders
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
                headers = MutableHeaders(scope=message)
                tokens = [token.strip() for value in headers.getlist("vary") for token in value.split(",")]
                unique: list[str] = []
                for token in tokens:
                    if token and token.lower() not in (seen.lower() for seen in unique):
                        unique.append(token)
                if len(unique) < len(tokens):
                    headers["vary"] = ", ".join(unique)
            await send(message)

        await self.app(scope, receive, send_vary_once)
