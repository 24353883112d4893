"""Redaction, curl commands, findings grouped per rule and request shape, and the outputs that lead
with failures."""

from __future__ import annotations

import io
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evalmock.contract.pages import PAGES_DIR_VARIABLE, TEST_SET_PAGE
from evalmock.contract.sources import Level
from evalmock.harness.checks import find_check
from evalmock.harness.checks.outcomes import Unjudged
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.report.files import write_report
from evalmock.harness.report.html import render_html
from evalmock.harness.report.junit import write_junit
from evalmock.harness.report.markdown import render_markdown
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.report.view import MAX_JUNIT_TEXT, SEALED_CURSOR_NOTE, api_line, replay_notes
from evalmock.harness.results.audit_results import UNSEEN_SKIP, Results
from evalmock.harness.results.findings import Example, RequestRecord, request_shape
from evalmock.harness.results.incomplete import Shortfall
from evalmock.harness.results.throttling import ThrottleReport
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.secrets.redactor import Redactor

from .builders import correction_case, hand_case, page

LIST = "/v1/agents/{agentId}/test-set/cases"


def test_secrets_become_their_variables() -> None:
    redactor = Redactor("tok-123", "tok-123-second", "tok-old", "tok-gone")
    assert (
        redactor.text("a tok-123 and tok-123-second")
        == "a $EVALMOCK_TOKEN and $EVALMOCK_SECOND_TOKEN"
    )
    assert redactor.text("tok-old tok-gone") == "$EVALMOCK_EXPIRED_TOKEN $EVALMOCK_REVOKED_TOKEN"


def test_the_curl_command_expands_only_our_variables() -> None:
    redactor = Redactor("tok-123")
    curl = redactor.curl(
        "GET",
        "http://h/v1/x?a=1&b=$HOME",
        {"Authorization": "Bearer tok-123", "Prefer": "code=503 $x", "User-Agent": "python"},
    )
    assert "tok-123" not in curl
    words = shlex.split(curl)
    assert "Authorization: Bearer $EVALMOCK_TOKEN" in words  # double-quoted: the shell expands it
    assert '"Authorization: Bearer $EVALMOCK_TOKEN"' in curl
    assert "'http://h/v1/x?a=1&b=$HOME'" in curl and "'Prefer: code=503 $x'" in curl
    assert "User-Agent" not in curl


def request(case_id: str = "corr-1", limit: int = 25) -> RequestRecord:
    url = f"http://h/v1/agents/a/test-set/cases?projectId=p&limit={limit}"
    return RequestRecord("GET", url, {}, 200, f"curl -sS -i '{url}'")


def results_with(breaking: int = 45) -> Results:
    """A test-set audit where one defect breaks `breaking` responses (each a different case id)."""
    results = Results(Policy(), ("test-set",))
    results.passed(find_check("page_is_newest_first", "test-set"))
    updated = find_check("updated_at_is_added_at_until_retired", "test-set")
    shape = request_shape("GET", LIST, 200)
    for number in range(breaking):
        message = (
            f"an active case's updatedAt differs from its addedAt (case 'corr-{number}')\n"
            f"expected: 2026-11-20T09:15:02Z\nreceived: 2030-01-01T00:00:00Z {'padding ' * 60}"
        )
        results.breach(
            updated,
            Example(
                message,
                request(f"corr-{number}"),
                f"/data/{number % 25}/updatedAt",
                '"2030-01-01T00:00:00Z"',
            ),
            shape=shape,
        )
    results.breach(
        find_check("last_page_has_no_next_cursor", "test-set"),
        Example("the last page carries a nextCursor", request(), "/nextCursor", '"abc"'),
        shape=shape,
    )
    results.skipped(
        find_check("default_limit_fills_a_first_page", "test-set"),
        "the targets do not state active_cases",
    )
    return results


def test_many_breaking_responses_of_one_shape_are_one_finding_with_a_count() -> None:
    [finding] = results_with(45).failures
    assert finding.count == 45 and len(finding.examples) == 3
    assert (
        finding.examples[0].pointer == "/data/0/updatedAt"
        and finding.examples[0].value == '"2030-01-01T00:00:00Z"'
    )
    assert finding.shape == "GET /v1/agents/{agentId}/test-set/cases -> 200"


def test_a_rule_broken_in_a_second_way_shows_that_way_among_its_examples() -> None:
    results = Results(Policy(), ("test-set",))
    walk = find_check("walk_yields_every_case_once", "test-set")
    shape = request_shape("GET", LIST, 200)
    for position in range(10):  # the first kind, over and over: the first three are kept
        results.breach(
            walk,
            Example(
                f"walking with limit=3, case 'corr-{position}' came back twice, at positions "
                f"{position} and {position + 3}"
            ),
            shape=shape,
        )
    results.breach(
        walk,
        Example("the walk did not list every active case: expected 878 cases, received 861 cases"),
        shape=shape,
    )
    results.breach(
        walk,
        Example("walking with limit=5, case 'corr-x' came back twice, at positions 1 and 2"),
        shape=shape,
    )
    [finding] = results.failures
    assert finding.count == 12
    assert [e.message[:30] for e in finding.examples] == [
        "walking with limit=3, case 'co",
        "walking with limit=3, case 'co",
        "the walk did not list every ac",
    ]
    assert finding.examples[0].message.endswith("positions 0 and 3")  # the first one stays first


def test_another_request_shape_is_another_finding() -> None:
    results = results_with(2)
    updated = find_check("updated_at_is_added_at_until_retired", "test-set")
    results.breach(updated, Example("x"), shape=request_shape("GET", LIST, 400))
    assert sorted(f.count for f in results.failures) == [1, 2]


def test_an_inferred_rule_warns_by_default_and_fails_when_strict() -> None:
    check = find_check("last_page_has_no_next_cursor", "test-set")
    lenient, strict = Results(Policy(), ("test-set",)), Results(Policy(strict=True), ("test-set",))
    assert lenient.breach(check, Example("x"), shape="s") == "warned"
    assert strict.breach(check, Example("x"), shape="s") == "failed"
    assert lenient.findings[0].outcome == "warned" and strict.findings[0].outcome == "failed"


def test_a_live_rule_is_off_outside_the_live_profile() -> None:
    check = find_check("no_version_is_the_latest", "gradient")
    pages, live = (
        Results(Policy(), ("gradient",)),
        Results(Policy(profile=LIVE_PROFILE), ("gradient",)),
    )
    assert pages.breach(check, Example("x"), shape="s") is None and not pages.findings
    assert live.breach(check, Example("x"), shape="s") == "failed"


def test_an_inference_digitalocean_s_spec_settles_is_judged_by_its_live_twin_when_live() -> None:
    inferred = find_check("body_is_the_version_asked_by_its_inferred_name", "gradient")
    twin = find_check(inferred.source.settled_live_by, "gradient")
    assert twin.level is Level.LIVE and twin.name == "body_is_the_version_asked_by_the_spec_s_name"
    pages, live = (
        Results(Policy(), ("gradient",)),
        Results(Policy(profile=LIVE_PROFILE), ("gradient",)),
    )
    assert (
        pages.breach(inferred, Example("x"), shape="s") == "warned"
        and pages.breach(twin, Example("x"), shape="s") is None
    )
    assert (
        live.breach(inferred, Example("x"), shape="s") is None
        and live.breach(twin, Example("x"), shape="s") == "failed"
    )
    assert [f.check.name for f in live.findings] == [twin.name]  # one fact, one finding
    assert live.tally(inferred).off and twin.name in live.policy.why_off(inferred.source)


def test_a_check_that_met_responses_but_judged_none_says_why_instead_of_seeing_none() -> None:
    results = Results(Policy(), ("test-set",))
    judge = ResponseJudge("test-set", results, Redactor())
    older = page([{k: v for k, v in hand_case().items() if k != "expert"}, correction_case()])
    for _ in range(3):
        judge.judge(older)
    results.skip_unexercised("test-set", lambda check: UNSEEN_SKIP)
    [skip] = [f for f in results.skips if f.check.name == "hand_cases_are_expert"]
    assert skip.title.startswith(
        "3 responses not judged: hand cases, but no case on the page carries expert"
    )
    [unseen] = [f for f in results.skips if f.check.name == "has_more_page_has_a_next_cursor"]
    assert unseen.title == UNSEEN_SKIP  # a check that met nothing it speaks about still says so


def test_the_junit_failure_body_stays_small_whatever_the_number_of_responses(
    tmp_path: Path,
) -> None:
    path = tmp_path / "junit.xml"
    write_junit(results_with(450), path, Redactor())
    failure = (
        ET.parse(path)
        .getroot()
        .find("testsuite/testcase[@name='updated_at_is_added_at_until_retired']/failure")
    )
    assert failure is not None and len(failure.text or "") <= MAX_JUNIT_TEXT
    assert "450 responses" in (failure.text or "") and "/data/0/updatedAt" in (failure.text or "")
    assert "reproduce: curl" in (failure.text or "")


def test_an_incomplete_audit_is_an_error_in_junit_and_its_verdict_a_property(
    tmp_path: Path,
) -> None:
    path = tmp_path / "junit.xml"
    incomplete = Results(Policy(), ("test-set",))
    incomplete.skipped(
        find_check("default_limit_fills_a_first_page", "test-set"),
        "the targets do not state active_cases",
    )
    assert incomplete.verdict is Verdict.INCOMPLETE
    write_junit(incomplete, path, Redactor())
    root = ET.parse(path).getroot()
    assert root.find("properties/property[@name='verdict']").get("value") == "INCOMPLETE"
    error = root.find("testsuite[@name='evalmock']/testcase[@name='audit_is_complete']/error")
    assert error is not None and root.find("testsuite[@name='evalmock']").get("errors") == "1"
    assert error.get("message").startswith(
        "INCOMPLETE: the audit checked too little to say the target conforms "
        "(test-set: no page rule was checked"
    )
    # violations: the failures say it, no error of its own
    write_junit(results_with(1), path, Redactor())
    root = ET.parse(path).getroot()
    assert root.find("properties/property[@name='verdict']").get("value") == "VIOLATIONS"
    assert root.find("testsuite[@name='evalmock']") is None


def test_junit_names_levels_skips_and_passes_warnings_with_their_text(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(results_with(1), path, Redactor())
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    warned = suite.find("testcase[@name='last_page_has_no_next_cursor']")
    assert warned is not None and warned.find("failure") is None
    assert "warning:" in (warned.findtext("system-out") or "")
    level = suite.find("testcase[@name='page_is_newest_first']/properties/property[@name='level']")
    assert level is not None and level.get("value") == "page"
    assert suite.find("testcase[@name='default_limit_fills_a_first_page']/skipped") is not None
    assert all(case.get("classname", "").startswith("test-set.") for case in suite.iter("testcase"))


def test_the_report_leads_with_failures_then_warnings_then_what_was_not_checked_then_passes() -> (
    None
):
    # the page as read: <wbr> (where a check's name may break) is no character
    html_text = render_html(results_with(3), base_url="http://h").replace("<wbr>", "")
    for text in (render_markdown(results_with(3), base_url="http://h"), html_text):
        headings = (
            "Failures (1 check, 1 finding)",
            "Warnings (1 check, 1 finding)",
            "Not checked",
            "Passed",
        )
        order = [text.index(heading) for heading in headings]
        assert order == sorted(order)
        assert text.index("test-set: failed") < order[0]  # a summary line per API at the top
        assert (
            "updated_at_is_added_at_until_retired" in text and "When the case last changed" in text
        )


def test_the_report_says_why_an_audit_is_incomplete() -> None:
    results = Results(Policy(), ("test-set",))
    results.selected["test-set"] = {"walk_yields_every_case_once"}
    results.skipped(find_check("walk_yields_every_case_once", "test-set"), "no token: pass --token")
    assert results.verdict is Verdict.INCOMPLETE
    text = render_markdown(results, base_url="http://h")
    assert "INCOMPLETE" in text and "no page rule was checked" in text and "pass --token" in text


def test_the_report_says_why_a_part_is_incomplete_when_a_rule_failed_too() -> None:
    """A failure decides the verdict; an API left unjudged (by throttling here) is still said, with
    why, in both reports as in the summary."""
    results = results_with(1)
    results.throttling.given_up = 2
    assert results.verdict is Verdict.VIOLATIONS
    reason = (
        "2 requests were still throttled after waiting, and no check judged them (see Throttling)"
    )
    markdown = render_markdown(results, base_url="http://h")
    assert (
        "## Incomplete\n\nBesides what failed, these parts of the audit are incomplete:" in markdown
    )
    assert f"- {reason}" in markdown
    assert f"<li>{reason}</li>" in render_html(results, base_url="http://h")


def test_the_html_report_escapes_what_it_quotes() -> None:
    results = results_with(1)
    check = find_check("hand_case_id_starts_with_case", "test-set")
    results.breach(check, Example("bad id <b>x</b>", request()), shape="s")
    text = render_html(results, base_url="http://h")
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text


def test_the_report_format_follows_the_suffix(tmp_path: Path) -> None:
    write_report(results_with(1), tmp_path / "r.html", base_url="http://h", redactor=Redactor())
    write_report(results_with(1), tmp_path / "r.md", base_url="http://h", redactor=Redactor())
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    assert (tmp_path / "r.md").read_text().startswith("# evalmock contract report")


def test_the_summary_prints_each_check_its_level_and_the_verdict() -> None:
    stream = io.StringIO()
    print_summary(results_with(2), Redactor(), stream)
    text = stream.getvalue()
    assert "updated_at_is_added_at_until_retired" in text and "inferred" in text
    assert "FAILED updated_at_is_added_at_until_retired [page] (2×" in text
    assert "WARNING last_page_has_no_next_cursor [inferred]" in text
    assert "VIOLATIONS: 1 checks failed (1 finding), 1 warned (1 finding)" in text


def test_the_summary_folds_the_checks_not_checked_into_one_line_per_reason() -> None:
    # A proxy's summary, where no scenario runs: one line says why, not a table row for each.
    results = Results(Policy(), ("test-set",))
    results.passed(find_check("page_is_newest_first", "test-set"))
    results.skip_unexercised("test-set", lambda check: "not run on traffic")
    stream = io.StringIO()
    print_summary(results, Redactor(), stream)
    text = stream.getvalue()
    skipped = sum(t.outcome == "skipped" for t in results.rows("test-set"))
    assert skipped > 10
    [line] = [ln for ln in text.splitlines() if "checks skipped" in ln]
    assert line.startswith(f"test-set: {skipped} checks skipped: not run on traffic (")
    # the line names the checks, the first of them at least (a long list is shortened in between)
    first = next(t.check.name for t in results.rows("test-set") if t.outcome == "skipped")
    assert first in line
    assert not [ln for ln in text.splitlines() if ln.startswith("│") and "skipped │" in ln]


def test_the_headline_counts_what_the_sections_count() -> None:
    """One check broken on two kinds of request: one failed check, two findings, in the headline and
    the section."""
    results = results_with(1)
    results.breach(
        find_check("updated_at_is_added_at_until_retired", "test-set"),
        Example("another shape", request()),
        shape=request_shape("GET", LIST, 206),
    )
    for text in (
        render_markdown(results, base_url="http://h"),
        render_html(results, base_url="http://h"),
    ):
        assert "VIOLATIONS: 1 checks failed (2 findings), 1 warned (1 finding)" in text
        assert "Failures (1 check, 2 findings)" in text and "Warnings (1 check, 1 finding)" in text


def test_the_service_s_throttling_is_one_item_of_every_output(tmp_path: Path) -> None:
    from evalmock.harness.report.terminal import summary_text

    results = results_with(1)
    results.throttling.waited_out, results.throttling.given_up, results.throttling.longest = (
        5,
        2,
        60.0,
    )
    results.throttling.reasons["asked to wait longer than the longest wait"] = 2
    assert results.verdict is Verdict.VIOLATIONS  # a failure still decides
    assert "2 requests still throttled after waiting (longest wait asked: 60 s" in summary_text(
        results
    )
    assert render_markdown(results, base_url="http://h").count("## Throttling") == 1
    assert "<h2>Throttling</h2>" in render_html(results, base_url="http://h")
    write_junit(results, tmp_path / "j.xml", Redactor())
    [prop] = (
        ET.parse(tmp_path / "j.xml").getroot().findall("./properties/property[@name='throttling']")
    )
    assert "still throttled" in prop.get("value", "")
    clean = Results(Policy(), ("test-set",))
    clean.selected["test-set"] = set()
    clean.passed(find_check("page_is_newest_first", "test-set"))
    assert clean.verdict is Verdict.CONFORMS
    clean.throttling.given_up = 1
    assert clean.verdict is Verdict.INCOMPLETE  # unjudged requests: no CONFORMS
    assert [str(reason) for reason in clean.incomplete_reasons()] == [
        "1 request was still throttled after waiting, and no check judged them (see Throttling)"
    ]
    assert [(r.shortfall, r.api) for r in clean.incomplete_reasons()] == [
        (Shortfall.THROTTLED, None)
    ]


def test_an_api_whose_checks_could_not_judge_a_throttled_answer_is_incomplete_not_conforming() -> (
    None
):
    results = Results(Policy(), ("test-set", "gradient"))
    for api, names in (
        ("test-set", ("request_id_header_is_the_envelope_s", "walk_yields_every_case_once")),
        ("gradient", ("body_is_the_requested_test_case", "each_version_is_that_version")),
    ):
        for name in names:
            results.passed(find_check(name, api))
    unjudged = Unjudged("GET /v1/agents/a/test-set/cases was still throttled (429) after waiting")
    results.skipped(
        find_check("walk_yields_every_case_once", "test-set"), unjudged.reason, unjudged.kind
    )
    results.throttling = ThrottleReport(given_up=1)
    assert results.verdict is Verdict.INCOMPLETE
    assert api_line(results, "test-set").startswith("test-set: incomplete")
    assert api_line(results, "gradient").startswith("gradient: conforms")


def test_the_secrets_legend_names_only_the_variables_of_the_curl_commands_shown() -> None:
    results = results_with(0)
    check, shape = (
        find_check("walk_yields_every_case_once", "test-set"),
        request_shape("GET", LIST, 200),
    )
    # only the first example's curl command is shown
    for token in (
        "$EVALMOCK_TOKEN",
        "$EVALMOCK_TOKEN_2",
    ):
        url = f"http://h/v1/agents/a/test-set/cases?projectId=p&n={token[-1]}"
        results.breach(
            check,
            Example(
                "a case came back twice",
                RequestRecord(
                    "GET", url, {}, 200, f"curl -sS -i '{url}' -H \"Authorization: Bearer {token}\""
                ),
            ),
            shape=shape,
        )
    redactor = Redactor("tok-1234567890")
    # a second token, met in the traffic
    redactor.headers({"Authorization": "Bearer other-token-0987654321"})
    [legend] = [
        note for note in replay_notes(results, redactor) if note.startswith("secrets are replaced")
    ]
    assert "EVALMOCK_TOKEN (" in legend and "EVALMOCK_TOKEN_2" not in legend
    assert "EVALMOCK_TOKEN_2" not in render_markdown(results, base_url="http://h")


def test_the_cursor_note_comes_with_a_shown_curl_sending_one_not_with_a_later_example() -> None:
    results = results_with(0)
    check, shape = (
        find_check("walk_yields_every_case_once", "test-set"),
        request_shape("GET", LIST, 200),
    )
    # the second example's curl is not shown
    for query in (
        "projectId=p",
        "projectId=p&cursor=eyJv.sealed",
    ):
        url = f"http://h/v1/agents/a/test-set/cases?{query}"
        results.breach(
            check,
            Example("a case came back twice", RequestRecord("GET", url, {}, 200, f"curl '{url}'")),
            shape=shape,
        )
    assert SEALED_CURSOR_NOTE not in replay_notes(results, Redactor())


def test_a_curl_sending_a_cursor_comes_with_the_page_s_words_on_how_long_one_is_taken() -> None:
    assert replay_notes(results_with(1), Redactor()) == []  # no cursor, no secret: nothing to say
    walked = results_with(0)
    url = "http://h/v1/agents/a/test-set/cases?projectId=p&cursor=eyJv.sealed"
    walked.breach(
        find_check("walk_yields_every_case_once", "test-set"),
        Example(
            "a case came back twice",
            RequestRecord(
                "GET",
                url,
                {},
                200,
                f"curl -sS -i '{url}' -H \"Authorization: Bearer $EVALMOCK_TOKEN\"",
            ),
        ),
        shape=request_shape("GET", LIST, 200),
    )
    redactor = Redactor("tok-1234567890")
    notes = replay_notes(walked, redactor)
    assert notes[-1] == SEALED_CURSOR_NOTE and "within a day; otherwise 400 bad-input" in notes[-1]
    assert (
        notes[0].startswith("secrets are replaced by environment variables")
        and "EVALMOCK_TOKEN" in notes[0]
    )
    empty = results_with(0)  # `cursor=` sent empty is no cursor to be taken or not
    url = "http://h/v1/agents/a/test-set/cases?projectId=p&cursor=&limit=0"
    empty.breach(
        find_check("walk_yields_every_case_once", "test-set"),
        Example("x", RequestRecord("GET", url, {}, 500, f"curl -sS -i '{url}'")),
        shape=request_shape("GET", LIST, 500),
    )
    assert SEALED_CURSOR_NOTE not in replay_notes(empty, Redactor())


def test_a_copy_of_the_results_keeps_its_own_count_of_responses_not_judged() -> None:
    results = Results(Policy(), ("test-set",))
    check = find_check("hand_cases_are_expert", "test-set")
    results.not_judged(check, "an older server's page")
    copied = results.copy()
    # after the copy: the copy keeps its own count
    results.not_judged(check, "an older server's page")
    assert copied.tally(check).not_judged["an older server's page"] == 1
    assert results.tally(check).not_judged["an older server's page"] == 2


def test_control_characters_a_service_sent_are_escaped_so_the_junit_file_stays_xml(
    tmp_path: Path,
) -> None:
    results = Results(Policy(), ("test-set",))
    hostile = "a title \x1b]0;CONFORMS\x07 with \x1b[2J and \x00 in it"
    results.breach(
        find_check("updated_at_is_added_at_until_retired", "test-set"),
        Example(f"{hostile}\nexpected: none\nreceived: \x08x", request(), "/nextCursor", '"\x0c"'),
        shape=request_shape("GET", LIST, 200),
    )
    path = tmp_path / "junit.xml"
    write_junit(results, path, Redactor())
    failure = ET.parse(path).find(".//failure")  # a control character would make this raise
    assert failure is not None
    assert failure.get("message") == (
        "a title \\x1b]0;CONFORMS\\x07 with \\x1b[2J and \\x00 in it: expected none, received "
        "\\x08x at /nextCursor"
    )
    assert "\\x08x" in (failure.text or "")
    assert not any(ord(char) < 32 and char not in "\t\n\r" for char in path.read_text())


def test_what_a_service_sent_cannot_break_out_of_the_markdown_report() -> None:
    from markdown_it import MarkdownIt

    planted = "<img src=x onerror=alert(1)>"
    results = Results(Policy(), ("test-set",))
    results.breach(
        find_check("updated_at_is_added_at_until_retired", "test-set"),
        Example(
            f"updatedAt differs\n```\n{planted}\n```\nexpected: a\nreceived: b",
            request(),
            "/data/0/updatedAt",
            f'"``{planted}``"',
        ),
        shape=request_shape("GET", LIST, 200),
    )
    results.skipped(find_check("default_limit_fills_a_first_page", "test-set"), f"why | {planted}")
    results.notes.append(f"a note [click](javascript:alert(1)) {planted}")
    html = MarkdownIt("commonmark").enable("table").render(render_markdown(results, base_url="h"))
    assert "<img" not in html and 'href="javascript' not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 4  # shown as text, each time


def test_every_output_cites_the_page_by_its_title_and_the_line_of_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page of our own where the rule's words stand on line 3: the line is found, not written down.
    (tmp_path / TEST_SET_PAGE).write_text(
        "Skip to content\n\nWhen the case last changed: its addedAt until it’s retired.\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(PAGES_DIR_VARIABLE, str(tmp_path))
    cited = "(List a project's cases of an agent's test set, line 3)"
    junit = tmp_path / "junit.xml"
    write_junit(results_with(1), junit, Redactor())
    outputs = {
        "markdown": render_markdown(results_with(1), base_url="http://h"),
        "html": render_html(results_with(1), base_url="http://h").replace("<wbr>", ""),
        "junit": junit.read_text(encoding="utf-8"),
    }
    for name, text in outputs.items():
        plain = text.replace("&#x27;", "'").replace("&#39;", "'").replace("&apos;", "'")
        assert cited in plain, name
        assert TEST_SET_PAGE not in text and ".txt" not in text, name
