"""The deadline of the answer being sent for: each read of its status line and header block waits
no longer than the time left, on httpx's network streams (the scenario checks', pre-flight's) and
on urllib3's sockets (requests', Schemathesis's) alike: a head sent a byte at a time ends there."""

from __future__ import annotations

import http.client
import io
import select
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any, TypeVar

import h11
import httpcore
import httpx
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

Read = TypeVar("Read", bytes, int)
SHORTEST_WAIT = 0.001  # seconds: a timeout of 0 would make the socket non-blocking


class Deadline:
    """The answer's end, `at` (time.monotonic()): `heard` once any of it arrived, `passed` once a
    read waiting for more was cut there."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.heard = False
        self.passed = False

    @property
    def cut(self) -> bool:
        """The answer began and was not over by the deadline (silence from the start is no answer,
        said as before)."""
        return self.heard and self.passed

    def read(self, timeout: float | None, read: Callable[[float | None], Read]) -> Read:
        """`read(wait)` (bytes, or their count), its wait the smaller of `timeout` and the time
        left."""
        left = self.at - time.monotonic()
        binding = timeout is None or left < timeout
        try:
            data = read(max(left, SHORTEST_WAIT) if binding else timeout)
        except (TimeoutError, httpcore.TimeoutException):
            self.passed = self.passed or binding
            raise
        self.heard = self.heard or bool(data)
        return data


_CURRENT: ContextVar[Deadline | None] = ContextVar("answer_deadline", default=None)


@contextmanager
def reading_until(at: float) -> Iterator[Deadline]:
    """Within the block, in this thread, every answer's head is read by `at` (time.monotonic())."""
    deadline = Deadline(at)
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


def postpone(seconds: float) -> None:
    """The deadline of the answer being read in this thread, if any, moved `seconds` later: time
    the audit spent (waiting for room to read it in), not the service."""
    deadline = _CURRENT.get()
    if deadline is not None:
        deadline.at += seconds


def _read(timeout: float | None, read: Callable[[float | None], Read]) -> Read:
    deadline = _CURRENT.get()
    return read(timeout) if deadline is None else deadline.read(timeout, read)


# httpx: a network backend whose streams' reads keep to the deadline (httpcore's public means)
class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _read(timeout, lambda wait: self._stream.read(max_bytes, wait))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, timeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return _DeadlineStream(self._stream.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_unix_socket(*args, **kwargs))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def held_to_deadlines(client: httpx.Client) -> httpx.Client:
    """`client`, each answer's head read by the deadline of `reading_until`, if one is set; its
    transports as httpx made them (the environment's proxies, certificates, pool limits kept)."""
    # httpx takes no network backend yet (encode/httpx#3749), and given a transport it drops the
    # environment's proxies: the backend of each pool it made, direct or through a proxy, is
    # wrapped in place. A changed httpx fails here, loudly, not by reading without the deadline.
    for transport in (client._transport, *client._mounts.values()):
        if transport is None:  # a host NO_PROXY sends direct, through client._transport
            continue
        pool = transport._pool  # type: ignore[attr-defined]
        pool._network_backend = _DeadlineBackend(pool._network_backend)
    return client


def close_unasked(client: httpx.Client) -> int:
    """Close each idle connection of `client` that holds bytes no request asked for (an answer the
    service queued behind the one read: a response desync), so that no later request reads them as
    its answer; how many it closed. httpcore checks a kept connection's socket before it sends on
    it again, but not what h11 already read into its buffer."""
    closed = 0
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)  # none in a transport of a test's making
        if pool is None:
            continue
        for connection in pool.connections:
            state = getattr(getattr(connection, "_connection", None), "_h11_state", None)
            if state is not None and state.their_state is h11.IDLE and state.trailing_data[0]:
                connection.close()
                closed += 1
    return closed


# urllib3: http.client reads the head from a buffered file on the socket; under it, each receive
# keeps to the deadline
class _DeadlineSocketReader(io.RawIOBase):
    def __init__(self, file: Any, sock: socket.socket) -> None:
        # the socket's own file (nothing read from it yet): it holds the socket open while the
        # answer is read, and it closes its raw file when dropped
        self._file = file
        self._sock = sock
        self._timeout = sock.gettimeout()  # urllib3's read timeout, set just before
        self._set = self._timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self.peeking:  # only what has come already: none (None) if nothing has
            if not select.select([self._sock], [], [], 0)[0]:
                return None
            return self._receive(buffer, SHORTEST_WAIT)
        return _read(self._timeout, lambda wait: self._receive(buffer, wait))

    peeking = False

    def hang_up(self) -> None:
        """End the connection both ways: urllib3 then never sends on it again."""
        with suppress(OSError):  # already ended
            self._sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._file.close()
        super().close()

    def _receive(self, buffer: Any, wait: float | None) -> int:
        if wait != self._set:
            self._sock.settimeout(wait)
            self._set = wait
        return self._file.raw.readinto(buffer) or 0


class _DeadlineResponse(http.client.HTTPResponse):
    # bytes had come behind the whole answer that no request asked for (a response desync): the
    # connection was ended, so that no later request reads them as its answer
    unasked = False
    _cut = False

    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        if isinstance(sock, socket.socket):  # not a TLS-in-TLS transport: that one as it is
            self.fp = io.BufferedReader(_DeadlineSocketReader(self.fp, sock))

    def close(self) -> None:
        self._cut = True  # closed by its reader, the answer maybe not over: no bytes are unasked
        super().close()

    def _close_conn(self) -> None:
        fp = self.fp
        reader = getattr(fp, "raw", None)
        if not self._cut and not self.will_close and isinstance(reader, _DeadlineSocketReader):
            reader.peeking = True
            try:
                self.unasked = bool(fp.peek(1))  # type: ignore[union-attr]
            except OSError:
                pass
            finally:
                reader.peeking = False
            if self.unasked:
                reader.hang_up()
        super()._close_conn()


class _DeadlineHTTPConnection(HTTPConnection):
    response_class = _DeadlineResponse


class _DeadlineHTTPSConnection(HTTPSConnection):
    response_class = _DeadlineResponse


class _DeadlineHTTPPool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _DeadlineHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


# for a urllib3 PoolManager's pool_classes_by_scheme
DEADLINE_POOLS: dict[str, type[HTTPConnectionPool]] = {
    "http": _DeadlineHTTPPool,
    "https": _DeadlineHTTPSPool,
}
