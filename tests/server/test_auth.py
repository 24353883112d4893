"""Authentication's own parts: the Authorization header is read as Starlette's request headers read
it; tokens with spaces (--any-token, --token); every 401 and the served schemes name the demo
tokens."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from connexion.lifecycle import ConnexionRequest
from starlette.datastructures import Headers

from conftest import free_port, start_server, stop_server
from evalmock.environment import ACCEPT_TOKENS as ACCEPT_TOKENS_ENV
from evalmock.server.auth import (
    SecurityRequest,
    accepted_tokens,
    authorization,
    parse_token_option,
)
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
        accepted_tokens({ACCEPT_TOKENS_ENV: "fine-token sk-live-98765\u00e9"})
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
        env={**environ, ACCEPT_TOKENS_ENV: "bad\u00e9"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        bad.returncode == 2
        and "evalmock serve: EVALMOCK_ACCEPT_TOKENS: its token number 1" in bad.stderr
    )


MY_ACCESS_TOKEN = "My Access Token"  # the token of DigitalOcean's SDK examples
LIST = f"/v1/agents/example/test-set/cases?projectId={EXAMPLE_PROJECT}"
EVALUATION = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"
DEMO_TOKENS_NAMED = ("demo-user", "demo-service", "demo-other", "demo-no-read")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("token", [MY_ACCESS_TOKEN, "tok!en", "a=b=c", "  padded  "])
def test_any_token_accepts_any_non_empty_bearer_value_spaces_included_as_prism_does(
    make_client: Callable[..., httpx.Client], token: str
) -> None:
    anyone = make_client(any_token=True)
    for path in (LIST, EVALUATION):
        assert anyone.get(path, headers=_bearer(token)).status_code == 200, path
    assert anyone.get(LIST, headers={"Authorization": "Bearer  "}).status_code == 401


def test_without_any_token_a_token_with_spaces_is_refused(client: httpx.Client) -> None:
    answer = client.get(LIST, headers=_bearer(MY_ACCESS_TOKEN))
    assert answer.status_code == 401 and "malformed" in answer.json()["error"]["message"]


def test_a_token_with_spaces_can_be_registered_and_is_then_accepted(
    make_client: Callable[..., httpx.Client],
) -> None:
    assert parse_token_option(MY_ACCESS_TOKEN) == (MY_ACCESS_TOKEN, "user")
    assert parse_token_option(f"{MY_ACCESS_TOKEN}:service") == (MY_ACCESS_TOKEN, "service")
    registered = make_client(tokens=((MY_ACCESS_TOKEN, "user"),))
    assert registered.get(LIST, headers=_bearer(MY_ACCESS_TOKEN)).status_code == 200
    assert registered.get(LIST, headers=_bearer("My Other Token")).status_code == 401


@pytest.mark.parametrize("text", ["", " lead", "trail ", "tab\tinside", "caf\u00e9", "a" * 4097])
def test_token_flag_refuses_what_no_header_could_carry_back(text: str) -> None:
    with pytest.raises(ValueError, match="visible ASCII"):
        parse_token_option(text)


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        (LIST, {}),
        (LIST, {"Authorization": "Basic dXNlcjpwYXNz"}),
        (LIST, {"Authorization": "Bearer "}),
        (LIST, _bearer("two words")),
        (LIST, _bearer("made-up-token")),
        (LIST, _bearer("demo-expired")),
        (LIST, _bearer("demo-revoked")),
        (LIST, {**_bearer("demo-user"), "Prefer": "code=401"}),
        (EVALUATION, {}),
        (EVALUATION, _bearer("made-up-token")),
        (EVALUATION, {**_bearer("demo-user"), "Prefer": "code=401"}),
    ],
)
def test_every_401_names_the_demo_tokens(
    client: httpx.Client, path: str, headers: dict[str, str]
) -> None:
    answer = client.get(path, headers=headers)
    assert answer.status_code == 401
    body = answer.json()
    message = body["error"]["message"] if "error" in body else body["message"]
    assert all(token in message for token in DEMO_TOKENS_NAMED), message


def test_the_served_documents_security_schemes_name_the_demo_tokens(client: httpx.Client) -> None:
    for base in ("/v1", "/v2"):
        schemes = client.get(f"{base}/openapi.json").json()["components"]["securitySchemes"]
        described = " ".join(scheme.get("description", "") for scheme in schemes.values())
        assert all(token in described for token in DEMO_TOKENS_NAMED), (base, described)
