"""The container image's health check, for whichever evalmock command the container runs
(`python3 -m ...`).

PID 1 is `evalmock` (the image's entrypoint); its command line says what to ask:

| command                       | healthy when                                                   |
|-------------------------------|----------------------------------------------------------------|
| `serve [--host H] [--port P]` | GET http://H:P/healthz answers 200 (P is 8080 unless given)    |
| `proxy [--host H] [--port P]` | a connection to H:P is taken (P is 8081); the proxy forwards   |
|                               | every path, so /healthz would ask the upstream                 |
| any other command             | it runs (contract, rules, ...: there is nothing to serve)      |

A host that listens on every interface (0.0.0.0, ::) is asked on the loopback. Exit 0 healthy, 1 not
(Docker's meaning), with the reason on standard error. Imports only the standard library and
`evalmock.defaults`: it runs every few seconds.
"""

from __future__ import annotations

import http.client
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from evalmock.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PROXY_PORT, LOOPBACK_OF

TIMEOUT_S = 2.0


class Probe(NamedTuple):
    kind: str  # "http": GET /healthz; "tcp": a connection taken
    host: str
    port: int


def probe_for(argv: Sequence[str]) -> Probe | None:
    """What to ask for a command line (`evalmock serve --port 9000 ...`); None: a command that
    serves nothing."""
    words = list(argv)
    command = next((word for word in words[1:] if not word.startswith("-")), None)
    if command not in ("serve", "proxy"):
        return None
    host = _option(words, "--host") or DEFAULT_HOST
    port = _option(words, "--port")
    default = DEFAULT_PORT if command == "serve" else DEFAULT_PROXY_PORT
    return Probe(
        "http" if command == "serve" else "tcp",
        LOOPBACK_OF.get(host, host),
        int(port) if port and port.isdigit() else default,
    )


def _option(words: list[str], name: str) -> str | None:
    for index, word in enumerate(words):
        if word == name and index + 1 < len(words):
            return words[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def check(probe: Probe) -> str | None:
    """None when healthy, else why not."""
    try:
        if probe.kind == "tcp":
            socket.create_connection((probe.host, probe.port), timeout=TIMEOUT_S).close()
            return None
        connection = http.client.HTTPConnection(probe.host, probe.port, timeout=TIMEOUT_S)
        try:
            connection.request("GET", "/healthz")
            status = connection.getresponse().status
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as exc:  # refused, timed out, not HTTP
        return f"{probe.kind} {probe.host}:{probe.port}: {exc or type(exc).__name__}"
    return None if status == 200 else f"GET /healthz on {probe.host}:{probe.port} answered {status}"


def main(cmdline: Path = Path("/proc/1/cmdline")) -> int:
    try:
        argv = [word.decode() for word in cmdline.read_bytes().split(b"\0") if word]
    except OSError as exc:
        print(f"evalmock healthcheck: cannot read {cmdline}: {exc}", file=sys.stderr)
        return 1
    probe = probe_for(argv)
    problem = None if probe is None else check(probe)
    if problem:
        print(f"evalmock healthcheck: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
