"""Bad input over a real socket: each answer is the documented 4xx body, never a 500, never a stack
trace."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from .answers import (
    AUTH,
    CASES,
    EVALUATION,
    EXAMPLE_PROJECT,
    assert_digitalocean_error,
    assert_envelope,
    assert_no_stack_trace,
)

Q = f"{CASES}?projectId={EXAMPLE_PROJECT}"


@dataclass(frozen=True)
class Bad:
    """One bad request and the documented answer: status, code (test-set) or id (DigitalOcean),
    parameter."""

    url: str
    status: int
    code: str
    parameter: str | None = None
    headers: dict[str, Any] = field(default_factory=lambda: dict(AUTH))
    content: bytes | None = None
    method: str = "GET"


TEST_SET_BAD = {
    # values of the wrong shape or out of bounds
    "projectId missing": Bad(CASES + "?limit=5", 400, "bad-input", "projectId"),
    "projectId empty": Bad(CASES + "?projectId=", 400, "bad-input", "projectId"),
    "projectId not a uuid": Bad(CASES + "?projectId=not-a-uuid", 400, "bad-input", "projectId"),
    "projectId 10k chars": Bad(CASES + "?projectId=" + "a" * 10_000, 400, "bad-input", "projectId"),
    "projectId trailing newline": Bad(Q + "%0A", 400, "bad-input", "projectId"),
    "projectId NUL": Bad(CASES + "?projectId=%00" + EXAMPLE_PROJECT, 400, "bad-input", "projectId"),
    "projectId unicode": Bad(
        CASES + "?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C%C3%A9",
        400,
        "bad-input",
        "projectId",
    ),
    "limit zero": Bad(Q + "&limit=0", 400, "bad-input", "limit"),
    "limit negative": Bad(Q + "&limit=-1", 400, "bad-input", "limit"),
    "limit over max": Bad(Q + "&limit=101", 400, "bad-input", "limit"),
    "limit huge": Bad(Q + "&limit=" + "9" * 30, 400, "bad-input", "limit"),
    "limit 400 digits": Bad(Q + "&limit=" + "1" * 400, 400, "bad-input", "limit"),
    "limit float": Bad(Q + "&limit=2.5", 400, "bad-input", "limit"),
    "limit exponent": Bad(Q + "&limit=1e2", 400, "bad-input", "limit"),
    "limit word": Bad(Q + "&limit=ten", 400, "bad-input", "limit"),
    "limit empty": Bad(Q + "&limit=", 400, "bad-input", "limit"),
    "limit fullwidth digit": Bad(Q + "&limit=%EF%BC%91", 400, "bad-input", "limit"),
    "limit control char": Bad(Q + "&limit=5%1B", 400, "bad-input", "limit"),
    "include other": Bad(Q + "&include=RETIRED", 400, "bad-input", "include"),
    "include empty": Bad(Q + "&include=", 400, "bad-input", "include"),
    "kind other": Bad(Q + "&kind=robot", 400, "bad-input", "kind"),
    "kind trailing comma": Bad(Q + "&kind=hand,", 400, "bad-input", "kind"),
    "kind right-to-left mark": Bad(Q + "&kind=hand%E2%80%8F", 400, "bad-input", "kind"),
    # repeated and unknown parameters
    "limit repeated": Bad(Q + "&limit=5&limit=5", 400, "bad-input", "limit"),
    "projectId repeated": Bad(Q + "&projectId=" + EXAMPLE_PROJECT, 400, "bad-input", "projectId"),
    "unknown parameter": Bad(Q + "&limt=5", 400, "bad-input", "limt"),
    "too many parameters": Bad(Q + "".join(f"&x{i}=1" for i in range(100)), 400, "bad-input"),
    # cursors this server never issued
    "cursor garbage": Bad(Q + "&cursor=!!!not-a-cursor", 400, "bad-input", "cursor"),
    "cursor empty": Bad(Q + "&cursor=", 400, "bad-input", "cursor"),
    "cursor NUL and 0xFF": Bad(Q + "&cursor=%00%FF", 400, "bad-input", "cursor"),
    "cursor unicode": Bad(Q + "&cursor=%E2%98%83%F0%9F%92%A9", 400, "bad-input", "cursor"),
    "cursor 20k chars": Bad(Q + "&cursor=" + "A" * 20_000, 400, "bad-input", "cursor"),
    "cursor looks like the document's": Bad(
        Q + "&cursor=eyJwIjoxfQ.c2lnbmF0dXJl", 400, "bad-input", "cursor"
    ),
    # paths
    "agentId 20k chars": Bad(
        CASES.replace("example", "a" * 20_000) + f"?projectId={EXAMPLE_PROJECT}",
        404,
        "agent-not-found",
    ),
    "agentId NUL": Bad(
        CASES.replace("example", "%00") + f"?projectId={EXAMPLE_PROJECT}", 400, "bad-input"
    ),
    "agentId bidi and emoji": Bad(
        CASES.replace("example", "%E2%80%AE%F0%9F%92%A9") + f"?projectId={EXAMPLE_PROJECT}",
        404,
        "agent-not-found",
    ),
    "unknown route 30k chars": Bad("/v1/" + "x" * 30_000, 404, "not-found"),
    "method POST": Bad(Q, 405, "method-not-allowed", method="POST"),
    # a body on a GET
    "GET with JSON body": Bad(
        Q, 400, "bad-input", "body", {**AUTH, "Content-Type": "application/json"}, b'{"a": 1}'
    ),
    "GET with truncated JSON body": Bad(
        Q, 400, "bad-input", "body", {**AUTH, "Content-Type": "application/json"}, b'{"a": '
    ),
    "GET with binary body": Bad(Q, 400, "bad-input", "body", dict(AUTH), bytes(range(256))),
    # malformed Authorization headers
    "no Authorization": Bad(Q, 401, "unauthorized", headers={}),
    "Basic scheme": Bad(Q, 401, "unauthorized", headers={"Authorization": "Basic ZGVtbzpkZW1v"}),
    "Bearer without token": Bad(Q, 401, "unauthorized", headers={"Authorization": "Bearer"}),
    "token with a space": Bad(
        Q, 401, "unauthorized", headers={"Authorization": "Bearer demo user"}
    ),
    "token of 5000 chars": Bad(
        Q, 401, "unauthorized", headers={"Authorization": "Bearer " + "a" * 5000}
    ),
    "token of non-ASCII bytes": Bad(
        Q, 401, "unauthorized", headers={"Authorization": b"Bearer \xc3\xa9\xff"}
    ),
    "token with padding inside": Bad(
        Q, 401, "unauthorized", headers={"Authorization": "Bearer a=b"}
    ),
    "expired token": Bad(Q, 401, "token-expired", headers={"Authorization": "Bearer demo-expired"}),
    "revoked token": Bad(Q, 401, "token-revoked", headers={"Authorization": "Bearer demo-revoked"}),
}

GRADIENT_BAD = {
    "version word": Bad(EVALUATION + "?evaluation_test_case_version=abc", 400, "bad_request"),
    "version float": Bad(EVALUATION + "?evaluation_test_case_version=1.5", 400, "bad_request"),
    "version 400 digits": Bad(
        EVALUATION + "?evaluation_test_case_version=" + "7" * 400, 400, "bad_request"
    ),
    "version repeated": Bad(
        EVALUATION + "?evaluation_test_case_version=1&evaluation_test_case_version=1",
        400,
        "bad_request",
    ),
    "version negative": Bad(EVALUATION + "?evaluation_test_case_version=-1", 404, "not_found"),
    "version the case lacks": Bad(
        EVALUATION + "?evaluation_test_case_version=999999", 404, "not_found"
    ),
    "uuid 20k chars": Bad(EVALUATION.rsplit("/", 1)[0] + "/" + "z" * 20_000, 404, "not_found"),
    "uuid NUL": Bad(EVALUATION.rsplit("/", 1)[0] + "/%00", 404, "not_found"),
    "uuid unicode": Bad(EVALUATION.rsplit("/", 1)[0] + "/%E2%98%83", 404, "not_found"),
    "unknown parameter": Bad(EVALUATION + "?version=1", 400, "bad_request"),
    "GET with body": Bad(
        EVALUATION,
        400,
        "bad_request",
        content=b"{}",
        headers={**AUTH, "Content-Type": "application/json"},
    ),
    "no Authorization": Bad(EVALUATION, 401, "unauthorized", headers={}),
    "Basic scheme": Bad(
        EVALUATION, 401, "unauthorized", headers={"Authorization": "Basic ZGVtbzpkZW1v"}
    ),
    "method DELETE": Bad(EVALUATION, 405, "method_not_allowed", method="DELETE"),
}


@pytest.fixture(scope="module")
def http(live_server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.base_url, timeout=15) as client:
        yield client


def send(http: httpx.Client, bad: Bad) -> httpx.Response:
    return http.request(bad.method, bad.url, headers=bad.headers, content=bad.content)


@pytest.mark.parametrize("bad", TEST_SET_BAD.values(), ids=TEST_SET_BAD.keys())
def test_bad_test_set_request_gets_the_documented_envelope(http: httpx.Client, bad: Bad) -> None:
    assert_envelope(send(http, bad), bad.status, bad.code, bad.parameter)


@pytest.mark.parametrize("bad", GRADIENT_BAD.values(), ids=GRADIENT_BAD.keys())
def test_bad_gradient_request_gets_digitalocean_error_body(http: httpx.Client, bad: Bad) -> None:
    assert_digitalocean_error(send(http, bad), bad.status, bad.code)


def test_a_405_names_the_allowed_methods(http: httpx.Client) -> None:
    response = http.post(Q, headers=AUTH)
    assert_envelope(response, 405, "method-not-allowed")
    assert "GET" in response.headers["allow"]


def test_the_server_still_answers_after_every_bad_request(http: httpx.Client) -> None:
    for bad in [*TEST_SET_BAD.values(), *GRADIENT_BAD.values()]:
        assert_no_stack_trace(send(http, bad))
    assert http.get(Q, headers=AUTH).status_code == 200


# -- below HTTP: what the app never sees
# ---------------------------------------------------------------------


def raw_exchange(base_url: str, request: bytes, close_early: bool = False) -> bytes:
    """Send raw bytes on a new connection; read the answer until the server closes (bounded)."""
    address = urlsplit(base_url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(request)
        if close_early:
            return b""
        received = b""
        while len(received) < 1_000_000:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def raw_get(target: bytes, extra_headers: bytes = b"") -> bytes:
    return (
        b"GET "
        + target
        + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer demo-user\r\n"
        + extra_headers
        + b"Connection: close\r\n\r\n"
    )


@pytest.mark.parametrize(
    "request_bytes",
    [
        raw_get(Q.encode() + b"&limit=\x01\x7f"),  # control characters not percent-encoded
        raw_get(b"/v1/" + b"x" * 200_000),  # a request line longer than the HTTP parser takes
        raw_get(Q.encode(), b"Authorization2: \x00\r\n"),  # a NUL in a header value
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
    ],
    ids=[
        "raw control characters",
        "200 KB request line",
        "NUL in a header",
        "not HTTP",
        "unknown HTTP version",
    ],
)
def test_requests_the_http_parser_refuses_get_a_plain_4xx(
    live_server: Any, request_bytes: bytes
) -> None:
    # uvicorn refuses these before any application code runs, so its own plain-text 400 is the
    # answer: the envelope cannot be promised here, but a 5xx or a stack trace must never come back.
    answer = raw_exchange(live_server.base_url, request_bytes)
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 4"), answer[:300]
    assert b"Traceback" not in answer


def test_a_truncated_request_leaves_the_server_answering(
    live_server: Any, http: httpx.Client
) -> None:
    head = raw_get(Q.encode(), b"Content-Length: 1000\r\n")
    raw_exchange(live_server.base_url, head + b'{"half": ', close_early=True)
    raw_exchange(live_server.base_url, b"GET /v1/agents/exa", close_early=True)
    assert http.get(Q, headers=AUTH).status_code == 200


def test_agent_id_with_a_newline_is_bad_input_even_though_no_route_matches_it(
    http: httpx.Client,
) -> None:
    response = http.get(
        CASES.replace("example", "x%0Ay") + f"?projectId={EXAMPLE_PROJECT}", headers=AUTH
    )
    assert_envelope(response, 400, "bad-input", "agentId")


def test_agent_id_with_a_slash_is_agent_not_found_even_though_no_route_matches_it(
    http: httpx.Client,
) -> None:
    response = http.get(
        CASES.replace("example", "acme%2Fdrafting") + f"?projectId={EXAMPLE_PROJECT}", headers=AUTH
    )
    assert_envelope(response, 404, "agent-not-found")
