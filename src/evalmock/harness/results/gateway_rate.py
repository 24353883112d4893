"""The rate a throttling service allows, read from its rate-limit headers or from how fast it
answered, and the `--rate-limit` an audit could keep to stay under it.

The headers read (names in lower case, as every check reads them):
- `RateLimit-Policy` (IETF httpapi rate-limit headers): `10;w=1` in the early drafts,
  `"burst";q=10;w=1` in the later ones; several policies are separated by commas. A quota and its
  window in seconds make a rate.
- `RateLimit-Limit` in the early drafts' form, `10, 10;w=1`: the policies after the first comma.
- `X-RateLimit-Limit-Second`, `-Minute`, `-Hour`, `-Day` (Kong's rate-limiting plugin): the window
  is in the name.
A bare `RateLimit-Limit: 10` or `X-RateLimit-Limit: 10` names no window, so no rate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalmock.harness.checks.exchange import first_header

# A suggestion keeps this far under what the service allows: its window may start elsewhere than
# ours.
MARGIN = 0.8
# What an audit must have seen before its own answers suggest a rate.
MIN_ANSWERED = 5
MIN_SPAN_S = 1.0

_KONG_WINDOWS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_KONG_HEADER = re.compile(r"x-ratelimit-limit-(second|minute|hour|day)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Rate:
    """Requests a second, where the figure comes from (said beside the suggestion), and whether the
    service stated it (a rate read from its answers only may not be what it throttles by: it may
    count requests, not time)."""

    per_second: float
    basis: str
    stated: bool = True


def advertised_rate(headers: Mapping[str, Any]) -> Rate | None:
    """The slowest rate the service's rate-limit headers state, or None when they state none."""
    found: list[Rate] = []
    policy = first_header(headers, "ratelimit-policy")
    if policy is not None:
        found += _policies(policy, "RateLimit-Policy")
    limit = first_header(headers, "ratelimit-limit")
    if limit is not None and "," in limit:
        found += _policies(limit.split(",", 1)[1], "RateLimit-Limit")
    for name in headers:
        kong = _KONG_HEADER.fullmatch(name)
        value = first_header(headers, name) if kong else None
        if kong and value is not None and _NUMBER.fullmatch(value.strip()):
            window = _KONG_WINDOWS[kong.group(1)]
            found.append(
                Rate(
                    float(value) / window,
                    f"its {_title(name)} header: {value.strip()} requests a {kong.group(1)}",
                )
            )
    return min(found, key=lambda rate: rate.per_second, default=None)


def _policies(text: str, header: str) -> list[Rate]:
    """Each `quota;w=window` (or `"name";q=quota;w=window`) policy of a header, as a rate."""
    rates = []
    for item in text.split(","):
        quota = window = None
        for part in (p.strip() for p in item.split(";")):
            key, equals, value = part.partition("=")
            if not equals and _NUMBER.fullmatch(key):
                quota = float(key)
            elif key.strip() == "q" and _NUMBER.fullmatch(value.strip()):
                quota = float(value)
            elif key.strip() == "w" and _NUMBER.fullmatch(value.strip()):
                window = float(value)
        if quota is not None and window:
            rates.append(
                Rate(quota / window, f"its {header} header: {quota:g} requests in {window:g} s")
            )
    return rates


def observed_rate(answered: int, span_s: float) -> Rate | None:
    """How fast the service answered unthrottled over the audit, once there is enough to tell."""
    if answered < MIN_ANSWERED or span_s < MIN_SPAN_S:
        return None
    per_second = answered / span_s
    return Rate(
        per_second,
        f"it answered {answered} requests unthrottled in {span_s:.0f} s, {per_second:.1f} a second",
        stated=False,
    )


def rate_limit_option(rate: Rate) -> str:
    """A `--rate-limit` value under `rate` by MARGIN: whole requests, per second where that keeps
    one, else per minute or per hour."""
    per_second = rate.per_second * MARGIN
    for unit, seconds in (("s", 1), ("m", 60), ("h", 3600)):
        if per_second * seconds >= 1:
            return f"{math.floor(per_second * seconds)}/{unit}"
    return "1/h"


@dataclass(frozen=True)
class Slower:
    """A rate limit that would keep an audit under its service's throttling, and why."""

    rate: Rate

    def say(self, flag: str = "--rate-limit") -> str:
        """`--rate-limit 8/s keeps under it (...)`, with the option as the command at hand spells
        it."""
        keeps = "keeps under it" if self.rate.stated else "may keep under it"
        return f"{flag} {rate_limit_option(self.rate)} {keeps} ({self.rate.basis})"


def suggestion(advertised: Rate | None, observed: Rate | None) -> Slower | None:
    """What to tell an audit that stayed throttled: the headers' rate first (the service's own
    word), else its answers'."""
    rate = advertised or observed
    return None if rate is None else Slower(rate)


def _title(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-")).replace("Ratelimit", "RateLimit")
