"""The image's health check asks whichever command the container runs: serve's /healthz on its port,
the proxy's own port (not the upstream's health), nothing for a command that serves nothing."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalmock.healthcheck import Probe, check, main, probe_for
from shared import free_port

IMAGE_CMD = [
    "evalmock",
    "serve",
    "--host",
    "0.0.0.0",
    "--port",
    "8080",
    "--write-targets",
    "/work/targets.toml",
]


@pytest.mark.parametrize(
    ("argv", "probe"),
    [
        (IMAGE_CMD, Probe("http", "127.0.0.1", 8080)),
        (["evalmock", "serve", "--port=9000", "--seed", "7"], Probe("http", "127.0.0.1", 9000)),
        (
            ["/opt/evalmock/bin/evalmock", "proxy", "--host", "0.0.0.0", "--upstream", "http://h"],
            Probe("tcp", "127.0.0.1", 8081),
        ),
        (["evalmock", "proxy", "--host", "::", "--port", "9001"], Probe("tcp", "::1", 9001)),
        (["evalmock", "serve", "--host", "10.0.0.5"], Probe("http", "10.0.0.5", 8080)),
        (["evalmock", "contract", "--base-url", "http://h"], None),
        (["evalmock", "rules"], None),
    ],
)
def test_the_probe_follows_the_command_and_its_port(argv: list[str], probe: Probe | None) -> None:
    assert probe_for(argv) == probe


@contextmanager
def healthz(status: int) -> Iterator[int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_serve_is_healthy_only_while_its_healthz_answers_200() -> None:
    with healthz(200) as port:
        assert check(Probe("http", "127.0.0.1", port)) is None
    with healthz(503) as port:
        assert (
            check(Probe("http", "127.0.0.1", port))
            == f"GET /healthz on 127.0.0.1:{port} answered 503"
        )
    closed = free_port()
    assert f"http 127.0.0.1:{closed}: " in (check(Probe("http", "127.0.0.1", closed)) or "")


def test_the_proxy_is_healthy_while_its_port_takes_connections() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listening:
        assert check(Probe("tcp", "127.0.0.1", listening.getsockname()[1])) is None
    closed = free_port()
    assert check(Probe("tcp", "127.0.0.1", closed)) is not None


def test_main_reads_pid_1_s_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(b"evalmock\0contract\0--base-url\0http://h\0")
    assert main(cmdline) == 0
    closed = free_port()
    cmdline.write_bytes(b"evalmock\0serve\0--port\0" + str(closed).encode() + b"\0")
    assert main(cmdline) == 1
    assert f"evalmock healthcheck: http 127.0.0.1:{closed}: " in capsys.readouterr().err
    assert main(tmp_path / "missing") == 1
