"""The browser the page-looking tests use starts, renders a page and records a HAR."""

from __future__ import annotations

import json
from pathlib import Path

from browser import launched_chromium


def test_headless_chromium_renders_a_page_and_records_a_har(tmp_path: Path) -> None:
    har = tmp_path / "page.har"
    with launched_chromium() as chromium:
        context = chromium.new_context(record_har_path=str(har))
        page = context.new_page()
        page.set_content("<h1>evalmock</h1>")
        heading = page.inner_text("h1")
        context.close()
    assert heading == "evalmock"
    assert json.loads(har.read_text())["log"]["version"] == "1.2"
