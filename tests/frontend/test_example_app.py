"""The example app (examples/frontend/app) in headless Chromium against one mock: two sessions at
once, with different data and faults under the same agent and project, each page showing its own
list, busy and empty states; the client verdict CONFORMS for the app as shipped, and VIOLATIONS
for a copy planted to retry a 503 at once. Screenshots are kept for a person to look at."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest

from browser import launched_chromium
from data_builders import AGENT, PROJECT
from evalmock.testing import Mock, Session, start_mock

APP = Path(__file__).resolve().parents[2] / "examples" / "frontend" / "app"
WAIT_LINE = "await sleep(seconds * 1000); // WAIT: the page's Retry-After"
SHOWN_S = 15_000  # ms Playwright waits for what the page must show


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """The app's files over HTTP on a free local port (another origin than the mock's)."""
    handler = functools.partial(QuietFiles, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def mock() -> Iterator[Mock]:
    with start_mock(["--cases", "5"]) as started:
        yield started


def world_of(*case_ids: str) -> dict:
    """A data-only world of one list, these cases newest first (short form)."""
    cases = [{"id": case_id} for case_id in case_ids]
    return {
        "data": {"testSet": [{"agentId": AGENT, "projectId": PROJECT, "cases": cases}]},
        "data_only": True,
    }


def app_url(root: str, session: Session) -> str:
    settings = {"base": session.base_url, "token": session.token, "agent": AGENT}
    return f"{root}/index.html#{urlencode({**settings, 'project': PROJECT, 'limit': '2'})}"


def shown_ids(page) -> list[str]:
    return page.locator("#cases li").evaluate_all("items => items.map(item => item.dataset.id)")


@pytest.fixture
def screenshots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where the screenshots stay for a person to look at: pytest's cache folder of the checkout
    (`.pytest_cache/d/example-app-screenshots`, kept across runs, where pytest's temporary folders
    are soon removed), else the test's temporary folder; named in the JUnit report."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("example-app-screenshots") if cache is not None else tmp_path
    request.node.user_properties.append(("screenshots", str(folder)))
    return Path(folder)


def test_two_sessions_at_once_show_their_own_list_busy_and_empty_states(
    mock: Mock, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    listed = mock.create_session(**world_of("case-c", "case-b", "case-a"))
    empty = mock.create_session(**world_of())
    try:
        listed.fault("test-set", status=503, retry_after=1, page=2)
        empty.fault("test-set", latency_ms=800)
        with serving(APP) as root, launched_chromium() as chromium:
            pages = [chromium.new_context().new_page() for _ in (listed, empty)]
            for page, session in zip(pages, (listed, empty), strict=True):
                page.goto(app_url(root, session), wait_until="commit")
            first, second = pages
            expect(second.locator("#status")).to_have_text("Loading…", timeout=SHOWN_S)
            expect(first.locator("#more")).to_be_visible(timeout=SHOWN_S)
            assert shown_ids(first) == ["case-c", "case-b"]
            first.locator("#more").click()
            busy = first.locator("#status")
            expect(busy).to_have_text("The service is busy; trying again in 1 s.", timeout=SHOWN_S)
            first.screenshot(path=str(screenshots / "busy.png"))
            expect(first.locator("#status")).to_have_text("3 cases", timeout=SHOWN_S)
            expect(second.locator("#empty")).to_be_visible(timeout=SHOWN_S)
            assert shown_ids(first) == ["case-c", "case-b", "case-a"]
            assert first.locator("#more").is_hidden() and first.locator("#empty").is_hidden()
            assert shown_ids(second) == []
            expect(second.locator("#empty")).to_have_text("No test cases yet.")
            first.screenshot(path=str(screenshots / "listed.png"))
            second.screenshot(path=str(screenshots / "empty.png"))
        assert [e["status"] for e in listed.requests("test-set", method="GET")] == [200, 503, 200]
        assert [e["status"] for e in empty.requests("test-set", method="GET")] == [200]
        listed.assert_conforms()
        empty.assert_conforms()
    finally:
        listed.delete()
        empty.delete()


def test_a_copy_that_retries_a_503_at_once_gets_violations(
    mock: Mock, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    planted = tmp_path / "app"
    shutil.copytree(APP, planted)
    script = planted / "app.js"
    source = script.read_text()
    assert WAIT_LINE in source  # else the defect is planted nowhere
    script.write_text(source.replace(WAIT_LINE, "// retried at once"))
    session = mock.create_session(**world_of("case-c", "case-b", "case-a"))
    try:
        session.fault("test-set", status=503, retry_after=2, page=2)
        with serving(planted) as root, launched_chromium() as chromium:
            page = chromium.new_context().new_page()
            page.goto(app_url(root, session))
            page.locator("#more").click()
            # the page looks right: only the verdict tells
            expect(page.locator("#status")).to_have_text("3 cases", timeout=SHOWN_S)
            page.screenshot(path=str(screenshots / "retried-at-once.png"))
        verdict = session.verdict()
        assert verdict.verdict == "VIOLATIONS", verdict.explain()
        assert [f["rule"] for f in verdict.findings] == ["client_waits_retry_after"]
        with pytest.raises(AssertionError, match="client_waits_retry_after"):
            session.assert_conforms()
    finally:
        session.delete()
