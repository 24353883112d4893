"""In front of a service that breaks the pages, each broken rule is told on a live line, in the
response's evalmock-violations header and in the report, with the request that showed it; the answer
itself is unchanged."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from evalmock.cli import main
from evalmock.contract.operations import operation
from evalmock.contract.targets import load_targets
from evalmock.harness.checks.registry import find_check
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import Example
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.judge import Breach
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.proxy.violations import (
    HEADER,
    MAX_REASON,
    header_value,
    request_line,
    throttled_line,
    why,
)
from harness.builders import PROJECT, TEST_CASE

from .conftest import ProxyFactory, RunningProxy
from .upstreams import ANSWERED_VERSION

SECRET = "pr0xy-S3cret-Token-4711"
# version 3 is not the latest, so answering it shows the version's query name is read: a page rule
TARGETS = f"""
[[gradient.test_cases]]
uuid = "{TEST_CASE}"
versions = [1, 2, {ANSWERED_VERSION}, {ANSWERED_VERSION + 1}]
"""


@dataclass(frozen=True)
class Defect:
    path: str
    query: str
    member: str  # what the header says of it, before its reason
    pointer: str | None
    reason: str  # what the console line says of why


DEFECTS = {
    "page longer than limit": Defect(
        operation("test-set").url_path(agentId="too-long"),
        f"projectId={PROJECT}&limit=3",
        'page_holds_at_most_limit;level=page;outcome=failed;at="/data/3"',
        "/data/3",
        "expected <= 3, received 4",
    ),
    "retired case without include": Defect(
        operation("test-set").url_path(agentId="retired-without-include"),
        f"projectId={PROJECT}",
        'retired_cases_only_with_include_retired;level=page;outcome=failed;at="/data/1/retired"',
        "/data/1/retired",
        "expected active cases only, received {",
    ),
    "another version than the one asked for": Defect(
        operation("gradient").url_path(test_case_uuid=TEST_CASE),
        "evaluation_test_case_version=2",
        'body_is_the_requested_version;level=page;outcome=failed;at="/evaluation_test_case/version"',
        "/evaluation_test_case/version",
        f"expected 2, received {ANSWERED_VERSION}",
    ),
    "a 500": Defect(
        operation("test-set").url_path(agentId="failing"),
        f"projectId={PROJECT}",
        "not_a_server_error;level=inferred;outcome=warned",
        None,
        "Server error",
    ),
}


@dataclass(frozen=True)
class Audited:
    proxy: RunningProxy
    folder: Path


@pytest.fixture(scope="module")
def audited(
    broken: str, proxy_for: ProxyFactory, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Audited]:
    folder = tmp_path_factory.mktemp("broken-proxy")
    (folder / "targets.toml").write_text(TARGETS)
    outputs = [
        "--report",
        str(folder / "report.md"),
        "--junit",
        str(folder / "junit.xml"),
        "--har",
        str(folder / "traffic.har"),
    ]
    with proxy_for(broken, "--targets", str(folder / "targets.toml"), *outputs) as proxy:
        yield Audited(proxy, folder)


@pytest.mark.parametrize("name", list(DEFECTS))
def test_each_violation_is_told_live_and_in_the_header(
    audited: Audited, broken: str, name: str
) -> None:
    defect = DEFECTS[name]
    url = f"{defect.path}?{defect.query}"
    direct = httpx.get(broken + url, headers={"Authorization": f"Bearer {SECRET}"})
    told_before = len(audited.proxy.lines())  # other tests of the module may have sent it too
    proxied = httpx.get(audited.proxy.base_url + url, headers={"Authorization": f"Bearer {SECRET}"})

    assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
    members = [member.strip() for member in proxied.headers[HEADER].split(",")]
    assert any(member.startswith(defect.member + ';reason="') for member in members), members
    check, level = defect.member.split(";")[:2]
    [line] = [
        line
        for line in audited.proxy.lines()[told_before:]
        if f" {check} [{level.removeprefix('level=')}]" in line and url in line
    ]
    assert line.startswith("evalmock proxy: ")
    assert f"{broken}{url} -> {direct.status_code}" in line
    if defect.pointer is not None:
        assert f"(at {defect.pointer})" in line
    assert f": {defect.reason}" in line  # why it broke, not only what


def test_a_schema_failure_says_which_property_and_where(audited: Audited, broken: str) -> None:
    url = operation("test-set").url_path(agentId="without-run-id") + f"?projectId={PROJECT}"
    told_before = len(audited.proxy.lines())
    proxied = httpx.get(audited.proxy.base_url + url, headers={"Authorization": f"Bearer {SECRET}"})
    [member] = [
        m
        for m in proxied.headers[HEADER].split(", ")
        if m.startswith("response_schema_conformance;")
    ]
    assert member.endswith(
        ';at="/data/1";reason="Response violates schema: \\"runId\\" is a required property"'
    )
    [line] = [
        line
        for line in audited.proxy.lines()[told_before:]
        if "response_schema_conformance" in line and url in line
    ]
    assert line.endswith(
        '-> 200: Response violates schema: "runId" is a required property (at /data/1)'
    )


def test_a_conforming_answer_gets_no_header(audited: Audited) -> None:
    url = operation("test-set").url_path(agentId="fine") + f"?projectId={PROJECT}"
    response = httpx.get(
        audited.proxy.base_url + url, headers={"Authorization": f"Bearer {SECRET}"}
    )
    assert response.status_code == 200 and HEADER not in response.headers


def test_the_report_names_each_violation_with_its_request_and_keeps_the_token_out(
    audited: Audited, broken: str
) -> None:
    _send_each_defect(audited)
    results = audited.proxy.session.write_outputs()
    assert results.verdict is Verdict.VIOLATIONS
    report = (audited.folder / "report.md").read_text()
    for defect in DEFECTS.values():
        check = defect.member.split(";")[0]
        assert f"`{check}`" in report
        # the request as sent (then the headers its curl sends, when the example sent some)
        assert f"`GET {broken}{defect.path}?{defect.query}" in report
    assert "Authorization: Bearer $EVALMOCK_TOKEN" in report  # the curl that reproduces it
    assert f"| upstream | `{broken}` |" in report  # the header names what the proxy forwarded to
    for output in ("report.md", "junit.xml", "traffic.har"):
        assert SECRET not in (audited.folder / output).read_text()
    assert SECRET not in audited.proxy.stream.getvalue()


def test_the_recorded_har_audits_offline_to_the_same_findings(
    audited: Audited, broken: str
) -> None:
    _send_each_defect(audited)
    live = audited.proxy.session.write_outputs()
    har = audited.folder / "traffic.har"
    assert json.loads(har.read_text())["log"]["version"] == "1.2"

    offline = TrafficAudit(live.policy, targets=load_targets(audited.folder / "targets.toml"))
    audit_har(har, offline, broken)
    assert _findings(offline.snapshot()) == _findings(live)
    assert offline.judged == audited.proxy.session.audit.judged

    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        code = main(
            [
                "contract",
                "--har",
                str(har),
                "--base-url",
                broken,
                "--targets",
                str(audited.folder / "targets.toml"),
            ]
        )
    assert code == 1
    assert SECRET not in summary.getvalue()


def _findings(results: Results) -> set[tuple[str, str, str, int]]:
    return {
        (f.check.name, f.outcome, f.shape, f.count) for f in [*results.failures, *results.warnings]
    }


def _send_each_defect(audited: Audited) -> None:
    """Each test sends what it judges: a module's tests may run in any process, in any order."""
    for defect in DEFECTS.values():
        httpx.get(
            f"{audited.proxy.base_url}{defect.path}?{defect.query}",
            headers={"Authorization": f"Bearer {SECRET}"},
        )


def test_the_summary_keeps_the_token_out(audited: Audited) -> None:
    _send_each_defect(audited)
    summary = io.StringIO()
    print_summary(audited.proxy.session.results(), audited.proxy.session.redactor, summary)
    assert "VIOLATIONS" in summary.getvalue() and SECRET not in summary.getvalue()


def test_the_reason_is_the_schema_s_detail_or_what_was_expected_and_received() -> None:
    assert why('Response violates schema\n"runId" is a required property') == (
        "Response violates schema",
        '"runId" is a required property',
    )
    assert why("a page holds more cases than the limit\nexpected: <= 3\nreceived: 4") == (
        "a page holds more cases than the limit",
        "expected <= 3, received 4",
    )
    # A received body that goes on over several lines is not taken for a detail.
    assert why('not refused\nexpected: 400 bad-input\nreceived: 200 {\n  "data": []\n}') == (
        "not refused",
        "expected 400 bad-input, received 200 {",
    )
    assert why("Server error") == ("Server error", "")


def test_a_request_that_leaves_the_document_is_told_with_what_the_service_did_with_it() -> None:
    url = "http://upstream/v1/agents/a/test-set/cases?projectId=p&limit=0"
    assert request_line("GET", url, 400, ["limit"]) == (
        f"REQUEST GET {url} -> 400: leaves the document (limit); the service refused it"
    )
    assert request_line("GET", url, 200, ["limit", "sort (undeclared)"]) == (
        f"REQUEST GET {url} -> 200: leaves the document (limit, sort (undeclared)); the service "
        "answered it, and "
        "should refuse it"
    )


def test_a_throttled_answer_is_told_live_passed_on_and_judged_by_no_rule(
    proxy_for: ProxyFactory, broken: str
) -> None:
    """Behind a gateway that throttles, the console says why a page was not judged, as it
    happens."""
    url = operation("test-set").url_path(agentId="throttled") + f"?projectId={PROJECT}"
    with proxy_for(broken) as proxy:
        proxied = httpx.get(proxy.base_url + url)
        results = proxy.session.results()
    assert (proxied.status_code, proxied.headers["retry-after"]) == (429, "2")
    assert HEADER not in proxied.headers and not results.failures and not results.warnings
    upstream_url = broken + url
    assert (
        f"evalmock proxy: THROTTLED GET {upstream_url} -> 429: the service's throttling, not "
        "judged "
        "(Retry-After: 2)" in proxy.lines()
    )
    assert throttled_line("GET", upstream_url, 429, None).endswith(
        "-> 429: the service's throttling, not judged (no Retry-After)"
    )


def test_a_long_reason_is_shortened_in_ascii_between_words() -> None:
    """The header's text is ASCII: a shortened reason ends with `...`, not a percent-encoded `…`."""
    check = find_check("page_holds_at_most_limit", "test-set")
    message = (
        "a page holds more cases than the limit\nexpected: <= 3\nreceived: " + "case-0042 " * 30
    )
    value = header_value([Breach(check, "failed", Example(message, None, None, None))])
    reason = value.split(';reason="', 1)[1].removesuffix('"')
    assert reason.endswith("case-0042 ...") and len(reason) <= MAX_REASON and "%" not in reason


def test_a_compressed_answer_is_judged_decoded_and_sent_on_as_it_came(
    proxy_for: ProxyFactory, broken: str
) -> None:
    url = operation("test-set").url_path(agentId="compressed") + f"?projectId={PROJECT}"
    with proxy_for(broken) as proxy:
        direct = httpx.get(broken + url, headers={"Accept-Encoding": "identity"})
        proxied = httpx.get(proxy.base_url + url)

    assert proxied.headers["content-encoding"] == "gzip"
    # the compressed bytes, unchanged
    assert proxied.headers["content-length"] == direct.headers["content-length"]
    assert proxied.json() == direct.json()
    assert proxied.headers[HEADER].startswith(
        'retired_cases_only_with_include_retired;level=page;outcome=failed;at="/data/1/retired"'
    )
