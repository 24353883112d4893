"""Authentication's own parts: the Authorization header is read as Starlette's request headers read it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from starlette.datastructures import Headers

from conftest import free_port
from evalmock.defaults import ACCEPT_TOKENS_ENV
from evalmock.server.auth import accepted_tokens, authorization
from evalmock.world.catalog import EXAMPLE_PROJECT

HEADER_LISTS = [
    [],
    [(b"host", b"x")],
    [(b"authorization", b"Bearer demo-user")],
    [(b"authorization", b"Bearer first"), (b"authorization", b"Bearer second")],
    [(b"x-authorization", b"Bearer no"), (b"authorization", b"Basic \xe9")],
    [(b"authorization", b"")],
]


@pytest.mark.parametrize("headers", HEADER_LISTS)
def test_the_authorization_header_is_the_first_one_as_starlette_reads_it(headers: list[tuple[bytes, bytes]]) -> None:
    scope = {"type": "http", "headers": headers}
    assert authorization(scope) == Headers(scope=scope).get("authorization")


def test_tokens_from_the_environment_are_read_as_token_flags_are() -> None:
    environ = {ACCEPT_TOKENS_ENV: " sk-staging-0123456789abcdef\n\tci-bot:service "}
    assert accepted_tokens(environ) == [("sk-staging-0123456789abcdef", "user"), ("ci-bot", "service")]
    assert accepted_tokens({}) == []


def test_a_bad_token_in_the_environment_is_named_by_its_number_never_quoted() -> None:
    with pytest.raises(ValueError) as refused:
        accepted_tokens({ACCEPT_TOKENS_ENV: "fine-token sk-live-98765!"})
    assert str(refused.value).startswith("EVALMOCK_ACCEPT_TOKENS: its token number 2: a token is")
    assert "98765" not in str(refused.value)


def test_serve_accepts_a_token_from_the_environment_and_keeps_it_off_its_command_line(tmp_path: Path) -> None:
    token = "sk-staging-0123456789abcdef"
    port = free_port()
    environ = {**os.environ, ACCEPT_TOKENS_ENV: token}
    command = [sys.executable, "-m", "evalmock", "serve", "--port", str(port), "--cases", "10"]
    with open(tmp_path / "serve.log", "wb") as log:
        server = subprocess.Popen(command, env=environ, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1/agents/example/test-set/cases?projectId={EXAMPLE_PROJECT}"
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
        assert answer.status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert token not in (tmp_path / "serve.log").read_text()  # the banner names it by its end only
    bad = subprocess.run([*command, "--port", str(free_port())], env={**environ, ACCEPT_TOKENS_ENV: "bad!"},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "evalmock serve: EVALMOCK_ACCEPT_TOKENS: its token number 1" in bad.stderr
