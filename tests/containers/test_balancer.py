"""deploy/haproxy/haproxy.cfg run by a real HAProxy (Debian's package, no Docker) in front of two
`evalmock serve --store redis://...` processes: a session's queued 503 reaches the test once, and is
not tried again on the other replica; a request that meets a replica gone is still tried on the
other, a session's included.

The shipped file finds the replicas by Docker's DNS; here it is run with its servers named as
127.0.0.1 ports instead, everything else as shipped."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from conftest import LiveServer, start_server, stop_server
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from redis_server import needs_redis, running_redis
from shared import free_port, listening, stop_process

from .conftest import ROOT

HAPROXY = shutil.which("haproxy", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
pytestmark = [
    needs_redis,
    pytest.mark.skipif(
        HAPROXY is None,
        reason="haproxy is not installed (Debian's package: apt-get install haproxy)",
    ),
]
CASES = f"/v1/agents/{EXAMPLE_AGENT}/test-set/cases"
LIST = {"projectId": EXAMPLE_PROJECT, "limit": 5}
REPLICA_HEADER = "x-evalmock-replica"
READY_S = 15.0


def local_config(port: int, replicas: list[LiveServer]) -> str:
    """The shipped configuration, listening on 127.0.0.1:`port`, its servers those `replicas`."""
    text = (ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    servers = "".join(
        f"    server evalmock{number} {replica.base_url.removeprefix('http://')}\n"
        for number, replica in enumerate(replicas, start=1)
    )
    for pattern, replacement in (
        (r"resolvers docker\n(?:    .*\n)+", ""),
        (r"bind :8080\n", f"bind 127.0.0.1:{port}\n"),
        (r" resolvers docker init-addr libc,none\n", "\n"),
        (r"    server-template evalmock .*\n", servers),
        (r"log stdout format", "log stderr format"),
    ):
        text, count = re.subn(pattern, replacement, text)
        assert count == 1, f"haproxy.cfg no longer has {pattern!r}: update this test"
    return text


@dataclass
class Balanced:
    url: str
    replicas: list[LiveServer]


@pytest.fixture(scope="module")
def balancer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Balanced]:
    folder = tmp_path_factory.mktemp("balancer")
    with running_redis(tmp_path_factory.mktemp("balancer-redis")) as redis:
        env = {**os.environ, "EVALMOCK_STORE": redis.url}
        replicas: list[LiveServer] = []
        process = None
        try:
            for name in ("one", "two"):
                replicas.append(start_server(tmp_path_factory.mktemp(f"replica-{name}"), env=env))
            port = free_port()
            config = folder / "haproxy.cfg"
            config.write_text(local_config(port, replicas))
            assert HAPROXY is not None
            checked = subprocess.run(
                [HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30
            )
            assert checked.returncode == 0, checked.stdout + checked.stderr
            process = subprocess.Popen(
                [HAPROXY, "-db", "-f", str(config)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + READY_S
            while not listening(port) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert listening(port), "haproxy did not listen"
            yield Balanced(f"http://127.0.0.1:{port}", replicas)
        finally:
            if process is not None:
                stop_process(process)
            for replica in replicas:
                stop_server(replica)


def replicas_seen(client: httpx.Client, count: int) -> set[str]:
    """The replicas that answer /healthz through the balancer (both, once its checks pass)."""
    seen: set[str] = set()
    deadline = time.monotonic() + READY_S
    while len(seen) < count and time.monotonic() < deadline:
        answer = client.get("/healthz")
        if answer.status_code == 200:
            seen.add(answer.headers[REPLICA_HEADER])
        time.sleep(0.05)
    return seen


def test_a_sessions_queued_503_reaches_the_app_once_through_the_balancer(balancer: Balanced):
    with httpx.Client(base_url=balancer.url, timeout=10) as client:
        assert len(replicas_seen(client, 2)) == 2
        created = client.post("/__evalmock/sessions", json={})
        assert created.status_code == 201, created.text
        session = created.json()
        fault = {"api": "test-set", "times": 1, "status": 503, "retryAfter": 2}
        assert client.post(f"/__evalmock/sessions/{session['id']}/faults", json=fault).is_success
        token = {"Authorization": f"Bearer {session['token']}"}
        answers = [client.get(CASES, params=LIST, headers=token) for _ in range(3)]
        journal = client.get(f"/__evalmock/sessions/{session['id']}/requests").json()
    assert [answer.status_code for answer in answers] == [503, 200, 200]
    assert answers[0].headers["Retry-After"] == "2"
    assert [entry["status"] for entry in journal["requests"]] == [503, 200, 200]


def test_a_request_that_meets_a_replica_gone_is_tried_on_the_other(balancer: Balanced):
    """Sent before the balancer's check has seen the replica go: half would meet it, and each is
    tried again on the other (it never reached a replica, so nothing is repeated)."""
    with httpx.Client(base_url=balancer.url, timeout=10) as client:
        assert len(replicas_seen(client, 2)) == 2
        created = client.post("/__evalmock/sessions", json={})
        assert created.status_code == 201, created.text
        token = {"Authorization": f"Bearer {created.json()['token']}"}
        stop_server(balancer.replicas[0])  # runs last in this module: its replica stays gone
        statuses = [
            client.get(CASES, params=LIST, headers=headers).status_code
            for headers in (token, {"Authorization": "Bearer demo-user"}) * 3
        ]
    assert statuses == [200] * 6
