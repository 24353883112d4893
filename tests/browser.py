"""Headless Chromium for the tests that look at what users look at: rendered reports, recorded HARs,
browser apps."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Debian's Chromium, driven through Playwright's protocol client; Playwright's own browser download
# is never used (no registry but PyPI, npm and Debian is reachable). The flags keep it off the
# network it cannot reach.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
INSTALL_HINT = "apt-get install chromium (.ci/run installs it)"


def chromium_path() -> Path:
    """Where Chromium is; in CI a missing browser fails the test, elsewhere it skips saying how to
    install it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return Path(found)
    message = f"headless Chromium is not installed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def launched_chromium() -> Iterator:
    """A headless Chromium (a Playwright `Browser`), closed on exit."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable), args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            browser.close()
