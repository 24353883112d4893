"""The image: non-root, the reference page's request answers 200, its own `contract` says CONFORMS
(without warnings), SIGTERM stops it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from data_builders import AGENT, PROJECT, case, data, write
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from shared import free_port

from .conftest import docker, unique

REFERENCE_REQUEST = (
    "/v1/agents/example/test-set/cases"
    "?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25"
)
AUTH = {"Authorization": "Bearer demo-user"}
# One case of its own list, from valid.py's builder: what a user's data file holds.
DATA_CASE = case("case-refund-crash", "2026-11-19T16:20:00Z")
READY_S = 60
HEALTHY_S = 40


def wait_for_200(
    url: str, headers: dict[str, str] | None = None, timeout: float = READY_S
) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = httpx.get(url, headers=headers, timeout=2)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"expected 200 from {url} within {timeout} s")
        time.sleep(0.1)


class Served:
    def __init__(self, name: str, port: int) -> None:
        self.name, self.port = name, port
        self.url = f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def served(image: str) -> Iterator[Served]:
    """The image's default command, published on a free loopback port, /work on a volume of its
    own."""
    name, port = unique("evalmock-test"), free_port()
    docker(
        "run",
        "--detach",
        "--name",
        name,
        "--publish",
        f"127.0.0.1:{port}:8080",
        "--env",
        f"EVALMOCK_PUBLIC_URL=http://127.0.0.1:{port}",
        "--volume",
        f"{name}:/work",
        image,
    )
    try:
        yield Served(name, port)
    finally:
        docker("rm", "--force", "--volumes", name, check=False)
        docker("volume", "rm", "--force", name, check=False)


def test_image_runs_evalmock_as_a_non_root_user_on_8080(image: str) -> None:
    config = json.loads(docker("image", "inspect", image).stdout)[0]["Config"]
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["evalmock"]
    assert config["Cmd"][:5] == ["serve", "--host", "0.0.0.0", "--port", "8080"]
    assert "8080/tcp" in config["ExposedPorts"]
    assert config["Healthcheck"]["Test"][-3:] == ["python3", "-m", "evalmock.healthcheck"]
    assert (
        docker(
            "run", "--rm", "--entrypoint", "sh", image, "-c", "command -v curl wget || true"
        ).stdout
        == ""
    )


def test_the_pip_ca_bundle_lands_in_no_layer(image: str) -> None:
    history = docker("history", "--no-trunc", "--format", "{{.CreatedBy}}", image).stdout
    assert "BEGIN CERTIFICATE" not in history
    config = json.loads(docker("image", "inspect", image).stdout)[0]["Config"]
    assert not [env for env in config["Env"] if env.startswith(("PIP_CERT=", "SSL_CERT_FILE="))]
    assert (
        docker(
            "run", "--rm", "--entrypoint", "sh", image, "-c", "ls -A /run/secrets 2>/dev/null; true"
        ).stdout
        == ""
    )


def test_the_reference_page_request_answers_200(served: Served) -> None:
    body = wait_for_200(served.url + REFERENCE_REQUEST, AUTH).json()
    assert len(body["data"]) == 25 and body["hasMore"] is True


def test_the_image_serves_the_world_a_native_start_serves(served: Served) -> None:
    """The image leaves out Faker's non-English locales and the extensions' debug symbols: the world
    it draws is still the one `evalmock serve` draws here from the same seed, case for case (cursors
    aside: each start makes its own key)."""
    native = TestClient(create_app(ServerSettings())).get(REFERENCE_REQUEST, headers=AUTH).json()
    contained = wait_for_200(served.url + REFERENCE_REQUEST, AUTH).json()
    assert contained["data"] == native["data"]


def test_a_container_starts_from_the_start_cache_made_at_build(image: str) -> None:
    """The default seed's word pools and the fixtures' verdict come with the image, readable by its
    user: a start neither draws the pools with Faker nor validates the fixtures again."""
    script = (
        "import sys; from evalmock.server.live_world import build_world; "
        "from evalmock.server.settings import ServerSettings; build_world(ServerSettings()); "
        "print(sorted(name for name in ('faker', 'openapi_schema_validator') if name in "
        "sys.modules))"
    )
    assert (
        docker("run", "--rm", "--entrypoint", "python3", image, "-c", script).stdout.strip() == "[]"
    )


def test_the_banner_names_the_published_url(served: Served) -> None:
    wait_for_200(served.url + "/healthz")
    logs = docker("logs", served.name).stdout
    assert f"http://127.0.0.1:{served.port}/v1/ui/" in logs
    assert "Swagger UI http://0.0.0.0" not in logs


def health(name: str) -> str:
    """The container's health once it is decided (or still `starting` after HEALTHY_S)."""
    deadline = time.monotonic() + HEALTHY_S
    status = ""
    while time.monotonic() < deadline:
        status = docker("inspect", "--format", "{{.State.Health.Status}}", name).stdout.strip()
        if status in ("healthy", "unhealthy"):
            break
        time.sleep(0.5)
    return status


def test_the_healthcheck_turns_healthy_without_curl(served: Served) -> None:
    assert health(served.name) == "healthy"


def test_a_proxy_container_is_healthy_by_its_own_port_whatever_its_upstream(image: str) -> None:
    """The same image running `evalmock proxy` (port 8081) is healthy while it listens, though its
    upstream is down: the check asks the running command, not serve's port."""
    name = unique("evalmock-test-proxy")
    docker(
        "run",
        "--detach",
        "--name",
        name,
        image,
        "proxy",
        "--host",
        "0.0.0.0",
        "--upstream",
        "http://127.0.0.1:9",
    )
    try:
        assert health(name) == "healthy"
    finally:
        docker("rm", "--force", name, check=False)


def test_the_images_own_contract_command_says_conforms(image: str, served: Served) -> None:
    wait_for_200(served.url + "/healthz")
    # In the mock's network namespace, with its /work (where it wrote targets.toml).
    result = docker(
        "run",
        "--rm",
        "--network",
        f"container:{served.name}",
        "--volume",
        f"{served.name}:/work",
        image,
        "contract",
        "--base-url",
        "http://127.0.0.1:8080",
        "--targets",
        "/work/targets.toml",
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "CONFORMS" in result.stdout
    # its cache is the image's, read-only: Hypothesis's go elsewhere
    assert "HypothesisWarning" not in result.stderr
    # Its working folder, a volume as a CI checkout is, holds what the mock wrote and nothing of the
    # audit's.
    listed = docker(
        "run",
        "--rm",
        "--volume",
        f"{served.name}:/work",
        "--entrypoint",
        "ls",
        image,
        "-A",
        "/work",
    )
    assert ".hypothesis" not in listed.stdout.split(), listed.stdout


def test_sigterm_stops_the_container_within_a_second_with_exit_0(
    image: str, names: list[str]
) -> None:
    name, port = unique("evalmock-stop"), free_port()
    names.append(name)
    docker("run", "--detach", "--name", name, "--publish", f"127.0.0.1:{port}:8080", image)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as keep_alive:
        wait_for_200(f"http://127.0.0.1:{port}/healthz")
        assert keep_alive.get("/healthz").status_code == 200  # a connection left open
        started = time.monotonic()
        docker("stop", "--time", "10", name)
        took = time.monotonic() - started
    state = json.loads(docker("inspect", name).stdout)[0]["State"]
    assert state["ExitCode"] == 0
    # the stop itself, plus docker's own round trips
    assert took < 1.5, f"docker stop took {took:.2f} s"


def test_data_files_come_in_by_volume(image: str, names: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    write(folder / "my-data.yaml", data([(AGENT, PROJECT, [DATA_CASE])])).chmod(0o644)
    name, port = unique("evalmock-data"), free_port()
    names.append(name)
    docker(
        "run",
        "--detach",
        "--name",
        name,
        "--publish",
        f"127.0.0.1:{port}:8080",
        "--volume",
        f"{folder}:/data:ro",
        image,
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "8080",
        "--data",
        "/data/my-data.yaml",
        "--data-only",
    )
    body = wait_for_200(
        f"http://127.0.0.1:{port}/v1/agents/{AGENT}/test-set/cases?projectId={PROJECT}", AUTH
    ).json()
    assert body["data"] == [DATA_CASE]
    assert httpx.get(f"http://127.0.0.1:{port}/healthz").json()["world"]["dataFiles"] == [
        "/data/my-data.yaml"
    ]
