"""Throttled answers: which answers are throttling, how long each asks to wait, and what the budget
lets through; and a scenario that meets an answer still throttled says it could not judge, instead
of failing a rule."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from evalmock.contract.targets import targets_from_dict
from evalmock.harness.checks.outcomes import Unjudged
from evalmock.harness.checks.scenario import Scenario
from evalmock.harness.run.throttle import (
    BUDGET_SPENT,
    RETRIES_USED,
    TOO_LONG,
    UNSAID_WAIT,
    Throttle,
    ThrottleError,
    ThrottleOptions,
    asked_status,
    retry_after_seconds,
    throttle_wait,
)
from evalmock.harness.run.transport import HttpSender
from shared import Waits

LEAKER = "PyrateLimiter's Leaker"  # the thread's name
LEAK_INTERVAL_S = 10  # how long it sleeps between leaks, at most, before it sees it was closed


def answers(*statuses: tuple[int, str | None]) -> tuple[list[tuple[int, str | None]], object]:
    """A call that answers these (status, Retry-After) in turn, and the list of those it gave."""
    given: list[tuple[int, str | None]] = []
    queue = list(statuses)

    def call() -> tuple[int, str | None]:
        given.append(queue.pop(0))
        return given[-1]

    return given, call


def status_and_headers(answer: tuple[int, str | None]) -> tuple[int, dict[str, str]]:
    status, retry_after = answer
    return status, {} if retry_after is None else {"retry-after": retry_after}


def test_a_429_anywhere_is_throttling_and_says_how_long_or_waits_a_second() -> None:
    assert throttle_wait(429, "2") == 2.0
    assert throttle_wait(429, None) == UNSAID_WAIT
    assert throttle_wait(429, "soon") == UNSAID_WAIT


def test_a_503_is_throttling_only_with_a_retry_after_and_neither_is_when_asked_for() -> None:
    assert throttle_wait(503, "0") == 0.0
    assert throttle_wait(503, None) is None
    assert throttle_wait(503, "1", asked_for=503) is None
    # a gateway's 429 to a request that asked for a 503
    assert throttle_wait(429, "1", asked_for=503) == 1.0
    assert throttle_wait(429, "1", asked_for=429) is None
    assert throttle_wait(500, "1") is None and throttle_wait(200, "1") is None
    assert (
        asked_status({"Prefer": "code=503"}) == 503
        and asked_status({"prefer": "example=page, code=429"}) == 429
    )
    assert asked_status({"Prefer": "example=page"}) is None and asked_status({}) is None


def test_retry_after_is_seconds_or_an_http_date() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (retry_after_seconds(later) or 0) <= 30
    assert retry_after_seconds("-3") is None and retry_after_seconds("") is None


def test_a_throttled_answer_is_waited_out_and_the_retried_answer_returned() -> None:
    waits = Waits()
    given, call = answers((429, "1"), (503, "2"), (200, None))
    final, throttled = waits.throttle().send(call, status_and_headers)  # type: ignore[arg-type]
    assert final == (200, None) and not throttled
    assert waits.asked == [1.0, 2.0] and len(given) == 3


def test_every_throttled_answer_is_judged_before_it_is_waited_out() -> None:
    """The judge sees each throttled answer before the wait it asks for (the last one too, when
    the retries run out), and neither the answer after the wait nor a 503 the request asked for."""
    waits = Waits()
    seen: list[object] = []
    _, call = answers((503, "1.5"), (429, "1"), (200, None))

    def judge(answer: object) -> None:
        seen.append((answer, list(waits.asked)))  # with the waits done so far

    waits.throttle().send(call, status_and_headers, judge=judge)  # type: ignore[arg-type]
    assert seen == [((503, "1.5"), []), ((429, "1"), [1.5])]
    seen.clear()
    _, call = answers((429, "1"), (429, "2"))
    throttle = Waits().throttle(ThrottleOptions(retries=1))
    assert throttle.send(call, status_and_headers, judge=judge)[1]  # type: ignore[arg-type]
    assert [answer for answer, _ in seen] == [(429, "1"), (429, "2")]
    seen.clear()
    _, call = answers((503, "1"))
    waits.throttle().send(call, status_and_headers, asked_for=503, judge=judge)  # type: ignore[arg-type]
    assert seen == []


@pytest.mark.parametrize(
    ("options", "statuses", "reason"),
    [
        (ThrottleOptions(retries=1), [(429, "1"), (429, "1")], RETRIES_USED),
        (ThrottleOptions(max_wait=5), [(429, "6")], TOO_LONG),
        (ThrottleOptions(budget=2.5), [(429, "1"), (429, "1"), (429, "1")], BUDGET_SPENT),
    ],
)
def test_what_the_limits_do_not_let_through_is_counted_once_with_why(
    options: ThrottleOptions, statuses: list[tuple[int, str | None]], reason: str
) -> None:
    throttle = Waits().throttle(options)
    _, call = answers(*statuses)
    final, throttled = throttle.send(call, status_and_headers)  # type: ignore[arg-type]
    assert throttled and final == statuses[-1]
    report = throttle.report()
    assert report.given_up == 1 and dict(report.reasons) == {reason: 1}
    assert report.longest == max(float(ra or 0) for _, ra in statuses)
    assert "1 request still throttled" in report.text()


class StandingClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_waits_that_overlap_spend_the_budget_once() -> None:
    """Parallel workers waiting out the same second spend one second of the budget, not one each."""
    held = StandingClock(50.0)  # time moves only when the test says
    throttle = Throttle(ThrottleOptions(budget=1.5), sleep=lambda seconds: None, clock=held)
    for _ in range(4):  # four workers throttled at the same moment, each asked to wait a second
        _, call = answers((429, "1"), (200, None))
        _, throttled = throttle.send(call, status_and_headers)  # type: ignore[arg-type]
        assert not throttled
    # a fifth, half way through their wait, asked for a second more: half a second past theirs
    held.now = 50.5
    _, call = answers((429, "1"), (200, None))
    assert not throttle.send(call, status_and_headers)[1]  # type: ignore[arg-type]
    report = throttle.report()
    assert report.waited_out == 5 and report.waited == 1.5 and report.given_up == 0
    held.now = 52.0  # after every wait ended, a new one is spent whole: past the budget
    _, call = answers((429, "1"), (200, None))
    assert throttle.send(call, status_and_headers)[1]  # type: ignore[arg-type]
    assert dict(throttle.report().reasons) == {BUDGET_SPENT: 1}


def test_waits_one_after_another_spend_the_budget_in_full() -> None:
    throttle = Waits().throttle(ThrottleOptions(budget=2.5))
    for _ in range(2):
        _, call = answers((429, "1"), (200, None))
        assert not throttle.send(call, status_and_headers)[1]  # type: ignore[arg-type]
    assert throttle.report().waited == 2.0
    _, call = answers((429, "1"), (200, None))
    assert throttle.send(call, status_and_headers)[1]  # type: ignore[arg-type]  # 3 s would pass 2.5


def test_bad_options_are_refused_clearly() -> None:
    for rate in ("ten per second", "0/s", "1.5/s"):
        with pytest.raises(ThrottleError, match="N/s"):
            ThrottleOptions(rate=rate)
    with pytest.raises(ThrottleError):
        ThrottleOptions(budget=-1)


def test_a_closed_throttle_leaves_no_rate_limiter_thread_running() -> None:
    """pyrate-limiter leaks its bucket in a thread; one left running as the interpreter ends may
    crash it."""
    before = set(threading.enumerate())
    options = ThrottleOptions(rate="100/s")
    assert not [t for t in set(threading.enumerate()) - before if t.name == LEAKER]  # parsed only
    with Throttle(options) as throttle:
        throttle.pace()
        [leaker] = [t for t in set(threading.enumerate()) - before if t.name == LEAKER]
    leaker.join(timeout=LEAK_INTERVAL_S + 5)
    assert not leaker.is_alive()


def test_a_scenario_that_meets_an_answer_still_throttled_cannot_judge_it() -> None:
    def gateway(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "1"}, json={"message": "slow down"})

    judged: list[object] = []
    targets = targets_from_dict({"auth": {"token": "t"}}, source="test")
    with httpx.Client(transport=httpx.MockTransport(gateway), base_url="http://service") as client:
        scenario = Scenario(
            HttpSender(client, Waits().throttle(ThrottleOptions(retries=2))),
            targets,
            token="t",
            observe=lambda api, exchange: judged.append(exchange),
        )
        with pytest.raises(Unjudged, match="could not judge: GET /v1/x was still throttled"):
            scenario.get("test-set", "/v1/x")
    assert judged == []  # no check saw the 429
