"""A service behind a private certificate authority: SSL_CERT_FILE, the one way to trust it, is
honoured by every request of the audit (the checks before it starts, the scenario checks,
Schemathesis's requests and those it sends again after throttling); without it the service is
unreachable, saying how to trust the authority."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import schemathesis

from evalmock.contract.operations import operation
from evalmock.contract.targets import dump_targets
from evalmock.exits import UNREACHABLE
from evalmock.harness.checks import find_check
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.fuzz_hooks import ThrottledRetry
from evalmock.harness.run.options import Audit, AuditError, plan_audit
from evalmock.harness.run.preflight import check_target
from evalmock.harness.run.throttle import Throttle
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World
from shared import self_signed_certificate

from .serving import serving


@dataclass(frozen=True)
class PrivateService:
    base_url: str  # https://127.0.0.1:port
    authority: Path  # its certificate, its own authority
    targets: Path


@pytest.fixture(scope="module")
def private_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateService]:
    """The mock over TLS on 127.0.0.1, its certificate signed by no authority certifi knows."""
    folder = tmp_path_factory.mktemp("private-ca")
    cert, key = self_signed_certificate(folder)
    world = World(seed=42, cases=60)
    dump_targets(targets_for(world), folder / "targets.toml")
    app = create_app(ServerSettings(cases=60), world=world)
    with serving(app, ssl_certfile=str(cert), ssl_keyfile=str(key)) as base_url:
        yield PrivateService(base_url.replace("http://", "https://"), cert, folder / "targets.toml")


def _audit(service: PrivateService) -> Audit:
    audit = plan_audit(
        service.base_url, targets=str(service.targets), apis=("test-set",), max_examples=2
    )
    return dataclasses.replace(
        audit, only=frozenset({"limit_fills_a_first_page"}), phases=("examples",)
    )


def test_without_the_authority_the_service_is_unreachable_saying_how_to_trust_it(
    private_service: PrivateService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(AuditError) as refused:
        check_target(_audit(private_service))
    assert refused.value.exit_code == UNREACHABLE
    said = str(refused.value)
    assert "CERTIFICATE_VERIFY_FAILED" in said and "set SSL_CERT_FILE to its certificate" in said


def test_with_ssl_cert_file_every_request_of_the_audit_trusts_the_authority(
    private_service: PrivateService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(private_service.authority))
    audit = _audit(private_service)
    check_target(audit)
    results = run_audit(audit)
    assert results.gaps == []
    assert results.verdict is Verdict.CONFORMS
    for name in ("limit_fills_a_first_page", "response_schema_conformance"):  # httpx, Schemathesis
        assert results.tally(find_check(name, "test-set")).passed > 0, name


def test_a_request_sent_again_after_throttling_is_verified_as_the_first_was(
    private_service: PrivateService,
) -> None:
    url = private_service.base_url + operation("test-set").url_path(agentId="acme.drafting")
    request = requests.Request("GET", url, headers={"Authorization": "Bearer demo-user"}).prepare()
    first = schemathesis.Response(429, {}, b"", request, 0.0, str(private_service.authority))
    again = ThrottledRetry(Throttle())._send_again(first)
    assert again.status_code != 429 and again.verify == str(private_service.authority)
