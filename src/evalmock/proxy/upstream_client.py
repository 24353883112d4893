"""The proxy's client of the upstream: aiohttp, sending each request as it came and nothing of its
own, reading at most a bounded head."""

from __future__ import annotations

import re
import ssl
from collections.abc import AsyncIterator

import aiohttp
import httpx
from multidict import CIMultiDict
from yarl import URL

from evalmock.proxy.upstream import Origin
from evalmock.proxy.wire import RawHeaders, header_text

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


def upstream_session(ssl_context: ssl.SSLContext, timeout: float) -> aiohttp.ClientSession:
    """aiohttp's client (its C parser costs half of what a pure-Python one does a forwarded
    request), to be made inside the server's event loop. It sends what it is given and nothing of
    its own: no headers of its own, no cookies kept from one client for another, no redirect
    followed, no body decoded, no head longer than the bounds; the environment's proxies and .netrc
    not ours. `timeout` bounds each wait (to connect, for each piece)."""
    connector = aiohttp.TCPConnector(
        limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_EXPIRY_S, ssl=ssl_context
    )
    waits = aiohttp.ClientTimeout(
        total=None, connect=timeout, sock_connect=timeout, sock_read=timeout
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=waits,
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=False,
        skip_auto_headers=NOT_ADDED,
        trust_env=False,
        max_line_size=MAX_HEADER_LINE,
        max_field_size=MAX_HEADER_LINE,
        max_headers=MAX_HEADERS,
    )


async def send_upstream(
    client: aiohttp.ClientSession,
    origin: Origin,
    method: str,
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
    if origin.authorization is not None:
        sent.popall("Authorization", None)
        sent["Authorization"] = origin.authorization
    target = origin.prefix + target
    if not _PLAIN_TARGET.fullmatch(target) or "/." in target:
        target = httpx.URL(origin.root + target).raw_path.decode("ascii")
    return await client.request(
        method,
        URL(origin.root + target, encoded=True),
        headers=sent,
        data=body,
        allow_redirects=False,
    )
