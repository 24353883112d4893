"""Every environment variable evalmock reads for a setting, and the one place each is read."""

from __future__ import annotations

import os

# the audit's bearer token (`evalmock contract`, `evalmock proxy`)
TOKEN = "EVALMOCK_TOKEN"
# a second caller's token, for the cursor-binding checks
SECOND_TOKEN = "EVALMOCK_SECOND_TOKEN"
# the secret that seals cursors (`evalmock serve`, and each of its worker processes)
CURSOR_KEY = "EVALMOCK_CURSOR_KEY"
# where `evalmock serve` keeps sessions (`--store`), out of the process list: a Redis URL may hold a
# password
STORE = "EVALMOCK_STORE"
# the token every request to the admin API (/__evalmock) must carry; with it, the admin API is on
# for a mock on any address (`evalmock serve`)
ADMIN_TOKEN = "EVALMOCK_ADMIN_TOKEN"
# the URL the banner shows, for a server behind a proxy or in a container
PUBLIC_URL = "EVALMOCK_PUBLIC_URL"
# a running mock the pytest fixtures use instead of starting one (evalmock.testing); its admin
# token, where it has one, is ADMIN_TOKEN
MOCK_URL = "EVALMOCK_MOCK_URL"
# where the documents' parsed forms are cached
CACHE_DIR = "EVALMOCK_CACHE_DIR"
# more --token values for `evalmock serve`, kept out of the process list
ACCEPT_TOKENS = "EVALMOCK_ACCEPT_TOKENS"
# the folders of the OpenAPI documents and of the curated fixture cases, in place of the package's
OPENAPI_DIR = "EVALMOCK_OPENAPI_DIR"
FIXTURES_DIR = "EVALMOCK_FIXTURES_DIR"
# the folder of the API reference pages the rules' quotes are found in
PAGES_DIR = "EVALMOCK_PAGES_DIR"
# `evalmock serve --workers N` hands each worker process its settings in this one (see
# server/settings.py)
SERVE_SETTINGS = "EVALMOCK_SERVE_SETTINGS"
# the certificate authorities an https service is verified by (a file of PEM certificates, else a
# folder of them), for every request of the audit and the proxy; OpenSSL's names, which httpx reads
CA_FILE = "SSL_CERT_FILE"
CA_DIR = "SSL_CERT_DIR"


def read(name: str) -> str | None:
    """The variable's value; None when it is unset or empty (an empty value is a setting left
    out)."""
    return os.environ.get(name) or None


def certificate_authorities() -> str | None:
    """The file, else the folder, of the certificate authorities to verify an https service by;
    None: certifi's."""
    return read(CA_FILE) or read(CA_DIR)


def audit_token() -> str | None:
    return read(TOKEN)


def second_token() -> str | None:
    return read(SECOND_TOKEN)


def mock_url() -> str | None:
    return read(MOCK_URL)


def admin_token() -> str | None:
    return read(ADMIN_TOKEN)
