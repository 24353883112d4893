"""What the proxy forwards as it came: every header but the hop-by-hop ones, each body piece by
piece."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence

from starlette.types import Message, Receive, Scope, Send

from evalmock.proxy.forwarded import Forwarded, Headers

RawHeaders = list[tuple[bytes, bytes]]

# Headers of one connection, never forwarded (RFC 9110, 7.6.1); Host is the upstream's own.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)

HOP_BY_HOP_BYTES = frozenset(name.encode("ascii") for name in HOP_BY_HOP)


def outgoing(headers: Sequence[tuple[bytes, bytes]]) -> RawHeaders:
    """The headers to forward, either way: all but the hop-by-hop ones (and those the Connection
    header names), each as it came."""
    named = {
        token.strip().lower()
        for name, value in headers
        if name.lower() == b"connection"
        for token in value.split(b",")
    }
    return [
        (name, value)
        for name, value in headers
        if name.lower() not in HOP_BY_HOP_BYTES and (not named or name.lower() not in named)
    ]


def declared_length(headers: RawHeaders) -> int:
    try:
        return int(next((value for name, value in headers if name == b"content-length"), b"0"))
    except ValueError:
        return 0


def header_text(value: bytes) -> str:
    """A header's value as text that aiohttp writes back as the same bytes (UTF-8); bytes that are
    not UTF-8 (rare and obsolete, RFC 9110 5.5) are read as Latin-1, and so are written as the UTF-8
    of those characters."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def has_body(scope: Scope) -> bool:
    """The client's request has a body (framed by a length, or chunked)."""
    framing = (b"content-length", b"transfer-encoding")
    return any(name.lower() in framing for name, _ in scope["headers"])


async def then(chunks: AsyncIterator[bytes], done: Callable[[], None]) -> AsyncIterator[bytes]:
    """`chunks`, then `done()` once the last of them has been taken."""
    async for chunk in chunks:
        yield chunk
    done()


async def request_body(
    receive: Receive, forwarded: Forwarded, kept_up_to: int
) -> AsyncIterator[bytes]:
    """The client's body, piece by piece as it comes; a whole body no longer than `kept_up_to` is
    also kept in `forwarded` (a larger one is only counted)."""
    kept: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        forwarded.request_body_size += len(chunk)
        if forwarded.request_body_size <= kept_up_to:
            kept.append(chunk)
        else:
            kept.clear()
        yield chunk
        if not message.get("more_body", False):
            forwarded.request_body_whole = True
            if forwarded.request_body_size <= kept_up_to:
                forwarded.request_body = b"".join(kept)
            return


async def read_up_to(chunks: AsyncIterator[bytes], limit: int) -> list[bytes]:
    """The whole raw body's chunks, or, when it is longer than `limit`, its first chunks past it
    (the rest stays unread). A list, so that whoever streams them on can let each go once sent."""
    held: list[bytes] = []
    size = 0
    async for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return held


async def send_whole(
    send: Send, status: int, sent_back: RawHeaders, raw: bytes, extra: Headers
) -> None:
    """The upstream's whole answer sent back as it came, with the `extra` headers set in place of
    any of the same name."""
    headers = sent_back
    if extra:
        added = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in extra]
        names = {name for name, _ in added}
        headers = [(name, value) for name, value in sent_back if name not in names] + added
    message: Message = {"type": "http.response.start", "status": status, "headers": headers}
    await send(message)
    await send({"type": "http.response.body", "body": raw})
