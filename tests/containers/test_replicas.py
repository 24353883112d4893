"""compose.yaml after `dev.py image`: three replicas behind HAProxy start from local images alone
(nothing pulled), share one world, one cursor key and, through Redis, every session, and survive a
replica's restart."""

from __future__ import annotations

import itertools
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
import yaml

from shared import free_port

from .conftest import ROOT, compose_installed, docker, engine, unique

REPLICAS = 3
LIMIT = 7
MAX_PAGES = 1000  # the walk is bounded
UP_S = 90
PACE_S = 0.03  # between pages, so that the stop and the start fall inside the walk
STOP_AT_PAGE = 15
LIST = {"projectId": "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", "include": "retired"}
CASES_PATH = "/v1/agents/example/test-set/cases"
AUTH = {"Authorization": "Bearer demo-user"}
REPLICA_HEADER = "x-evalmock-replica"


# The variables that name other images; unset, compose.yaml runs what `dev.py image` made.
IMAGE_VARIABLES = ("EVALMOCK_IMAGE", "EVALMOCK_BALANCER_IMAGE", "EVALMOCK_STORE_IMAGE")


def compose(
    env: dict[str, str], *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    command = [*engine.compose(), "--file", str(ROOT / "compose.yaml"), *args]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def images_named(env: dict[str, str]) -> dict[str, str]:
    """Each service's image, as compose resolves compose.yaml in this environment."""
    config = compose(env, "config", timeout=60)
    assert config.returncode == 0, config.stderr
    return {
        name: service["image"]
        for name, service in yaml.safe_load(config.stdout)["services"].items()
    }


def pulled_between(since: float, until: float) -> list[str]:
    """The images the engine pulled in that time, by its `pull` events (a pull that fails fails
    `up` instead)."""
    events = docker(
        "events",
        "--since",
        str(int(since)),
        "--until",
        str(int(until) + 1),
        "--filter",
        "type=image",
        "--filter",
        "event=pull",
        "--format",
        "{{.Actor.ID}}",
    )
    return events.stdout.split()


def image_id(image: str) -> str:
    return docker("image", "inspect", "--format", "{{.Id}}", image).stdout.strip()


@dataclass
class Deployment:
    project: str
    url: str
    env: dict[str, str]
    log: list[str] = field(default_factory=list)
    pulled: list[str] = field(default_factory=list)

    def compose(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return compose(self.env, "--project-name", self.project, *args, timeout=timeout)

    def replica_containers(self) -> list[str]:
        labels = [
            f"label=com.docker.compose.project={self.project}",
            "label=com.docker.compose.service=evalmock",
        ]
        listing = docker(
            "ps",
            "--all",
            *(arg for label in labels for arg in ("--filter", label)),
            "--format",
            "{{.Names}}",
        )
        return sorted(listing.stdout.split())

    def replicas_answering(self, timeout: float) -> set[str]:
        """Who answers /healthz through the balancer, asked until REPLICAS distinct ones have (or
        timeout)."""
        seen: set[str] = set()
        deadline = time.monotonic() + timeout
        while len(seen) < REPLICAS and time.monotonic() < deadline:
            try:
                response = httpx.get(self.url + "/healthz", timeout=2)
                if response.status_code == 200:
                    seen.add(response.headers[REPLICA_HEADER])
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        return seen


@pytest.fixture(scope="module")
def deployment(dev_py_image: str) -> Iterator[Deployment]:
    """`docker compose up -d` as a user runs it after `dev.py image`: compose.yaml's own images."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if name not in IMAGE_VARIABLES}
    env |= {
        "EVALMOCK_PORT": str(port),
        "EVALMOCK_CURSOR_KEY": secrets.token_hex(16),
        "EVALMOCK_ADMIN_TOKEN": secrets.token_hex(16),
    }
    deployed = Deployment(unique("evalmock-replicas"), f"http://127.0.0.1:{port}", env)
    started = time.time()
    up = deployed.compose("up", "--detach")
    deployed.pulled = pulled_between(started, time.time())
    try:
        assert up.returncode == 0, up.stderr
        assert len(deployed.replicas_answering(UP_S)) == REPLICAS, deployed.compose("logs").stdout[
            -3000:
        ]
        yield deployed
    finally:
        deployed.compose("down", "--volumes", "--timeout", "5")


def test_compose_up_after_dev_py_image_starts_from_local_images_and_pulls_nothing(
    deployment: Deployment,
) -> None:
    """No registry is needed: every container runs an image `dev.py image` left here, and the
    engine pulled nothing while `up` ran (where none can be reached, a pull would have failed
    `up`)."""
    assert images_named(deployment.env) == {
        "evalmock": "evalmock:latest",
        "balancer": engine.BALANCER_IMAGE,
        "redis": engine.STORE_IMAGE,
    }
    containers = docker(
        "ps",
        "--all",
        "--quiet",
        "--filter",
        f"label=com.docker.compose.project={deployment.project}",
    ).stdout.split()
    ran = docker(
        "inspect",
        "--format",
        '{{index .Config.Labels "com.docker.compose.service"}} {{.Config.Image}}',
        *containers,
    ).stdout.splitlines()
    assert sorted(ran) == [
        f"balancer {engine.BALANCER_IMAGE}",
        *["evalmock evalmock:latest"] * REPLICAS,
        f"redis {engine.STORE_IMAGE}",
    ]
    assert deployment.pulled == []
    # Debian's HAProxy and Redis from `dev.py engine`, under compose.yaml's names for them
    assert image_id(engine.BALANCER_IMAGE) == image_id(engine.LB_IMAGE)
    assert image_id(engine.STORE_IMAGE) == image_id(engine.REDIS_IMAGE)
    assert httpx.get(deployment.url + "/healthz", timeout=5).status_code == 200


def test_evalmock_balancer_image_still_names_another_balancer() -> None:
    if not compose_installed():
        pytest.skip(
            "no Docker Compose here (python3.11 dev.py engine installs Debian's docker-compose)"
        )
    env = {name: value for name, value in os.environ.items() if name not in IMAGE_VARIABLES}
    assert images_named(env)["balancer"] == engine.BALANCER_IMAGE
    assert images_named({**env, "EVALMOCK_BALANCER_IMAGE": "haproxy:2.6"}) == {
        "evalmock": "evalmock:latest",
        "balancer": "haproxy:2.6",
        "redis": engine.STORE_IMAGE,
    }
    assert images_named({**env, "EVALMOCK_STORE_IMAGE": "redis:7.0"})["redis"] == "redis:7.0"


@dataclass
class Page:
    status: int
    replica: str
    ids: list[str]


def walk(client: httpx.Client, on_page: threading.Event | None = None) -> list[Page]:
    """Every page of the reference page's list at limit=7, each page's nextCursor passed back as
    cursor."""
    pages: list[Page] = []
    cursor = None
    for number in range(MAX_PAGES):
        query = {**LIST, "limit": LIMIT, **({"cursor": cursor} if cursor else {})}
        response = client.get(CASES_PATH, params=query, headers=AUTH)
        body = response.json() if response.status_code == 200 else {}
        pages.append(
            Page(
                response.status_code,
                response.headers.get(REPLICA_HEADER, ""),
                [case["id"] for case in body.get("data", [])],
            )
        )
        if on_page is not None and number == STOP_AT_PAGE:
            on_page.set()
        if response.status_code != 200 or not body.get("hasMore"):
            return pages
        cursor = body["nextCursor"]
        time.sleep(PACE_S)
    raise AssertionError(f"the walk did not end within {MAX_PAGES} pages")


def test_a_walk_through_the_balancer_takes_each_cursor_on_another_replica(
    deployment: Deployment,
) -> None:
    with httpx.Client(base_url=deployment.url, timeout=10) as client:
        pages = walk(client)
    ids = [case_id for page in pages for case_id in page.ids]
    assert [page.status for page in pages if page.status != 200] == []
    assert len(ids) >= 1000 and len(set(ids)) == len(ids)
    assert {page.replica for page in pages} == deployment.replicas_answering(10)
    handovers = sum(
        1 for before, after in itertools.pairwise(pages) if before.replica != after.replica
    )
    # round robin: every cursor was issued by one replica and taken by another
    assert handovers == len(pages) - 1


def test_a_replica_stopped_and_started_mid_walk_costs_no_request(deployment: Deployment) -> None:
    victim = deployment.replica_containers()[1]
    reached = threading.Event()
    restarted: list[float] = []

    def stop_then_start() -> None:
        if reached.wait(timeout=60):
            docker("stop", "--time", "10", victim)
            time.sleep(0.5)
            docker("start", victim)
            restarted.append(time.monotonic())

    chaos = threading.Thread(target=stop_then_start)
    chaos.start()
    with httpx.Client(base_url=deployment.url, timeout=10) as client:
        pages = walk(client, on_page=reached)
    chaos.join(timeout=60)
    finished = time.monotonic()
    ids = [case_id for page in pages for case_id in page.ids]
    assert restarted and restarted[0] < finished, (
        "the replica was not stopped and started inside the walk"
    )
    assert [page.status for page in pages if page.status != 200] == []
    assert len(ids) >= 1000 and len(set(ids)) == len(ids)
    assert len(deployment.replicas_answering(30)) == REPLICAS  # the restarted replica serves again


def test_a_session_created_through_the_balancer_is_served_by_every_replica(
    deployment: Deployment,
) -> None:
    """Through Redis: the session, its queued fault (answered once, and not tried again on another
    replica by the balancer) and its journal, whichever replica each request meets."""
    admin = {"Authorization": f"Bearer {deployment.env['EVALMOCK_ADMIN_TOKEN']}"}
    with httpx.Client(base_url=deployment.url, timeout=10) as client:
        created = client.post("/__evalmock/sessions", json={}, headers=admin)
        assert created.status_code == 201, created.text
        session = created.json()
        faults = f"/__evalmock/sessions/{session['id']}/faults"
        queued = {"api": "test-set", "times": 1, "status": 503, "retryAfter": 2}
        assert client.post(faults, json=queued, headers=admin).status_code == 201
        token = {"Authorization": f"Bearer {session['token']}"}
        answers = [
            client.get(CASES_PATH, params={**LIST, "limit": LIMIT}, headers=token)
            for _ in range(REPLICAS + 1)
        ]
        journal = client.get(f"/__evalmock/sessions/{session['id']}/requests", headers=admin)
    assert [answer.status_code for answer in answers] == [503] + [200] * REPLICAS
    assert answers[0].headers["Retry-After"] == "2"
    assert len({answer.headers[REPLICA_HEADER] for answer in answers}) == REPLICAS
    assert [entry["status"] for entry in journal.json()["requests"]] == [503] + [200] * REPLICAS
