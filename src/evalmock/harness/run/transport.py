"""How a scenario check's requests reach the target: httpx, each answer read within the audit's
limits, throttled answers waited out, no answer (or one past a limit) said so."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import SLOW_SERVICE, NoAnswer, Undone, Unread
from evalmock.harness.run.answer_deadline import close_unasked
from evalmock.harness.run.answer_limits import (
    SENT_VALUE_REMEDY,
    AnswerLimits,
    AnswerOverLimit,
    oversized_value,
    read_exchange,
)
from evalmock.harness.run.throttle import Throttle, asked_status, request_kind


class HttpSender:
    """A scenario's Sender: each GET sent with `client` and its answer read within `limits`, its
    throttled answers judged by `judge` (ResponseJudge.judge_met_by_chance), then waited out by
    `throttle`; a gateway's 502 or 504 that asking again cleared given to `cleared`
    (ResponseJudge.judge_cleared_gateway_error)."""

    def __init__(
        self,
        client: httpx.Client,
        throttle: Throttle | None = None,
        limits: AnswerLimits | None = None,
        judge: Callable[[Exchange], object] | None = None,
        cleared: Callable[[Exchange], object] | None = None,
    ) -> None:
        self.client = client
        self.throttle = throttle or Throttle()
        self.limits = limits or AnswerLimits()
        self.judge = judge
        self.cleared = cleared
        self.unasked = 0  # connections closed on bytes no request asked for (close_unasked)

    def __call__(
        self, path: str, query: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[Exchange, bool]:
        if oversized := oversized_value(path, _pairs(query)):
            # a value the service handed back (a cursor, an id): never a URL of any size
            raise Undone(f"GET {path} was not sent: {oversized}", SENT_VALUE_REMEDY)
        try:
            return self.throttle.send(
                lambda: self._read(path, query, headers),
                lambda answer: (answer.status, answer.headers),
                asked_for=asked_status(headers),  # a 503 asked for (Prefer: code=503) is the answer
                judge=self.judge,
                what=request_kind("GET", path),
                cleared=self.cleared,
            )
        except httpx.TransportError as exc:
            raise no_answer(httpx.URL(path, params=query), exc, self.client.timeout.read) from None
        except AnswerOverLimit as exc:
            url = httpx.URL(path, params=query)
            raise Unread(f"GET {url} was not read: {exc.why}", exc.remedy) from None

    def _read(self, path: str, query: Mapping[str, Any], headers: Mapping[str, str]) -> Exchange:
        try:
            return read_exchange(self.client, path, query, headers, self.limits)
        finally:
            self.unasked += close_unasked(self.client)


def _pairs(query: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The query's (name, value) pairs, a list's values each."""
    return [
        (name, str(each))
        for name, value in query.items()
        for each in (value if isinstance(value, list | tuple) else [value])
    ]


def no_answer(url: httpx.URL, exc: httpx.TransportError, timeout: float | None) -> NoAnswer:
    """A request that got no answer: which one, and why (the timeout it waited, or the error)."""
    if isinstance(exc, httpx.TimeoutException):
        waited = f" within {timeout:g} s" if timeout else ""
        return NoAnswer(f"GET {url} got no answer{waited} ({type(exc).__name__})", SLOW_SERVICE)
    return NoAnswer(f"GET {url} got no answer ({type(exc).__name__}: {exc})")
