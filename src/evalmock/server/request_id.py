"""X-Request-Id: honour a sane incoming id or make one, and send it back on every response."""

from __future__ import annotations

import contextvars
import os
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"x-request-id"
# Ids a client may choose; anything else (too long, control characters, spaces) is replaced.
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "evalmock_request_id", default=None
)


IDS_PER_DRAW = 256  # ids made from one read of the system's random source
_unused: list[str] = []
# a forked worker draws its own ids, never its parent's
os.register_at_fork(after_in_child=_unused.clear)


def fresh_id() -> str:
    """A random (version 4) UUID as 32 hex digits, as `uuid.uuid4().hex` writes it, without a UUID
    object.

    The random bytes are read for IDS_PER_DRAW ids at once: a system call per request cost more than
    the rest of sending back the id.
    """
    while True:
        try:
            # atomic: a server running the app in several threads never hands out one twice
            return _unused.pop()
        except IndexError:
            raw = bytearray(os.urandom(16 * IDS_PER_DRAW))
            raw[6::16] = bytes(byte & 0x0F | 0x40 for byte in raw[6::16])  # version 4
            raw[8::16] = bytes(byte & 0x3F | 0x80 for byte in raw[8::16])  # RFC 4122 variant
            text = raw.hex()
            _unused.extend(text[start : start + 32] for start in range(0, len(text), 32))


def current_request_id() -> str:
    """The id of the request being answered (a fresh one outside any request, never empty)."""
    return REQUEST_ID.get() or fresh_id()


def _incoming(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == HEADER:
            text = value.decode("latin-1")
            return text if _SANE.fullmatch(text) else None
    return None


class RequestIdMiddleware:
    """Pure ASGI middleware; a second instance deeper in the stack reuses the id the first one
    chose.

    The deeper instance exists for response validation: the documents mark X-Request-Id as required
    on errors, and Connexion validates the response before an outer middleware could add the header.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = REQUEST_ID.get() or _incoming(scope) or fresh_id()
        encoded = request_id.encode("latin-1")
        token = REQUEST_ID.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                headers.append((HEADER, encoded))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)
