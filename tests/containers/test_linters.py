"""hadolint passes the Dockerfile, actionlint the workflow examples, and the Kubernetes manifests
validate offline.

Each linter is shown a broken file too, so that a linter that checked nothing could not pass.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalmock.server.errors import admin_base_path
from evalmock.server.sessions.tokens import TOKEN_PREFIX

from .conftest import ROOT, compose_installed, engine

BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / "examples" / "github-actions").glob("*.yml"))
MANIFESTS = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A linter installed with the dev dependencies (each wheel ships its binary)."""
    found = shutil.which(tool, path=str(BIN))
    assert found, f"{tool} is not installed next to {sys.executable} (pip install -e '.[dev]')"
    return subprocess.run([found, *args], capture_output=True, text=True, timeout=120, check=False)


def test_hadolint_passes_the_dockerfile() -> None:
    result = run("hadolint", str(ROOT / "Dockerfile"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_fails_a_dockerfile_with_unpinned_packages(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian\nRUN apt-get update && apt-get install -y curl\n")
    result = run("hadolint", str(bad))
    assert result.returncode != 0 and "DL3008" in result.stdout


def test_the_examples_hold_both_workflows() -> None:
    assert [path.name for path in WORKFLOWS] == [
        "contract-audit-staging.yml",
        "frontend-tests-with-mock.yml",
    ]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_actionlint_passes_the_workflow_example(workflow: Path) -> None:
    result = run("actionlint", "-no-color", str(workflow))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_fails_a_workflow_with_an_unknown_context(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ secret.TOKEN }}\n"
    )
    result = run("actionlint", "-no-color", str(bad))
    assert result.returncode != 0 and "secret" in result.stdout


def test_the_kubernetes_manifests_validate_offline() -> None:
    assert [path.name for path in MANIFESTS] == ["evalmock.yaml"]
    result = run("kubernetes-validate", "--strict", *map(str, MANIFESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    for kind in ("deployment/evalmock", "service/evalmock", "deployment/redis", "service/redis"):
        assert f"passed for resource {kind}" in result.stdout


def test_kubernetes_validate_fails_a_manifest_with_a_misspelt_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    manifest = (ROOT / "deploy" / "kubernetes" / "evalmock.yaml").read_text()
    bad.write_text(manifest.replace("readinessProbe", "readyProbe"))
    result = run("kubernetes-validate", "--strict", str(bad))
    assert result.returncode != 0 and "readyProbe" in result.stdout + result.stderr


def test_the_manifest_holds_no_cursor_key_to_apply_over_the_user_s() -> None:
    """The user creates the Secret first; a Secret in the manifest would replace that key with a
    known one."""
    text = (ROOT / "deploy" / "kubernetes" / "evalmock.yaml").read_text()
    assert (
        "kind: Secret" not in text
        and "secretKeyRef:\n                  name: evalmock-cursor-key" in text
    )


def test_the_probes_ask_the_health_endpoint() -> None:
    text = (ROOT / "deploy" / "kubernetes" / "evalmock.yaml").read_text()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert f"{probe}:\n            httpGet:\n              path: /healthz" in text


def test_compose_file_is_valid_for_the_installed_compose() -> None:
    if not compose_installed():
        pytest.skip(
            "no Docker Compose here (python3.11 dev.py engine installs Debian's docker-compose)"
        )
    result = subprocess.run(
        [*engine.compose(), "--file", str(ROOT / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_replica_keeps_its_sessions_in_the_redis_service() -> None:
    """compose.yaml and the manifests: the replicas start with `--store` naming the Redis beside
    them, which listens where that URL says."""
    store = ["--store", "redis://redis:6379/0"]
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    assert (
        compose["evalmock"]["command"][-2:] == store
        and "redis" in compose["evalmock"]["depends_on"]
    )
    assert compose["redis"]["command"][0] == "redis-server" and "ports" not in compose["redis"]
    manifests = {
        (doc["kind"], doc["metadata"]["name"]): doc
        for doc in yaml.safe_load_all(
            (ROOT / "deploy" / "kubernetes" / "evalmock.yaml").read_text()
        )
    }
    [replica] = manifests["Deployment", "evalmock"]["spec"]["template"]["spec"]["containers"]
    assert replica["args"][-2:] == store
    assert [port["port"] for port in manifests["Service", "redis"]["spec"]["ports"]] == [6379]


def test_the_balancer_tries_no_session_or_admin_request_again_once_sent() -> None:
    """A session's 503 (a queued fault, the store gone) is its answer: tried on another replica,
    it would be lost, or use the fault twice. The balancer knows a session's token by its prefix."""
    config = (ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    assert f'req.hdr(authorization) -i -m beg "bearer {TOKEN_PREFIX}"' in config
    assert f"path_beg {admin_base_path()}\n" in config
    assert "http-request disable-l7-retry if session_request || admin_request" in config
