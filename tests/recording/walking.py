"""A browser-like client of both APIs (a bearer token, a cookie, an Origin), the walks a list page
makes through `nextCursor`, and the replay served on a free 127.0.0.1 port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from harness.serving import serving

MAX_PAGES = 100  # a walk's bound: the lists walked here have at most a few dozen pages
MOCK_TOKEN = "demo-user"  # a token `evalmock serve` accepts
LIST = "/v1/agents/{agent}/test-set/cases"
TEST_CASE = "/v2/gen-ai/evaluation_test_cases/{uuid}"


def browser(base_url: str, token: str, cookie: str = "") -> httpx.Client:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json",
        "Origin": "http://app.localhost:5173",
        "Referer": "http://app.localhost:5173/cases",
    }
    if cookie:
        headers["Cookie"] = cookie
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)


def walk(
    client: httpx.Client, agent: str, project: str, *, pages: int = MAX_PAGES, **filters: Any
) -> list[dict[str, Any]]:
    """The cases of a list, page after page as a "Load more" button fetches them (at most `pages`
    pages)."""
    cases: list[dict[str, Any]] = []
    params: dict[str, Any] = {"projectId": project, **filters}
    for _ in range(pages):
        response = client.get(LIST.format(agent=agent), params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        cases += body["data"]
        if not body["hasMore"]:
            break
        params = {**params, "cursor": body["nextCursor"]}
    return cases


def fetch_test_case(client: httpx.Client, uuid: str, version: int | None = None) -> httpx.Response:
    params = {} if version is None else {"evaluation_test_case_version": version}
    return client.get(TEST_CASE.format(uuid=uuid), params=params)


@contextmanager
def replaying(data: Path) -> Iterator[str]:
    """`evalmock serve --data DATA --data-only`, served in this process; yields its base URL."""
    settings = ServerSettings(data_files=(str(data),), data_only=True, validate_responses=True)
    with serving(create_app(settings), lifespan="on") as base_url:
        yield base_url
