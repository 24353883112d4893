"""What throttling did to an audit: answers waited out, those let through unjudged and why, and a
slower rate."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evalmock.harness.results.gateway_rate import Slower


@dataclass
class ThrottleReport:
    """What throttling did to an audit: answers waited out, and those let through unjudged (and
    why)."""

    waited_out: int = 0  # throttled answers followed by another try
    waited: float = (
        0.0  # seconds the audit spent waiting: waits of parallel workers that overlap count once
    )
    given_up: int = 0  # requests whose last answer was still throttled: judged by no check
    longest: float = 0.0  # the longest wait a throttled answer asked for, in seconds
    reasons: Counter[str] = field(default_factory=Counter)
    # Throttled answers to the probes Schemathesis sends from inside a check (ignored_auth's
    # requests without credentials), which no hook can wait out: the check's finding on them is
    # dropped, and it probes again.
    probes: int = 0
    slower: Slower | None = None  # a rate limit that would keep under the service's throttling

    def text(self, rate_flag: str = "--rate-limit") -> str:
        """One plain paragraph: the count and the longest wait first; `rate_flag` spells the
        rate-limit option."""
        if not self.given_up:
            text = (
                f"{self.waited_out} throttled answer(s) waited out ({self.waited:.1f} s spent "
                "waiting, the longest "
                f"{self.longest:g} s); every request was judged on its answer after the wait"
            )
        else:
            why = "; ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
            text = (
                f"{self.given_up} request(s) still throttled after waiting (longest wait asked: "
                f"{self.longest:g} "
                f"s; {why}); no check judged them. {self.waited_out} throttled answer(s) were "
                "waited out "
                f"({self.waited:.1f} s spent waiting)"
            )
            if self.slower is not None:
                text += f". Send more slowly: {self.slower.say(rate_flag)}"
        if self.probes:
            text += (
                f". {self.probes} throttled answer(s) to the probes Schemathesis's ignored_auth "
                "check sends "
                "from inside itself, which no hook can wait out: its findings on them were dropped "
                "(it probes "
                "again on a later request)"
            )
        return text
