"""A report as another team is handed it: `evalmock contract` run against the mock writes an HTML
report, Chromium renders it, and what a reader sees cites each rule by its page's title (and line,
where the pages are at hand), never by a file name they cannot open."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from browser import launched_chromium
from evalmock.cli import main
from evalmock.contract.pages import PAGE_TITLES, PAGES, lines_holding

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PAGE_TIMEOUT_MS = 30_000


def pages_at_hand() -> bool:
    """Whether the reference pages are beside the checkout (or in EVALMOCK_PAGES_DIR), so that each
    quote's line is found."""
    return all(lines_holding(page, "a") is not None for page in PAGES)


def rendered_report(report: Path, screenshot: Path) -> str:
    """The report's text as Chromium renders it at a laptop's width; its whole page saved as a
    screenshot."""
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(report.as_uri())
        page.screenshot(path=str(screenshot), full_page=True)
        return page.inner_text("body")


def test_a_report_of_the_mock_cites_each_rule_by_its_page_s_title_and_line_as_rendered(
    live_server: LiveServer, tmp_path: Path
) -> None:
    report, screenshot = tmp_path / "report.html", tmp_path / "report.png"
    code = main(
        [
            "contract",
            "--base-url",
            live_server.base_url,
            "--targets",
            str(live_server.targets_path),
            "--no-fuzz",
            "--quiet",
            "--report",
            str(report),
        ]
    )
    assert code == 0, f"expected the mock to conform; received exit code {code}"
    shown = rendered_report(report, screenshot)
    image = screenshot.read_bytes()
    assert image.startswith(PNG_SIGNATURE) and len(image) > 10_000
    for title in PAGE_TITLES.values():
        cited = re.findall(rf"{re.escape(title)}(, line \d+)?", shown)
        assert cited, f"expected a rule citing {title!r}; received none in the rendered report"
        if pages_at_hand():
            unlined = cited.count("")
            assert not unlined, (
                f"expected each citation of {title!r} with its line; {unlined} without"
            )
        assert f"{title}, not found on the page" not in shown
    # the seed files are not in the repository: a reader handed the report cannot open them
    named = [page for page in PAGES if page in shown or page.split(".")[0] in shown]
    assert ".txt" not in shown and not named, f"expected page titles; received file names {named}"
