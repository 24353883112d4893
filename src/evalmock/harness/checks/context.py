"""What a response check receives: the exchange, what the targets say exists, and the audit's
policy."""

from __future__ import annotations

from dataclasses import dataclass

from evalmock.contract.targets import Targets
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import Policy


@dataclass(frozen=True)
class CheckContext:
    """One exchange as a response check judges it."""

    exchange: Exchange
    targets: Targets
    policy: Policy
    # A gateway's 502 or 504 that the same request, asked again, did not get (run/throttle.py): only
    # gateway_errors judges such an answer.
    cleared_gateway_error: bool = False
