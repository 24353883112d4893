"""Swagger UI as a frontend developer opens it, in headless Chromium: its Authorize dialog names the
demo tokens to paste."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser import launched_chromium

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()

DEMO_TOKENS_NAMED = ("demo-user", "demo-service", "demo-other", "demo-no-read")
PAGE_TIMEOUT_MS = 30_000


@pytest.mark.parametrize("base", ["/v1", "/v2"])
def test_swagger_ui_s_authorize_dialog_names_the_demo_tokens(
    live_server: LiveServer, tmp_path: Path, base: str
) -> None:
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{live_server.base_url}{base}/ui/")
        page.click("button.authorize")
        dialog = page.wait_for_selector(".dialog-ux .modal-ux")
        shown = dialog.inner_text() if dialog else ""
        page.screenshot(path=str(tmp_path / f"authorize{base.replace('/', '-')}.png"))
    assert all(token in shown for token in DEMO_TOKENS_NAMED), shown
