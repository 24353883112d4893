"""uvicorn's httptools protocol refusing an oversized request head with 431, as Granian does.

uvicorn has no limit of its own on a request head under httptools (only its h11 protocol has one):
it took 20,000 headers, or one header of 50 MB, and passed them to the app. Granian refuses more
than MAX_HEADERS fields, or a head past its HTTP/1 buffer (MAX_HEAD_BYTES), with `431 Request
Header Fields Too Large` and closes the connection; under uvicorn this protocol does the same. The
size is counted as bytes arrive, before httptools gathers them, so an endless header is cut off
after at most MAX_HEAD_BYTES and one read.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

MAX_HEADERS = 100  # Granian's (hyper's) limit on a request's header fields
MAX_HEAD_BYTES = 8192 + 4096 * 100  # Granian's HTTP/1 buffer, HTTP1Settings.max_buffer_size
TOO_LARGE = 431
_REASON = b"Request header fields too large."
# After an answer the connection ends on (a 431, or an answer given before its request's body was
# read): what the client still sends is read and dropped, up to these, then the connection closed.
# Closed at once with unread bytes, the kernel resets it, and a reset can reach the client before
# the answer it was sent: the client saw "connection reset" and no 431.
LINGER_S = 2.0
LINGER_BYTES = 2**20


class HeadTooLarge(Exception):
    """Raised in a parser callback to stop httptools; uvicorn then answers through
    send_400_response."""


class LimitedHeadProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with MAX_HEADERS and MAX_HEAD_BYTES on each request head."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._reading_head = True
        self._head_bytes = 0
        self._head_too_large = False
        self._dropped: int | None = None  # bytes dropped since the connection began to end

    def data_received(self, data: bytes) -> None:
        if self._dropped is not None:
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES:
                self.transport.close()
            return
        if self._reading_head:
            # A read that ends one head may carry the start of a body too: the count errs on the
            # high side by less than one read, far below the limit for any head that fits in it.
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse_head()
                return
        super().data_received(data)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(self.headers) >= MAX_HEADERS:
            self._head_too_large = True
            raise HeadTooLarge
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._reading_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_head = True
        self._head_bytes = 0

    def on_response_complete(self) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.more_body and not self.transport.is_closing():
            # Answered before its body was all read (a GET's 100 MB refused from its headers):
            # the connection ends, as under Granian, rather than read the rest to be kept alive.
            self.server_state.total_requests += 1
            self._end_lingering()
            return
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        if self._head_too_large:
            self._refuse_head()
        else:
            super().send_400_response(msg)

    def _refuse_head(self) -> None:
        """Answer 431 (in uvicorn's shape for its own 400) and close the connection."""
        head = [STATUS_LINE[TOO_LARGE]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.extend(
            [
                b"content-type: text/plain; charset=utf-8\r\n",
                b"content-length: " + str(len(_REASON)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                _REASON,
            ]
        )
        self.transport.write(b"".join(head))
        self._end_lingering()

    def _end_lingering(self) -> None:
        """End the connection after what was written: its end sent now, and the connection closed
        once the client has closed its side, sent LINGER_BYTES more, or after LINGER_S."""
        self._dropped = 0
        self.flow.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)
