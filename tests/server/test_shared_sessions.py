"""Two `evalmock serve --store redis://...` processes over one real redis-server: a session created
through one replica is paged, faulted, journaled and judged through the other; while Redis is away,
session requests answer 503 store-unavailable and the default world is served as ever; once Redis is
back, so are the sessions."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import LiveServer, start_server, stop_server
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from redis_server import RedisServer, needs_redis, running_redis

from .helpers import cases_path

pytestmark = needs_redis

ADMIN = "/__evalmock"
PASSWORD = "s3cret-of-this-redis"
# a world other than the mock's own, which each replica builds from the session's spec
SESSION = {"seed": 7, "cases": 40}
LIST = {"projectId": EXAMPLE_PROJECT, "limit": 5}
AS_IT_CAME = "client_sends_the_cursor_as_it_came"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with running_redis(tmp_path_factory.mktemp("redis"), password=PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def replicas(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two mock processes sharing the Redis, named by EVALMOCK_STORE (out of the process list)."""
    env = {**os.environ, "EVALMOCK_STORE": redis_server.url}
    started: list[LiveServer] = []
    try:
        for name in ("one", "two"):
            started.append(start_server(tmp_path_factory.mktemp(f"replica-{name}"), env=env))
        yield started[0], started[1]
    finally:
        for server in started:
            stop_server(server)


@pytest.fixture
def clients(
    replicas: tuple[LiveServer, LiveServer], redis_server: RedisServer
) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with (
        httpx.Client(base_url=replicas[0].base_url, timeout=10) as one,
        httpx.Client(base_url=replicas[1].base_url, timeout=10) as two,
    ):
        yield one, two
    # running again for the next test, whatever this one did to it
    if redis_server.process is None:
        redis_server.start()
    else:
        redis_server.resume()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client: httpx.Client, body: dict[str, Any] | None = None) -> tuple[str, str]:
    answer = client.post(f"{ADMIN}/sessions", json=body if body is not None else SESSION)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"], answer.json()["token"]


def cases(client: httpx.Client, token: str, **params: Any) -> httpx.Response:
    return client.get(cases_path(EXAMPLE_AGENT), params={**LIST, **params}, headers=bearer(token))


def test_a_session_created_through_one_replica_is_paged_through_the_other(clients):
    one, two = clients
    _, token = create(one)
    first = cases(one, token)
    assert first.status_code == 200, first.text
    second = cases(two, token, cursor=first.json()["nextCursor"])
    assert second.status_code == 200, second.text
    # the same session world on both: page 2 goes on where page 1 stopped, as one replica pages it
    alone = cases(one, token, cursor=first.json()["nextCursor"])
    assert second.json()["data"] == alone.json()["data"]
    firsts = {case["id"] for case in first.json()["data"]}
    assert firsts and not firsts & {case["id"] for case in second.json()["data"]}
    # and that world is the session's (seed 7), not the mock's own (seed 42)
    assert cases(one, "demo-user").json()["data"] != first.json()["data"]


def test_a_fault_queued_through_one_replica_answers_through_the_other_once(clients):
    one, two = clients
    session_id, token = create(one)
    queued = {"api": "test-set", "times": 1, "status": 503, "retryAfter": 3}
    fault = one.post(f"{ADMIN}/sessions/{session_id}/faults", json=queued)
    assert fault.status_code == 201, fault.text
    busy = cases(two, token)
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "3"
    assert busy.json()["error"]["code"] == "database-busy"
    assert cases(one, token).status_code == 200  # used up: once, across both
    assert two.get(f"{ADMIN}/sessions/{session_id}/faults").json() == {"faults": []}
    [entry] = [
        e
        for e in two.get(f"{ADMIN}/sessions/{session_id}/requests").json()["requests"]
        if e["status"] == 503
    ]
    assert entry["shapedBy"] == f"fault:{fault.json()['id']}"


def test_a_fault_for_the_second_page_knows_a_cursor_the_other_replica_gave(clients):
    one, two = clients
    session_id, token = create(one)
    queued = {"api": "test-set", "times": 1, "status": 503, "retryAfter": 1, "match": {"page": 2}}
    assert one.post(f"{ADMIN}/sessions/{session_id}/faults", json=queued).status_code == 201
    first = cases(two, token)
    assert first.status_code == 200
    assert cases(one, token, cursor=first.json()["nextCursor"]).status_code == 503
    assert cases(two, token, cursor=first.json()["nextCursor"]).status_code == 200


def walked(one: httpx.Client, two: httpx.Client) -> str:
    """A session whose three requests went through both replicas: two pages, then a 400."""
    session_id, token = create(two)
    first = cases(one, token)
    cases(two, token, cursor=first.json()["nextCursor"])
    cases(one, token, limit="many")
    return session_id


def test_the_journal_and_the_session_read_the_same_through_either(clients):
    one, two = clients
    session_id = walked(one, two)
    for path in ("requests", "requests/count", ""):
        url = f"{ADMIN}/sessions/{session_id}/{path}".rstrip("/")
        through_one, through_two = one.get(url), two.get(url)
        assert through_one.status_code == through_two.status_code == 200, through_one.text
        assert through_one.json() == through_two.json(), path
    journal = one.get(f"{ADMIN}/sessions/{session_id}/requests").json()["requests"]
    assert [(e["status"], e.get("page")) for e in journal] == [(200, 1), (200, 2), (400, 1)]
    assert one.get(f"{ADMIN}/sessions/{session_id}/requests/count").json() == {"count": 3}
    assert two.get(f"{ADMIN}/sessions/{session_id}").json()["requests"] == 3


def test_the_verdict_judges_the_traffic_of_both_replicas_the_same_through_either(clients):
    one, two = clients
    session_id = walked(one, two)
    url = f"{ADMIN}/sessions/{session_id}/verdict"
    through_one, through_two = one.get(url), two.get(url)
    assert through_one.status_code == through_two.status_code == 200, through_one.text
    assert through_one.json() == through_two.json()
    verdict = through_one.json()
    assert verdict["judged"] == 3
    # the cursor replica one gave and replica two took is one the session gave: kept, not broken
    [cursors] = [rule for rule in verdict["rules"] if rule["rule"] == AS_IT_CAME]
    assert (cursors["kept"], cursors["broken"]) == (1, 0), cursors


def test_a_cursor_no_replica_gave_is_a_violation_whichever_replica_took_it(clients):
    one, two = clients
    session_id, token = create(one)
    given = cases(one, token).json()["nextCursor"]
    cases(two, token, cursor=given[:-2] + ("AA" if not given.endswith("AA") else "BB"))
    verdict = two.get(f"{ADMIN}/sessions/{session_id}/verdict").json()
    assert verdict["verdict"] == "VIOLATIONS", verdict
    assert AS_IT_CAME in {finding["rule"] for finding in verdict["findings"]}


def test_a_session_deleted_through_one_replica_is_gone_through_the_other(clients):
    one, two = clients
    session_id, token = create(one)
    assert cases(two, token).status_code == 200
    assert two.delete(f"{ADMIN}/sessions/{session_id}").status_code == 204
    assert cases(one, token).status_code == 401
    assert one.get(f"{ADMIN}/sessions/{session_id}").status_code == 404


def test_redis_away_answers_sessions_503_serves_the_default_world_and_recovers(
    clients, replicas, redis_server
):
    redis = redis_server
    one, two = clients
    session_id, token = create(one)
    default = cases(one, "demo-user")
    redis.pause()
    try:
        answer = cases(two, token)
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "store-unavailable"
        assert "Retry-After" in answer.headers
        for admin in (
            two.get(f"{ADMIN}/sessions/{session_id}"),
            one.post(f"{ADMIN}/sessions", json={}),
        ):
            assert admin.status_code == 503, admin.text
            assert admin.json()["error"]["code"] == "store-unavailable"
        for client in (one, two):
            assert cases(client, "demo-user").json()["data"] == default.json()["data"]
            assert client.get("/healthz").status_code == 200
    finally:
        redis.resume()
    assert cases(two, token).status_code == 200  # the same Redis again: the session is there
    redis.kill()
    assert cases(one, token).status_code == 503
    redis.start()  # an empty Redis (nothing is saved): that session is gone, new ones work
    assert cases(one, token).status_code == 401
    _, again = create(two)
    assert cases(one, again).status_code == 200
    logs = [server.log() for server in replicas]
    assert all("does not answer" in log and "answers again" in log for log in logs), logs
    assert all(PASSWORD not in log and ":***@127.0.0.1" in log for log in logs)


def test_a_replica_started_before_redis_serves_and_takes_sessions_once_redis_is_up(tmp_path):
    """As compose or Kubernetes may start them: the mock starts, says Redis does not answer, serves
    the default world, answers sessions 503 until Redis is up, then takes them."""
    (tmp_path / "redis").mkdir()
    (tmp_path / "replica").mkdir()
    later = RedisServer(tmp_path / "redis")
    env = {**os.environ, "EVALMOCK_STORE": later.url}
    replica = start_server(tmp_path / "replica", env=env)
    try:
        with httpx.Client(base_url=replica.base_url, timeout=10) as client:
            assert client.post(f"{ADMIN}/sessions", json={}).status_code == 503
            assert cases(client, "demo-user").status_code == 200
            later.start()
            try:
                _, token = create(client)
                assert cases(client, token).status_code == 200
            finally:
                later.kill()
        assert "does not answer" in replica.log() and "answers again" in replica.log()
    finally:
        stop_server(replica)
