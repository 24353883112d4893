"""httpcore's network backend on asyncio's own streams, for the proxy's connections to the upstream.

httpcore's default backend goes through anyio, whose cancel scopes and stream wrappers cost more than the rest of
reading and writing a forwarded request. httpcore takes any backend (`network_backend=`); this one connects, reads,
writes, starts TLS and times out as anyio's does, and raises httpcore's own exceptions, so the proxy's 502 and 504
are the same.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import sys
from collections.abc import Iterable
from typing import Any

import httpcore

CONNECT_ERRORS = (OSError, ssl.SSLError)


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: an asyncio reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout(f"no answer within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not send within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> AsyncioStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            self._writer.close()
            raise httpcore.ConnectTimeout(f"no TLS handshake within {timeout:g} s") from None
        except CONNECT_ERRORS as exc:
            self._writer.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # httpcore asks before reusing a kept-alive connection
            return self._reader.at_eof() or _readable(self._writer.get_extra_info("socket"))
        if info in ("ssl_object", "socket"):
            return self._writer.get_extra_info(info)
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Connections as asyncio streams (TCP only: the proxy's upstream is a URL)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> AsyncioStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, local_addr=(local_address, 0) if local_address else None)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection within {timeout:g} s") from None
        except CONNECT_ERRORS as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _readable(sock: socket.socket | None) -> bool:
    """Whether a read would return at once (data, or the end of a connection the upstream closed); a socket that is
    gone counts as readable, so that its connection is not reused."""
    fileno = -1 if sock is None else sock.fileno()
    if fileno < 0:
        return True
    if sys.platform == "win32" or not hasattr(select, "poll"):
        return bool(select.select([fileno], [], [], 0)[0])
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return bool(poller.poll(0))
