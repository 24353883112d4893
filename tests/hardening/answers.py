"""Assertions on answers from a live server: documented error bodies, and never a stack trace."""

from __future__ import annotations

from typing import Any

import httpx

import shared
from shared import AUTH  # noqa: F401  (re-exported for the hardening tests)

EXAMPLE_PROJECT = "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"  # as the reference page writes it
CASES = "/v1/agents/example/test-set/cases"
EVALUATION = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"
TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/', "site-packages")


def assert_no_stack_trace(response: httpx.Response) -> None:
    assert response.status_code < 500, f"{response.status_code}: {response.text[:500]}"
    for marker in TRACEBACK_MARKERS:
        assert marker not in response.text, f"a stack trace leaked: {response.text[:500]}"


def assert_envelope(
    response: httpx.Response, status: int, code: str, parameter: str | None = None
) -> dict[str, Any]:
    """The test-set envelope, valid against the document, naming `parameter` when given; no stack
    trace."""
    assert_no_stack_trace(response)
    error = shared.assert_envelope(response, status, code)
    if parameter is not None:
        assert error["details"].get("parameter") == parameter, error
        assert parameter in error["message"], error
    return error


def assert_digitalocean_error(
    response: httpx.Response, status: int, error_id: str
) -> dict[str, Any]:
    """DigitalOcean's error body, valid against the document, with rate-limit headers; no stack
    trace."""
    assert_no_stack_trace(response)
    return shared.assert_digitalocean_error(response, status, error_id)
