"""Authentication's own parts: the Authorization header is read as Starlette's request headers read
it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from connexion.lifecycle import ConnexionRequest
from starlette.datastructures import Headers

from conftest import free_port, start_server, stop_server
from evalmock.defaults import ACCEPT_TOKENS_ENV
from evalmock.server.auth import SecurityRequest, accepted_tokens, authorization
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
def test_the_authorization_header_is_the_first_one_as_starlette_reads_it(
    headers: list[tuple[bytes, bytes]],
) -> None:
    scope = {"type": "http", "headers": headers}
    assert authorization(scope) == Headers(scope=scope).get("authorization")


def test_a_security_handler_reads_the_request_as_connexion_s_own_request_reads_it() -> None:
    # The bearer check reads only the scope; a handler for another scheme (an API key in a header,
    # the query or a cookie) reads the request's headers, query and cookies, which come from the
    # Starlette request made for it.
    headers = [
        (b"authorization", b"Bearer demo-user"),
        (b"x-api-key", b"k1"),
        (b"cookie", b"session=s1"),
    ]
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/x",
        "query_string": b"api_key=k2&a=1",
        "headers": headers,
    }
    ours, connexion = SecurityRequest(dict(scope)), ConnexionRequest(dict(scope))
    for read in (
        lambda r: r.headers.get("x-api-key"),
        lambda r: dict(r.query_params),
        lambda r: r.cookies,
        lambda r: r.scope["path"],
        lambda r: r.url.path,
    ):
        assert read(ours) == read(connexion)
    ours.context.update({"user": "user-demo"})
    assert ours.scope["extensions"]["connexion_context"] == {"user": "user-demo"}


def test_tokens_from_the_environment_are_read_as_token_flags_are() -> None:
    environ = {ACCEPT_TOKENS_ENV: " sk-staging-0123456789abcdef\n\tci-bot:service "}
    assert accepted_tokens(environ) == [
        ("sk-staging-0123456789abcdef", "user"),
        ("ci-bot", "service"),
    ]
    assert accepted_tokens({}) == []


def test_a_bad_token_in_the_environment_is_named_by_its_number_never_quoted() -> None:
    with pytest.raises(ValueError) as refused:
        accepted_tokens({ACCEPT_TOKENS_ENV: "fine-token sk-live-98765!"})
    assert str(refused.value).startswith("EVALMOCK_ACCEPT_TOKENS: its token number 2: a token is")
    assert "98765" not in str(refused.value)


def test_serve_accepts_a_token_from_the_environment_and_keeps_it_off_its_command_line(
    tmp_path: Path,
) -> None:
    token = "sk-staging-0123456789abcdef"
    environ = {**os.environ, ACCEPT_TOKENS_ENV: token}
    server = start_server(tmp_path, env=environ)
    try:
        url = f"{server.base_url}/v1/agents/example/test-set/cases?projectId={EXAMPLE_PROJECT}"
        answer = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200
    finally:
        stop_server(server)
    assert token not in server.log()  # the banner names it by its end only
    command = [
        sys.executable,
        "-m",
        "evalmock",
        "serve",
        "--port",
        str(free_port()),
        "--cases",
        "10",
    ]
    bad = subprocess.run(
        command,
        env={**environ, ACCEPT_TOKENS_ENV: "bad!"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        bad.returncode == 2
        and "evalmock serve: EVALMOCK_ACCEPT_TOKENS: its token number 1" in bad.stderr
    )
