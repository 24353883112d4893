"""`evalmock serve` as a real process: the page's curl works, the targets file loads, workers share
cursors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from evalmock.contract.targets import load_targets

from .helpers import AUTH

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()

CURL_EXAMPLE = (
    "/v1/agents/example/test-set/cases"
    "?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25"
)
CROSS_WORKER_TRIES = 16


def test_the_reference_page_curl_answers(live_server: LiveServer) -> None:
    response = httpx.get(live_server.base_url + CURL_EXAMPLE, headers=AUTH, timeout=10)
    assert response.status_code == 200
    assert len(response.json()["data"]) == 25
    assert response.headers["x-request-id"]


def test_swagger_ui_and_documents_are_served(live_server: LiveServer) -> None:
    for path in ("/v1/ui/", "/v2/ui/"):
        assert httpx.get(live_server.base_url + path, timeout=10).status_code == 200
    for path, base in (("/v1/openapi.json", "/v1"), ("/v2/openapi.json", "/v2")):
        assert (
            httpx.get(live_server.base_url + path, timeout=10).json()["servers"][0]["url"] == base
        )


def test_written_targets_load_and_name_what_the_server_serves(live_server: LiveServer) -> None:
    targets = load_targets(live_server.targets_path)
    assert targets.token == "demo-user" and targets.projects and targets.test_cases
    project = targets.projects[0]
    response = httpx.get(
        f"{live_server.base_url}/v1/agents/{project.agent_id}/test-set/cases",
        params={"projectId": project.project_id, "limit": 1},
        headers=AUTH,
        timeout=10,
    )
    assert response.status_code == 200 and response.json()["data"]
    case = targets.test_cases[0]
    response = httpx.get(
        f"{live_server.base_url}/v2/gen-ai/evaluation_test_cases/{case.uuid}",
        params={"evaluation_test_case_version": case.latest},
        headers=AUTH,
        timeout=10,
    )
    assert response.status_code == 200


def test_the_banner_is_printed(live_server: LiveServer) -> None:
    assert "Demo tokens" in live_server.log() and live_server.base_url in live_server.log()


@pytest.fixture(scope="module")
def two_workers(
    live_server_factory: Callable[..., AbstractContextManager[LiveServer]],
) -> Iterator[LiveServer]:
    with live_server_factory("--workers", "2") as server:
        yield server


def test_two_workers_accept_each_others_cursors(two_workers: LiveServer) -> None:
    # Each request opens a new connection, so the kernel spreads them over both workers; were their
    # cursor keys different, about half of these would be refused.
    first = httpx.get(two_workers.base_url + CURL_EXAMPLE, headers=AUTH, timeout=10)
    cursor = first.json()["nextCursor"]
    statuses = []
    for _ in range(CROSS_WORKER_TRIES):
        with httpx.Client(base_url=two_workers.base_url, timeout=10) as fresh:
            statuses.append(fresh.get(CURL_EXAMPLE + "&cursor=" + cursor, headers=AUTH).status_code)
    assert statuses == [200] * CROSS_WORKER_TRIES
