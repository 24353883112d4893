"""A throttled answer met by chance (a 429, or a 503 that says when to try again) is judged by the
rules of its answer at their levels, never by those of its status, and each finding says where it
came from; the same bad answer met again adds to its finding's count."""

from __future__ import annotations

from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import FAILED, LIVE_PROFILE, Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.document_judge import DocumentJudge
from evalmock.harness.run.judge import MET_BY_CHANCE, ResponseJudge
from evalmock.harness.secrets.redactor import Redactor

from .builders import error, gradient_error


def judged(api: str, *answers: Exchange, policy: Policy, by_chance: bool = True) -> Results:
    results = Results(policy, (api,))
    judge = ResponseJudge(api, results, Redactor(), DocumentJudge(api, policy))
    for answer in answers:
        judge.judge(answer, by_chance=by_chance)
    return results


def test_a_busy_answer_met_by_chance_is_held_to_every_page_rule_of_a_503() -> None:
    busy = error(
        503, "busy", header="another-id", request_id="rid-1", headers={"retry-after": "1.5"}
    )
    results = judged("test-set", busy, policy=Policy())
    assert {(f.check.name, f.outcome) for f in results.findings} == {
        ("response_headers_conformance", FAILED),
        ("request_id_header_is_the_envelope_s", FAILED),
        ("error_code_is_the_page_s", FAILED),
    }
    for finding in results.findings:
        [example] = finding.examples
        last = example.message.splitlines()[-1]
        assert last.startswith(f"{MET_BY_CHANCE}: a throttled answer (503, Retry-After: '1.5')")
        assert example.request is not None and example.request.status == 503


def test_a_conforming_busy_answer_met_by_chance_passes() -> None:
    busy = error(503, "database-busy", headers={"retry-after": "2"})
    results = judged("test-set", busy, policy=Policy(strict=True))
    assert not results.findings
    assert {t.check.name for t in results.rows("test-set") if t.passed} >= {
        "response_headers_conformance",
        "request_id_header_is_the_envelope_s",
        "error_code_is_the_page_s",
    }


def test_the_same_bad_answer_met_again_is_one_finding_with_a_count() -> None:
    busy = error(503, "database-busy", headers={"retry-after": "1.5"})
    results = judged("test-set", busy, busy, busy, policy=Policy())
    [finding] = results.findings
    assert finding.check.name == "response_headers_conformance" and finding.count == 3


def test_a_throttled_answer_s_status_breaks_no_rule() -> None:
    """DigitalOcean's 503 with Retry-After is the service's throttling: not_a_server_error
    (inferred) judges the same answer when it is no throttled one, and never when it is."""
    busy = gradient_error(
        503, {"id": "server_error", "message": "busy"}, headers={"retry-after": "1"}
    )
    strict = Policy(strict=True)
    plainly = judged("gradient", busy, policy=strict, by_chance=False)
    assert {f.check.name for f in plainly.failures} == {"not_a_server_error"}
    assert not judged("gradient", busy, policy=strict).findings


def test_a_429_on_digitalocean_is_judged_at_the_live_level_only() -> None:
    """Its error body and its ratelimit-* headers are DigitalOcean's live spec: judged in the live
    profile, as any 429 is, and not otherwise."""
    throttled = gradient_error(
        429,
        {"id": "too_many_requests", "message": "API Rate limit exceeded."},
        headers={"ratelimit-limit": "5000", "ratelimit-remaining": "soon", "retry-after": "1"},
    )
    assert not judged("gradient", throttled, policy=Policy(strict=True)).findings
    live = judged("gradient", throttled, policy=Policy(profile=LIVE_PROFILE))
    [finding] = live.failures
    assert finding.check is LIVE_SPEC
    assert MET_BY_CHANCE in finding.examples[0].message


def test_a_429_on_the_test_set_api_is_left_open() -> None:
    bare = Exchange(
        method="GET",
        url=error(429, "").url,
        status=429,
        headers={"content-type": "text/plain", "retry-after": "1"},
        body=b"slow down",
    )
    results = judged("test-set", bare, policy=Policy(strict=True))
    assert not results.findings
