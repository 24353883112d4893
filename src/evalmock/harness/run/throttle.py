"""Throttled answers waited out and retried within a budget, every request of an audit kept under
one rate, and what could still not be judged counted once, as the service's throttling."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from evalmock.contract.operations import operations
from evalmock.defaults import DEFAULT_BUDGET, DEFAULT_MAX_WAIT, DEFAULT_RETRIES
from evalmock.exits import UsageError
from evalmock.harness.checks.exchange import first_header
from evalmock.harness.checks.gateway_errors import GATEWAY_ERRORS
from evalmock.harness.results.gateway_rate import Rate, advertised_rate, observed_rate, suggestion
from evalmock.harness.results.throttling import ThrottleReport

T = TypeVar("T")

UNSAID_WAIT = 1.0  # seconds to wait after a 429 that does not say how long
# A gateway's 502 or 504 that the same request sent again does not get is not the API's answer
# (checks/gateway_errors.py): asked again once, this many seconds after.
GATEWAY_WAIT = 0.5
PREFER_CODE = re.compile(r"(?:^|[;,\s])code=([0-9]{3})\b")

# Why a throttled answer was let through unretried.
# Why a request was given up on, each read after its count, with what would have judged it.
# The options are named as `evalmock contract` spells them; the pytest plugin's add `evalmock-`
# after the dashes.
RETRIES_USED = "still throttled after every retry (allow more retries: --throttle-retries N)"
TOO_LONG = (
    "asked to wait longer than the longest wait allowed (allow a longer one: --throttle-max-wait "
    "SECONDS)"
)
BUDGET_SPENT = (
    "throttled once the wait budget was spent (allow a larger budget: --throttle-budget SECONDS)"
)


class ThrottleError(UsageError, ValueError):
    """A throttling option that cannot be used (a bad rate, a negative wait)."""


@dataclass(frozen=True)
class ThrottleOptions:
    """`retries` per request; `max_wait`: the longest single wait honoured; `budget`: all waiting of
    the audit; `rate`: every request of the audit kept under it ("10/s", "600/m", Schemathesis's
    rate-limit syntax)."""

    retries: int = DEFAULT_RETRIES
    max_wait: float = DEFAULT_MAX_WAIT
    budget: float = DEFAULT_BUDGET
    rate: str | None = None

    def __post_init__(self) -> None:
        if self.retries < 0 or self.max_wait < 0 or self.budget < 0:
            raise ThrottleError("retries, the longest wait and the wait budget cannot be negative")
        if self.rate is not None:
            # parsed, not built: a built limiter starts a thread of its own
            from schemathesis.core.rate_limit import parse_units

            try:
                count, _ = parse_units(self.rate)
            except Exception:
                count = 0
            if count < 1:
                raise ThrottleError(
                    f"a rate is N/s, N/m or N/h (such as 10/s), got {self.rate!r}"
                ) from None


def limiter(rate: str) -> Any:
    """Schemathesis's own rate limiter (pyrate-limiter) for a rate such as "10/s": it blocks until a
    request fits, and leaks its bucket in a thread of its own until closed."""
    # Schemathesis loads slowly: only when a rate is set
    from schemathesis.core.rate_limit import build_limiter

    return build_limiter(rate)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date from now (RFC 9110 10.2.3); None
    if neither."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(text).timestamp() - time.time())
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return seconds if seconds >= 0 else None


def throttle_wait(
    status: int, retry_after: str | None, *, asked_for: int | None = None
) -> float | None:
    """How long a throttled answer asks to wait, or None for an answer that is not throttling: a 429
    (any API, any path; UNSAID_WAIT when it does not say), or a 503 whose Retry-After says when;
    neither when it is the status the request asked for (`asked_for`, from a mock's `Prefer:
    code=503`)."""
    if status == asked_for:
        return None
    seconds = retry_after_seconds(retry_after)
    if status == 429:
        return UNSAID_WAIT if seconds is None else seconds
    if status == 503:
        return seconds
    return None


def asked_status(headers: Mapping[str, str]) -> int | None:
    """The status a request asks a mock for with `Prefer: code=NNN` (RFC 7240 preferences), if
    any."""
    prefer = next((value for name, value in headers.items() if name.lower() == "prefer"), "")
    found = PREFER_CODE.search(prefer)
    return int(found.group(1)) if found else None


def request_kind(method: str, path: str) -> str:
    """A request as the throttling report names it: its method and the operation it is for
    (`GET /v1/agents/{agentId}/test-set/cases`), or its path for none of them."""
    for op in operations().values():
        if op.path_parameters(path) is not None:
            return f"{method.upper()} {op.base_path}{op.path}"
    return f"{method.upper()} {path}"


class Throttle:
    """Shared by every request of one audit (and thread-safe, for its workers)."""

    def __init__(
        self,
        options: ThrottleOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options or ThrottleOptions()
        self.sleep = sleep
        self.clock = clock
        # Told how long each answer took (the audit's progress display reads the pace from it).
        self.timed: Callable[[float], None] | None = None
        self.limiter: Any = limiter(self.options.rate) if self.options.rate else None
        self._report = ThrottleReport()
        self._lock = threading.Lock()
        # For a rate to suggest: when the first and the last answer came, how many were not
        # throttled, and the slowest rate a throttled answer's headers stated.
        self._first_at: float | None = None
        self._last_at = 0.0
        self._answered = 0
        self._advertised: Rate | None = None
        self._waiting_until = float("-inf")  # when the last wait granted so far ends

    def __enter__(self) -> Throttle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the rate limiter's thread: nothing of an audit runs on once it is over."""
        if self.limiter is not None:
            self.limiter.close()

    def pace(self) -> None:
        """Wait, if need be, until one more request keeps the audit under its rate."""
        if self.limiter is not None:
            self.limiter.try_acquire("evalmock")

    def send(
        self,
        call: Callable[[], T],
        answer: Callable[[T], tuple[int, Mapping[str, Any]]],
        *,
        asked_for: int | None = None,
        first: T | None = None,
        judge: Callable[[T], object] | None = None,
        what: str = "",
        took: float | None = None,
        cleared: Callable[[T], object] | None = None,
    ) -> tuple[T, bool]:
        """The answer to `call()` after waiting out throttled ones, and whether it is still
        throttled (then no check may judge it). `answer` gives a response's status and headers
        (names in lower case; a value may be a list); `first`, an answer already received to the
        same request (sent within the rate); `judge` is given every throttled answer before it is
        waited out (a 503 met by chance is held to its rules like any other answer); `what` names
        the request in the report (request_kind); `took`, how long `first` took to come. A 502 or
        504 is asked again once, GATEWAY_WAIT later: when that answer is another, `cleared` is
        given the 502 or 504 (a gateway's, not the API's); when it is one again, it is the
        answer."""
        tries = 0
        gateway_error: T | None = None
        asked_again = False
        while True:
            if first is None:
                self.pace()
                sent = time.perf_counter()
                response = call()
                took = time.perf_counter() - sent
            else:
                response, first = first, None
            if self.timed is not None and took is not None:
                self.timed(took)
            status, headers = answer(response)
            if status in GATEWAY_ERRORS and status != asked_for and not asked_again:
                gateway_error, asked_again = response, True
                self.sleep(GATEWAY_WAIT)
                continue
            if gateway_error is not None:
                if status not in GATEWAY_ERRORS and cleared is not None:
                    cleared(gateway_error)
                gateway_error = None
            asked = throttle_wait(status, first_header(headers, "retry-after"), asked_for=asked_for)
            self._count(asked is not None, headers, tries, what)
            if asked is None:
                return response, False
            if judge is not None:
                judge(response)
            if not self._grant(asked, tries):
                return response, True
            self.sleep(asked)
            tries += 1

    def _count(self, throttled: bool, headers: Mapping[str, Any], tries: int, what: str) -> None:
        now = self.clock()
        advertised = advertised_rate(headers) if throttled else None
        with self._lock:
            self._first_at = now if self._first_at is None else self._first_at
            self._last_at = now
            self._report.shares.count(throttled, after_a_wait=tries > 0, what=what)
            if not throttled:
                self._answered += 1
            elif advertised is not None and (
                self._advertised is None or advertised.per_second < self._advertised.per_second
            ):
                self._advertised = advertised

    def _grant(self, asked: float, tries: int) -> bool:
        """Whether to wait `asked` seconds from now and try again. The budget is spent by the time
        the audit waits: where this wait overlaps one already granted (another worker's), only the
        time past that one's end, so that eight workers waiting out the same second spend one
        second, not eight."""
        options = self.options
        now = self.clock()
        with self._lock:
            report = self._report
            report.longest = max(report.longest, asked)
            spent = max(0.0, now + asked - max(now, self._waiting_until))
            reason = (
                RETRIES_USED
                if tries >= options.retries
                else TOO_LONG
                if asked > options.max_wait
                else BUDGET_SPENT
                if report.waited + spent > options.budget
                else None
            )
            if reason is not None:
                report.given_up += 1
                report.reasons[reason] += 1
                return False
            report.waited += spent
            report.waited_out += 1
            self._waiting_until = max(self._waiting_until, now + asked)
            return True

    def unwaited_probe(self, retry_after: str | None) -> None:
        """Count a throttled answer to a request sent past every hook (so never waited out)."""
        with self._lock:
            self._report.probes += 1
            asked = retry_after_seconds(retry_after)
            self._report.longest = max(self._report.longest, asked or 0.0)

    def report(self) -> ThrottleReport:
        with self._lock:
            report = self._report
            slower = None
            # Slowing down is advised only where it is what helped: the service stated its rate,
            # or the answers after a wait were throttled far less often than first tries. A share
            # that stays when the audit waits is the service's, whatever the audit's pace.
            if report.given_up and (self._advertised is not None or report.shares.waiting_helped):
                span = self._last_at - (
                    self._first_at if self._first_at is not None else self._last_at
                )
                slower = suggestion(self._advertised, observed_rate(self._answered, span))
            return ThrottleReport(
                report.waited_out,
                report.waited,
                report.given_up,
                report.longest,
                Counter(report.reasons),
                report.probes,
                slower,
                report.shares.copy(),
            )
