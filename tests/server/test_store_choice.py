"""`serve --store`: `memory` or a Redis URL, each part checked, every refusal naming what is wrong
and never the password; a Redis URL shown anywhere shows `***` for its password."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalmock.exits import USAGE
from evalmock.server.app import create_app
from evalmock.server.sessions import MemoryStore
from evalmock.server.sessions.store_choice import (
    RedisLocation,
    StoreURLError,
    open_store,
    parse_store,
    shown,
)
from evalmock.server.settings import ServerSettings


def test_memory_is_the_in_process_store():
    assert parse_store("memory") is None
    assert isinstance(open_store("memory"), MemoryStore)


@pytest.mark.parametrize(
    ("url", "location"),
    [
        ("redis://redis:6379/0", RedisLocation("redis")),
        ("redis://127.0.0.1", RedisLocation("127.0.0.1")),
        ("redis://redis/3", RedisLocation("redis", db=3)),
        ("redis://h:7000/", RedisLocation("h", 7000)),
        ("REDIS://h:1/15", RedisLocation("h", 1, 15)),
        ("rediss://h:6380/1", RedisLocation("h", 6380, 1, tls=True)),
        ("redis://:s%40cret@h/0", RedisLocation("h", password="s@cret")),
        ("redis://me:pw@h/0", RedisLocation("h", username="me", password="pw")),
        ("redis://[::1]:6379/2", RedisLocation("::1", db=2)),
    ],
)
def test_a_redis_url_is_read_part_by_part(url, location):
    assert parse_store(url) == location


def test_a_redis_store_is_opened_without_connecting():
    store = open_store("redis://127.0.0.1:1/0")  # nothing listens on port 1
    assert type(store).__name__ == "RedisStore"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "neither `memory` nor a URL"),
        ("mem", "neither `memory` nor a URL"),
        ("http://u:hunter2@h/0", "its scheme is 'http'"),
        ("redis://", "names no host"),
        ("redis://:hunter2@/0", "names no host"),
        ("redis://u:hunter2@h:99999/0", "port is not a number from 1 to 65535"),
        ("redis://u:hunter2@h:0/0", "port is not a number from 1 to 65535"),
        ("redis://u:hunter2@h:port/0", "port is not a number from 1 to 65535"),
        ("redis://u:hunter2@h/zero", "a database number"),
        ("redis://u:hunter2@h/-1", "a database number"),
        ("redis://u:hunter2@h/0/1", "a database number"),
        ("redis://u:hunter2@h/99999999999", "a database number"),
        ("redis://u:hunter2@h/0?socket_timeout=60", "no query string"),
        ("redis://u:hunter2@h/0#x", "no query string"),
        ("redis://u:hunter2@h /0", "a space or a control character"),
        ("redis://u:hunter2@h/\x00", "a space or a control character"),
        ("redis://u:hunter2@" + "h" * 3000, "longer than 2048"),
    ],
)
def test_a_store_url_that_cannot_be_used_is_refused_saying_why_without_the_password(url, reason):
    with pytest.raises(StoreURLError) as refused:
        parse_store(url)
    message = str(refused.value)
    assert reason in message and "`memory` or redis://" in message
    assert "hunter2" not in message


@pytest.mark.parametrize(
    ("url", "seen"),
    [
        ("memory", "memory"),
        ("redis://redis", "redis://redis:6379/0"),
        ("redis://:hunter2@redis:6379/0", "redis://:***@redis:6379/0"),
        ("rediss://me:hunter2@redis/4", "rediss://me:***@redis:6379/4"),
        ("redis://me@[::1]/0", "redis://me@[::1]:6379/0"),
    ],
)
def test_a_store_is_shown_without_its_password(url, seen):
    assert shown(url) == seen


@pytest.mark.parametrize(
    ("how", "env"),
    [
        (["--store", "redis://u:hunter2@h/zero"], {}),
        ([], {"EVALMOCK_STORE": "redis://u:hunter2@h/zero"}),
    ],
    ids=["flag", "environment"],
)
def test_serve_refuses_a_store_it_cannot_use_before_it_listens(how, env):
    run = subprocess.run(
        [sys.executable, "-m", "evalmock", "serve", "--port", "0", *how],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == USAGE, run.stderr
    assert "evalmock serve: --store takes" in run.stderr and "a database number" in run.stderr
    assert "hunter2" not in run.stdout + run.stderr and "listening" not in run.stdout.lower()


@pytest.mark.parametrize(("store", "status"), [("memory", 404), ("redis://127.0.0.1:1/0", 503)])
def test_several_workers_have_the_admin_api_only_over_a_shared_store(server_world, store, status):
    """With --workers 2, each process's own store would know only its own sessions: the admin API
    is off (404) over `memory`, and on over Redis (here a Redis that is not there: 503)."""
    settings = ServerSettings(
        seed=server_world.seed, cases=server_world.cases, workers=2, store=store
    )
    with create_app(settings, server_world).test_client(raise_server_exceptions=False) as client:
        answer = client.post("/__evalmock/sessions", json={})
    assert answer.status_code == status, answer.text
    if status == 503:
        assert answer.json()["error"]["code"] == "store-unavailable"
