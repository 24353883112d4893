"""An https upstream: verified by certifi's authorities, or by those of SSL_CERT_FILE where it is
set (a service behind a company's own authority); a certificate the proxy cannot verify is a 502
saying so; an SSL_CERT_FILE that cannot be read stops the proxy at start (exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalmock.cli import build_parser
from evalmock.contract.operations import operation
from evalmock.proxy.command import UsageError, build_proxy
from harness.builders import PROJECT
from harness.serving import serving
from shared import assert_envelope, self_signed_certificate

from .conftest import ProxyFactory
from .upstreams import broken_upstream

CASES = operation("test-set").url_path(agentId="example") + f"?projectId={PROJECT}&limit=2"


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own authority) and its key."""
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def https_upstream(authority: tuple[Path, Path]) -> Iterator[str]:
    cert, key = authority
    with serving(broken_upstream(), ssl_certfile=str(cert), ssl_keyfile=str(key)) as base_url:
        yield base_url.replace("http://", "https://")


def test_an_https_upstream_under_an_authority_of_ssl_cert_file_is_forwarded_to(
    https_upstream: str,
    authority: tuple[Path, Path],
    proxy_for: ProxyFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(authority[0]))
    direct = httpx.get(https_upstream + CASES, verify=str(authority[0]))
    with proxy_for(https_upstream) as proxy:
        proxied = httpx.get(proxy.base_url + CASES)

    assert direct.status_code == 200
    assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)


def test_a_certificate_no_trusted_authority_signed_is_a_502_saying_so(
    https_upstream: str, proxy_for: ProxyFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with proxy_for(https_upstream) as proxy:
        answer = httpx.get(proxy.base_url + CASES)

    error = assert_envelope(answer, 502, "bad-gateway")
    assert (
        "could not be reached" in error["message"]
        and "CERTIFICATE_VERIFY_FAILED" in error["message"]
    )


def test_an_ssl_cert_file_that_cannot_be_read_stops_the_proxy_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A usage error, which `evalmock proxy` prints and exits 2 with (test_command.py), before it
    listens."""
    missing = tmp_path / "no-such-ca.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    with pytest.raises(
        UsageError, match=f"SSL_CERT_FILE='{missing}': no certificate authorities could be read"
    ):
        build_proxy(build_parser().parse_args(["proxy", "--upstream", "https://127.0.0.1:9"]))
