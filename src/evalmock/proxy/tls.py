"""How the proxy verifies an https upstream: the certificate authorities it trusts."""

from __future__ import annotations

import os
import ssl

import httpx

from evalmock import environment
from evalmock.exits import UsageError


class CertificatesUnreadable(UsageError):
    """The certificate authorities an https upstream is to be verified by cannot be read."""


def upstream_ssl_context() -> ssl.SSLContext:
    """How an https upstream is verified: as httpx verifies (certifi's authorities), or by the
    authorities of SSL_CERT_FILE or SSL_CERT_DIR where one is set (a service behind a company's own
    authority), in httpx's order; CertificatesUnreadable names the one that cannot be read."""
    try:
        return httpx.create_ssl_context(trust_env=True)
    except (OSError, ssl.SSLError) as exc:
        source = next(
            (
                f"{name}={os.environ[name]!r}"
                for name in (environment.CA_FILE, environment.CA_DIR)
                if os.environ.get(name)
            ),
            "certifi's bundle",
        )
        raise CertificatesUnreadable(
            f"{source}: no certificate authorities could be read from it ({exc})"
        ) from None
