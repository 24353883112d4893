"""A slow service is not a broken one: behind a gateway that holds every 25th request past the
audit's timeout, no rule fails; each request without an answer is a gap of the audit, named with the
request and said once as what would close it (a longer --request-timeout), and the audit is
INCOMPLETE. Given that longer timeout, it conforms."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalmock.harness.checks.outcomes import SLOW_SERVICE, UNJUDGED_PREFIX, SkipKind
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit

from ..serving import serving
from .conftest import fairness_targets
from .gateway import SlowGateway
from .independent_service import Service

HOLD = 0.8  # seconds: past the short timeout, within the long one
SHORT_TIMEOUT = 0.3  # every held request outlasts it, however idle the machine
# A bound, not a race: every held request ends within it, however busy the machine (a request that
# outlasted HOLD + 5 s under load made the service look slow)
LONG_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def slow() -> Iterator[tuple[str, SlowGateway]]:
    gateway = SlowGateway(Service().app, every=25, hold=HOLD)
    with serving(gateway) as base_url:
        yield base_url, gateway


def audit(base_url: str, request_timeout: float) -> Results:
    targets = fairness_targets(sealed_cursors=True)
    return run_audit(
        Audit(
            base_url=base_url,
            targets=targets,
            token=targets.token,
            second_token=targets.second_token,
            phases=("coverage",),
            max_examples=3,
            workers=4,
            request_timeout=request_timeout,
        )
    )


def test_requests_without_an_answer_are_gaps_of_the_audit_not_failures(
    slow: tuple[str, SlowGateway],
) -> None:
    base_url, gateway = slow
    held = gateway.held
    results = audit(base_url, request_timeout=SHORT_TIMEOUT)
    assert gateway.held - held > 5, "the gateway hardly held a request: the test proves nothing"
    assert not results.failures and not results.warnings, [f.check.name for f in results.findings]
    assert results.verdict is Verdict.INCOMPLETE
    assert results.gaps and all(
        gap.what.startswith(("GET /v", "Schemathesis could not test")) for gap in results.gaps
    )
    unanswered = [gap for gap in results.gaps if gap.what.startswith("GET /v")]
    assert unanswered and all(
        gap.remedy == SLOW_SERVICE and "got no answer within 0.3 s (ReadTimeout)" in gap.what
        for gap in unanswered
    )
    reasons = [str(reason) for reason in results.incomplete_reasons()]
    assert any(" of the audit could not be done" in r and r.endswith(SLOW_SERVICE) for r in reasons)
    assert all(r.count(SLOW_SERVICE) <= 1 for r in reasons)  # said once, not once a request
    skipped = [
        f.examples[0].message for f in results.skips if f.examples[0].skip is SkipKind.UNJUDGED
    ]
    assert all(message.startswith(UNJUDGED_PREFIX) for message in skipped)
    assert any("got no answer" in message for message in skipped)


def test_with_a_longer_timeout_the_slow_service_conforms(slow: tuple[str, SlowGateway]) -> None:
    results = audit(slow[0], request_timeout=LONG_TIMEOUT)
    assert results.verdict is Verdict.CONFORMS, (
        list(map(str, results.incomplete_reasons())),
        [f.check.name for f in results.findings],
    )
    assert not results.gaps
