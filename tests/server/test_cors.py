"""CORS is on by default: preflights pass, and every answer (errors too) exposes our headers;
--no-cors turns it off."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.middleware.cors import CORSMiddleware

from evalmock.server.cors_options import CORS_OPTIONS, ServerCORSMiddleware

from .helpers import AUTH, assert_envelope, cases_path, evaluation_path, example_params

ORIGIN = {"Origin": "http://localhost:5173"}
PREFLIGHT = {
    **ORIGIN,
    "Access-Control-Request-Method": "GET",
    "Access-Control-Request-Headers": "authorization, prefer, x-request-id",
}


def test_preflight_allows_get_with_authorization_and_prefer(client: httpx.Client) -> None:
    response = client.options(cases_path(), params=example_params(), headers=PREFLIGHT)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert "GET" in response.headers["access-control-allow-methods"]
    allowed = response.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "prefer" in allowed


def test_a_public_page_s_preflight_for_the_private_network_is_allowed(client: httpx.Client) -> None:
    response = client.options(
        cases_path(),
        params=example_params(),
        headers={
            **PREFLIGHT,
            "Origin": "https://staging.example.com",
            "Access-Control-Request-Private-Network": "true",
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-private-network"] == "true"


def test_answers_and_errors_expose_request_id_and_retry_after(client: httpx.Client) -> None:
    for response in (
        client.get(cases_path(), params=example_params(limit=1), headers={**AUTH, **ORIGIN}),
        client.get(cases_path(), params=example_params(), headers=ORIGIN),
        client.get(
            cases_path(), params=example_params(), headers={**AUTH, **ORIGIN, "Prefer": "code=503"}
        ),
    ):
        assert response.headers["access-control-allow-origin"] == "*"
        exposed = response.headers["access-control-expose-headers"].lower()
        assert "x-request-id" in exposed and "retry-after" in exposed


def test_gradient_exposes_ratelimit_headers(client: httpx.Client) -> None:
    response = client.get(evaluation_path(), headers={**AUTH, **ORIGIN})
    assert "ratelimit-remaining" in response.headers["access-control-expose-headers"].lower()


def test_no_cors_sends_no_cors_headers_and_refuses_preflight(
    make_client: Callable[..., httpx.Client],
) -> None:
    plain = make_client(cors=False)
    response = plain.get(cases_path(), params=example_params(limit=1), headers={**AUTH, **ORIGIN})
    assert response.status_code == 200 and "access-control-allow-origin" not in response.headers
    assert_envelope(plain.options(cases_path(), headers=PREFLIGHT), 405, "method-not-allowed")


RESPONSE_HEADERS = [
    None,  # a start message without headers
    [(b"content-type", b"application/json")],
    [(b"content-type", b"text/html"), (b"vary", b"Accept-Encoding")],
    [(b"vary", b"Accept"), (b"vary", b"Cookie"), (b"content-length", b"0")],
]
REQUEST_HEADERS = [
    [],
    [(b"origin", b"http://localhost:5173")],
    [(b"host", b"x"), (b"origin", b"null")],
]


async def _answer(
    middleware: type[CORSMiddleware], request: list[Any], response: list[Any] | None
) -> list[Any]:
    shared = list(response) if response is not None else None

    async def leaf(scope: Any, receive: Any, send: Any) -> None:
        start: dict[str, Any] = {"type": "http.response.start", "status": 200}
        if shared is not None:
            start["headers"] = shared
        await send(start)
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/v1/x", "headers": request}
    await middleware(leaf, **CORS_OPTIONS)(scope, None, send)  # type: ignore[arg-type]
    assert shared == response, "the response's own header list was changed in place"
    return sent


@pytest.mark.parametrize("response", RESPONSE_HEADERS)
@pytest.mark.parametrize("request_headers", REQUEST_HEADERS)
def test_the_server_sends_the_headers_starlettes_cors_middleware_sends(
    request_headers: list[Any], response: list[Any] | None
) -> None:
    ours = asyncio.run(_answer(ServerCORSMiddleware, request_headers, response))
    starlettes = asyncio.run(_answer(CORSMiddleware, request_headers, response))
    assert ours == starlettes
    assert any(name == b"vary" and b"Origin" in value for name, value in ours[0]["headers"])
