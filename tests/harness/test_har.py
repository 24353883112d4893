"""`evalmock contract --har FILE`: recorded traffic judged offline by every per-response and
document check, with the audit's outputs and exit codes; scenario checks skipped (they need a live
service); other hosts and paths ignored and counted; the token never in any output."""

from __future__ import annotations

import base64
import gc
import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from evalmock.cli import main
from evalmock.harness.checks.cursor_binding import SEALED_REASON
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.registry import SCENARIO
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.traffic.audit import NO_WALK, SCENARIO_SKIP, TrafficAudit
from evalmock.harness.traffic.har import HarError, audit_har, read_har

from .builders import PROJECT, correction_case, error, evaluation_answer, hand_case, page

SERVICE = "https://api.example.test"
SECRET = "har-S3cret-Token-2718"


def entry(
    exchange: Exchange, *, url: str | None = None, base64_body: bool = False
) -> dict[str, Any]:
    """A HAR entry as a browser's developer tools write it, for an exchange (its URL moved to
    SERVICE)."""
    address = url or SERVICE + exchange.url.split("127.0.0.1:8080", 1)[1]
    text = base64.b64encode(exchange.body).decode() if base64_body else exchange.body.decode()
    return {
        "startedDateTime": "2026-11-30T10:00:00.000Z",
        "time": 12.5,
        "cache": {},
        "timings": {"send": 0, "wait": 12, "receive": 0.5},
        "request": {
            "method": "GET",
            "url": address,
            "httpVersion": "HTTP/2",
            "cookies": [],
            "queryString": [],
            "headersSize": -1,
            "bodySize": 0,
            "headers": [
                {"name": ":authority", "value": "api.example.test"},
                {"name": "authorization", "value": f"Bearer {SECRET}"},
            ],
        },
        "response": {
            "status": exchange.status,
            "statusText": "",
            "httpVersion": "HTTP/2",
            "cookies": [],
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(exchange.body),
            "headers": [{"name": name, "value": value} for name, value in exchange.headers.items()],
            "content": {
                "size": len(exchange.body),
                "mimeType": "application/json",
                "text": text,
                **({"encoding": "base64"} if base64_body else {}),
            },
        },
    }


def write_har(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(
        json.dumps(
            {
                "log": {
                    "version": "1.2",
                    "creator": {"name": "a browser", "version": "1"},
                    "entries": entries,
                }
            }
        )
    )
    return path


def too_long_page() -> Exchange:
    """The planted defect: a page of three cases for limit=2."""
    cases = [
        hand_case(
            id=f"case-{n}",
            addedAt=f"2026-11-20T09:1{9 - n}:00Z",
            updatedAt=f"2026-11-20T09:1{9 - n}:00Z",
        )
        for n in range(3)
    ]
    return page(cases, limit=2)


def other_traffic() -> list[dict[str, Any]]:
    """What else a browser records: a CDN, the app's other paths, a request that got no answer, a
    body not saved."""
    unanswered = entry(page())
    unanswered["response"] = {
        "status": 0,
        "statusText": "",
        "httpVersion": "",
        "headers": [],
        "cookies": [],
        "content": {"size": 0, "mimeType": ""},
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": -1,
        "_error": "net::ERR_BLOCKED_BY_CLIENT",
    }
    unsaved = entry(page())
    del unsaved["response"]["content"]["text"]  # saved without content
    return [
        entry(page(), url="https://cdn.example.test/assets/app.js"),
        entry(page(), url=SERVICE + "/v1/health"),
        unanswered,
        unsaved,
    ]


def test_a_planted_defect_fails_the_audit_with_the_request_that_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    har = write_har(
        tmp_path / "session.har",
        [
            entry(page()),
            entry(too_long_page()),
            *other_traffic(),
            entry(evaluation_answer(), base64_body=True),
        ],
    )
    code = main(
        [
            "contract",
            "--har",
            str(har),
            "--base-url",
            SERVICE,
            "--report",
            str(tmp_path / "report.md"),
            "--junit",
            str(tmp_path / "junit.xml"),
        ]
    )
    out = capsys.readouterr()

    assert code == Verdict.VIOLATIONS.exit_code
    report = (tmp_path / "report.md").read_text()
    assert "`page_holds_at_most_limit` (test-set, page)" in report
    assert (
        f"`GET {SERVICE}/v1/agents/acme.drafting/test-set/cases?" in report and "limit=2" in report
    )
    assert "At `/data/2`" in report
    assert (
        "not judged: 1 of other hosts; 1 of other paths or methods; 1 without a response (blocked, "
        "failed or "
        "cancelled in the browser); 1 without their response body recorded"
    ) in report
    for text in (out.out, out.err, report, (tmp_path / "junit.xml").read_text()):
        assert SECRET not in text
    assert "Authorization: Bearer $EVALMOCK_TOKEN" in report


def busy_traffic() -> list[dict[str, Any]]:
    """Twelve requests for pages; six first get the page's 503 database-busy, and the client asks
    each again after its Retry-After: three are busy again, and get their page the third time.
    Then one DigitalOcean test case."""
    limits = range(2, 14)

    def busy(limit: int) -> dict[str, Any]:
        return entry(
            error(
                503,
                "database-busy",
                headers={"retry-after": "1"},
                query=f"projectId={PROJECT}&limit={limit}",
            )
        )

    first = [busy(n) if n % 2 else entry(page(limit=n)) for n in limits]
    again = [busy(n) if n % 4 == 1 else entry(page(limit=n)) for n in limits if n % 2]
    third = [entry(page(limit=n)) for n in limits if n % 4 == 1]
    return first + again + third + [entry(evaluation_answer())]


def test_a_recording_s_busy_answers_are_told_with_their_share_and_the_requests_they_hit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    har = write_har(tmp_path / "busy.har", busy_traffic())
    report = tmp_path / "report.md"
    code = main(["contract", "--har", str(har), "--base-url", SERVICE, "--report", str(report)])
    console = capsys.readouterr().out

    assert code == Verdict.CONFORMS.exit_code, console
    # 22 answers: 6 of 13 first tries busy (one of DigitalOcean's), 3 of 9 tries the client sent
    # again after a wait
    share = (
        "9 of 22 answers (41%) were busy or throttled, to GET /v1/agents/{agentId}/test-set/cases "
        "(9). Answers sent again after a wait were throttled about as often (3 of 9, 33%) as first "
        "tries (46%): the share is the service's own, not the clients' pace"
    )
    [line] = [ln for ln in console.splitlines() if ln.startswith("throttling (the service's")]
    assert share in " ".join(line.split()), line
    assert "traffic the audit did not send" in line and "waited out (" not in line
    assert "--rate-limit" not in line
    written = " ".join(report.read_text().split())
    assert share in written and "not the audit's to send again" in written


def test_a_conforming_recording_conforms_though_no_scenario_check_ran(tmp_path: Path) -> None:
    har = write_har(
        tmp_path / "fine.har",
        [entry(page([hand_case(), correction_case()])), entry(evaluation_answer())],
    )
    audit = TrafficAudit(Policy())
    audit_har(har, audit, SERVICE)
    results = audit.snapshot()

    assert results.verdict is Verdict.CONFORMS, list(map(str, results.incomplete_reasons()))
    scenario_rows = [t for t in results.rows() if t.check.kind == SCENARIO and not t.off]
    assert scenario_rows and all(t.outcome == "skipped" for t in scenario_rows)
    reasons = {f.check.name: f.title for f in results.skips if f.check.kind == SCENARIO}
    assert (
        reasons.pop("walk_yields_every_case_once")
        == reasons.pop("page_after_has_more_is_not_empty")
        == NO_WALK
    )
    assert {
        reasons.pop(f"cursor_is_bound_to_the_{aspect}")
        for aspect in ("list", "agent", "filters", "caller")
    } == {SEALED_REASON}
    assert set(reasons.values()) == {SCENARIO_SKIP}
    assert main(["contract", "--har", str(har), "--quiet"]) == 0


def test_each_entry_is_let_go_once_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A browser's HAR of thousands of pages: a judged page (with the parsed body it keeps) is not
    held until the last is judged, so the audit's memory does not grow with the recording."""
    har = write_har(
        tmp_path / "long.har", [entry(page([hand_case(id=f"case-{n}")])) for n in range(5)]
    )
    audit = TrafficAudit(Policy())
    judged: list[weakref.ref[Exchange]] = []
    alive_at_each: list[int] = []
    judge = audit.judge

    def judging(api: str, exchange: Exchange) -> Any:
        gc.collect()
        alive_at_each.append(sum(ref() is not None for ref in judged))
        judged.append(weakref.ref(exchange))
        return judge(api, exchange)

    monkeypatch.setattr(audit, "judge", judging)
    audit_har(har, audit, SERVICE)
    assert len(judged) == 5
    assert max(alive_at_each) <= 1  # at most the one before: a check may keep the last page it read


def test_a_recording_without_an_api_s_traffic_is_incomplete(tmp_path: Path) -> None:
    har = write_har(tmp_path / "one-api.har", [entry(page()), *other_traffic()])
    assert main(["contract", "--har", str(har)]) == Verdict.INCOMPLETE.exit_code
    assert main(["contract", "--har", str(har), "--api", "test-set"]) == Verdict.CONFORMS.exit_code


def test_entries_outside_the_base_url_are_other_hosts(tmp_path: Path) -> None:
    har = write_har(tmp_path / "elsewhere.har", [entry(too_long_page())])
    audit = TrafficAudit(Policy())
    audit_har(har, audit, "https://staging.example.test")
    assert audit.judged == 0 and audit.not_judged == {"of other hosts": 1}


def test_an_audit_that_judged_nothing_at_its_base_url_names_the_hosts_the_api_requests_went_to(
    tmp_path: Path,
) -> None:
    entries = [
        entry(
            page(), url=f"http://ana:pw@127.0.0.1:18701/v1/agents/a/test-set/cases?projectId=p{n}"
        )
        for n in range(2)
    ]
    har = write_har(tmp_path / "proxied.har", [*entries, entry(page()), *other_traffic()])
    audit = TrafficAudit(Policy())
    audit_har(har, audit, "http://127.0.0.1:18705")  # the proxy's address, where the app sent them
    [note] = [
        n for n in audit.snapshot().notes if n.startswith("requests of the audited operations")
    ]
    # the credentials in a URL are never named
    assert note == (
        "requests of the audited operations went to other hosts than --base-url "
        "http://127.0.0.1:18705: "
        "http://127.0.0.1:18701 (2), https://api.example.test (2); pass one of them as --base-url "
        "to "
        "judge its answers"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json at all", "is not JSON"),
        ('{"log": {"entries": {}}}', "not a HAR log"),
        ('{"log": {"entries": [{"response": {"status": 200}}]}}', "entry 1: not a HAR entry"),
    ],
)
def test_a_file_that_is_no_har_log_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    path = tmp_path / "bad.har"
    path.write_text(content)
    assert main(["contract", "--har", str(path)]) == 2
    assert problem in capsys.readouterr().err
    with pytest.raises(HarError, match=problem):
        list(read_har(path))


def test_a_file_with_a_byte_order_mark_or_a_lone_surrogate_is_read(tmp_path: Path) -> None:
    # Windows tools write a BOM; a browser writes a lone surrogate in a body as an escape, which
    # orjson refuses. The stream's parser reads that escape as "?", where the standard one keeps it.
    har = json.dumps({"log": {"entries": [entry(too_long_page())]}})
    odd = json.dumps({"log": {"entries": [{**entry(too_long_page()), "comment": "\ud800"}]}})
    for name, raw in (("bom.har", b"\xef\xbb\xbf" + har.encode()), ("surrogate.har", odd.encode())):
        path = tmp_path / name
        path.write_bytes(raw)
        [recorded] = list(read_har(path))
        assert recorded.exchange is not None and recorded.exchange.body == too_long_page().body
        expected = json.loads(raw.decode("utf-8-sig").replace("\\ud800", "?"))
        assert recorded.entry == expected["log"]["entries"][0]


def test_a_file_that_is_not_utf8_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "latin1.har"
    path.write_bytes('{"log": {"entries": [], "comment": "café"}}'.encode("latin-1"))
    with pytest.raises(HarError, match="is not JSON"):
        list(read_har(path))


def test_without_base_url_or_har_the_command_says_what_it_needs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["contract"]) == 2
    assert "--base-url is required (or a --targets file with base_url, or --har FILE" in (
        capsys.readouterr().err
    )
