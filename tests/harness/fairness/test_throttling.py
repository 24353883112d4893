"""Throttling is the service's, not a defect: behind a gateway that answers every 7th request with
429, the independent service still conforms, a planted defect is still named (once), and throttling
beyond the wait budget is reported as such, never as another rule's failure. Waits are recorded, not
slept."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.run.schemathesis_schema import PHASES
from evalmock.harness.run.throttle import BUDGET_SPENT, Throttle, ThrottleOptions
from shared import Waits

from ..serving import serving
from .conftest import fairness_targets
from .gateway import ThrottlingGateway, other_request_id
from .independent_service import Service

RANDOM_ID = re.compile(r"\b[0-9a-f]{32}\b")


@dataclass(frozen=True)
class Gated:
    base_url: str
    gateway: ThrottlingGateway


@pytest.fixture(scope="module")
def gated() -> Iterator[Gated]:
    gateway = ThrottlingGateway(Service().app)
    with serving(gateway) as base_url:
        yield Gated(base_url, gateway)


@pytest.fixture
def gateway(gated: Gated) -> Iterator[ThrottlingGateway]:
    yield gated.gateway
    gated.gateway.every, gated.gateway.defect, gated.gateway.busy = 7, None, None


def audit(
    gated: Gated, throttle: Throttle, *, phases: tuple[str, ...] = PHASES, workers: int = 1
) -> Results:
    targets = fairness_targets(sealed_cursors=True)
    return run_audit(
        Audit(
            base_url=gated.base_url,
            targets=targets,
            token=targets.token,
            second_token=targets.second_token,
            phases=phases,
            max_examples=3,
            workers=workers,
        ),
        throttle=throttle,
    )


def named(results: Results) -> set[str]:
    return {f.check.name for f in results.failures}


def test_the_default_audit_conforms_behind_a_gateway_answering_every_7th_request_429(
    gated: Gated, gateway: ThrottlingGateway
) -> None:
    waits = Waits()
    before, probes_before = gateway.throttled, gateway.throttled_capability_probes
    results = audit(gated, waits.throttle())
    throttled = gateway.throttled - before - (gateway.throttled_capability_probes - probes_before)
    assert throttled > 20, "the gateway hardly throttled: the test proves nothing"
    assert results.verdict is Verdict.CONFORMS, [
        f"{f.check.name}: {f.title}" for f in results.failures
    ]
    assert not results.warnings and not any("could not judge" in f.title for f in results.skips)
    assert results.throttling.given_up == 0
    # Every 429 waited out and its request sent again, but those to the probes ignored_auth sends
    # from inside itself (no hook reaches them): those are counted, and the check judges the
    # operation on other requests. (Schemathesis's start-up capability probes are judged by no
    # check: left alone.)
    assert results.throttling.waited_out + results.throttling.probes == throttled
    assert {t.check.name for t in results.rows("test-set") if t.passed} >= {
        "ignored_auth",
        "status_code_conformance",
    }
    assert set(waits.asked) == {1.0}  # as long as Retry-After said


def test_a_planted_defect_behind_the_gateway_is_named_once(
    gated: Gated, gateway: ThrottlingGateway
) -> None:
    """One cause, one finding: a mismatched request id fails its own rule and no other."""
    gateway.defect = other_request_id
    results = audit(gated, Waits().throttle(), phases=("coverage",))
    assert results.verdict is Verdict.VIOLATIONS
    assert named(results) == {"request_id_header_is_the_envelope_s"}
    assert not results.warnings
    [example, *_] = next(f for f in results.failures).examples
    assert "expected: " in example.message and example.message.endswith(
        "received: not-the-request-id"
    )


def test_throttling_beyond_the_budget_is_reported_once_and_blames_no_rule(
    gated: Gated, gateway: ThrottlingGateway
) -> None:
    gateway.every = 3
    throttle = Waits().throttle(ThrottleOptions(budget=4.0))
    results = audit(gated, throttle, phases=("coverage",))
    assert not results.failures and not results.warnings  # no 429 judged by any rule
    assert results.verdict is Verdict.INCOMPLETE
    report = results.throttling
    assert report.given_up > 0 and report.reasons[BUDGET_SPENT] == report.given_up
    assert report.waited == 4.0 and report.longest == 1.0
    assert any("still throttled" in str(reason) for reason in results.incomplete_reasons())
    unjudged = [f for f in results.skips if f.title.startswith("could not judge")]
    assert unjudged, "a scenario check that met an unjudged answer says so"


def outcome(gated: Gated, workers: int) -> tuple[object, ...]:
    """Everything an audit concludes: its verdict, each finding with its count and examples, each
    check's tally."""
    results = audit(gated, Waits().throttle(), workers=workers)
    # The service makes up a request id per answer: the same finding quotes another id on each run.
    findings = [
        (
            f.api,
            f.check.name,
            f.outcome,
            f.shape,
            f.count,
            [
                (RANDOM_ID.sub("<id>", e.message), e.request and e.request.status)
                for e in f.examples
            ],
        )
        for f in results.findings
    ]
    tallies = [
        (t.check.api, t.check.name, t.passed, t.failed, t.warned, t.skipped) for t in results.rows()
    ]
    return results.verdict, findings, tallies


def test_workers_change_no_verdict_no_finding_and_no_count(
    gated: Gated, gateway: ThrottlingGateway
) -> None:
    """One worker and four: the same verdict, findings, examples and counts (a defect planted, so
    that there are findings to compare)."""
    gateway.every, gateway.defect = 10**9, other_request_id
    one, four = outcome(gated, 1), outcome(gated, 4)
    assert one[0] is Verdict.VIOLATIONS
    assert one[0] == four[0]
    for ours, theirs in zip(one[1:], four[1:], strict=True):
        assert [pair for pair in zip(ours, theirs, strict=True) if pair[0] != pair[1]] == []


def test_workers_change_no_verdict_and_no_finding_behind_the_gateway(
    gated: Gated, gateway: ThrottlingGateway
) -> None:
    """Behind the gateway, which request meets a 429 depends on timing; each is waited out, so the
    verdict and the findings (rule, outcome, request shape, examples) stay the same. How many
    responses a finding counts may differ by the few that timing sent again (an ignored_auth probe
    met by a 429 is not waited out: the check probes again on a later case)."""
    gateway.defect = other_request_id
    one, four = outcome(gated, 1), outcome(gated, 4)
    assert one[0] is Verdict.VIOLATIONS
    assert one[0] == four[0]

    def without_counts(findings: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [(*finding[:4], finding[5]) for finding in findings]

    assert without_counts(one[1]) == without_counts(four[1])
