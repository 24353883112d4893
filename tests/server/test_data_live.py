"""`evalmock serve --data FILE --workers 2` as a real process: every worker serves the same user
data, accepts the others' cursors, and picks up a change to the file."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from data_builders import AGENT, PROJECT, case, shop, write
from evalmock.contract.targets import load_targets

from .helpers import AUTH

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()
FRESH_CONNECTIONS = 16  # each on a new connection, so the kernel spreads them over both workers
RELOAD_TIMEOUT_S = 20.0  # a bound, not a measurement


@pytest.fixture(scope="module")
def shop_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("data") / "shop.yaml", shop(8))


@pytest.fixture(scope="module")
def two_workers(
    live_server_factory: Callable[..., AbstractContextManager[LiveServer]], shop_file: Path
) -> Iterator[LiveServer]:
    with live_server_factory("--workers", "2", "--data", str(shop_file), "--data-only") as server:
        yield server


def on_fresh_connections(server: LiveServer, **params: Any) -> list[httpx.Response]:
    responses = []
    for _ in range(FRESH_CONNECTIONS):
        with httpx.Client(base_url=server.base_url, timeout=10) as fresh:
            responses.append(
                fresh.get(
                    f"/v1/agents/{AGENT}/test-set/cases",
                    params={"projectId": PROJECT, **params},
                    headers=AUTH,
                )
            )
    return responses


def test_every_worker_serves_the_same_user_data_and_takes_the_others_cursors(
    two_workers: LiveServer,
) -> None:
    first = httpx.get(
        f"{two_workers.base_url}/v1/agents/{AGENT}/test-set/cases",
        params={"projectId": PROJECT, "limit": 2},
        headers=AUTH,
        timeout=10,
    ).json()
    answers = on_fresh_connections(two_workers, limit=2, cursor=first["nextCursor"])
    assert [r.status_code for r in answers] == [200] * FRESH_CONNECTIONS
    # (each nextCursor seals its own issue time)
    assert len({str(r.json()["data"]) for r in answers}) == 1
    assert [p.agent_id for p in load_targets(two_workers.targets_path).projects] == [AGENT]
    assert "Your data" in two_workers.log()


def test_every_worker_picks_up_a_changed_file(two_workers: LiveServer, shop_file: Path) -> None:
    cursor = httpx.get(
        f"{two_workers.base_url}/v1/agents/{AGENT}/test-set/cases",
        params={"projectId": PROJECT, "limit": 1},
        headers=AUTH,
        timeout=10,
    ).json()["nextCursor"]
    document = shop(8)
    document["testSet"][0]["cases"].append(case("case-new", "2026-12-01T00:00:00Z"))
    write(shop_file, document)
    deadline = time.monotonic() + RELOAD_TIMEOUT_S
    while {r.json()["data"][0]["id"] for r in on_fresh_connections(two_workers, limit=1)} != {
        "case-new"
    }:
        assert time.monotonic() < deadline, f"not every worker reloaded within {RELOAD_TIMEOUT_S} s"
        time.sleep(0.1)
    stale = on_fresh_connections(two_workers, limit=1, cursor=cursor)
    assert {(r.status_code, r.json()["error"]["details"]["parameter"]) for r in stale} == {
        (400, "cursor")
    }
