"""Requests and assertions shared by the server tests."""

from __future__ import annotations

from typing import Any

import httpx

from evalmock.contract.documents import GRADIENT, TEST_SET, ApiDocument
from evalmock.contract.operations import deref, iter_operations
from evalmock.contract.schemas import component_schema, inline_refs, schema_errors
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE

AUTH = {"Authorization": "Bearer demo-user"}
OTHER = {"Authorization": "Bearer demo-other"}
MAX_PAGES = 500  # every walk in these tests is bounded
ERROR_SCHEMAS = {TEST_SET.name: "ErrorEnvelope", GRADIENT.name: "error"}


class FrozenClock:
    """A clock for cursors that only moves when a test moves it."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def cases_path(agent_id: str = EXAMPLE_AGENT) -> str:
    return f"/v1/agents/{agent_id}/test-set/cases"


def evaluation_path(uuid: str = EXAMPLE_TEST_CASE) -> str:
    return f"/v2/gen-ai/evaluation_test_cases/{uuid}"


def example_params(**extra: Any) -> dict[str, Any]:
    return {"projectId": EXAMPLE_PROJECT, **extra}


def response_schema(api: ApiDocument, status: int) -> dict[str, Any]:
    """The JSON schema the document gives the (only) operation's response with this status (or default)."""
    spec = api.spec
    ((_, _, operation),) = iter_operations(spec)
    responses = operation["responses"]
    declared = responses.get(str(status)) or responses.get("default")
    if declared is None:  # a status the operation does not list (405, an unknown route): the error schema
        return component_schema(spec, ERROR_SCHEMAS[api.name])
    return inline_refs(spec, deref(spec, declared)["content"]["application/json"]["schema"])


def assert_conforms(api: ApiDocument, response: httpx.Response) -> None:
    """The body is valid against the document's schema for its status."""
    errors = [e.message for e in schema_errors(api.spec, response_schema(api, response.status_code), response.json())]
    assert not errors, f"{response.status_code} body does not conform to {api.name}: {errors[:3]}"


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """A test-set error: our envelope with this status and code, its requestId equal to X-Request-Id."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["details"], dict)
    assert error["message"]
    assert error["requestId"] == response.headers["x-request-id"]
    assert_conforms(TEST_SET, response)
    return error


def assert_ratelimit_headers(response: httpx.Response) -> None:
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
        assert response.headers.get(name, "").isdigit(), f"{name} missing or not an integer: {response.headers}"


def assert_digitalocean_error(response: httpx.Response, status: int, error_id: str) -> dict[str, Any]:
    """A /v2 error: DigitalOcean's body with this status and id, rate-limit headers, request ids equal."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == error_id, body
    assert body["message"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert_ratelimit_headers(response)
    assert_conforms(GRADIENT, response)
    return body


def walk(
    client: httpx.Client, agent_id: str, params: dict[str, Any], limits: list[int], headers: dict[str, str] = AUTH
) -> list[dict[str, Any]]:
    """Every page from the first, following nextCursor and cycling through `limits`."""
    pages: list[dict[str, Any]] = []
    cursor = None
    for step in range(MAX_PAGES):
        query = {**params, "limit": limits[step % len(limits)]}
        if cursor is not None:
            query["cursor"] = cursor
        response = client.get(cases_path(agent_id), params=query, headers=headers)
        assert response.status_code == 200, response.text
        page = response.json()
        pages.append(page)
        assert page["hasMore"] == ("nextCursor" in page)
        if not page["hasMore"]:
            return pages
        cursor = page["nextCursor"]
    raise AssertionError(f"no last page within {MAX_PAGES} pages")
