"""uvicorn's HTTP/1.1 protocol (httptools) with a response's head and body sent in one write, not
two.

uvicorn writes the status line and headers when the app sends `http.response.start`, and the body
when it sends `http.response.body`: two `send()` system calls, and on loopback two trips through the
kernel's TCP stack, per response; on the 25-case page the second one cost about 8% of the CPU a
request (docs/maintainers/performance.md, "One write a response"). Here the
transport holds a write until the next one or the end of the event loop's turn, whichever comes
first, and sends what it holds together with the next write. The bytes on the wire are the same;
nothing waits longer than the turn in which it was written (a streamed body's head still leaves at
once, and so does `100 Continue`).
"""

from __future__ import annotations

import asyncio
from typing import Any


class HeldWrite:
    """A transport that holds one write until the next write or the end of this turn of the loop."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self._held = None
            self._transport.write(held + data)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def write_eof(self) -> None:
        self.flush()  # what is held goes before the end, as it was written before it
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # everything that writes nothing: the transport's own
        return getattr(self._transport, name)


try:
    from evalmock.server.request_head import LimitedHeadProtocol
except ImportError:  # no httptools for this platform: uvicorn picks its pure-Python protocol itself
    HTTP_PROTOCOL: type[asyncio.Protocol] | str = "auto"
else:

    class OneWriteHttpToolsProtocol(LimitedHeadProtocol):
        """uvicorn's httptools protocol (its request heads bounded as Granian's are), writing
        through HeldWrite."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = HeldWrite(transport, self.loop)  # type: ignore[assignment]

    HTTP_PROTOCOL = OneWriteHttpToolsProtocol  # uvicorn's `http` option
