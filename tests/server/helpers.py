"""Requests and assertions shared by the server tests."""

from __future__ import annotations

from typing import Any

import httpx

from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE
from shared import (  # noqa: F401  (re-exported for the server tests)
    AUTH,
    assert_conforms,
    assert_digitalocean_error,
    assert_envelope,
    assert_ratelimit_headers,
    response_schema,
)

OTHER = {"Authorization": "Bearer demo-other"}
MAX_PAGES = 500  # every walk in these tests is bounded


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


def walk(
    client: httpx.Client,
    agent_id: str,
    params: dict[str, Any],
    limits: list[int],
    headers: dict[str, str] = AUTH,
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
