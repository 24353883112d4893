"""`evalmock serve --server granian|uvicorn`: both serve the same bytes, Granian logs each request
in uvicorn's shape when asked, stops cleanly on SIGTERM, and says so when it cannot listen, before
any banner."""

from __future__ import annotations

import contextlib
import logging
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import conftest
from conftest import start_server, stop_server
from evalmock.cli import build_parser
from evalmock.server import http_server
from evalmock.server.access_log import RequestLine
from evalmock.server.http_server import (
    SERVERS,
    ServeOptions,
    default_server,
    granian_installed,
    serve_app,
)
from shared import free_port, holds_listening_port, needs_granian

EXAMPLE = (
    "/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired"
    "&limit=25"
)
TEST_CASE = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"
AUTH = {"Authorization": "Bearer demo-user"}


def test_the_command_line_offers_every_server() -> None:
    for server in SERVERS:
        assert build_parser().parse_args(["serve", "--server", server]).server == server


def test_granian_is_the_default_where_installed_and_uvicorn_is_chosen_by_name() -> None:
    assert default_server() == ("granian" if granian_installed() else "uvicorn")
    assert build_parser().parse_args(["serve"]).server is None
    assert build_parser().parse_args(["serve", "--server", "uvicorn"]).server == "uvicorn"


def test_without_granian_the_default_is_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_server, "granian_installed", lambda: False)
    assert http_server.default_server() == "uvicorn"


@pytest.mark.parametrize(("query", "target"), [("a=1&b=2", "/v1/x?a=1&b=2"), ("", "/v1/x")])
def test_an_access_line_has_uvicorn_shape(query: str, target: str) -> None:
    values = {
        "addr": "127.0.0.1",
        "method": "GET",
        "path": "/v1/x",
        "query_string": query,
        "protocol": "HTTP/1.1",
        "status": 200,
        "dt_ms": 1.25,
        "time": "t",
        "scheme": "http",
    }
    record = logging.LogRecord(
        "granian.access", logging.INFO, __file__, 1, "%(path)s", (values,), None
    )
    assert RequestLine().filter(record)
    assert record.getMessage() == f'127.0.0.1 - "GET {target} HTTP/1.1" 200 (1.2 ms)'


@needs_granian
def test_granian_and_uvicorn_serve_the_same_bytes_and_granian_logs_requests(tmp_path: Path) -> None:
    bodies = {}
    for name in ("uvicorn", "granian"):
        (tmp_path / name).mkdir()
        server = start_server(tmp_path / name, "--server", name, "--access-log")
        try:
            response = httpx.get(server.base_url + EXAMPLE, headers=AUTH, timeout=10)
            preflight = httpx.options(
                server.base_url + "/v1/agents/example/test-set/cases",
                timeout=10,
                headers={"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET"},
            )
            test_case = httpx.get(server.base_url + TEST_CASE, headers=AUTH, timeout=10)
            page = response.json()
            page.pop("nextCursor")  # sealed with the time it was made
            bodies[name] = (
                response.status_code,
                page,
                test_case.content,
                response.headers["content-type"],
                preflight.status_code,
                preflight.headers["access-control-allow-origin"],
            )
        finally:
            server.process.send_signal(signal.SIGTERM)
            assert server.process.wait(timeout=20) in (0, -signal.SIGTERM)
            stop_server(server)
    assert bodies["granian"] == bodies["uvicorn"]
    assert bodies["granian"][0] == 200 and bodies["granian"][4] == 200
    log = (tmp_path / "granian" / "server.log").read_text()
    assert f'"GET {EXAMPLE} HTTP/1.1" 200' in log


@needs_granian
def test_granian_stops_on_sigterm_with_exit_0(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--server", "granian")
    try:
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=20) == 0, server.log()
    finally:
        stop_server(server)
    assert "Traceback" not in server.log()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="the check reads Linux's /proc")
def test_a_test_server_is_the_one_started_not_another_that_took_its_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another server took the port free_port chose before ours could: its answer once made the
    # test signal our server, which had exited 1 ("already in use"), and read that as its exit code.
    (tmp_path / "other").mkdir()
    (tmp_path / "ours").mkdir()
    other = start_server(tmp_path / "other")
    try:
        taken = [int(other.base_url.rsplit(":", 1)[1])]
        monkeypatch.setattr(conftest, "free_port", lambda: taken.pop() if taken else free_port())
        ours = start_server(tmp_path / "ours")
        try:
            assert ours.base_url != other.base_url
            assert ours.process.poll() is None, ours.log()
            assert holds_listening_port(ours.process.pid, int(ours.base_url.rsplit(":", 1)[1]))
        finally:
            stop_server(ours)
    finally:
        stop_server(other)


@pytest.mark.parametrize("server", [pytest.param("granian", marks=needs_granian), "uvicorn"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_taken_port_is_said_plainly_before_any_banner(
    server: str, workers: str, tmp_path: Path
) -> None:
    targets = tmp_path / "targets.toml"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "evalmock",
                "serve",
                "--cases",
                "10",
                "--server",
                server,
                "--port",
                str(port),
                "--workers",
                workers,
                "--write-targets",
                str(targets),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert "Traceback" not in done.stderr
    # no banner inviting requests to a port another program answers
    assert "curl" not in done.stdout
    assert not targets.exists()  # no targets file naming a server that never started


def test_port_0_serves_on_a_free_port_the_banner_names() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "evalmock", "serve", "--cases", "10", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        named = None
        deadline = time.monotonic() + 60
        while named is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "the server stopped before its banner"
            named = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert named is not None and named.group(1) != "0"
        url = f"http://127.0.0.1:{named.group(1)}{EXAMPLE}"
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                assert httpx.get(url, headers=AUTH, timeout=5).status_code == 200
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"nothing answered at {url}")
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_port_taken_after_the_check_still_ends_uvicorn_with_exit_1() -> None:
    async def app(
        scope: dict, receive: object, send: object
    ) -> None:  # never called: it cannot listen
        raise AssertionError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert serve_app(app, "uvicorn", ServeOptions("127.0.0.1", taken.getsockname()[1])) == 1


@needs_granian
def test_two_granian_workers_accept_each_others_cursors_and_both_serve(tmp_path: Path) -> None:
    import os

    server = start_server(tmp_path, "--server", "granian", "--workers", "2")
    try:
        cursor = httpx.get(server.base_url + EXAMPLE, headers=AUTH, timeout=10).json()["nextCursor"]
        statuses = []
        # a new connection each time, so the kernel spreads them over both workers
        for _ in range(20):
            with httpx.Client(base_url=server.base_url, timeout=10) as fresh:
                statuses.append(fresh.get(EXAMPLE + "&cursor=" + cursor, headers=AUTH).status_code)
        children = (
            Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
            .read_text()
            .split()
        )
    finally:
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0
        stop_server(server)
    assert statuses == [200] * 20
    assert len(children) == 2 and not any(os.path.exists(f"/proc/{pid}") for pid in children)


@pytest.mark.parametrize(
    ("open_files", "connections"),
    [(1024, 1024 - http_server.RESERVED_FILES), (20_000, 20_000 - http_server.RESERVED_FILES)],
)
def test_a_granian_worker_serves_as_many_connections_as_its_open_file_limit_allows(
    monkeypatch: pytest.MonkeyPatch, open_files: int, connections: int
) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (open_files, 1_048_576))
    assert http_server.granian_connections() == connections


def test_a_granian_worker_without_an_open_file_limit_serves_a_fixed_number_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY,) * 2)
    assert http_server.granian_connections() == 8192
