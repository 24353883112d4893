"""A gap of the audit (`contract --har`, the live audit's judge, the proxy's lines) quotes a URL or
another value from the service or the traffic cut to MAX_QUOTED characters and how many more there
were: a URL of 10 MiB is never printed whole, and a secret it holds is replaced before it is cut."""

from __future__ import annotations

from pathlib import Path

from evalmock.harness.checks.exchange import MAX_JSON_DEPTH, Exchange
from evalmock.harness.checks.policy import Policy
from evalmock.harness.excerpts import ELLIPSIS, MAX_QUOTED, quoted
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.proxy.violations import request_line, throttled_line, unjudged_line

from .builders import LIST_PATH, PROJECT, page
from .test_har import SERVICE, entry, write_har

MIB = 2**20
LONG = 10 * MIB
SECRET = "gap-S3cret-Token-31415"
# room for what a gap says around the URL: the method, the status, why it was not read
AROUND = 300


def long_url(origin: str, secret_at: int | None = None) -> str:
    """A URL of the list of LONG characters; with `secret_at`, SECRET in its query starting at that
    character."""
    head = f"{origin}{LIST_PATH}?projectId={PROJECT}&q="
    if secret_at is None:
        return head + "a" * (LONG - len(head))
    padding = "a" * (secret_at - len(head))
    return head + padding + SECRET + "b" * (LONG - secret_at - len(SECRET))


def test_a_short_value_is_quoted_whole() -> None:
    assert quoted("GET /v1/agents") == "GET /v1/agents"
    assert quoted("x" * MAX_QUOTED) == "x" * MAX_QUOTED


def test_a_long_value_is_its_start_and_how_many_more_characters_there_were() -> None:
    assert quoted("x" * (MAX_QUOTED + 1)) == "x" * MAX_QUOTED + f"{ELLIPSIS} (1 more character)"
    said = quoted("y" * LONG)
    assert said == "y" * MAX_QUOTED + f"{ELLIPSIS} ({LONG - MAX_QUOTED:,} more characters)"


def unread(url: str) -> Exchange:
    """An answer of the list whose body no parser reads (nested too deep): a gap of the audit."""
    deep = b"[" * (MAX_JSON_DEPTH + 10) + b"]" * (MAX_JSON_DEPTH + 10)
    return Exchange(
        "GET",
        url,
        200,
        {"content-type": "application/json"},
        deep,
        {"authorization": f"Bearer {SECRET}"},
    )


def test_the_judge_s_gap_for_an_answer_not_read_quotes_a_10_mib_url_cut() -> None:
    results = Results(Policy(), ("test-set",))
    ResponseJudge("test-set", results, Redactor()).judge(unread(long_url("http://127.0.0.1:8080")))
    [gap] = results.gaps
    assert len(gap.what) < MAX_QUOTED + AROUND, len(gap.what)
    assert "more characters)" in gap.what


def test_a_secret_across_the_cut_is_replaced_before_the_url_is_cut() -> None:
    results = Results(Policy(), ("test-set",))
    url = long_url("http://127.0.0.1:8080", secret_at=MAX_QUOTED - 6)
    ResponseJudge("test-set", results, Redactor()).judge(unread(url))
    [gap] = results.gaps
    # the secret's variable may be cut; the secret's start is never shown
    assert SECRET[:6] not in gap.what and "aaaa$EVALM" in gap.what


def test_a_har_entry_with_a_10_mib_url_is_a_gap_that_quotes_it_cut(tmp_path: Path) -> None:
    recorded = entry(page(), url=long_url(SERVICE))
    har = write_har(tmp_path / "long-url.har", [recorded])
    audit = TrafficAudit(Policy())
    # its URL passes the strings' bound of a 1 MiB body: the entry is not read, and said so
    audit_har(har, audit, SERVICE, max_body=MIB)
    [gap] = audit.snapshot().gaps
    assert "was not read: its URL passed" in gap.what
    assert len(gap.what) < MAX_QUOTED + AROUND, len(gap.what)


def test_the_proxy_s_lines_quote_a_10_mib_url_cut() -> None:
    url = long_url(SERVICE)
    lines = [
        unjudged_line("GET", url, 200, "nested deeper than 254 levels"),
        request_line("GET", url, 200, ["limit"]),
        throttled_line("GET", url, 429, "9" * LONG),
    ]
    for line in lines:
        assert len(line) < 2 * MAX_QUOTED + AROUND, line[:100]
