"""A gateway's 502 or 504 that the same request, asked again, does not get: named, not taken for
the API's answer."""

from __future__ import annotations

from evalmock.contract.sources import inferred
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.registry import response_check

GATEWAY_ERROR_RULE = "gateway_error_is_cleared_by_no_retry"
GATEWAY_ERRORS = frozenset({502, 504})  # asked again once (run/throttle.py)
_REASON = (
    "The pages describe the API's answers, not those of the gateways and proxies in front of it. "
    "A 502 Bad Gateway or 504 Gateway Timeout that the same request, sent again a moment later, "
    "does not get was the infrastructure's fault, not the API's answer: the audit asks again once "
    "and judges the second answer, and names the first (GET is safe and idempotent, RFC 9110 "
    "9.2.1-2). A 502 or 504 that comes again is the API's answer, judged by the status rules."
)


def gateway_error_is_cleared_by_no_retry(context: CheckContext) -> bool | None:
    """A request the pages describe gets no 502 or 504 that the same request, sent again a moment
    later, does not get again (such a one is a gateway's, named here; the answer then judged is
    the second)."""
    exchange = context.exchange
    if not context.cleared_gateway_error:
        # an answer judged as it came: the API's, unless a 502 or 504 came again (the status rules
        # judge that one) or was never asked again (recorded traffic)
        return None if exchange.status in GATEWAY_ERRORS else True
    raise Violation(
        f"a gateway answered {exchange.status} once; the same request sent again got the API's "
        "answer",
        expected="the API's answer the first time",
        received=f"{exchange.status} {exchange.excerpt(120)}",
    )


for _api in ("test-set", "gradient"):
    response_check(_api, inferred(_REASON))(gateway_error_is_cleared_by_no_retry)
