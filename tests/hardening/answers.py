"""Assertions on answers from a live server: documented error bodies, and never a stack trace."""

from __future__ import annotations

from typing import Any

import httpx

from evalmock.contract.documents import GRADIENT, TEST_SET
from evalmock.contract.schemas import component_schema, schema_errors

EXAMPLE_PROJECT = "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"  # as the reference page writes it
CASES = "/v1/agents/example/test-set/cases"
EVALUATION = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"
AUTH = {"Authorization": "Bearer demo-user"}
TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/', "site-packages")


def assert_no_stack_trace(response: httpx.Response) -> None:
    assert response.status_code < 500, f"{response.status_code}: {response.text[:500]}"
    for marker in TRACEBACK_MARKERS:
        assert marker not in response.text, f"a stack trace leaked: {response.text[:500]}"


def assert_envelope(response: httpx.Response, status: int, code: str, parameter: str | None = None) -> dict[str, Any]:
    """The test-set envelope, valid against the document, its requestId equal to X-Request-Id."""
    assert_no_stack_trace(response)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    errors = [e.message for e in schema_errors(TEST_SET.spec, component_schema(TEST_SET.spec, "ErrorEnvelope"), body)]
    assert not errors, errors
    error = body["error"]
    assert error["code"] == code, error
    assert isinstance(error["details"], dict), error
    assert error["requestId"] == response.headers["x-request-id"]
    if parameter is not None:
        assert error["details"].get("parameter") == parameter, error
        assert parameter in error["message"], error
    return error


def assert_digitalocean_error(response: httpx.Response, status: int, error_id: str) -> dict[str, Any]:
    """DigitalOcean's error body, valid against the document, with the integer rate-limit headers."""
    assert_no_stack_trace(response)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    errors = [e.message for e in schema_errors(GRADIENT.spec, component_schema(GRADIENT.spec, "error"), body)]
    assert not errors, errors
    assert body["id"] == error_id, body
    assert body["request_id"] == response.headers["x-request-id"]
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
        assert response.headers.get(name, "").isdigit(), f"{name}: {response.headers.get(name)!r}"
    return body
