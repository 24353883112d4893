"""Where the contract documents and the curated fixtures live, installed or in a checkout, and where
evalmock keeps its cache."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from evalmock import environment

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent


def _data_dir(name: str, env: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override)
    return _installed_dir(name)


@cache  # asked for on every judged response (a document's base path): the file system is asked once
def _installed_dir(name: str) -> Path:
    # A checkout (editable install) wins over the copy bundled into a wheel, so edits show at once.
    in_checkout = _CHECKOUT / name
    if (_CHECKOUT / "pyproject.toml").is_file() and in_checkout.is_dir():
        return in_checkout
    return _PACKAGE / "_data" / name


def openapi_dir() -> Path:
    """The folder of OpenAPI documents (EVALMOCK_OPENAPI_DIR overrides)."""
    return _data_dir("openapi", environment.OPENAPI_DIR)


def fixtures_dir() -> Path:
    """The folder of hand-curated fixture cases (EVALMOCK_FIXTURES_DIR overrides)."""
    return _data_dir("fixtures", environment.FIXTURES_DIR)


CACHE_ENV = environment.CACHE_DIR
OFF = "off"


def cache_dir() -> Path | None:
    """Where evalmock keeps what it may compute again (EVALMOCK_CACHE_DIR, else
    $XDG_CACHE_HOME/evalmock, else ~/.cache/evalmock), or None when keeping is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured in ("", OFF) else Path(configured)
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.path.expanduser("~")
    if os.path.isabs(xdg):  # a relative one is to be ignored (XDG Base Directory Specification)
        return Path(xdg) / "evalmock"
    # A user without a home (a container's numeric user): "~" stays "~", and nothing is kept rather
    # than a folder named "~" made wherever the server runs.
    return Path(home) / ".cache" / "evalmock" if os.path.isabs(home) else None
