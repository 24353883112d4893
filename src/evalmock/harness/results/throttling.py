"""What throttling did to an audit: answers waited out, those let through unjudged and why, and a
slower rate."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from evalmock.harness.results.gateway_rate import Slower
from evalmock.nouns import counted, noun_for

# Answers after a wait are "far less often" throttled than first tries under this fraction of
# their share; a share of fewer tries after a wait than MIN_AFTER_A_WAIT tells nothing.
FAR_LESS = 0.5
MIN_AFTER_A_WAIT = 5
NAMED = 3  # requests a share names; the rest are counted


def percent(part: int, whole: int) -> str:
    """A share as a reader says it: whole percent, "under 1%" rather than a 0% that is not none."""
    if not whole:
        return "0%"
    share = 100 * part / whole
    return "under 1%" if 0 < share < 1 else f"{share:.0f}%"


@dataclass
class Shares:
    """How often answers were throttled (a 429, or a 503 saying when to retry): of all, of first
    tries, of tries sent again after a wait, and per request (its method and operation)."""

    answers: int = 0
    throttled: int = 0
    first: int = 0
    first_throttled: int = 0
    after_a_wait: int = 0
    after_a_wait_throttled: int = 0
    hit: Counter[str] = field(default_factory=Counter)

    def count(self, throttled: bool, *, after_a_wait: bool, what: str = "") -> None:
        self.answers += 1
        self.throttled += throttled
        if after_a_wait:
            self.after_a_wait += 1
            self.after_a_wait_throttled += throttled
        else:
            self.first += 1
            self.first_throttled += throttled
        if throttled and what:
            self.hit[what] += 1

    def copy(self) -> Shares:
        return dataclasses.replace(self, hit=self.hit.copy())

    @property
    def waiting_helped(self) -> bool:
        """Whether answers after a wait were throttled far less often than first tries: the audit's
        pace is then what the service throttled, and a slower one keeps under it."""
        if self.after_a_wait < MIN_AFTER_A_WAIT or not self.first_throttled:
            return False
        later = self.after_a_wait_throttled / self.after_a_wait
        return later < FAR_LESS * self.first_throttled / self.first

    def text(self, pace: str = "the audit's pace") -> str:
        """`147 of 644 answers (23%) were busy or throttled: to GET … (120), …`, then what waiting
        did to the share; `pace` names whose pace sent the requests."""
        named = [f"{what} ({count})" for what, count in self.hit.most_common(NAMED)]
        if len(self.hit) > NAMED:
            named.append(f"and {len(self.hit) - NAMED} more")
        text = (
            f"{self.throttled} of {self.answers} answers "
            f"({percent(self.throttled, self.answers)}) were busy or throttled"
            + (f", to {', '.join(named)}" if named else "")
        )
        if self.after_a_wait < MIN_AFTER_A_WAIT:
            return text
        first = percent(self.first_throttled, self.first)
        later = (
            f"{self.after_a_wait_throttled} of {self.after_a_wait}, "
            f"{percent(self.after_a_wait_throttled, self.after_a_wait)}"
        )
        if self.waiting_helped:
            return (
                f"{text}. Answers sent again after a wait were throttled far less often ({later}) "
                f"than first tries ({first}): {pace} is what the service throttled"
            )
        return (
            f"{text}. Answers sent again after a wait were throttled about as often ({later}) as "
            f"first tries ({first}): the share is the service's own, not {pace}, and "
            "sending more slowly would not lower it"
        )


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
    shares: Shares = field(default_factory=Shares)
    # Traffic the audit did not send (a HAR file, the proxy's): it waits nothing out, and a
    # request sent again after a throttled answer is the client's retry.
    recorded: bool = False

    @property
    def met(self) -> bool:
        """Whether the service throttled any answer the audit sent or was given."""
        return bool(self.waited_out or self.given_up or self.shares.throttled)

    def text(self, rate_flag: str = "--rate-limit") -> str:
        """One plain paragraph: the share, then the count and the longest wait; `rate_flag` spells
        the rate-limit option."""
        if self.recorded:
            shares = self.shares.text(pace="the clients' pace")
            return (
                f"{shares}. These answers are of traffic the audit did not send, so it waited "
                "none out: no check judged them"
            )
        shares = f"{self.shares.text()}. " if self.shares.answers else ""
        if not self.given_up:
            text = (
                f"{counted(self.waited_out, 'throttled answer')} waited out ({self.waited:.1f} s "
                "spent "
                "waiting, the longest "
                f"{self.longest:g} s); every request was judged on its answer after the wait"
            )
        else:
            why = "; ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
            text = (
                f"{counted(self.given_up, 'request')} still throttled after waiting (longest wait "
                "asked: "
                f"{self.longest:g} "
                f"s; {why}); no check judged them. {counted(self.waited_out, 'throttled answer')} "
                f"{noun_for(self.waited_out, 'was', plural='were')} waited out "
                f"({self.waited:.1f} s spent waiting)"
            )
            if self.slower is not None:
                text += f". Send more slowly: {self.slower.say(rate_flag)}"
        text = shares + text
        if self.probes:
            text += (
                f". {counted(self.probes, 'throttled answer')} to the probes Schemathesis's "
                "ignored_auth "
                "check sends "
                "from inside itself, which no hook can wait out: its findings on them were dropped "
                "(it probes "
                "again on a later request)"
            )
        return text
