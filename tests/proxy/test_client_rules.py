"""The proxy judges the app too: what a misbehaving client sends through it (an edited cursor sent
again after its 400, a cursor with other filters, no wait after a 503) is a client finding in the
summary, the report and JUnit, and fails the exit code; a correct client's walk conforms; each
caller is judged apart, and no token is kept."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.client_rules import judge
from evalmock.contract.client_verdict import CONFORMS, INCOMPLETE, VIOLATIONS
from evalmock.contract.operations import operation
from evalmock.contract.targets import ProjectTarget
from evalmock.harness.report import client_section
from evalmock.proxy.client_journal import ClientJournals
from evalmock.proxy.command import _finish
from evalmock.server.targets_file import targets_for

from .conftest import ProxyFactory, RecordedServe, RunningProxy

TOKEN = "demo-user"
OTHER = "demo-other"


@pytest.fixture
def project(recorded_serve: RecordedServe) -> ProjectTarget:
    return next(p for p in targets_for(recorded_serve.world).projects if p.active_cases > 4)


@pytest.fixture
def proxy(
    recorded_serve: RecordedServe, proxy_for: ProxyFactory, tmp_path: Path
) -> Iterator[RunningProxy]:
    outputs = ["--report", str(tmp_path / "report.md"), "--junit", str(tmp_path / "junit.xml")]
    with proxy_for(recorded_serve.base_url, *outputs) as running:
        yield running


def _get(
    proxy: RunningProxy, project: ProjectTarget, token: str | None = TOKEN, **query: str
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if "prefer" in query:
        headers["Prefer"] = query.pop("prefer")
    path = operation("test-set").url_path(agentId=project.agent_id)
    params = {"projectId": project.project_id, "limit": "2", **query}
    return httpx.get(proxy.base_url + path, params=params, headers=headers, timeout=30)


def test_a_misbehaving_client_is_a_client_finding_in_the_summary_and_fails_the_exit_code(
    proxy: RunningProxy,
    project: ProjectTarget,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cursor = _get(proxy, project).json()["nextCursor"]
    edited = cursor[:-2]
    assert _get(proxy, project, cursor=edited).status_code == 400
    _get(proxy, project, cursor=edited)  # sent again after its refusal
    _get(proxy, project, cursor=cursor, kind="hand")  # the cursor with another filter
    assert _get(proxy, project, prefer="code=503").status_code == 503
    _get(proxy, project)  # no wait after Retry-After

    verdict = proxy.session.client_verdict()
    assert verdict.verdict == VIOLATIONS
    broken = {(f["rule"], f["request"]["index"]) for f in verdict.findings}
    assert broken == {
        ("client_sends_the_cursor_as_it_came", 1),
        ("client_sends_the_cursor_as_it_came", 2),
        ("client_starts_again_after_a_refused_cursor", 2),
        ("client_keeps_the_filters_of_its_cursor", 3),
        ("client_waits_retry_after", 5),
    }
    [cut] = [f for f in verdict.findings if f["request"]["index"] == 1]
    assert "(it is request #0's nextCursor cut short)" in cut["problem"]

    assert _finish(proxy.session) == 1  # the service conforms; the app does not
    out = capsys.readouterr().out
    assert "FAILED client_waits_retry_after [page] request #5 GET /v1/agents/" in out
    assert "expected the next request to the list 1 second or more later, received 0." in out
    assert "the app: VIOLATIONS (6 of 6 requests judged; 5 failed, 0 warned;" in out
    report = (tmp_path / "report.md").read_text()
    assert "## The app, judged by the page" in report
    assert "- `FAILED client_keeps_the_filters_of_its_cursor [page] request #3 GET" in report
    junit = (tmp_path / "junit.xml").read_text()
    assert (
        '<testsuite name="client"' in junit and 'name="client_verdict" value="VIOLATIONS"' in junit
    )
    assert TOKEN not in out + report + junit


def test_a_correct_client_walk_conforms_and_says_what_it_did_not_exercise(
    proxy: RunningProxy, project: ProjectTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    page = _get(proxy, project).json()
    _get(proxy, project, limit="3", cursor=page["nextCursor"])  # the page size may change

    verdict = proxy.session.client_verdict()
    assert verdict.verdict == CONFORMS and verdict.findings == []
    skipped = {n["rule"]: n["why"] for n in verdict.not_judged}
    assert skipped["client_waits_retry_after"] == (
        "no 503 with Retry-After was followed by another request to its list"
    )
    assert "client_sends_the_cursor_as_it_came" not in skipped
    # /v2 was not called: its rules are left out, and one note says so
    assert "client_sends_an_integer_version" not in skipped
    assert "client_sends_a_token_to_digitalocean" not in skipped
    # a conforming app leaves the exit code the service's (here INCOMPLETE: /v2 was not used)
    assert _finish(proxy.session) == proxy.session.results().verdict.exit_code == 4
    out = capsys.readouterr().out
    assert "not judged: client_waits_retry_after [page]" in out
    assert out.count("note: no request to gradient: its 2 client rules are left out") == 1
    assert "client_sends_an_integer_version" not in out


def misbehave(proxy: RunningProxy, project: ProjectTarget) -> None:
    """A cursor cut short and sent again after its 400, and no wait after a 503's Retry-After."""
    edited = _get(proxy, project).json()["nextCursor"][:-2]
    for _ in range(2):
        assert _get(proxy, project, cursor=edited).status_code == 400
    assert _get(proxy, project, prefer="code=503").status_code == 503
    _get(proxy, project)


def test_judge_service_leaves_the_app_unjudged_and_the_exit_code_the_service_s(
    recorded_serve: RecordedServe,
    proxy_for: ProxyFactory,
    project: ProjectTarget,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outputs = ["--report", str(tmp_path / "report.md"), "--junit", str(tmp_path / "junit.xml")]
    options = ["--judge", "service", "--api", "test-set", *outputs]
    with proxy_for(recorded_serve.base_url, *options) as proxy:
        misbehave(proxy, project)
        assert proxy.session.client_verdict() is None
        assert proxy.session.audit.judged == 5
        results = proxy.session.results()
        assert results.verdict.exit_code == 0
        assert _finish(proxy.session) == 0  # the app broke page rules: not this run's business
    out = capsys.readouterr().out
    assert "the app:" not in out and "client_" not in out
    assert "## The app, judged by the page" not in (tmp_path / "report.md").read_text()
    assert '<testsuite name="client"' not in (tmp_path / "junit.xml").read_text()


def test_judge_client_leaves_the_service_unjudged_and_the_exit_code_the_app_s(
    recorded_serve: RecordedServe,
    proxy_for: ProxyFactory,
    project: ProjectTarget,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with proxy_for(recorded_serve.base_url, "--judge", "client") as proxy:
        page = _get(proxy, project)
        _get(proxy, project, cursor=page.json()["nextCursor"])
        assert "evalmock-violations" not in page.headers
        assert proxy.session.audit.judged == 0
        assert proxy.session.client_verdict().verdict == CONFORMS  # type: ignore[union-attr]
        # the service's verdict would be INCOMPLETE (nothing judged): the app's is the exit code
        assert _finish(proxy.session) == 0
    out = capsys.readouterr().out
    assert "the app: CONFORMS" in out
    assert "test-set: " not in out  # no summary of the service's rules

    with proxy_for(recorded_serve.base_url, "--judge", "client") as proxy:
        misbehave(proxy, project)
        assert _finish(proxy.session) == 1
    with proxy_for(recorded_serve.base_url, "--judge", "client") as proxy:
        assert _finish(proxy.session) == 4  # an app that sent nothing is never a pass


def test_each_caller_is_judged_apart(proxy: RunningProxy, project: ProjectTarget) -> None:
    cursor = _get(proxy, project).json()["nextCursor"]
    assert _get(proxy, project, prefer="code=503").status_code == 503
    # another app, at once: not the first one's retry; and the first one's cursor in its hands
    _get(proxy, project, token=OTHER, cursor=cursor)

    verdict = proxy.session.client_verdict()
    [finding] = verdict.findings
    assert finding["rule"] == "client_sends_the_cursor_as_it_came"
    assert (finding["request"]["caller"], finding["request"]["index"]) == (2, 0)


def test_a_journal_keeps_no_token_and_drops_its_oldest_entries_saying_so() -> None:
    journals = ClientJournals(max_callers=1, max_entries=2)
    url = (
        "http://upstream/v1/agents/a/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
    )
    for at in range(3):
        journals.add("test-set", "GET", url, float(at), 200, [("Authorization", "Bearer s3cr3t")])
    journals.add("test-set", "GET", url, 4.0, 200, [("Authorization", "Bearer another")])
    verdict = journals.verdict()
    assert verdict.verdict == INCOMPLETE and verdict.dropped == 1 and verdict.requests == 2
    assert "1 request of callers past the first 1 was not journaled" in verdict.notes[-1]
    assert "s3cr3t" not in repr(journals.__dict__) and "s3cr3t" not in str(verdict.to_json())
    lines = io.StringIO()
    client_section.print_summary(verdict, _NoRedactor(), lines)
    assert "the app: INCOMPLETE" in lines.getvalue()


class _NoRedactor:
    def text(self, text: str) -> str:
        return text


def test_what_an_app_sent_cannot_break_out_of_the_report_s_markup() -> None:
    journals = ClientJournals()
    hostile = "/v1/agents/a`b<img src=x onerror=alert(1)>/test-set/cases?projectId=not-a-uuid"
    journals.add("test-set", "GET", "http://upstream" + hostile, 0.0, 400, [])
    verdict = journals.verdict()
    assert verdict.verdict == VIOLATIONS
    markdown = "\n".join(client_section.markdown_section(verdict))
    assert "- `` FAILED client_sends_a_token [page] request #0 GET /v1/agents/a`b<img" in markdown
    page = client_section.html_section(verdict)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


@pytest.mark.parametrize(
    ("judge", "said"),
    [
        ("client", "(2 requests of the app judged so far)"),
        ("service", "(2 exchanges judged so far)"),
        ("both", "(2 exchanges and 2 requests of the app judged so far)"),
    ],
)
def test_the_outputs_line_counts_what_judge_judges(
    recorded_serve: RecordedServe,
    proxy_for: ProxyFactory,
    project: ProjectTarget,
    tmp_path: Path,
    judge: str,
    said: str,
) -> None:
    options = ["--judge", judge, "--api", "test-set", "--report", str(tmp_path / "report.md")]
    with proxy_for(recorded_serve.base_url, *options) as proxy:
        page = _get(proxy, project)
        _get(proxy, project, cursor=page.json()["nextCursor"])
        proxy.session.write_outputs()
        assert said in proxy.stream.getvalue()


def test_the_headline_counts_in_words_singular_for_one() -> None:
    one = judge([_list_request(0.0)])  # one request: most rules have nothing to judge
    assert client_section.headline(one) == (
        f"the app: CONFORMS (1 of 1 request judged; 0 failed, 0 warned; "
        f"{len(one.not_judged)} rules not judged)"
    )
    dropped = judge([_list_request(0.0), _list_request(1.0, cursor="x")], dropped=1)
    assert dropped.not_judged[0]["why"].startswith("1 occasion not judged")


def _list_request(at: float, **query: str) -> ClientExchange:
    path = operation("test-set").url_path(agentId="example")
    sent = (("projectId", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"), *query.items())
    return ClientExchange("test-set", "GET", path, sent, at, 200, True)
