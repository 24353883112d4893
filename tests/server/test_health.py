"""`/healthz`: outside both APIs, not counted by the rate-limit headers, untouched by the error
controls."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx

from .helpers import AUTH, evaluation_path

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, process, log()


def test_healthz_says_the_world_is_loaded(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["status"] == "ok"
    assert (
        body["world"]["seed"] == 42
        and body["world"]["agents"] > 0
        and body["world"]["generated"] is True
    )


def test_healthz_head_has_no_body(client: httpx.Client) -> None:
    response = client.head("/healthz")
    assert response.status_code == 200 and response.content == b""


def test_healthz_refuses_other_methods(client: httpx.Client) -> None:
    response = client.post("/healthz")
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_healthz_is_not_counted_by_the_ratelimit_headers(client: httpx.Client) -> None:
    first = int(client.get(evaluation_path(), headers=AUTH).headers["ratelimit-remaining"])
    probe = client.get("/healthz")
    second = int(client.get(evaluation_path(), headers=AUTH).headers["ratelimit-remaining"])
    assert "ratelimit-remaining" not in probe.headers
    assert second == first - 1


def test_healthz_answers_despite_the_error_rate(make_client: Callable[..., httpx.Client]) -> None:
    failing = make_client(error_rate=1.0)
    assert failing.get("/healthz").status_code == 200


def test_healthz_is_not_logged_by_default(live_server: LiveServer) -> None:
    for _ in range(3):
        assert httpx.get(f"{live_server.base_url}/healthz", timeout=5).status_code == 200
    time.sleep(0.2)
    assert "/healthz" not in live_server.log()


def test_sigterm_stops_the_server_within_a_second_with_exit_0(
    live_server_factory: Callable[..., AbstractContextManager[LiveServer]],
) -> None:
    with live_server_factory() as server:
        # An open keep-alive connection must not hold the stop up.
        with httpx.Client(base_url=server.base_url, timeout=5) as keep_alive:
            assert keep_alive.get("/healthz").status_code == 200
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            try:
                code = server.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.process.kill()
                raise
        assert time.monotonic() - started < 1.0, server.log()
        assert code == 0, server.log()
