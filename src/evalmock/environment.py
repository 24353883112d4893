"""Every environment variable evalmock reads for a setting, and the one place each is read."""

from __future__ import annotations

import os
from collections.abc import Mapping

from evalmock.defaults import ACCEPT_TOKENS_ENV

TOKEN = "EVALMOCK_TOKEN"  # the audit's bearer token (`evalmock contract`, `evalmock proxy`)
SECOND_TOKEN = "EVALMOCK_SECOND_TOKEN"  # a second caller's token, for the cursor-binding checks
CURSOR_KEY = "EVALMOCK_CURSOR_KEY"  # the secret that seals cursors (`evalmock serve`)
ACCEPT_TOKENS = (
    ACCEPT_TOKENS_ENV  # more --token values for `evalmock serve`, kept out of the process list
)
PUBLIC_URL = (
    "EVALMOCK_PUBLIC_URL"  # the URL the banner shows, for a server behind a proxy or in a container
)
CACHE_DIR = "EVALMOCK_CACHE_DIR"  # where the documents' parsed forms are cached


def read(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's value; None when it is unset or empty (an empty value is a setting left
    out)."""
    return (os.environ if environ is None else environ).get(name) or None


def audit_token() -> str | None:
    return read(TOKEN)


def second_token() -> str | None:
    return read(SECOND_TOKEN)
