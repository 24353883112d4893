"""What the proxy forwards as it came: every header but the hop-by-hop ones, and a body as the upstream meant it."""

from __future__ import annotations

from collections.abc import Sequence

import httpx

RawHeaders = list[tuple[bytes, bytes]]

# Headers of one connection, never forwarded (RFC 9110, 7.6.1); Host is the upstream's own.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host",
})

HOP_BY_HOP_BYTES = frozenset(name.encode("ascii") for name in HOP_BY_HOP)


def outgoing(headers: Sequence[tuple[bytes, bytes]]) -> RawHeaders:
    """The headers to forward, either way: all but the hop-by-hop ones (and those the Connection header names), each
    as it came."""
    named = {token.strip().lower() for name, value in headers if name.lower() == b"connection"
             for token in value.split(b",")}
    return [(name, value) for name, value in headers
            if name.lower() not in HOP_BY_HOP_BYTES and (not named or name.lower() not in named)]


def decoded(status: int, headers: RawHeaders, raw: bytes) -> bytes:
    """The body as the upstream meant it (its Content-Encoding undone, by httpx's decoders); the raw bytes when they
    do not decode."""
    encoding = next((value for name, value in headers if name == b"content-encoding"), b"identity")
    if encoding.strip().lower() in (b"", b"identity"):
        return raw
    try:
        return httpx.Response(status, headers=headers, content=raw).content
    except httpx.DecodingError:
        return raw


def declared_length(headers: RawHeaders) -> int:
    try:
        return int(next((value for name, value in headers if name == b"content-length"), b"0"))
    except ValueError:
        return 0
