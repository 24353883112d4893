"""CORS as `evalmock serve` answers it (and `evalmock proxy`, which adds its own header to the
exposed ones)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

CORS_OPTIONS: dict[str, Any] = {
    "allow_origins": ["*"],
    "allow_methods": ["GET"],
    # Starlette echoes the requested headers, so Authorization and Prefer pass
    "allow_headers": ["*"],
    "expose_headers": [
        "X-Request-Id",
        "Retry-After",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "Preference-Applied",
    ],
    "max_age": 600,
    # A page on a public or https origin (a deployed staging app, a hosted Storybook) calling
    # 127.0.0.1: Chromium's preflight asks for the private network
    # (Access-Control-Request-Private-Network) and needs it allowed.
    "allow_private_network": True,
}
_VARY = (b"vary", b"Origin")


def _has_origin(scope: Scope) -> bool:
    return any(name == b"origin" for name, _ in scope["headers"])


class ServerCORSMiddleware(CORSMiddleware):
    """Starlette's CORSMiddleware; a request without an Origin header (a client that is not a
    browser page) gets the one header Starlette gives it, `Vary: Origin`, without Starlette's header
    objects."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _has_origin(scope):
            await super().__call__(scope, receive, send)
            return

        async def send_with_vary(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                if any(name == b"vary" for name, _ in headers):
                    # Starlette joins the Vary values
                    await self.send(message, send, request_headers=Headers())
                    return
                # a new list, as Starlette's: the response keeps its own
                message["headers"] = [
                    *headers,
                    _VARY,
                ]
            await send(message)

        await self.app(scope, receive, send_with_vary)
