"""A throttled audit says how slowly to send: the rate its service's rate-limit headers state (IETF
RateLimit-Policy in both drafts' forms, the early RateLimit-Limit form, Kong's per-window headers),
else how fast the service answered unthrottled; a header naming no window states no rate."""

from __future__ import annotations

from typing import Any

import pytest

from evalmock.harness.results.gateway_rate import (
    advertised_rate,
    observed_rate,
    rate_limit_option,
    suggestion,
)
from evalmock.harness.run.throttle import Throttle, ThrottleOptions


@pytest.mark.parametrize(
    ("headers", "per_second", "option"),
    [
        ({"ratelimit-policy": "10;w=1"}, 10.0, "8/s"),
        ({"ratelimit-policy": '"burst";q=100;w=60, "daily";q=1000;w=86400'}, 1000 / 86400, "33/h"),
        ({"ratelimit-limit": "10, 10;w=1, 100;w=60"}, 100 / 60, "1/s"),
        ({"x-ratelimit-limit-second": "10", "x-ratelimit-limit-minute": "300"}, 5.0, "4/s"),
        ({"ratelimit-policy": ["5;w=1"]}, 5.0, "4/s"),  # Schemathesis's headers: a list of values
        ({"ratelimit-policy": "1;w=1"}, 1.0, "48/m"),
    ],
)
def test_a_rate_the_headers_state_is_read_and_kept_under(
    headers: dict[str, Any], per_second: float, option: str
) -> None:
    rate = advertised_rate(headers)
    assert rate is not None and rate.per_second == pytest.approx(per_second)
    assert rate_limit_option(rate) == option


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"ratelimit-limit": "10"},
        {"x-ratelimit-limit": "10"},
        {"ratelimit-policy": "q=ten;w=1"},
        {"ratelimit-policy": "10;w=0"},
        {"ratelimit-policy": '"burst";q=10'},
        {"x-ratelimit-limit-second": "lots"},
    ],
)
def test_a_header_without_a_window_or_a_number_states_no_rate(headers: dict[str, Any]) -> None:
    assert advertised_rate(headers) is None


def test_the_answers_suggest_a_rate_only_once_there_are_enough() -> None:
    assert observed_rate(4, 10.0) is None and observed_rate(50, 0.5) is None
    rate = observed_rate(50, 10.0)
    assert rate is not None and rate.per_second == 5.0 and rate_limit_option(rate) == "4/s"
    assert suggestion(None, None) is None
    slower = suggestion(None, rate)
    assert slower is not None and slower.say("--evalmock-rate-limit").startswith(
        "--evalmock-rate-limit 4/s may keep"
    )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def throttled_audit(last_headers: dict[str, str], *, waiting_helps: bool = True) -> str:
    """20 answers, six throttled first tries each answered after a wait (or, unless
    `waiting_helps`, throttled again once), then a 429 the budget cannot wait out; the throttling
    paragraph."""
    throttle = Throttle(ThrottleOptions(budget=0.5), sleep=lambda seconds: None, clock=Clock())
    for _ in range(20):
        throttle.send(lambda: (200, {}), lambda answer: answer)
    for _ in range(6):
        answers = [(429, {"retry-after": "0"})] * (1 if waiting_helps else 2) + [(200, {})]
        throttle.send(lambda answers=answers: answers.pop(0), lambda answer: answer)
    _, throttled = throttle.send(
        lambda: (429, {"retry-after": "1", **last_headers}), lambda answer: answer
    )
    assert throttled
    return throttle.report().text()


def test_a_throttled_audit_says_the_rate_the_service_answered_at() -> None:
    text = throttled_audit({})
    assert text.endswith(
        "Send more slowly: --rate-limit 1/s may keep under it (it answered 26 requests "
        "unthrottled in 19 s, 1.4 a second)"
    )
    assert "throttled far less often (0 of 6, 0%) than first tries (26%)" in text


def test_a_share_that_waiting_does_not_lower_is_the_service_s_and_no_slower_pace_is_advised() -> (
    None
):
    text = throttled_audit({}, waiting_helps=False)
    assert "--rate-limit" not in text
    assert (
        "Answers sent again after a wait were throttled about as often (6 of 12, 50%) as first "
        "tries (26%): the share is the service's own, not the audit's pace, and sending more "
        "slowly would not lower it"
    ) in text


def test_a_throttled_audit_says_the_rate_the_service_states_first() -> None:
    text = throttled_audit({"ratelimit-policy": "10;w=1"})
    assert text.endswith(
        "Send more slowly: --rate-limit 8/s keeps under it (its RateLimit-Policy header: 10 "
        "requests "
        "in 1 s)"
    )


def test_an_audit_whose_throttling_was_all_waited_out_suggests_nothing() -> None:
    throttle = Throttle(sleep=lambda seconds: None, clock=Clock())
    statuses = [200, 429, 200]
    for _ in range(2):
        throttle.send(
            lambda: (statuses.pop(0), {"ratelimit-policy": "10;w=1"}), lambda answer: answer
        )
    report = throttle.report()
    assert (
        report.waited_out == 1 and report.slower is None and "Send more slowly" not in report.text()
    )
