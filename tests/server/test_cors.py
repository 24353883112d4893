"""CORS is on by default: preflights pass, and every answer (errors too) exposes our headers; --no-cors turns it off."""

from __future__ import annotations

from collections.abc import Callable

import httpx

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


def test_answers_and_errors_expose_request_id_and_retry_after(client: httpx.Client) -> None:
    for response in (
        client.get(cases_path(), params=example_params(limit=1), headers={**AUTH, **ORIGIN}),
        client.get(cases_path(), params=example_params(), headers=ORIGIN),
        client.get(cases_path(), params=example_params(), headers={**AUTH, **ORIGIN, "Prefer": "code=503"}),
    ):
        assert response.headers["access-control-allow-origin"] == "*"
        exposed = response.headers["access-control-expose-headers"].lower()
        assert "x-request-id" in exposed and "retry-after" in exposed


def test_gradient_exposes_ratelimit_headers(client: httpx.Client) -> None:
    response = client.get(evaluation_path(), headers={**AUTH, **ORIGIN})
    assert "ratelimit-remaining" in response.headers["access-control-expose-headers"].lower()


def test_no_cors_sends_no_cors_headers_and_refuses_preflight(make_client: Callable[..., httpx.Client]) -> None:
    plain = make_client(cors=False)
    response = plain.get(cases_path(), params=example_params(limit=1), headers={**AUTH, **ORIGIN})
    assert response.status_code == 200 and "access-control-allow-origin" not in response.headers
    assert_envelope(plain.options(cases_path(), headers=PREFLIGHT), 405, "method-not-allowed")
