"""Half-open connections held against a server for a while (slowloris), reopened as the server
closes them, while a normal request is timed on a new connection every `every_s`: the bench's
`abuse` section."""

from __future__ import annotations

import contextlib
import resource
import selectors
import socket
import statistics
import time
from collections.abc import Callable
from typing import Any

# What each connection sends before it stalls: nothing, part of a request line, part of a header
# (then one more byte of it each round).
PARTIAL_HEADS = (
    b"",
    b"GET /v1/agents/exa",
    b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Slow: ",
)
SLACK_S = 0.005


def room_for(connections: int) -> None:
    """Raise this process's soft open-file limit to hold `connections` (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + 256 if hard == resource.RLIM_INFINITY else min(connections + 256, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _open(port: int, kind: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if PARTIAL_HEADS[kind]:
        sock.sendall(PARTIAL_HEADS[kind])
    sock.setblocking(False)
    return sock


def hold(
    port: int,
    connections: int,
    seconds: float,
    timed: Callable[[], float],
    every_s: float = 1.0,
) -> dict[str, Any]:
    """Hold `connections` half-open for `seconds`, keeping their number up, and time `timed()` (a
    normal request, returning its seconds, or raising) every `every_s`."""
    room_for(connections)
    for _ in range(5):  # warm: the first requests build what later ones reuse
        timed()
    idle = [timed() for _ in range(20)]
    selector = selectors.DefaultSelector()
    kinds: dict[socket.socket, int] = {}
    closed_by_server = reopen_failures = 0
    samples: list[float] = []
    failures: list[str] = []
    started = time.monotonic()
    try:
        for index in range(connections):
            sock = _open(port, index % len(PARTIAL_HEADS))
            kinds[sock] = index % len(PARTIAL_HEADS)
            selector.register(sock, selectors.EVENT_READ)
        while time.monotonic() - started < seconds:
            round_started = time.monotonic()
            try:
                samples.append(timed())
            except Exception as error:  # a request that failed is a finding, not a crash
                failures.append(f"{type(error).__name__}: {error}")
            for key, _ in selector.select(timeout=0):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                with contextlib.suppress(BlockingIOError):
                    if sock.recv(65536):
                        continue  # an answer (a 408 or 400) before the close: wait for the close
                kind = kinds.pop(sock)
                selector.unregister(sock)
                sock.close()
                closed_by_server += 1
                try:
                    fresh = _open(port, kind)
                except OSError:
                    reopen_failures += 1
                    continue
                kinds[fresh] = kind
                selector.register(fresh, selectors.EVENT_READ)
            for sock, kind in kinds.items():
                if PARTIAL_HEADS[kind].endswith(b": "):
                    with contextlib.suppress(OSError):
                        sock.send(b"a")
            time.sleep(max(every_s - (time.monotonic() - round_started), 0))
    finally:
        held_at_end = len(kinds)
        for sock in kinds:
            selector.unregister(sock)
            sock.close()
        selector.close()
    idle_p50 = statistics.median(idle)
    held_p50 = statistics.median(samples) if samples else None
    return {
        "connections": connections,
        "seconds": seconds,
        "held_at_end": held_at_end,
        "closed_by_server": closed_by_server,
        "reopen_failures": reopen_failures,
        "idle_p50_ms": round(idle_p50 * 1000, 1),
        "held_p50_ms": None if held_p50 is None else round(held_p50 * 1000, 1),
        "held_max_ms": round(max(samples) * 1000, 1) if samples else None,
        "requests": len(samples),
        "failed_requests": failures[:5],
        "failed_count": len(failures),
        "targets": {
            "no_failed_request": not failures,
            # twice the idle p50, and 5 ms for a loaded machine (idle p50s are a few ms)
            "p50_within_2x_idle": held_p50 is not None and held_p50 <= 2 * idle_p50 + SLACK_S,
        },
    }
