"""A throttled answer met by chance is judged by its rules before it is waited out: behind a gateway
that answers now and then with the test-set page's 503 database-busy, a Retry-After of 1.5 s fails
the page's rule on each path the audit reads answers by (its pre-flight, its scenarios,
Schemathesis), once a rule with a count, and is still waited out; whole seconds conform. (A 429
without the envelope, which the page does not list, conforms: test_throttling.py.) Waits are
recorded, not slept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalmock.contract.sources import Level
from evalmock.harness.checks.policy import FAILED, Policy
from evalmock.harness.checks.registry import find_check
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import Finding
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit, run_scenario, run_shard
from evalmock.harness.run.fuzzing import Shard
from evalmock.harness.run.judge import MET_BY_CHANCE
from evalmock.harness.run.options import Audit
from shared import Waits

from ..serving import serving
from .conftest import fairness_targets
from .gateway import ThrottlingGateway
from .independent_service import Service

HEADERS_RULE = "response_headers_conformance"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, ThrottlingGateway]]:
    gateway = ThrottlingGateway(Service().app)
    with serving(gateway) as base_url:
        yield base_url, gateway


@pytest.fixture
def gateway(served: tuple[str, ThrottlingGateway]) -> Iterator[ThrottlingGateway]:
    yield served[1]
    served[1].restart(7)
    served[1].busy = None


def an_audit(base_url: str, **options: object) -> Audit:
    targets = fairness_targets(sealed_cursors=True)
    return Audit(
        base_url=base_url,
        targets=targets,
        token=targets.token,
        second_token=targets.second_token,
        max_examples=3,
        workers=1,
        **options,  # type: ignore[arg-type]
    )


def met_by_chance(results: Results) -> list[Finding]:
    """The findings whose examples are all of answers met by chance."""
    return [f for f in results.failures if all(MET_BY_CHANCE in e.message for e in f.examples)]


def assert_caught(results: Results) -> Finding:
    """The fractional Retry-After fails the page's header rule, once, said to be met by chance."""
    [finding] = [f for f in results.findings if f.check.name == HEADERS_RULE]
    assert finding.outcome == FAILED and finding.check.source.level is Level.PAGE
    assert finding.shape.endswith("-> 503")
    assert met_by_chance(results) == [finding]
    [example, *_] = finding.examples
    assert "Retry-After" in example.message
    assert f"{MET_BY_CHANCE}: a throttled answer (503, Retry-After: '1.5')" in example.message
    assert example.request is not None and example.request.status == 503
    return finding


def test_a_chance_503_with_whole_seconds_conforms_even_with_strict(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    gateway.busy = "1"
    waits = Waits()
    results = run_audit(an_audit(served[0], policy=Policy(strict=True)), throttle=waits.throttle())
    assert gateway.busy_answers > 10, "the gateway was hardly busy: the test proves nothing"
    assert results.verdict is Verdict.CONFORMS, [
        f"{f.check.name}: {f.title}" for f in results.failures
    ]
    assert not results.warnings
    assert results.tally(find_check(HEADERS_RULE, "test-set")).passed > 0
    assert set(waits.asked) == {1.0}


def test_a_chance_503_with_a_fractional_retry_after_fails_once_and_is_still_waited_out(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    """Met many times, on any path: one finding of the page's rule, counting each answer; the
    retried answers conform, so no other rule fails; each 503 was waited out for 1.5 s."""
    gateway.busy = "1.5"
    waits = Waits()
    results = run_audit(an_audit(served[0]), throttle=waits.throttle())
    assert results.verdict is Verdict.VIOLATIONS
    assert {f.check.name for f in results.failures} == {HEADERS_RULE}
    assert not results.warnings
    finding = assert_caught(results)
    assert 1 < finding.count <= gateway.busy_answers
    assert 1.5 in waits.asked and results.throttling.given_up == 0


def test_the_pre_flight_judges_a_chance_503(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    """No scenario and no Schemathesis: only the pre-flight's requests (one a target project) are
    sent, and every other one met the 503."""
    gateway.restart(2)
    gateway.busy = "1.5"
    results = run_audit(
        an_audit(served[0], fuzz=False, only=frozenset()), throttle=Waits().throttle()
    )
    assert gateway.busy_answers > 0
    assert_caught(results)


def test_a_scenario_judges_a_chance_503(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    """The scenario's second request (the revoked token's) meets the 503; its retry gets the 401,
    so the scenario passes."""
    audit = an_audit(served[0], fuzz=False)
    check = find_check("expired_and_revoked_tokens_are_401", "test-set")
    gateway.restart(2)
    gateway.busy = "1.5"
    results = Results(audit.policy, audit.apis)
    run_scenario(check, "test-set", audit, Waits().throttle()).replay(results)
    assert gateway.busy_answers == 1
    assert results.tally(check).passed == 1
    assert assert_caught(results).count == 1


def test_schemathesis_s_requests_judge_a_chance_503(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    audit = an_audit(served[0])
    gateway.restart(2)
    gateway.busy = "1.5"
    results = Results(audit.policy, audit.apis)
    run_shard("test-set", audit, Waits().throttle(), Shard("examples")).replay(results)
    assert gateway.busy_answers > 0
    assert_caught(results)


def test_a_chance_429_without_the_envelope_conforms_even_where_the_page_names_the_status(
    served: tuple[str, ThrottlingGateway], gateway: ThrottlingGateway
) -> None:
    """The revoked token's request meets the gateway's bare 429: the page lists no 429, and a
    throttled answer's status breaks no rule (the page's 401 for a revoked token is judged on the
    answer after the wait), so nothing fails."""
    audit = an_audit(served[0], fuzz=False)
    check = find_check("expired_and_revoked_tokens_are_401", "test-set")
    gateway.restart(2)
    results = Results(audit.policy, audit.apis)
    throttle = Waits().throttle()
    run_scenario(check, "test-set", audit, throttle).replay(results)
    assert throttle.report().waited_out == 1
    assert results.tally(check).passed == 1
    assert not results.failures and not results.warnings
