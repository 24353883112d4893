"""Redaction, curl commands and the report formats, on hand-made results."""

from __future__ import annotations

import io
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

from evalmock.harness.redact import Redactor
from evalmock.harness.report import print_summary, render_html, render_markdown, write_junit, write_report
from evalmock.harness.results import FAILED, PASSED, SKIPPED, RequestRecord, Results

OP = "GET /v1/agents/{agentId}/test-set/cases"


def test_secrets_become_their_variables() -> None:
    redactor = Redactor("tok-123", "tok-123-second")
    assert redactor.text("a tok-123 and tok-123-second") == "a $EVALMOCK_TOKEN and $EVALMOCK_SECOND_TOKEN"


def test_the_curl_command_expands_only_our_variables() -> None:
    redactor = Redactor("tok-123")
    curl = redactor.curl("GET", "http://h/v1/x?a=1&b=$HOME", {"Authorization": "Bearer tok-123",
                                                              "Prefer": "code=503 $x", "User-Agent": "python"})
    assert "tok-123" not in curl
    words = shlex.split(curl)
    assert "Authorization: Bearer $EVALMOCK_TOKEN" in words  # double-quoted: the shell expands it
    assert '"Authorization: Bearer $EVALMOCK_TOKEN"' in curl
    assert "'http://h/v1/x?a=1&b=$HOME'" in curl and "'Prefer: code=503 $x'" in curl
    assert "User-Agent" not in curl


def _results() -> Results:
    results = Results()
    results.record("test-set", OP, "page_is_newest_first", PASSED, source="response")
    request = RequestRecord("GET", "http://h/v1/agents/a/test-set/cases?projectId=p", {}, 200, "<b>body</b>",
                            "curl -sS -i 'http://h/v1/agents/a/test-set/cases?projectId=p'")
    for _ in range(2):
        results.record("test-set", OP, "hand_case_id_starts_with_case", FAILED, source="response",
                       rule="a hand case's id starts `case-`", message="bad id\nexpected: case-…\nreceived: <x>",
                       request=request)
    results.record("test-set", OP, "default_limit_is_25", SKIPPED, source="scenario", rule="Default 25",
                   message="the targets do not state active_cases")
    return results


def test_failures_are_kept_once_with_a_repeat_count() -> None:
    results = _results()
    assert [f.repeats for f in results.failures] == [2]
    assert [row.status for row in results.rows()] == [SKIPPED, FAILED, PASSED]
    assert not results.conforms


def test_the_markdown_report_lists_rule_request_and_curl() -> None:
    text = render_markdown(_results(), base_url="http://h")
    assert "VIOLATIONS FOUND" in text and "| `hand_case_id_starts_with_case` |" in text
    assert "Rule: a hand case's id starts `case-`" in text and "```sh\ncurl -sS -i" in text
    assert "`default_limit_is_25` on" in text and "active_cases" in text


def test_the_html_report_escapes_what_it_quotes() -> None:
    text = render_html(_results(), base_url="http://h")
    assert "&lt;b&gt;body&lt;/b&gt;" in text and "<b>body</b>" not in text


def test_junit_has_a_testcase_per_check(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(_results(), path, Redactor())
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("skipped") == "1"
    failure = suite.find("testcase[@name='hand_case_id_starts_with_case']/failure")
    assert failure is not None and "curl -sS -i" in (failure.text or "")


def test_the_report_format_follows_the_suffix(tmp_path: Path) -> None:
    write_report(_results(), tmp_path / "r.html", base_url="http://h", redactor=Redactor())
    write_report(_results(), tmp_path / "r.md", base_url="http://h", redactor=Redactor())
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    assert (tmp_path / "r.md").read_text().startswith("# evalmock contract report")


def test_the_summary_prints_each_check_and_the_verdict() -> None:
    stream = io.StringIO()
    print_summary(_results(), Redactor(), stream)
    text = stream.getvalue()
    assert "hand_case_id_starts_with_case" in text and "VIOLATIONS FOUND: 1 checks passed, 1 failed" in text
