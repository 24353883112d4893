"""DigitalOcean's rate-limit headers (ratelimit-limit/-remaining/-reset) on every /v2 response,
errors too.

The counter is per process and never refuses a request: it only makes the headers move the way the
live API's do (an hourly window of LIMIT requests). Only API requests count: the document, Swagger
UI and CORS preflights show the window without using it up. A forced 429 comes from `--error-rate`
or `Prefer: code=429`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalmock.contract.documents import GRADIENT
from evalmock.server.errors import is_gradient_path

LIMIT = 5000
WINDOW_SECONDS = 3600
_SCOPE_KEY = "evalmock.ratelimit"
_DOCUMENT, _UI = f"{GRADIENT.base_path}/openapi.json", f"{GRADIENT.base_path}/ui"


def is_api_request(scope: Scope) -> bool:
    """Whether a /v2 request uses the API, rather than reading its document or UI, or asking a CORS
    preflight."""
    path = scope["path"]
    if path in (_DOCUMENT, _UI) or path.startswith(_UI + "/"):
        return False
    preflight = scope["method"] == "OPTIONS" and any(
        name == b"access-control-request-method" for name, _ in scope.get("headers", ())
    )
    return not preflight


class RateLimitCounter:
    """Requests counted in fixed hourly windows; the clock is injectable for tests."""

    def __init__(self, limit: int = LIMIT, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self._clock = clock
        self._window = -1
        self._used = 0
        self._limit_header = (b"ratelimit-limit", str(limit).encode())
        self._reset_header = (b"ratelimit-reset", b"")

    def count(self, *, counted: bool = True) -> list[tuple[bytes, bytes]]:
        """Count one request (unless not `counted`) and return the headers that describe the window
        after it."""
        now = int(self._clock())
        window = now // WINDOW_SECONDS
        if window != self._window:
            self._window, self._used = window, 0
            self._reset_header = (b"ratelimit-reset", str((window + 1) * WINDOW_SECONDS).encode())
        self._used += counted
        remaining = max(self.limit - self._used, 0)
        return [
            self._limit_header,
            (b"ratelimit-remaining", str(remaining).encode()),
            self._reset_header,
        ]


class RateLimitHeadersMiddleware:
    """Adds the headers to /v2 responses; a second, deeper instance (for response validation) adds
    the same values, counted once per request."""

    def __init__(self, app: ASGIApp, counter: RateLimitCounter) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_gradient_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = scope.get(_SCOPE_KEY)
        if headers is None:
            headers = scope[_SCOPE_KEY] = self.counter.count(counted=is_api_request(scope))
        names = {name for name, _ in headers}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
