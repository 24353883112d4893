"""How a scenario check's requests reach the target: httpx, throttled answers waited out, no answer
said so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from evalmock.harness.checks.exchange import Exchange, exchange_from_httpx
from evalmock.harness.checks.outcomes import SLOW_SERVICE, NoAnswer
from evalmock.harness.run.throttle import Throttle, asked_status


class HttpSender:
    """A scenario's Sender: each GET sent with `client`, its throttled answers waited out by
    `throttle`."""

    def __init__(self, client: httpx.Client, throttle: Throttle | None = None) -> None:
        self.client = client
        self.throttle = throttle or Throttle()

    def __call__(
        self, path: str, query: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[Exchange, bool]:
        try:
            return self.throttle.send(
                lambda: exchange_from_httpx(self.client.get(path, params=query, headers=headers)),
                lambda answer: (answer.status, answer.headers),
                asked_for=asked_status(headers),  # a 503 asked for (Prefer: code=503) is the answer
            )
        except httpx.TransportError as exc:
            raise no_answer(httpx.URL(path, params=query), exc, self.client.timeout.read) from None


def no_answer(url: httpx.URL, exc: httpx.TransportError, timeout: float | None) -> NoAnswer:
    """A request that got no answer: which one, and why (the timeout it waited, or the error)."""
    if isinstance(exc, httpx.TimeoutException):
        waited = f" within {timeout:g} s" if timeout else ""
        return NoAnswer(f"GET {url} got no answer{waited} ({type(exc).__name__})", SLOW_SERVICE)
    return NoAnswer(f"GET {url} got no answer ({type(exc).__name__}: {exc})")
