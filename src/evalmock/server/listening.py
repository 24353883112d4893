"""When `evalmock serve` prints its ready line (ready_line.py): once its port accepts a connection.

A test suite that starts a mock of its own (`--port 0`, a port the system picks) reads this line
instead of the banner, whose words may change. It comes after the banner, once, whatever the server
(Granian or uvicorn) and however many workers: the serving process connects to its own port until
the connection is accepted, so a request sent after the line is answered (with several workers, as
soon as one has started). The connection sends no request, so it reaches no access log and no
session's journal.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from evalmock.defaults import LOOPBACK_OF
from evalmock.ready_line import ready_line
from evalmock.server.banner import local_url

POLL_S = 0.02
# How long the line waits for the server to listen; a server that cannot listen exits before that
# and says why.
WAIT_S = 120.0


def listening_url(host: str, port: int) -> str:
    """The URL a client on this machine uses (a wildcard address stands for loopback)."""
    return local_url(host, port)


def accepts(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether `host`:`port` accepts a connection now (no byte is sent)."""
    address = LOOPBACK_OF.get(host, host)
    try:
        socket.create_connection((address, port), timeout=timeout).close()
    except OSError:
        return False
    return True


def announce_when_listening(
    host: str,
    port: int,
    *,
    out: TextIO | None = None,
    accepted: Callable[[str, int], bool] = accepts,
    wait_s: float = WAIT_S,
) -> threading.Thread:
    """Print `EVALMOCK_LISTENING <url>` on `out` (standard output) once `host`:`port` accepts a
    connection, from a daemon thread (which ends with the process, or after `wait_s`)."""

    def announce() -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if accepted(host, port):
                print(ready_line(listening_url(host, port)), file=out or sys.stdout, flush=True)
                return
            time.sleep(POLL_S)

    thread = threading.Thread(target=announce, name="evalmock-listening", daemon=True)
    thread.start()
    return thread
