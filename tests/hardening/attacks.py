"""Attacks below HTTP on a live server, each bounded in count and time: half-open connections held
(slowloris), a header flood, a huge body, smuggled requests; and what the server answered."""

from __future__ import annotations

import contextlib
import itertools
import resource
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# What a half-open connection sent before it stalled or began to trickle: nothing, part of a
# request line, part of the headers.
PARTIAL_HEADS = (
    b"",
    b"GET /v1/agents/exa",
    b"GET /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
)
TRICKLE_EVERY_S = 1.0
READ_TIMEOUT_S = 10.0


@contextmanager
def open_files_for(connections: int) -> Iterator[None]:
    """Room for `connections` sockets here and in the servers started meanwhile (they inherit the
    limit), the soft open-file limit raised where it is lower; restored on exit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections * 2 + 256
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@dataclass
class HalfOpen:
    """Connections that each send a partial request head (PARTIAL_HEADS in turn) and never finish
    it; those that stopped inside a header add one byte to it every TRICKLE_EVERY_S. `closed_at`:
    for each connection the server closed, how long after it was opened."""

    port: int
    count: int
    sockets: list[socket.socket] = field(default_factory=list)
    opened_at: float = 0.0
    closed_at: dict[int, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> HalfOpen:
        self.opened_at = time.monotonic()
        try:
            for _, head in zip(range(self.count), itertools.cycle(PARTIAL_HEADS), strict=False):
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=READ_TIMEOUT_S)
                if head:
                    sock.sendall(head)
                self.sockets.append(sock)
        except BaseException:
            self.close()
            raise
        self._trickler = threading.Thread(target=self._trickle, name="trickle", daemon=True)
        self._trickler.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if getattr(self, "_trickler", None) is not None:
            self._trickler.join(timeout=5)
        for sock in self.sockets:
            sock.close()

    def _trickle(self) -> None:
        trickling = [
            index
            for index in range(len(self.sockets))
            if PARTIAL_HEADS[index % len(PARTIAL_HEADS)].endswith(b": ")
        ]
        while not self._stop.wait(TRICKLE_EVERY_S):
            for index in trickling:
                if index not in self.closed_at:
                    with contextlib.suppress(OSError):  # closed by the server: see_closed() says
                        self.sockets[index].send(b"a")

    def see_closed(self, wait_s: float) -> int:
        """Note every connection the server has closed, waiting up to `wait_s` for the first one;
        how many it has closed so far."""
        deadline = time.monotonic() + wait_s
        while True:
            open_ones = [s for i, s in enumerate(self.sockets) if i not in self.closed_at]
            if not open_ones:
                return len(self.closed_at)
            readable, _, _ = select.select(open_ones, [], [], max(deadline - time.monotonic(), 0))
            now = time.monotonic() - self.opened_at
            for sock in readable:
                try:
                    closed = not sock.recv(65536, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    self.closed_at[self.sockets.index(sock)] = now
            if readable or time.monotonic() >= deadline:
                return len(self.closed_at)


def exchange(port: int, *pieces: bytes) -> bytes:
    """Send `pieces` on one connection (stopping if the server stops reading) and read until it
    closes: every byte it answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT_S) as sock:
        try:
            for piece in pieces:
                sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it answered and closed before the rest arrived
        return read_to_end(sock)


def in_turn(port: int, requests: list[bytes]) -> list[int]:
    """Send `requests` one after another on one connection, each once the answer to the one
    before has arrived (read by its Content-Length); the status of each answer, until the server
    closes the connection."""
    answered = []
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT_S) as sock:
        reader = sock.makefile("rb")
        for request in requests:
            sock.sendall(request)
            status_line = reader.readline()
            if not status_line:
                break
            answered.append(int(status_line.split()[1]))
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            reader.read(length)
        reader.close()
    return answered


def read_to_end(sock: socket.socket) -> bytes:
    answer = bytearray()
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        answer += chunk
    return bytes(answer)


def statuses(answer: bytes) -> list[int]:
    """The status of every response in `answer` (by its status line)."""
    return [
        int(line.split()[1])
        for line in answer.split(b"\r\n")
        if line.startswith(b"HTTP/1.1 ") and len(line.split()) > 1
    ]


def resident_mb(pid: int) -> float:
    """The process's resident memory in MB (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")
