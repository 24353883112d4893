"""The report as a reader gets it: a header with the run's metadata, no horizontal scroll in a real
browser at a laptop's and a phone's width (long cursor URLs and curl lines wrap), and a console
summary whose lines stay whole in a log."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from browser import launched_chromium
from evalmock import __version__
from evalmock.harness.checks import find_check
from evalmock.harness.checks.policy import Policy
from evalmock.harness.report.files import write_report
from evalmock.harness.report.html import render_html
from evalmock.harness.report.markdown import render_markdown
from evalmock.harness.report.run_info import RunInfo, file_digest
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import Example, RequestRecord, request_shape
from evalmock.harness.secrets.redactor import Redactor

LIST = "/v1/agents/{agentId}/test-set/cases"
# a sealed cursor, ~2,000 chars
CURSOR = "eyJ2IjoxLCJrIjoiMjAyNi0xMS0yMFQwOToxNTowMloiLCJwIjoiYTYwNzY3YmMifQ" * 30
BASE = "http://127.0.0.1:8080"
WIDTHS = (1280, 390)


def long_url_results() -> Results:
    """A failing audit whose example request carries a long cursor (as a walk's fortieth page
    does)."""
    project = "a60767bc-f81b-4009-86cc-372b632c4c53"
    url = f"{BASE}/v1/agents/acme.drafting/test-set/cases?projectId={project}&cursor={CURSOR}"
    curl = f"curl -sS -i -H \"Authorization: Bearer $EVALMOCK_TOKEN\" '{url}'"
    results = Results(Policy(), ("test-set",))
    results.passed(find_check("page_is_newest_first", "test-set"))
    results.breach(
        find_check("updated_at_is_added_at_until_retired", "test-set"),
        Example(
            f"an active case's updatedAt differs from its addedAt\nexpected: a\nreceived: {CURSOR}",
            RequestRecord("GET", url, {}, 200, curl),
            "/data/0/updatedAt",
            f'"{CURSOR}"',
        ),
        shape=request_shape("GET", LIST, 200),
    )
    results.skip_unexercised(
        "test-set", lambda check: "no response this check speaks about was seen"
    )
    return results


def run_info(tmp_path: Path) -> RunInfo:
    targets = tmp_path / "targets.toml"
    targets.write_text('[auth]\ntoken = "t"\n')
    return RunInfo(
        BASE,
        started=datetime(2026, 11, 30, 19, 5, tzinfo=UTC),
        seed=7,
        max_examples=25,
        fuzz=True,
        targets_name=targets.name,
        targets_digest=file_digest(targets),
    )


def test_the_header_says_when_what_against_what_and_with_which_options_and_targets(
    tmp_path: Path,
) -> None:
    info = run_info(tmp_path)
    assert info.targets_digest is not None and info.targets_digest.startswith("sha256:")
    results = Results(Policy(strict=True, profile="digitalocean-live"), ("test-set", "gradient"))
    for text in (
        render_html(results, base_url=BASE, run=info),
        render_markdown(results, base_url=BASE, run=info),
    ):
        for expected in (
            "2026-11-30T19:05:00Z",
            __version__,
            BASE,
            "digitalocean-live",
            "strict: inferred rules fail",
            "seed",
            "7",
            "25 examples per phase",
            "targets.toml",
            info.targets_digest,
        ):
            assert expected in text, expected


def test_a_har_audit_names_the_file_and_no_seed(tmp_path: Path) -> None:
    info = RunInfo.of("traffic.har", target_kind="HAR file")
    text = render_markdown(Results(Policy(), ("test-set",)), base_url="traffic.har", run=info)
    assert "| HAR file | `traffic.har` |" in text and "| targets | `none` |" in text
    assert "seed" not in text and "inferred rules warn" in text


def test_the_targets_digest_changes_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("a = 1\n")
    first = RunInfo.of(BASE, targets=path).targets_digest
    path.write_text("a = 2\n")
    assert RunInfo.of(BASE, targets=path).targets_digest != first


@pytest.mark.parametrize("width", WIDTHS)
def test_the_html_report_never_scrolls_sideways_and_shows_the_whole_curl(
    tmp_path: Path, width: int
) -> None:
    report = tmp_path / "report.html"
    write_report(
        long_url_results(), report, base_url=BASE, redactor=Redactor(), run=run_info(tmp_path)
    )
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": width, "height": 900})
        page.goto(report.as_uri())
        page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
        page.screenshot(path=str(tmp_path / f"report-{width}-top.png"))
        scroll_width, inner_width = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        # every block (the curl's <pre>, tables, the header) within its own box, so nothing is
        # clipped either
        clipped = page.evaluate("""[...document.querySelectorAll('pre, table, dl, p, code')]
            .filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
            .map(e => e.outerHTML.slice(0, 80))""")
        curl_shown = page.inner_text("pre:has-text('curl -sS')")
    assert scroll_width <= inner_width, f"{scroll_width} px wide in a {inner_width} px window"
    assert clipped == []
    assert CURSOR in curl_shown.replace("\n", "")  # wrapped, all of it there
    assert (tmp_path / f"report-{width}.png").stat().st_size > 10_000


def test_the_summary_does_not_wrap_when_it_is_not_a_terminal() -> None:
    results = long_url_results()
    check = find_check("updated_at_is_added_at_until_retired", "test-set")
    long_title = (
        "an active case's updatedAt differs from its addedAt "
        + "because of a very long reason," * 10
    )
    results.breach(check, Example(long_title, None), shape=request_shape("GET", LIST, 400))
    stream = io.StringIO()
    print_summary(results, Redactor(), stream)
    failed = [line for line in stream.getvalue().splitlines() if line.startswith("FAILED")]
    whole = [line for line in failed if line.endswith(long_title)]  # `grep FAILED` keeps the reason
    assert whole and len(whole[0]) > 300, failed


def test_on_a_phone_each_table_row_is_a_card_of_labelled_cells(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    write_report(
        long_url_results(), report, base_url=BASE, redactor=Redactor(), run=run_info(tmp_path)
    )
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": 390, "height": 900})
        page.goto(report.as_uri())
        header_shown = page.evaluate("getComputedStyle(document.querySelector('tr')).display")
        label = page.evaluate("getComputedStyle(document.querySelector('td'), '::before').content")
        narrowest = page.evaluate(
            "Math.min(...[...document.querySelectorAll('td')].map(e => e.clientWidth))"
        )
    assert header_shown == "none"
    # the column's name before each value
    assert label.startswith('"API') or label.startswith('"check')
    assert narrowest > 200  # a card's full width, not a column a letter wide


@pytest.mark.parametrize("width", WIDTHS)
def test_a_command_line_option_in_the_reports_text_is_never_broken_at_its_hyphen(
    tmp_path: Path, width: int
) -> None:
    results = long_url_results()
    # the option at every position along a line: without care, some line ends inside it, at
    # `--rate-`
    results.notes += [
        f"{'x' * shift} Send more slowly: --rate-limit 8/s keeps under it." for shift in range(60)
    ]
    report = tmp_path / "report.html"
    write_report(results, report, base_url=BASE, redactor=Redactor(), run=run_info(tmp_path))
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": width, "height": 900})
        page.goto(report.as_uri())
        lines = page.evaluate(
            "[...document.querySelectorAll('li .flag')].map(e => e.getClientRects().length)"
        )
        notes = page.evaluate(
            "[...document.querySelectorAll('li')].map(e => e.innerText).join('\\n')"
        )
    assert len(lines) == 60 and set(lines) == {1}
    # the words as written
    assert notes.count("Send more slowly: --rate-limit 8/s keeps under it.") == 60


@pytest.mark.parametrize("width", (641, 700, 768, 1024))
def test_a_report_of_every_rule_fits_a_tablets_width_and_copies_each_name_as_written(
    tmp_path: Path, width: int
) -> None:
    from evalmock.harness.checks.registry import CHECKS

    results = Results(Policy(), ("test-set", "gradient"))
    for check in CHECKS:  # the longest names the report can hold, in its widest table
        results.passed(check)
    report = tmp_path / "report.html"
    write_report(results, report, base_url=BASE, redactor=Redactor(), run=run_info(tmp_path))
    with launched_chromium() as chromium:
        page = chromium.new_page(viewport={"width": width, "height": 900})
        page.goto(report.as_uri())
        scroll_width, inner_width = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        names = page.evaluate("[...document.querySelectorAll('td code')].map(e => e.textContent)")
    assert scroll_width <= inner_width, f"{scroll_width} px wide in a {inner_width} px window"
    assert "body_is_the_version_asked_by_its_inferred_name" in names


def test_a_findings_request_line_shortens_a_long_cursor_and_its_curl_keeps_it_whole() -> None:
    for text in (
        render_markdown(long_url_results(), base_url=BASE),
        render_html(long_url_results(), base_url=BASE),
    ):
        request_line = text.split("Request:", 1)[1].split("answered", 1)[0]
        assert (
            f"cursor={CURSOR[:40]}…({len(CURSOR)} characters)" in request_line
            and len(request_line) < 300
        )
        assert CURSOR in text  # in the curl command


def test_a_quoted_command_in_a_note_is_code_in_the_html_report_as_in_the_markdown_one() -> None:
    results = Results(Policy(), ("test-set",))
    results.notes.append(
        "scenario checks are not run on recorded traffic (`evalmock contract --base-url` runs them)"
    )
    page = render_html(results, base_url=BASE)
    assert '(<code>evalmock contract <span class="flag">--base-url</span></code> runs them)' in page
    assert "`" not in page.split("<body", 1)[1].split("<script", 1)[0]
    assert "(`evalmock contract --base-url` runs them)" in render_markdown(results, base_url=BASE)
