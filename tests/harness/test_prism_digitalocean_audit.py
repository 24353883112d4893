"""`evalmock contract --profile digitalocean-live` against Prism serving DigitalOcean's own public
description of the operation: every finding is one the page or DigitalOcean's live service states,
and nothing is failed for not being our mock (the audit holds Prism to DigitalOcean's description
and finds nothing there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from digitalocean_public import SPEC_PATH
from evalmock.contract.documents import GRADIENT
from evalmock.contract.schemas import schema_errors
from shared import free_port, response_schema, stop_process

PRISM_PACKAGE = "@stoplight/prism-cli"
PRISM_VERSION = "5.16.0"
PRISM = f"{PRISM_PACKAGE}@{PRISM_VERSION}"
INSTALL_TIMEOUT_S = 300
READY_TIMEOUT_S = 60
AUDIT_TIMEOUT_S = 240
EXAMPLE_UUID = "123e4567-e89b-12d3-a456-426614174000"
# What Prism answers every request with: the example built from the description's property examples.
EXAMPLE_VERSION = 123

# Each finding the audit makes, and why it is fair: what DigitalOcean's page or live service says
# that Prism, answering its one example to everything, does not do.
FAIR_FINDINGS = {
    "response_schema_conformance": (
        "page",
        "the example's success_threshold_pct is 123; the page: a percentage between 0 and 100",
    ),
    "body_is_the_version_asked_by_the_spec_s_name": (
        "live",
        "a version asked for by evaluation_test_case_version comes back as version 123",
    ),
    "version_asked_by_the_spec_s_name_is_that_version": (
        "live",
        "version 122, which the test case does not have, answers 200 with version 123",
    ),
    "body_is_the_requested_test_case": (
        "page",
        "another test case's uuid answers the example's test case",
    ),
    "unknown_test_case_is_404": ("live", "an unknown test case answers 200, not 404"),
    "ignored_auth": ("live", "a made-up token is served: DigitalOcean answers it 401"),
}
# What the audit must find Prism does right: DigitalOcean's own description, and its 401 without a
# token. A check here failing would be a complaint about not being our mock.
HELD_TO_DIGITALOCEAN = (
    "conforms_to_digitalocean_s_spec",
    "missing_token_is_401_on_digitalocean",
    "content_type_conformance",
    "not_a_server_error",
    "no_version_is_the_latest",
)


def _tools_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "evalmock-test-tools" / f"prism-{PRISM_VERSION}"


def _prism() -> Path:
    """Prism, installed from npm into a cache folder once (bounded in time); skip without npm or
    when npm cannot install it."""
    prism = _tools_dir() / "node_modules" / ".bin" / "prism"
    if prism.exists():
        return prism
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: Prism, the stand-in for DigitalOcean, comes from npm")
    _tools_dir().parent.mkdir(parents=True, exist_ok=True)
    # Installed beside, then renamed into place: two test sessions never see half an install.
    staging = Path(tempfile.mkdtemp(prefix="prism-", dir=_tools_dir().parent))
    try:
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(staging), PRISM],
            check=True,
            capture_output=True,
            timeout=INSTALL_TIMEOUT_S,
        )
        staging.rename(_tools_dir())
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"npm could not install {PRISM}: {exc}")
    except OSError:
        pass  # another session put it in place first
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return prism


@pytest.fixture(scope="module")
def prism_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    prism = _prism()
    port = free_port()
    log_path = tmp_path_factory.mktemp("prism") / "prism.log"
    command = [str(prism), "mock", "--host", "127.0.0.1", "--port", str(port), str(SPEC_PATH)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.skip(f"Prism does not run here: {log_path.read_text(errors='replace')}")
            try:
                httpx.get(url, timeout=1.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Prism did not answer within {READY_TIMEOUT_S} s") from None
                time.sleep(0.2)
        yield url
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def audit(prism_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The audit's JUnit, per check: its level, its source, and failed or warned."""
    folder = tmp_path_factory.mktemp("prism-audit")
    targets = folder / "targets.toml"
    # The one test case Prism's answers describe, with the one version they carry.
    targets.write_text(
        f'[[gradient.test_cases]]\nuuid = "{EXAMPLE_UUID}"\nversions = [{EXAMPLE_VERSION}]\n'
    )
    junit = folder / "contract.xml"
    command = [sys.executable, "-m", "evalmock", "contract", "--base-url", prism_url]
    command += ["--api", "gradient", "--profile", "digitalocean-live", "--targets", str(targets)]
    command += ["--max-examples", "3", "--junit", str(junit), "--quiet"]
    # Prism serves any token; the audit needs one to send.
    env = {**os.environ, "EVALMOCK_TOKEN": "prism-accepts-any-token"}
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=AUDIT_TIMEOUT_S)
    assert run.returncode == 1, f"expected VIOLATIONS (exit 1):\n{run.stdout}\n{run.stderr}"
    checks = {}
    for case in ET.parse(junit).iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        out = case.find("system-out")
        checks[case.get("name")] = {
            "level": properties["level"],
            "source": properties["source"],
            "failed": case.find("failure") is not None,
            "warned": out is not None and "warning:" in (out.text or ""),
        }
    return checks


def test_every_finding_is_one_the_page_or_the_live_service_states(
    audit: dict[str, dict[str, Any]],
) -> None:
    failed = {name for name, check in audit.items() if check["failed"]}
    assert failed == set(FAIR_FINDINGS), (
        f"unexpected: {failed - set(FAIR_FINDINGS)}; not found: {set(FAIR_FINDINGS) - failed}"
    )
    for name in failed:
        level = FAIR_FINDINGS[name][0]
        assert audit[name]["level"] == level, (name, audit[name]["level"])
        prefix = "page: “" if level == "page" else "live: "
        assert audit[name]["source"].startswith(prefix), (name, audit[name]["source"])


def test_only_inferred_rules_warn(audit: dict[str, dict[str, Any]]) -> None:
    for name, check in audit.items():
        if check["warned"]:
            assert check["level"] == "inferred", name


def test_prism_is_held_to_digitalocean_s_description_and_passes(
    audit: dict[str, dict[str, Any]],
) -> None:
    for name in HELD_TO_DIGITALOCEAN:
        assert not audit[name]["failed"] and not audit[name]["warned"], name


def test_prism_s_answer_breaks_our_document_only_where_the_page_says_0_to_100(
    prism_url: str,
) -> None:
    """The body the schema finding is about: against our document, only success_threshold_pct."""
    response = httpx.get(
        f"{prism_url}/v2/gen-ai/evaluation_test_cases/{EXAMPLE_UUID}",
        headers={"Authorization": "Bearer prism-accepts-any-token"},
        timeout=10,
    )
    assert response.status_code == 200
    body = response.json()
    assert body["evaluation_test_case"]["version"] == EXAMPLE_VERSION
    errors = list(schema_errors(GRADIENT.spec, response_schema(GRADIENT, 200), body))
    assert [list(error.absolute_path) for error in errors] == [
        ["evaluation_test_case", "star_metric", "success_threshold_pct"]
    ]
    assert errors[0].validator == "maximum"
