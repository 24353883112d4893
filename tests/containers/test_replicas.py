"""compose.yaml: three replicas behind HAProxy share one world and one cursor key, and survive a
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

from shared import free_port

from .conftest import ROOT, docker, engine, unique

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


def balancer_image() -> str | None:
    """The balancer: EVALMOCK_BALANCER_IMAGE, else the one `dev.py engine` makes, else the official
    one if here."""
    candidates = [os.environ.get("EVALMOCK_BALANCER_IMAGE"), engine.LB_IMAGE, "haproxy:2.6"]
    return next((image for image in candidates if image and engine.image_exists(image)), None)


@dataclass
class Deployment:
    project: str
    url: str
    env: dict[str, str]
    log: list[str] = field(default_factory=list)

    def compose(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        command = [
            *engine.compose(),
            "--project-name",
            self.project,
            "--file",
            str(ROOT / "compose.yaml"),
            *args,
        ]
        return subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )

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
def deployment(image: str) -> Iterator[Deployment]:
    lb_image = balancer_image()
    if lb_image is None:
        pytest.skip(
            f"no balancer image here: neither {engine.LB_IMAGE} (python3.11 dev.py engine) nor "
            "haproxy:2.6"
        )
    port = free_port()
    env = {
        **os.environ,
        "EVALMOCK_IMAGE": image,
        "EVALMOCK_BALANCER_IMAGE": lb_image,
        "EVALMOCK_PORT": str(port),
        "EVALMOCK_CURSOR_KEY": secrets.token_hex(16),
    }
    deployed = Deployment(unique("evalmock-replicas"), f"http://127.0.0.1:{port}", env)
    up = deployed.compose("up", "--detach")
    try:
        assert up.returncode == 0, up.stderr
        assert len(deployed.replicas_answering(UP_S)) == REPLICAS, deployed.compose("logs").stdout[
            -3000:
        ]
        yield deployed
    finally:
        deployed.compose("down", "--volumes", "--timeout", "5")


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
